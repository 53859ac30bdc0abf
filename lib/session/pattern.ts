/**
 * Text patterns from an agent (find's name and text): a plain text, matched
 * as a part of the subject in any case (or, exact, as the whole of it), or a
 * regular expression. The doors spell a regular expression as `/source/flags`
 * in a string; the API also takes a RegExp.
 *
 * A regular expression is hostile input: JavaScript's engine backtracks, so
 * `(a+)+$` against forty a's runs for minutes. Three bounds: the source is at
 * most PATTERN_LIMIT characters, each subject at most SUBJECT_LIMIT, and every
 * test of one query runs inside one `vm` script with a timeout (V8 interrupts
 * a running regular expression when the timeout fires), so a pattern that
 * backtracks is stopped and refused, never left to hold the process.
 */
import vm from "node:vm";
import { invalidArgument } from "../model/errors.js";

/** Characters of a pattern (the source of a regular expression, or a plain text). */
export const PATTERN_LIMIT = 256;
/** Characters of a subject a regular expression is tested against (the printed text is cut at 500 by default). */
export const SUBJECT_LIMIT = 2000;
/** All the regular-expression tests of one query, in ms. */
export const REGEX_BUDGET_MS = 200;

export type Pattern =
  | { kind: "text"; text: string; exact: boolean }
  | { kind: "regex"; re: RegExp; source: string };

const REGEX_HINT =
  'write a plain text (matched as a part, in any case), or a JavaScript regular expression as "/source/flags" (flags i, m, s, u) of at most 256 characters';

/** Flags that change what matches; g and y only make test() remember where it stopped, d only adds indices. */
const KEPT_FLAGS = new Set(["i", "m", "s", "u", "v"]);
const KNOWN_FLAGS = new Set([...KEPT_FLAGS, "g", "y", "d"]);

function compile(field: string, source: string, flags: string): RegExp {
  if (source.length > PATTERN_LIMIT)
    throw invalidArgument(
      `the ${field} pattern is ${source.length} characters, over the limit of ${PATTERN_LIMIT}`,
      REGEX_HINT,
    );
  for (const f of flags)
    if (!KNOWN_FLAGS.has(f))
      throw invalidArgument(`the ${field} pattern has an unknown flag "${f}"`, REGEX_HINT);
  const kept = [...new Set(flags)].filter((f) => KEPT_FLAGS.has(f)).join("");
  try {
    return new RegExp(source, kept);
  } catch (e) {
    throw invalidArgument(
      `the ${field} pattern /${source}/${flags} is not a valid regular expression (${(e as Error).message})`,
      REGEX_HINT,
    );
  }
}

/**
 * A pattern from a door's string (`/source/flags` is a regular expression,
 * anything else a plain text) or from the API (a RegExp, or a string taken
 * as text). `exact` applies to a plain text.
 */
export function patternOf(field: string, value: unknown, exact = false, slashes = true): Pattern {
  if (value instanceof RegExp)
    return { kind: "regex", re: compile(field, value.source, value.flags), source: value.source };
  if (typeof value !== "string")
    throw invalidArgument(`${field} must be a text or a regular expression, got ${typeof value}`, REGEX_HINT);
  if (value.trim() === "")
    throw invalidArgument(`${field} is empty`, `give a part of the ${field}, or leave ${field} out`);
  const m = slashes ? /^\/(.+)\/([a-z]*)$/s.exec(value) : null;
  if (m) return { kind: "regex", re: compile(field, m[1]!, m[2]!), source: m[1]! };
  if (value.length > PATTERN_LIMIT)
    throw invalidArgument(
      `the ${field} is ${value.length} characters, over the limit of ${PATTERN_LIMIT}`,
      `give a shorter part of the ${field}: a part matches`,
    );
  return { kind: "text", text: exact ? value.trim() : fold(value), exact };
}

/** Case and spacing folded: "Check  Box " and "check box" are the same text. */
export function fold(text: string): string {
  return text.trim().replace(/\s+/g, " ").toLowerCase();
}

/** Whether a plain-text pattern matches one subject. */
function textMatches(p: Extract<Pattern, { kind: "text" }>, subject: string): boolean {
  return p.exact ? subject.trim() === p.text : fold(subject).includes(p.text);
}

const sandbox = vm.createContext(Object.create(null));
const script = new vm.Script(
  "(() => { const out = []; for (const list of lists) { let hit = false; for (const s of list) if (re.test(s)) { hit = true; break; } out.push(hit); } return out; })()",
);

/**
 * For each list of subjects, whether the pattern matches any of them. Every
 * regular-expression test of the call shares one time budget; one that runs
 * out refuses the query.
 */
export function matchLists(field: string, p: Pattern, lists: readonly (readonly string[])[]): boolean[] {
  if (p.kind === "text") return lists.map((list) => list.some((s) => textMatches(p, s)));
  const cut = lists.map((list) =>
    list.map((s) => (s.length > SUBJECT_LIMIT ? s.slice(0, SUBJECT_LIMIT) : s)),
  );
  sandbox.lists = cut;
  sandbox.re = p.re;
  try {
    return script.runInContext(sandbox, { timeout: REGEX_BUDGET_MS }) as boolean[];
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_SCRIPT_EXECUTION_TIMEOUT")
      throw invalidArgument(
        `the ${field} pattern /${p.source}/ took longer than ${REGEX_BUDGET_MS} ms over this window's texts (it backtracks without end); nothing was matched`,
        "simplify it: avoid nested quantifiers such as (a+)+ or (a|aa)*, or use a plain text, which matches a part in any case",
      );
    throw e;
  } finally {
    sandbox.lists = undefined;
    sandbox.re = undefined;
  }
}
