/**
 * The string form of a locator (issue 34, design 2.1):
 *
 *   app=mousepad >> window:dialog="Save As" >> panel "Files" >> push button "Save" [id="save"] [nth=2]
 *
 * Segments are split by `>>` only outside strings and regular expressions,
 * so a name may hold `>>`, quotes or newlines. Strings are JSON literals (the
 * printer writes them with JSON.stringify, so anything round-trips), regular
 * expressions `/source/flags` compiled through pattern.ts, so the same
 * length, flag and backtracking bounds hold as for find.
 *
 * One spelling is shared: a bare `window` where the window segment may stand
 * is that segment (any window), never a step with the role "window"; such a
 * step needs a name, an attribute or a window segment before it.
 */
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { WindowKind } from "../../observe/windows.js";
import { patternOf } from "../pattern.js";
import type { Locator, LocatorStep } from "./types.js";

const KINDS: readonly WindowKind[] = ["window", "dialog", "menu", "popup", "sheet"];
const WORD = /^[a-z0-9-]+$/;
const RAW_ROLE = /^AX[A-Za-z]+$/;
const BARE = /^[A-Za-z0-9._+-]+$/;
const HINT =
  'write it as [app=NAME >> ] [window[:dialog]="TITLE" >> ] role "name" [id="…"] [nth=N] >> …, names as JSON strings ("Save") or /regex/flags';

/** Whether a role can be written in a step: tree-style words ("push button") or a raw AX role. */
export function isPrintableRole(role: string): boolean {
  return RAW_ROLE.test(role) || role.split(" ").every((w) => WORD.test(w));
}

class Reader {
  pos = 0;
  constructor(readonly s: string) {}

  fail(what: string, at = this.pos): never {
    // The caret goes under the line the position is on: a string may hold newlines.
    const start = this.s.lastIndexOf("\n", at - 1) + 1;
    const endNl = this.s.indexOf("\n", at);
    const line = this.s.slice(start, endNl === -1 ? undefined : endNl);
    throw invalidArgument(
      `locator: ${what} at position ${at}\n  ${line}\n  ${" ".repeat(at - start)}^`,
      HINT,
    );
  }

  peek(): string {
    return this.s[this.pos] ?? "";
  }

  atEnd(): boolean {
    return this.pos >= this.s.length;
  }

  ws(): boolean {
    const from = this.pos;
    while (/[ \t\r\n]/.test(this.peek())) this.pos++;
    return this.pos > from;
  }

  /** At `ws >> ws` or the end: where a segment stops. */
  atSep(): boolean {
    const rest = this.s.slice(this.pos).replace(/^[ \t\r\n]*/, "");
    return rest === "" || rest.startsWith(">>");
  }

  eat(text: string): boolean {
    if (!this.s.startsWith(text, this.pos)) return false;
    this.pos += text.length;
    return true;
  }

  string(): string {
    const from = this.pos;
    this.pos++; // the opening quote
    while (!this.atEnd() && this.peek() !== '"') this.pos += this.peek() === "\\" ? 2 : 1;
    if (this.atEnd()) this.fail("unterminated string", from);
    this.pos++;
    try {
      return JSON.parse(this.s.slice(from, this.pos)) as string;
    } catch (e) {
      return this.fail(`invalid string (${(e as Error).message})`, from);
    }
  }

  regex(field: string): RegExp {
    const from = this.pos;
    this.pos++;
    let inClass = false;
    // A `/` ends the source only outside a class and not escaped, as in a JavaScript literal.
    for (;;) {
      const c = this.peek();
      if (c === "" || c === "\n") this.fail("unterminated regular expression", from);
      if (c === "\\") this.pos += 2;
      else {
        if (c === "[") inClass = true;
        else if (c === "]") inClass = false;
        else if (c === "/" && !inClass) break;
        this.pos++;
      }
    }
    this.pos++;
    while (/[a-z]/.test(this.peek())) this.pos++;
    if (this.pos - from <= 2) this.fail("empty regular expression", from);
    try {
      const p = patternOf(field, this.s.slice(from, this.pos));
      if (p.kind !== "regex") return this.fail("invalid regular expression", from);
      return p.re;
    } catch (e) {
      if (e instanceof AxsnapError) return this.fail(e.message, from);
      throw e;
    }
  }

  bare(): string {
    const from = this.pos;
    while (/[A-Za-z0-9._+-]/.test(this.peek())) this.pos++;
    if (this.pos === from) this.fail('expected a name: a JSON string ("…"), /regex/ or a bare word');
    return this.s.slice(from, this.pos);
  }

  value(field: string, regexOk: boolean): string | RegExp {
    const c = this.peek();
    if (c === '"') return this.string();
    if (c === "/") {
      if (!regexOk) this.fail(`the ${field} takes a name, not a regular expression`);
      return this.regex(field);
    }
    return this.bare();
  }

  sep(): void {
    this.ws();
    if (!this.eat(">>")) this.fail('expected ">>" between segments');
    this.ws();
  }

  role(): string {
    const from = this.pos;
    const m = /^(?:AX[A-Za-z]+|[a-z0-9-]+(?:[ \t]+[a-z0-9-]+)*)/.exec(this.s.slice(this.pos));
    if (!m) this.fail('expected a role ("push button", "button", "AXButton")', from);
    // A trailing word run may have swallowed nothing else: names start with " or /, attributes with [.
    this.pos += m[0].length;
    return m[0].replace(/[ \t]+/g, " ");
  }

  step(): LocatorStep {
    const step: LocatorStep = { role: this.role() };
    if (this.ws() && (this.peek() === '"' || this.peek() === "/"))
      step.name = this.value("name", true) as string | RegExp;
    for (;;) {
      this.ws();
      if (this.peek() !== "[") break;
      const at = this.pos;
      if (this.eat("[id=")) {
        if (this.peek() !== '"') this.fail("expected a JSON string after id=");
        if (step.id !== undefined) this.fail("id given twice", at);
        step.id = this.string();
      } else if (this.eat("[nth=")) {
        const m = /^[0-9]+/.exec(this.s.slice(this.pos));
        if (!m) this.fail("expected a number after nth=");
        const n = Number(m[0]);
        if (n < 1 || !Number.isSafeInteger(n)) this.fail("nth counts from 1");
        if (step.nth !== undefined) this.fail("nth given twice", at);
        this.pos += m[0].length;
        step.nth = n;
      } else this.fail("expected [id=…] or [nth=…]");
      if (!this.eat("]")) this.fail('expected "]"');
    }
    if (!this.atSep()) this.fail('expected a name, an attribute or ">>"');
    return step;
  }
}

/** A locator from its string form; INVALID_ARGUMENT with the position and a caret line when it does not parse. */
export function parseLocator(s: string): Locator {
  if (typeof s !== "string") throw invalidArgument(`a locator must be a string, got ${typeof s}`, HINT);
  const r: Reader = new Reader(s);
  const out: Locator = { path: [] };
  r.ws();
  if (r.atEnd()) r.fail("empty locator");
  let first = true;
  const next = () => {
    if (!first) r.sep();
    first = false;
  };
  if (r.s.startsWith("app=", r.pos)) {
    r.pos += 4;
    out.app = r.value("app", false) as string;
    if (!r.atSep()) r.fail('expected ">>" after the app');
    first = false;
  }
  if (!r.atEnd() || first) {
    const save = r.pos;
    if (!first) r.sep();
    // `window` opens the window segment when a kind, a title or the segment's end follows it.
    if (/^window(?=[:=]|[ \t\r\n]*(?:>>|$))/.test(r.s.slice(r.pos))) {
      r.pos += 6;
      const win: NonNullable<Locator["window"]> = {};
      if (r.eat(":")) {
        const at = r.pos;
        const m = /^[a-z]+/.exec(r.s.slice(r.pos));
        if (!m || !KINDS.includes(m[0] as WindowKind))
          r.fail(`expected a window kind (${KINDS.join(", ")})`, at);
        r.pos += m[0].length;
        win.kind = m[0] as WindowKind;
      }
      if (r.eat("=")) win.title = r.value("window title", true);
      if (!r.atSep()) r.fail('expected ">>" after the window');
      out.window = win;
      first = false;
    } else r.pos = save;
  }
  r.ws();
  while (!r.atEnd()) {
    next();
    out.path.push(r.step());
    r.ws();
  }
  return out;
}

function printValue(v: string | RegExp): string {
  return v instanceof RegExp ? `/${v.source}/${v.flags}` : JSON.stringify(v);
}

/** The string form, always in full: every name JSON-quoted (an app name bare when it is one word). */
export function printLocator(l: Locator): string {
  const parts: string[] = [];
  if (l.app !== undefined) parts.push(`app=${BARE.test(l.app) ? l.app : JSON.stringify(l.app)}`);
  if (l.window !== undefined) {
    let w = "window";
    if (l.window.kind !== undefined) w += `:${l.window.kind}`;
    if (l.window.title !== undefined) w += `=${printValue(l.window.title)}`;
    parts.push(w);
  }
  for (const step of l.path) {
    if (!isPrintableRole(step.role))
      throw invalidArgument(
        `the role "${step.role}" cannot be written in a locator`,
        "use the tree style's words (lower case, as printed) or the platform's AX role",
      );
    let s = step.role;
    if (step.name !== undefined) s += ` ${printValue(step.name)}`;
    if (step.id !== undefined) s += ` [id=${JSON.stringify(step.id)}]`;
    if (step.nth !== undefined) s += ` [nth=${step.nth}]`;
    parts.push(s);
  }
  return parts.join(" >> ");
}
