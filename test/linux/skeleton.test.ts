/**
 * Issue 19 §2 and §4 on a real desktop: a skeleton, drilling into it with
 * `root`, and token budgets, on gtk3-widget-factory, galculator and the
 * Chromium 5,000-element page (test/pages/huge.html?n=5000).
 *
 * - Every element of the full snapshot is reachable from the skeleton in at
 *   most two more calls (root drills), with the role, name and states it has
 *   in the full snapshot.
 * - A root snapshot is a snapshot of its own: its header names the element
 *   and window, and an action on its ref works and answers with the same
 *   subtree, diffed.
 * - An index the skeleton holds collapsed is refused, naming the line to open.
 * - A page switch under an outline (depth 1): the diff names the collapsed lines, not
 *   every element inside them.
 * - Tokens (o200k): the skeleton against the full snapshot, and maxTokens 500.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AxsnapError,
  createSession,
  estimateTokens,
  type Session,
  type Snapshot,
  TOKEN_ESTIMATE_ERROR,
} from "../../lib/index.js";
import { collapsedInto } from "../../lib/observe/collapsed.js";
import { factsOf } from "../../lib/observe/diff.js";
import {
  type App,
  chromium,
  type Desktop,
  fileUrl,
  gtkWidgetFactory,
  startApp,
} from "../../scripts/desktop.mjs";
import { runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
const sessions: Session[] = [];
/** Figures for the report: printed when the file ends. */
const figures: string[] = [];

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  for (const s of sessions) await s.close();
  await desktop?.stop();
  const worst = errors.filter((e) => e.real >= 200).reduce((m, e) => Math.max(m, Math.abs(e.err)), 0);
  figures.push(
    `token estimate on real windows: worst error ${(worst * 100).toFixed(1)}% over ${errors.length} texts`,
  );
  if (figures.length > 0) console.log(figures.join("\n"));
});

function session(): Session {
  // Drills are snapshots too: the walk keeps them all, and the ones it drills from.
  const s = createSession({ deadlineMs: 20_000, keepSnapshots: 200 });
  sessions.push(s);
  return s;
}

/** The estimate's error on each real window's text (tokens.ts states TOKEN_ESTIMATE_ERROR). */
const errors: { what: string; real: number; err: number }[] = [];

/** Real o200k tokens of a snapshot's text; the estimate's error on it is recorded and checked. */
function tokens(s: Snapshot): number {
  const real = encode(s.text).length;
  const err = (estimateTokens(s.text) - real) / real;
  errors.push({ what: `${s.app.name} ${s.view?.kind ?? "full"} ${s.style}`, real, err });
  if (real >= 200)
    expect(Math.abs(err), `estimate on ${s.app.name}: ${real} real`).toBeLessThanOrEqual(
      TOKEN_ESTIMATE_ERROR,
    );
  return real;
}
const printedIn = (s: Snapshot, index: number) => collapsedInto(s, index) === undefined;

/** What the issue compares: role, name and states as the snapshot prints them. */
function described(s: Snapshot, index: number) {
  const r = s.records[index]!;
  return { role: r.roleText, name: r.title, states: factsOf(s, index)?.states };
}

/** The printed record of `handle` in a snapshot, if it printed there. */
function printedByHandle(s: Snapshot, handle: number): number | undefined {
  const r = s.records.find((x) => x.handle === handle);
  return r !== undefined && printedIn(s, r.index) ? r.index : undefined;
}

/**
 * Walks the full snapshot's elements from the skeleton: each is printed in
 * the skeleton, or in a `root` drill (skeleton again) of the collapsed line
 * holding it, or in a full drill of the collapsed line of that one.
 */
async function walkFromSkeleton(s: Session, app: number): Promise<{ calls: number; elements: number }> {
  const full = await s.snapshot({ app, screenshot: false });
  const skeleton = await s.snapshot({ app, screenshot: false, skeleton: true });
  expect(skeleton.records.length).toBe(full.records.length);
  const drills = new Map<string, Snapshot>();
  const drill = async (from: Snapshot, index: number, view: { skeleton?: boolean }) => {
    const key = `${from.id}:${index}`;
    let d = drills.get(key);
    if (d === undefined) {
      d = await s.snapshot({ app, root: `@${from.id}:e${index}`, screenshot: false, ...view });
      drills.set(key, d);
    }
    return d;
  };
  for (const rec of full.records) {
    expect(rec.handle, `element ${rec.index} has a live handle`).toBeDefined();
    const handle = rec.handle!;
    const want = described(full, rec.index);
    // The skeleton holds the same observation's records under the same indices.
    let where: { snap: Snapshot; index: number } | undefined;
    const inSkeleton = skeleton.records.find((r) => r.handle === handle);
    expect(inSkeleton, `element ${rec.index} in the skeleton's records`).toBeDefined();
    if (printedIn(skeleton, inSkeleton!.index)) where = { snap: skeleton, index: inSkeleton!.index };
    else {
      const first = await drill(skeleton, collapsedInto(skeleton, inSkeleton!.index)!, { skeleton: true });
      const i1 = printedByHandle(first, handle);
      if (i1 !== undefined) where = { snap: first, index: i1 };
      else {
        const r1 = first.records.find((r) => r.handle === handle);
        expect(r1, `element ${rec.index} (${want.role} ${want.name}) in the first drill`).toBeDefined();
        const second = await drill(first, collapsedInto(first, r1!.index)!, {});
        const i2 = printedByHandle(second, handle);
        expect(
          i2,
          `element ${rec.index} (${want.role} ${want.name}) printed by the second drill`,
        ).toBeDefined();
        where = { snap: second, index: i2! };
      }
    }
    expect(described(where.snap, where.index), `element ${rec.index}`).toEqual(want);
  }
  return { calls: drills.size, elements: full.records.length };
}

describe("gtk3-widget-factory", () => {
  let gtk: App;
  beforeAll(async () => {
    gtk = await gtkWidgetFactory(desktop);
  }, TIMEOUT);
  afterAll(async () => {
    await gtk?.stop();
  });

  it(
    "every element of the full snapshot is reachable from the skeleton in at most two root drills",
    async () => {
      const { calls, elements } = await walkFromSkeleton(session(), gtk.pid);
      figures.push(`gtk3-widget-factory: ${elements} elements reached with ${calls} root drills in all`);
    },
    TIMEOUT,
  );

  it(
    "the skeleton costs at most 0.3x the full snapshot's tokens, and maxTokens 500 holds",
    async () => {
      const s = session();
      const full = await s.snapshot({ app: gtk.pid, screenshot: false });
      const skeleton = await s.snapshot({ app: gtk.pid, screenshot: false, skeleton: true });
      const budget = await s.snapshot({ app: gtk.pid, screenshot: false, maxTokens: 500 });
      figures.push(
        `gtk3-widget-factory: full ${tokens(full)} tokens, skeleton ${tokens(skeleton)} (${(tokens(skeleton) / tokens(full)).toFixed(2)}x), maxTokens 500 → ${tokens(budget)}`,
      );
      expect(tokens(skeleton)).toBeLessThanOrEqual(0.3 * tokens(full));
      expect(tokens(budget)).toBeLessThanOrEqual(500 * (1 + TOKEN_ESTIMATE_ERROR));
      expect(budget.text.split("\n").at(-1)).toMatch(/open one with root/);
    },
    TIMEOUT,
  );

  it(
    "a root snapshot is its own: its header names the element, and acting on its ref answers with the subtree, diffed",
    async () => {
      const s = session();
      const full = await s.snapshot({ app: gtk.pid, screenshot: false });
      const box = full.records.find(
        (r) =>
          r.roleText === "check box" &&
          r.title === "checkbutton" &&
          !factsOf(full, r.index)!.states.includes("disabled"),
      )!;
      expect(box).toBeDefined();
      // The box's parent line: the nearest earlier line with less indent.
      const lines = full.text.split("\n");
      const at = lines.findIndex((l) => new RegExp(`^\\t*${box.index} `).test(l));
      const depth = /^\t*/.exec(lines[at]!)![0].length;
      const parentLine = lines
        .slice(0, at)
        .reverse()
        .find((l) => /^\t*\d+ /.test(l) && /^\t*/.exec(l)![0].length < depth)!;
      const parent = Number(/^\t*(\d+) /.exec(parentLine)![1]);
      const sub = await s.snapshot({ app: gtk.pid, root: `@${full.id}:e${parent}`, screenshot: false });
      expect(sub.id).not.toBe(full.id);
      const head = sub.text.split("\n");
      expect(head[2]).toBe(
        `Subtree of element ${parent} (${full.records[parent]!.roleText}${full.records[parent]!.title ? ` ${JSON.stringify(full.records[parent]!.title)}` : ""}) of snapshot ${full.id}, window ${JSON.stringify(full.window.title)}.`,
      );
      expect(head[3]).toMatch(/^0 /);
      expect(sub.records[0]!.handle).toBe(full.records[parent]!.handle);
      const inSub = sub.records.find((r) => r.handle === box.handle)!;
      const before = factsOf(sub, inSub.index)!.value;
      const result = await s.click(`@${sub.id}:e${inSub.index}`);
      try {
        const fresh = result.snapshot!;
        expect(fresh.text.split("\n")[2]).toBe(head[2]);
        const again = fresh.records.find((r) => r.handle === box.handle)!;
        expect(factsOf(fresh, again.index)!.value).not.toBe(before);
        expect(result.changes?.changed.map((c) => c.index)).toContain(again.index);
      } finally {
        // Put it back for the other tests.
        await s.click(
          `@${result.snapshot!.id}:e${result.snapshot!.records.find((r) => r.handle === box.handle)!.index}`,
        );
      }
    },
    TIMEOUT,
  );

  it(
    "an index the skeleton holds collapsed is refused, naming the line to open with root",
    async () => {
      const s = session();
      const skeleton = await s.snapshot({ app: gtk.pid, screenshot: false, skeleton: true });
      const hidden = skeleton.records.findIndex((r) => !printedIn(skeleton, r.index));
      expect(hidden).toBeGreaterThan(0);
      const into = collapsedInto(skeleton, hidden)!;
      const err = await s.click(hidden).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AxsnapError);
      expect((err as AxsnapError).code).toBe("ELEMENT_NOT_FOUND");
      expect((err as AxsnapError).hint).toContain(`root "@${skeleton.id}:e${into}"`);
      // Opening the holder prints it.
      const sub = await s.snapshot({ app: gtk.pid, root: `@${skeleton.id}:e${into}`, screenshot: false });
      expect(sub.records.some((r) => r.handle === skeleton.records[hidden]!.handle)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "a page switch under an outline: the diff folds what changed inside collapsed lines into those lines",
    async () => {
      const s = session();
      // Depth 1: the page buttons print (a skeleton thins them out of the window's crowd of controls).
      const skeleton = await s.snapshot({ app: gtk.pid, screenshot: false, depth: 1 });
      const page2 = skeleton.records.find((r) => r.roleText === "radio button" && r.title === "Page 2")!;
      const page1 = skeleton.records.find((r) => r.roleText === "radio button" && r.title === "Page 1")!;
      expect(printedIn(skeleton, page2.index)).toBe(true);
      const result = await s.click(page2.index);
      try {
        const fresh = result.snapshot!;
        expect(fresh.view?.kind).toBe("outline");
        const changes = result.changes!;
        const text = changes.text;
        // Far more elements came and went than the diff prints lines.
        const hiddenChanges =
          [...changes.added, ...changes.changed].filter((c) => !printedIn(fresh, c.index)).length +
          changes.removed.filter((c) => !printedIn(skeleton, c.index)).length;
        figures.push(
          `gtk3-widget-factory page switch under an outline (depth 1): ${hiddenChanges} changes inside collapsed lines, diff ${text.split("\n").length} lines, ${encode(text).length} tokens`,
        );
        expect(hiddenChanges).toBeGreaterThan(10);
        expect(text).toMatch(/\[inside: |inside collapsed lines of the previous snapshot/);
        for (const c of [...changes.added, ...changes.changed])
          if (!printedIn(fresh, c.index)) expect(text).not.toMatch(new RegExp(`^\\t*${c.index} `, "m"));
      } finally {
        await s.click(
          `@${result.snapshot!.id}:e${result.snapshot!.records.find((r) => r.handle === page1.handle)!.index}`,
        );
      }
    },
    TIMEOUT,
  );
});

describe("the doors: the CLI and MCP get_app_state", () => {
  let gtk: App;
  beforeAll(async () => {
    gtk = await gtkWidgetFactory(desktop);
  }, TIMEOUT);
  afterAll(async () => {
    await gtk?.stop();
  });

  const collapsedLine = (text: string) => {
    const m = /^\t*(\d+) .*\(\+(\d+) elements?\)$/m.exec(text);
    expect(m, text).not.toBeNull();
    return { index: Number(m![1]), holds: Number(m![2]) };
  };

  it(
    "CLI: --skeleton, --root @ref from another process, --depth, --max-tokens; the store keeps the view",
    async () => {
      const env = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "axsnap-skeleton-")) };
      const sk = await runCliJson(["snapshot", "--app", String(gtk.pid), "--skeleton"], env);
      expect(sk.code, sk.stderr).toBe(0);
      const id: string = sk.env.data.snapshotId;
      const stored = JSON.parse(readFileSync(sk.env.data.stored, "utf8"));
      expect(stored.options.skeleton).toBe(true);
      const { index, holds } = collapsedLine(sk.env.data.text);
      // An element the skeleton did not print is no address, from another process either.
      const hidden = stored.records.find((r: { inside?: number }) => r.inside !== undefined);
      const refused = await runCliJson(["click", `@${id}:e${hidden.index}`], env);
      expect(refused.env.ok).toBe(false);
      expect(refused.env.error.code).toBe("ELEMENT_NOT_FOUND");
      expect(refused.env.error.hint).toContain(`axsnap snapshot --root @${id}:e${hidden.inside}`);
      // Another process: the ref goes through the store and a new observation of that window.
      const sub = await runCliJson(["snapshot", "--root", `@${id}:e${index}`], env);
      expect(sub.code, sub.stderr).toBe(0);
      const lines: string[] = sub.env.data.text.split("\n");
      expect(lines[2]).toMatch(/^Subtree of element \d+ \(.*\) of snapshot s[a-z0-9]{7}, window "/);
      expect(lines[3]).toMatch(/^0 /);
      expect(sub.env.data.text).not.toMatch(/\(\+\d+ elements?\)/);
      expect(Object.keys(sub.env.data.refs).length).toBe(holds + 1);
      expect(JSON.parse(readFileSync(sub.env.data.stored, "utf8")).options.root).toBe(`@${id}:e${index}`);
      const d0 = await runCliJson(["snapshot", "--app", String(gtk.pid), "--depth", "0"], env);
      expect(d0.code, d0.stderr).toBe(0);
      expect(d0.env.data.text).toMatch(/^0 frame .*\(\+\d+ elements\)$/m);
      expect(JSON.parse(readFileSync(d0.env.data.stored, "utf8")).options.depth).toBe(0);
      const b = await runCliJson(["snapshot", "--app", String(gtk.pid), "--max-tokens", "500"], env);
      expect(b.code, b.stderr).toBe(0);
      expect(encode(b.env.data.text).length).toBeLessThanOrEqual(500 * (1 + TOKEN_ESTIMATE_ERROR));
      expect(JSON.parse(readFileSync(b.env.data.stored, "utf8")).options.maxTokens).toBe(500);
      const bad = await runCliJson(["snapshot", "--app", String(gtk.pid), "--max-tokens", "5"], env);
      expect(bad.code).toBe(2);
    },
    TIMEOUT,
  );

  it(
    "MCP get_app_state: skeleton, then root by ref, and max_tokens",
    async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", "lib/mcp-main.ts"],
        env: { ...(process.env as Record<string, string>) },
        stderr: "pipe",
      });
      const c = new Client({ name: "axsnap-test", version: "0.0.0" });
      await c.connect(transport);
      try {
        const call = async (args: Record<string, unknown>) => {
          const r = (await c.callTool({ name: "get_app_state", arguments: args })) as CallToolResult;
          expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
          return r.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
        };
        const sk = await call({ app: gtk.pid, skeleton: true, screenshot: false });
        const id = /\b(s[a-z0-9]{7})\b/.exec(sk)![1]!;
        const { index, holds } = collapsedLine(sk);
        const sub = await call({ app: gtk.pid, root: `@${id}:e${index}`, screenshot: false });
        expect(sub).toContain(`Subtree of element ${index} (`);
        expect(sub).toContain(`of snapshot ${id}, window "`);
        expect((sub.match(/^\t*\d+ /gm) ?? []).length).toBe(holds + 1);
        const d = await call({ app: gtk.pid, depth: 0, screenshot: false });
        expect(d).toMatch(/^0 frame .*\(\+\d+ elements\)$/m);
        const b = await call({ app: gtk.pid, max_tokens: 500, screenshot: false });
        expect(encode(b).length).toBeLessThanOrEqual(550 + 40 /* the reply's own header lines */);
        // A bare index of the latest snapshot works as root too.
        const latest = await call({ app: gtk.pid, skeleton: true, screenshot: false });
        const again = collapsedLine(latest);
        const byIndex = await call({ app: gtk.pid, root: again.index, screenshot: false });
        expect(byIndex).toContain(`Subtree of element ${again.index} (`);
      } finally {
        await c.close();
      }
    },
    TIMEOUT,
  );
});

describe("galculator", () => {
  it(
    "maxTokens 500 holds",
    async () => {
      const app = await startApp(desktop, "galculator", [], { name: "galculator" });
      try {
        const s = session();
        const full = await s.snapshot({ app: app.pid, screenshot: false });
        const budget = await s.snapshot({ app: app.pid, screenshot: false, maxTokens: 500 });
        const skeleton = await s.snapshot({ app: app.pid, screenshot: false, skeleton: true });
        figures.push(
          `galculator: full ${tokens(full)} tokens, skeleton ${tokens(skeleton)}, maxTokens 500 → ${tokens(budget)} (${budget.style}${budget.view?.depth === undefined ? "" : `, depth ${budget.view.depth}`})`,
        );
        expect(tokens(budget)).toBeLessThanOrEqual(500 * (1 + TOKEN_ESTIMATE_ERROR));
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

describe("Chromium, huge.html?n=5000", () => {
  let app: App;
  beforeAll(async () => {
    app = await chromium(desktop, `${fileUrl("test/pages/huge.html")}?n=5000`, {
      windowName: "axsnap huge 5000",
    });
  }, 150_000);
  afterAll(async () => {
    await app?.stop();
  });

  it("the skeleton costs at most 0.3x the full snapshot, maxTokens 500 holds, and every element is reachable", async () => {
    const s = session();
    // The page builds its tree after load: wait until the list shows its rows.
    let full = await s.snapshot({ app: app.pid, screenshot: false, deadlineMs: 20_000 });
    for (let i = 0; i < 60 && !/list Results \(showing/.test(full.text); i++) {
      await new Promise((r) => setTimeout(r, 500));
      full = await s.snapshot({ app: app.pid, screenshot: false, deadlineMs: 20_000 });
    }
    const skeleton = await s.snapshot({
      app: app.pid,
      screenshot: false,
      skeleton: true,
      deadlineMs: 20_000,
    });
    const budget = await s.snapshot({ app: app.pid, screenshot: false, maxTokens: 500, deadlineMs: 20_000 });
    figures.push(
      `chromium huge 5000: full ${tokens(full)} tokens, skeleton ${tokens(skeleton)} (${(tokens(skeleton) / tokens(full)).toFixed(2)}x), maxTokens 500 → ${tokens(budget)}`,
    );
    expect(tokens(budget)).toBeLessThanOrEqual(500 * (1 + TOKEN_ESTIMATE_ERROR));
    expect(tokens(skeleton)).toBeLessThanOrEqual(0.3 * tokens(full));
    const { calls, elements } = await walkFromSkeleton(s, app.pid);
    figures.push(`chromium huge 5000: ${elements} elements reached with ${calls} root drills in all`);
  }, 240_000);
});
