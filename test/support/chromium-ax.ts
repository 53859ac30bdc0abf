/**
 * axsnap against Chromium's own account of a page (test/pages/chromium-ax/:
 * each page beside the tree Chromium gives over AT-SPI, written by
 * scripts/chromium-ax-expected.py in the notation of Chromium's
 * `*-expected-auralinux.txt`). Shared by test/linux/chromium-ax.test.ts and
 * bench/chromium-agreement.ts: per node Chromium lists, whether axsnap printed
 * it (found), with the same role, name and states.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Snapshot } from "../../lib/index.js";
import { snapshot } from "../../lib/observe/desktop.js";
import { factsOf } from "../../lib/observe/diff.js";
import type { ElementRecord } from "../../lib/render/records.js";
import { chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";

export const PAGES_DIR = "test/pages/chromium-ax";

export interface ExpectedNode {
  depth: number;
  role: string;
  name: string;
  /** Chromium's state names: checked, pressed, indeterminate, selected, expanded, … */
  states: string[];
}

/** One node of Chromium's tree, as axsnap printed it. */
export interface Compared {
  page: string;
  expected: ExpectedNode;
  found: boolean;
  role: boolean;
  name: boolean;
  states: boolean;
  /** What axsnap printed for it: role, name, states (absent when not found). */
  got?: { role: string; name: string; states: string[] };
  /** The agreed vocabulary of states, both sides (equal when `states`). */
  want: string[];
}

const LINE = /^((?:\+\+)*)\[([^\]]+)\](?: name='(.*?)')?((?: [a-z-]+)*)$/;

export function parseExpected(text: string): ExpectedNode[] {
  const out: ExpectedNode[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    const m = LINE.exec(raw);
    if (!m) throw new Error(`not a line of an expected tree: ${raw}`);
    out.push({
      depth: m[1]!.length / 2,
      role: m[2]!,
      name: m[3] ?? "",
      states: (m[4] ?? "").trim().split(" ").filter(Boolean),
    });
  }
  return out;
}

/** Chromium's states in axsnap's words (the compact style's and the traits). */
const STATE_WORDS: Record<string, string> = {
  checked: "checked",
  pressed: "checked",
  indeterminate: "mixed",
  selected: "selected",
  expanded: "expanded",
  collapsed: "collapsed",
  required: "required",
  "invalid-entry": "invalid",
  editable: "editable",
  "read-only": "readonly",
  disabled: "disabled",
};
const WORDS = new Set(Object.values(STATE_WORDS));

/**
 * The nodes compared: those that name something or carry a state an agent
 * reads. Static texts are left out (axsnap prints a text as its element's
 * name, by design), and so are nameless wrappers without a state (elided).
 */
export function counted(node: ExpectedNode): boolean {
  if (node.role === "static") return false;
  return node.name.trim() !== "" || node.states.some((s) => s !== "editable");
}

function axsnapStates(snap: Snapshot, r: ElementRecord): string[] {
  const printed = factsOf(snap, r.index)?.states ?? [];
  const out = printed.filter((s) => WORDS.has(s));
  // A field that takes text prints `settable, string`: Chromium's EDITABLE.
  if (printed.includes("settable") && printed.includes("string")) out.push("editable");
  return [...new Set(out)].sort();
}

function wantedStates(node: ExpectedNode): string[] {
  return [
    ...new Set(node.states.map((s) => STATE_WORDS[s]).filter((s): s is string => s !== undefined)),
  ].sort();
}

const norm = (s: string | undefined) => (s ?? "").replace(/\s+/g, " ").trim();

/** Pairs each counted node of Chromium's tree with the record axsnap printed for it, in order. */
export function compareTree(page: string, expected: ExpectedNode[], snap: Snapshot): Compared[] {
  const records = snap.records.filter((r) => !r.ocr);
  // Only the page: the browser's own frame (tabs, toolbar) is not in Chromium's page tree.
  const doc = records.find((r) => r.role === "document web");
  const inPage = doc === undefined ? records : records.filter((r) => r.index >= doc.index);
  const used = new Set<number>();
  const out: Compared[] = [];
  for (const node of expected.filter(counted)) {
    const name = norm(node.name);
    const pick = (test: (r: ElementRecord) => boolean) => inPage.find((r) => !used.has(r.index) && test(r));
    const match =
      (name !== "" && pick((r) => norm(r.title) === name && r.role === node.role)) ||
      (name !== "" && pick((r) => norm(r.title) === name)) ||
      (name === "" ? pick((r) => r.role === node.role && norm(r.title) === "") : undefined);
    const want = wantedStates(node);
    if (!match) {
      out.push({ page, expected: node, found: false, role: false, name: false, states: false, want });
      continue;
    }
    used.add(match.index);
    const got = { role: match.role, name: norm(match.title), states: axsnapStates(snap, match) };
    out.push({
      page,
      expected: node,
      found: true,
      role: got.role === node.role,
      name: got.name === name,
      states: got.states.join(" ") === want.join(" "),
      got,
      want,
    });
  }
  return out;
}

export function pageNames(): string[] {
  return readdirSync(PAGES_DIR)
    .filter((f) => f.endsWith(".html"))
    .map((f) => f.slice(0, -".html".length))
    .sort();
}

export function expectedOf(page: string): ExpectedNode[] {
  return parseExpected(readFileSync(path.join(PAGES_DIR, `${page}-expected-auralinux.txt`), "utf8"));
}

/**
 * Loads the page in a Chromium of its own and compares once every name
 * Chromium lists has printed, or, at 20 s, with what printed then.
 */
export async function measurePage(desktop: Desktop, page: string): Promise<Compared[]> {
  const expected = expectedOf(page);
  const app = await chromium(desktop, fileUrl(path.join(PAGES_DIR, `${page}.html`)), {
    windowName: `axsnap ax ${page}`,
  });
  try {
    const names = expected
      .filter(counted)
      .map((n) => norm(n.name))
      .filter(Boolean);
    const until = Date.now() + 20_000;
    for (;;) {
      const snap = await snapshot({ app: "chromium", screenshot: false, deadlineMs: 8000 });
      try {
        const title = snap.records.some((r) => r.role === "document web" && r.title === `axsnap ax ${page}`);
        const all = names.every((n) => snap.text.includes(n));
        if ((title && all) || Date.now() > until) return compareTree(page, expected, snap);
      } finally {
        await snap.release();
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  } finally {
    await app.stop();
  }
}

/** A difference's key: page, Chromium's role and name, and what differs. */
export function differenceKey(c: Compared): string | undefined {
  const what = !c.found ? "missing" : !c.role ? "role" : !c.name ? "name" : !c.states ? "states" : undefined;
  if (what === undefined) return undefined;
  return `${c.page} | [${c.expected.role}] ${c.expected.name.trim()} | ${what}`;
}

export interface Agreement {
  nodes: number;
  found: number;
  role: number;
  name: number;
  states: number;
}

export function agreement(all: Compared[]): Agreement {
  return {
    nodes: all.length,
    found: all.filter((c) => c.found).length,
    role: all.filter((c) => c.role).length,
    name: all.filter((c) => c.name).length,
    states: all.filter((c) => c.states).length,
  };
}
