/**
 * find: the elements of one observation that match a query, as the lines the
 * snapshot printed for them, each with its ref and the printed ancestors it
 * sits under. Pure over a Snapshot (Session.find observes, then calls this),
 * so fixture trees test the rules without a desktop, and one text composer
 * serves every door (API, MCP, CLI), each naming its own next step.
 *
 * The rules (also in docs/api.md, "Find"):
 * - role: the role in either style's words, whatever the snapshot's style
 *   (tree "push button", compact "button"), or the platform's raw role
 *   ("AXButton"); the whole role, in any case and spacing. An agent finds by
 *   the words it has read, and a conversation may have shown it either style.
 *   The one word the two styles print for different elements, Linux's "text"
 *   (tree: AT-SPI's text field; compact: a label), is read in the snapshot's
 *   own style; "textbox" and "label" name each in both.
 * - name: a plain text matches a part of the name in any case; `exact`: the
 *   whole name, case and all; a regular expression is tested against it. The
 *   name is the element's title, its name for identity, or (macOS controls
 *   named by AXDescription) its description.
 * - text: anywhere the element says something: its name, description, value
 *   as printed (a secure field's never: it prints masked), and the row text
 *   printed under it. Not the labels a line adds (`Value:`, actions).
 * - states: every one must be printed on the line (`checked`, `focused`,
 *   `disabled`, `selected`, `settable`...); `enabled` means not disabled;
 *   `!checked` (or `not checked`) a state the line lacks.
 */

import { invalidArgument } from "../model/errors.js";
import type { SnapshotOptions } from "../observe/desktop.js";
import { factsOf } from "../observe/diff.js";
import type { Snapshot } from "../observe/snapshot-types.js";
import type { ElementRecord } from "../render/records.js";
import { quoted, sanitize } from "../render/sanitize.js";
import { parseLocator, printLocator } from "./locator/grammar.js";
import { fold, matchLists, type Pattern, patternOf } from "./pattern.js";
import { isContext, nameOf } from "./record-names.js";
import { hasRole } from "./role-words.js";

export { isContext, nameOf };

export interface FindQuery {
  /** The role in either style's words ("push button" or "button") or raw ("AXButton"): whole, any case. */
  role?: string;
  /** A part of the name in any case; with `exact`, the whole name, case and all; or a RegExp. */
  name?: string | RegExp;
  /** With a text `name`: the whole name must be it, case and all. */
  exact?: boolean;
  /** A part of anything the element says (name, description, value, row text) in any case, or a RegExp. */
  text?: string | RegExp;
  /** States the line must print ("checked", "focused", "disabled"...); "enabled" = not disabled; "!x" = not x. */
  states?: readonly string[];
}

/** One element found: its line as the snapshot printed it, and where it sits. */
export interface FindMatch {
  index: number;
  /** `@<snapshot id>:e<index>`: act on it with any action. */
  ref: string;
  /** The role as printed (tree style). */
  role: string;
  name?: string;
  /** The printed line without indent and index, with the row text printed under it. */
  line: string;
  /** The printed ancestors below the window, outermost first: `panel "Frame"`. */
  ancestors: string[];
  /** Its shortest unique locator in full (`app=… >> window="…" >> push button "Save"`): act on it later, by what it is. */
  locator?: string;
  record: ElementRecord;
}

export interface FindResult {
  /** The observation searched; refs point into it. */
  snapshot: Snapshot;
  /** At most `limit` matches, in the order the snapshot printed them. */
  matches: FindMatch[];
  /** How many elements matched in all. */
  total: number;
  /** total - matches.length. */
  more: number;
  /** The query as the text says it: `role "push button", name "ok"`. */
  query: string;
  /** The text an agent reads (findText with the API's words). */
  text: string;
}

/** A match as the doors' structured replies carry it: the record stays behind. */
export type FindMatchData = Omit<FindMatch, "record">;

export function matchData(m: FindMatch): FindMatchData {
  return {
    index: m.index,
    ref: m.ref,
    role: m.role,
    ...(m.name === undefined ? {} : { name: m.name }),
    line: m.line,
    ancestors: m.ancestors,
    ...(m.locator === undefined ? {} : { locator: m.locator }),
  };
}

/** What a door calls the next steps in its text. */
export interface FindTerms {
  /** How to read the whole window: "snapshot()", "get_app_state", "`axsnap snapshot --app NAME`". */
  snapshot?: string;
  /** The name of the limit: "limit", "--limit". */
  limit?: string;
  /** How to act on a ref: "act on a ref as printed", "act on one with `axsnap click REF`". */
  act?: string;
}

/**
 * View options a find refuses: it searches the whole window, so every ref it
 * returns is one an action takes. (A view would either return refs to
 * records inside collapsed lines, which actions refuse, or hide matches.)
 */
export const FIND_REFUSED_VIEWS = ["depth", "skeleton", "maxTokens", "root"] as const;

/** How find observes (as snapshot: window, maxNodes, deadlineMs...; no screenshot unless asked), and how many it returns. */
export type FindOptions = Omit<SnapshotOptions, "app" | (typeof FIND_REFUSED_VIEWS)[number]> & {
  /** Most matches returned, 1-1000. Default 20; the result says how many more matched. */
  limit?: number;
};

export const DEFAULT_FIND_LIMIT = 20;
export const MAX_FIND_LIMIT = 1000;
const MAX_STATES = 16;
const MAX_ROLE = 100;
/** How much of an ancestor's name the context prints. */
const ANCESTOR_NAME = 60;
/** Ancestors kept on a deep element: the outermost and the nearest ones. */
const ANCESTORS_KEPT = 6;

interface StateTest {
  state: string;
  present: boolean;
}

/** A query checked and compiled; build it once with checkFindQuery. */
export interface CompiledQuery {
  readonly compiled: true;
  role?: string;
  name?: Pattern;
  text?: Pattern;
  states?: StateTest[];
  said: string;
}

const KEYS = new Set(["role", "name", "exact", "text", "states"]);
const HINT =
  'give at least one of role ("push button"), name (a part of it, or /regex/), text (a part of what an element says) or states (["checked"])';

function said(p: Pattern): string {
  if (p.kind === "regex") return `/${p.re.source}/${p.re.flags}`;
  return JSON.stringify(p.text);
}

/** Checks a query (INVALID_ARGUMENT with a hint for anything wrong) and compiles its patterns. */
export function checkFindQuery(query: unknown, slashes = false): CompiledQuery {
  if (query === null || typeof query !== "object" || Array.isArray(query) || query instanceof RegExp)
    throw invalidArgument("the find query must be an object", HINT);
  const q = query as Record<string, unknown>;
  for (const k of Object.keys(q))
    if (!KEYS.has(k) && q[k] !== undefined)
      throw invalidArgument(
        `the find query has no field "${k}"`,
        `its fields are role, name, exact, text, states`,
      );
  if (q.exact !== undefined && typeof q.exact !== "boolean")
    throw invalidArgument(
      "exact must be true or false",
      "exact: true makes a text name match the whole name",
    );
  if (q.exact === true && typeof q.name !== "string")
    throw invalidArgument("exact applies to a text name", "give name with exact: true, or leave exact out");
  const out: CompiledQuery = { compiled: true, said: "" };
  const parts: string[] = [];
  if (q.role !== undefined) {
    if (typeof q.role !== "string" || q.role.trim() === "")
      throw invalidArgument("role must be a non-empty text", 'give the role as printed, e.g. "push button"');
    if (q.role.length > MAX_ROLE)
      throw invalidArgument(
        `role is ${q.role.length} characters, over ${MAX_ROLE}`,
        'give the role as printed, e.g. "push button"',
      );
    out.role = fold(q.role);
    parts.push(`role ${JSON.stringify(out.role)}`);
  }
  if (q.name !== undefined) {
    out.name = patternOf("name", q.name, q.exact === true, slashes);
    parts.push(`name ${said(out.name)}${q.exact === true ? " (exact)" : ""}`);
  }
  if (q.text !== undefined) {
    out.text = patternOf("text", q.text, false, slashes);
    parts.push(`text ${said(out.text)}`);
  }
  if (q.states !== undefined) {
    const s = q.states;
    if (!Array.isArray(s) || s.length === 0 || s.length > MAX_STATES)
      throw invalidArgument(
        `states must be a list of 1 to ${MAX_STATES} states`,
        'e.g. ["checked"], ["enabled", "!selected"]',
      );
    out.states = s.map((v) => {
      if (typeof v !== "string" || !/^\s*(?:!|not\s+)?[a-z][a-z -]{0,39}\s*$/i.test(v))
        throw invalidArgument(
          `not a state: ${JSON.stringify(v)}`,
          'states are words printed on a line, e.g. "checked", "focused", "disabled", "enabled", "!checked"',
        );
      const t = fold(v);
      const negated = /^(?:!|not )/.exec(t);
      return { state: negated ? t.slice(negated[0].length).trim() : t, present: !negated };
    });
    parts.push(`states [${out.states.map((t) => `${t.present ? "" : "!"}${t.state}`).join(", ")}]`);
  }
  if (parts.length === 0) throw invalidArgument("the find query asks for nothing", HINT);
  out.said = parts.join(", ");
  return out;
}

/**
 * A query as the doors get it (MCP arguments, CLI flags): strings only, where
 * "/source/flags" in name or text is a regular expression. Checked here, so a
 * bad pattern is refused before anything is observed.
 */
export function queryFromDoor(args: {
  role?: string | undefined;
  name?: string | undefined;
  exact?: boolean | undefined;
  text?: string | undefined;
  states?: string[] | undefined;
}): FindQuery {
  const q: FindQuery = {};
  if (args.role !== undefined) q.role = args.role;
  if (args.exact !== undefined) q.exact = args.exact;
  if (args.states !== undefined) q.states = args.states;
  for (const field of ["name", "text"] as const) {
    const v = args[field];
    if (v === undefined) continue;
    const p = patternOf(field, v, false, true);
    q[field] = p.kind === "regex" ? p.re : v;
  }
  checkFindQuery(q);
  return q;
}

/** INVALID_ARGUMENT naming the view options given to a find (FIND_REFUSED_VIEWS). */
export function refuseFindViews(options: object): void {
  const given = FIND_REFUSED_VIEWS.filter((k) => (options as Record<string, unknown>)[k] !== undefined);
  if (given.length === 0) return;
  throw invalidArgument(
    `find takes no ${given.join(", ")}: it searches the whole window, and every ref it returns can be acted on`,
    "leave them out: find searches the whole window (pick another window with window); depth, skeleton, maxTokens and root are for reading a snapshot",
  );
}

/** The limit of a find (default 20), or INVALID_ARGUMENT. */
export function limitOf(value: unknown): number {
  if (value === undefined) return DEFAULT_FIND_LIMIT;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_FIND_LIMIT)
    throw invalidArgument(
      `limit must be a whole number from 1 to ${MAX_FIND_LIMIT}, got ${String(value)}`,
      `leave it out for ${DEFAULT_FIND_LIMIT}, or narrow the query`,
    );
  return value;
}

interface Printed {
  /** The line without indent and index, with the text lines printed under it. */
  line: string;
  depth: number;
  /** The compact style's role word. */
  compactRole?: string;
  /** Unnumbered text printed under the element (row text). */
  extra: string[];
}

const printedCache = new WeakMap<Snapshot, Map<number, Printed>>();

/** The numbered lines of a snapshot's text by index, with the unnumbered text lines under each (cached: the text never changes). */
function printedLines(snap: Snapshot): Map<number, Printed> {
  const cached = printedCache.get(snap);
  if (cached) return cached;
  const out = new Map<number, Printed>();
  const compact = snap.style === "compact";
  const numbered = compact ? /^( *)(\d+): (.*)$/ : /^(\t*)(\d+)(?: (.*))?$/;
  const indent = compact ? /^( *)(\S.*)$/ : /^(\t*)(\S.*)$/;
  let last: Printed | undefined;
  for (const raw of snap.text.split("\n")) {
    const m = numbered.exec(raw);
    const index = m ? Number(m[2]) : -1;
    if (m && index < snap.records.length && !out.has(index)) {
      const depth = compact ? m[1]!.length / 2 : m[1]!.length;
      const line = m[3] ?? "";
      last = { line, depth, extra: [], ...(compact ? { compactRole: line.split(" ")[0]! } : {}) };
      out.set(index, last);
      continue;
    }
    const t = indent.exec(raw);
    const depth = t ? (compact ? t[1]!.length / 2 : t[1]!.length) : -1;
    // Text printed deeper than the element's own line belongs to it; anything else ends it.
    if (last && t && depth > last.depth) last.extra.push(t[2]!);
    else last = undefined;
  }
  printedCache.set(snap, out);
  return out;
}

/** A record's line as find prints it: without indent and index, with the row text printed under it. */
export function printedLineOf(snap: Snapshot, index: number): string {
  const p = printedLines(snap).get(index);
  const record = snap.records[index];
  if (p) return [p.line, ...p.extra].join(" ");
  return record === undefined
    ? ""
    : `${record.roleText}${record.title === undefined ? "" : ` ${sanitize(record.title, 500)}`}`;
}

function names(r: ElementRecord): string[] {
  const out: string[] = [];
  for (const n of [r.title, r.identity.name, r.description])
    if (n !== undefined && !out.includes(n)) out.push(n);
  return out;
}

/** What the line prints as value, without the label the tree style gives it. */
function printedValue(snap: Snapshot, index: number): string | undefined {
  const v = factsOf(snap, index)?.value;
  return v?.startsWith("Value: ") ? v.slice(7) : v;
}

function ancestorLabel(r: ElementRecord): string {
  const role = r.roleText === "" ? r.role : r.roleText;
  const name = nameOf(r);
  return name === undefined || name.trim() === "" ? role : `${role} ${quoted(name, ANCESTOR_NAME)}`;
}

/** Printed ancestors of every record (below the window root; nameless wrappers left out), by index. */
function ancestorsOf(snap: Snapshot, printed: Map<number, Printed>): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const stack: { depth: number; record: ElementRecord }[] = [];
  for (const record of snap.records) {
    const p = printed.get(record.index);
    if (p === undefined) {
      // Not printed in this style (compact leaves plain text out): under what was open above it.
      out.set(
        record.index,
        stack.filter((s) => isContext(s.record)).map((s) => ancestorLabel(s.record)),
      );
      continue;
    }
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= p.depth) stack.pop();
    let chain = stack.filter((s) => isContext(s.record)).map((s) => ancestorLabel(s.record));
    if (chain.length > ANCESTORS_KEPT) chain = [chain[0]!, "…", ...chain.slice(-(ANCESTORS_KEPT - 2))];
    out.set(record.index, chain);
    stack.push({ depth: p.depth, record });
  }
  return out;
}

function statesMatch(tests: StateTest[], states: readonly string[]): boolean {
  return tests.every((t) => {
    const has = t.state === "enabled" ? !states.includes("disabled") : states.includes(t.state);
    return has === t.present;
  });
}

/**
 * The elements of `snap` that match `query`, at most `limit` (default 20),
 * with how many matched in all.
 */
export function findIn(
  snap: Snapshot,
  query: FindQuery | CompiledQuery,
  options: { limit?: number } = {},
): FindResult {
  const q = (query as CompiledQuery).compiled === true ? (query as CompiledQuery) : checkFindQuery(query);
  const limit = limitOf(options.limit);
  const printed = printedLines(snap);
  let candidates = snap.records.filter((r) => {
    if (q.role !== undefined && !hasRole(q.role, r, snap.style, printed.get(r.index)?.compactRole))
      return false;
    return q.states === undefined || statesMatch(q.states, factsOf(snap, r.index)?.states ?? []);
  });
  // Patterns last, over what is left: a regular expression's time budget is spent on the fewest texts.
  if (q.name !== undefined) {
    const hits = matchLists("name", q.name, candidates.map(names));
    candidates = candidates.filter((_, i) => hits[i]);
  }
  if (q.text !== undefined) {
    const subjects = candidates.map((r) => {
      const list = names(r);
      const value = printedValue(snap, r.index);
      if (value !== undefined) list.push(value);
      list.push(...(printed.get(r.index)?.extra ?? []));
      return list;
    });
    const hits = matchLists("text", q.text, subjects);
    candidates = candidates.filter((_, i) => hits[i]);
  }
  const ancestors = ancestorsOf(snap, printed);
  const matches = candidates.slice(0, limit).map((record): FindMatch => {
    const p = printed.get(record.index);
    const line = p
      ? [p.line, ...p.extra].join(" ")
      : `${record.roleText}${record.title === undefined ? "" : ` ${sanitize(record.title, 500)}`}`;
    const name = nameOf(record);
    const locator = record.locator;
    return {
      index: record.index,
      ref: `@${snap.id}:e${record.index}`,
      role: record.roleText,
      ...(name === undefined ? {} : { name }),
      line,
      ancestors: ancestors.get(record.index) ?? [],
      ...(locator === undefined ? {} : { locator }),
      record,
    };
  });
  const result: FindResult = {
    snapshot: snap,
    matches,
    total: candidates.length,
    more: candidates.length - matches.length,
    query: q.said,
    text: "",
  };
  result.text = findText(result);
  return result;
}

/** Whether a match's locator (after the front) is just its role and name (or its role alone), as its line prints them. */
function saysItself(m: FindMatch, rest: string): boolean {
  if (!m.line.startsWith(`${m.role} `) && m.line !== m.role) return false;
  if (rest === m.role) return m.name === undefined;
  const name = m.name;
  // A name JSON writes as it is (no quote, backslash or control character) reads the same on the line.
  if (name === undefined || name === "" || name.trim() !== name || JSON.stringify(name) !== `"${name}"`)
    return false;
  return rest === `${m.role} ${JSON.stringify(name)}` && m.line.includes(name);
}

/** The app and window segments the matches' locators share (`app=… >> window="…"`), or undefined. */
function locatorFront(matches: readonly FindMatch[]): string | undefined {
  const first = matches.find((m) => m.locator !== undefined)?.locator;
  if (first === undefined) return undefined;
  const l = parseLocator(first);
  const front = printLocator({ ...l, path: [] });
  const shares = (m: FindMatch) =>
    m.locator === undefined || m.locator === front || m.locator.startsWith(`${front} >> `);
  return matches.every(shares) ? front : undefined;
}

function counted(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, 30)
    .map(([v, n]) => `${v} (${n})`)
    .join(", ");
}

/**
 * The text of a find result: a header naming the snapshot and how refs look,
 * one line per match (`@s…:e12 <line> · in <ancestors>`), then how many more
 * matched. With no match, what the window has instead (its roles and the
 * states it prints) and how to read all of it.
 */
export function findText(result: FindResult, terms: FindTerms = {}): string {
  const snap = result.snapshot;
  const limitWord = terms.limit ?? "limit";
  const snapshotWord = terms.snapshot ?? "snapshot()";
  const where = `snapshot ${snap.id} of ${quoted(snap.app.name, 100)} (pid ${snap.app.pid}), window ${quoted(snap.window.title, 100)}`;
  const cut = snap.complete
    ? ""
    : ` (incomplete, cut by ${snap.cutBy.join(", ")}: what the cut left out was not searched)`;
  if (result.total === 0) {
    const roles = counted(snap.records.map((r) => (r.roleText === "" ? r.role : r.roleText)));
    const states = [...new Set(snap.records.flatMap((r) => factsOf(snap, r.index)?.states ?? []))].sort();
    return [
      `find ${result.query} in ${where}: no element matched among ${snap.records.length}${cut}`,
      `roles here: ${roles}`,
      `states printed here: ${states.length > 0 ? states.join(", ") : "none"}`,
      `hint: loosen the query (a text name matches a part, in any case; a role must be whole, in either style's words), or read the whole window with ${snapshotWord}`,
    ].join("\n");
  }
  const lines = [
    `find ${result.query} in ${where}: ${result.total} match${result.total === 1 ? "" : "es"}${cut}`,
    `refs: @${snap.id}:eN is the element printed as N in this snapshot (now the app's latest); ${terms.act ?? "act on a ref as printed"}`,
  ];
  // The locators' shared front (app and window) once; a match adds its own only where its role and
  // name, as its line prints them, do not already say it: the common case costs one line per find.
  const front = locatorFront(result.matches);
  if (front !== undefined)
    lines.push(`locators: ${front} >> a line's role "name", then its [nth] or own locator after "·"`);
  for (const m of result.matches) {
    let rest = m.locator;
    if (front !== undefined && rest !== undefined) {
      rest = rest === front ? "(the window)" : rest.slice(front.length + 4);
      // Most twins differ by their ordinal alone: only that is printed, after the role and name the line says.
      const attrs = / (?:\[(?:nth|id)=[^\]]*\])+$/.exec(rest)?.[0];
      if (saysItself(m, rest)) rest = undefined;
      else if (attrs !== undefined && saysItself(m, rest.slice(0, -attrs.length))) rest = attrs.trim();
    }
    lines.push(
      `${m.ref} ${m.line}${m.ancestors.length > 0 ? ` · in ${m.ancestors.join(" > ")}` : ""}${rest === undefined ? "" : rest.startsWith("[") ? ` · ${rest}` : ` · locator: ${rest}`}`,
    );
  }
  if (result.more > 0) lines.push(`${result.more} more matched; narrow the query or raise ${limitWord}`);
  return lines.join("\n");
}
