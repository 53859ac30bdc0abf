/**
 * Checking and storing one value: each option's and each `call` key's value
 * goes through setField, so a step typed on the command line and one given
 * as JSON to `axsnap call` are checked alike; checkComplete then says what a
 * command still lacks. Everything wrong is a UsageError (exit 2).
 */

import { AxsnapError } from "../../model/errors.js";
import { MIN_MAX_TOKENS } from "../../render/budget.js";
import { parseLocator } from "../../session/locator/grammar.js";
import { COMMANDS, type Field, type Modifiers, type Step, type Target, UsageError } from "./grammar.js";

export function wholeNumber(name: string, value: unknown, min: number, max: number, command: string): number {
  const n = typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${show(value)}`, command);
  return n;
}

export function show(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

function nonEmpty(name: string, value: unknown, command: string): string {
  if (typeof value !== "string" || value.length === 0)
    throw new UsageError(`${name} must be a non-empty text, got ${show(value)}`, command);
  return value;
}

/**
 * A TARGET: a bare index (digits), a ref (`@s…:eN`), or else a locator. The
 * three never overlap: a locator starts with `app=`, `window` or a role word,
 * never a digit or `@`, so a malformed ref is refused as one, and anything
 * else must parse as a locator (its error points at the fault with a caret).
 */
function targetOf(name: string, value: unknown, command: string): Target {
  if (typeof value === "number" && Number.isInteger(value) && value >= 0) return value;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const l = (value as { locator?: unknown }).locator;
    if (typeof l === "string" && Object.keys(value).length === 1)
      return { locator: locatorOf(name, l, command) };
  }
  if (typeof value === "string") {
    const t = value.trim();
    if (/^\d{1,9}$/.test(t)) return Number(t);
    if (/^@s[a-z0-9]{7}:e\d{1,9}$/.test(t)) return t;
    if (/^@?e\d+$/.test(t))
      throw new UsageError(
        `${name} ${t} does not say which snapshot it came from; use the full ref @<snapshot id>:e<index> printed by \`axsnap snapshot\``,
        command,
      );
    if (t !== "" && !/^[@\d]/.test(t)) return { locator: locatorOf(name, t, command) };
  }
  throw new UsageError(
    `${name} must be a ref like @s8f3k2p9:e12 (printed by \`axsnap snapshot\`) or a locator, got ${show(value)}`,
    command,
  );
}

/** A locator as typed, once it parses; its parse error (with the caret line) as a usage error. */
function locatorOf(name: string, text: string, command: string): string {
  const t = text.trim();
  try {
    parseLocator(t);
  } catch (e) {
    if (!(e instanceof AxsnapError)) throw e;
    throw new UsageError(
      `${name} is not a ref, so it is read as a ${e.message}\n  ${e.hint}; see \`axsnap ${command} --help\``,
      command,
    );
  }
  return t;
}

function appOf(value: unknown, command: string): string | number {
  if (typeof value === "number" && Number.isInteger(value) && value > 0) return value;
  if (typeof value === "string" && value.trim() !== "")
    return /^\d+$/.test(value.trim()) ? Number(value.trim()) : value.trim();
  throw new UsageError(`--app must be an app name or a pid, got ${show(value)}`, command);
}

function finite(name: string, value: unknown, command: string): number {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  if (typeof n !== "number" || !Number.isFinite(n))
    throw new UsageError(`${name} must be a number of screenshot pixels, got ${show(value)}`, command);
  return n;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], command: string): T {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${name} must be ${allowed.join(" or ")}, got ${show(value)}`, command);
}

/**
 * --escapes: a text read the way values print (lib/render/sanitize.ts): `\n`
 * a newline, `\t` a tab, `\\` a backslash. Any other backslash is refused,
 * not typed: the agent meant an escape this does not know.
 */
function unescaped(name: string, text: string, command: string): string {
  return text.replace(/\\([\s\S]?)/g, (all, c: string) => {
    if (c === "n") return "\n";
    if (c === "t") return "\t";
    if (c === "\\") return "\\";
    throw new UsageError(
      `${name} has ${c === "" ? "a backslash at its end" : `\`${all}\``}, which --escapes does not know: \\n is a newline, \\t a tab, \\\\ a backslash`,
      command,
    );
  });
}

/** Sets one field of a step from a raw value (a string from argv, any JSON value from a call step). */
export function setField(step: Step, field: Field, value: unknown, mods: Modifiers = {}): void {
  const c = step.command;
  switch (field) {
    case "app":
      step.app = appOf(value, c);
      return;
    case "style":
      step.style = oneOf("--style", value, ["tree", "compact"] as const, c);
      return;
    case "ocr": {
      // A call step may give the library's own values; the command line says auto, on or off.
      const v = value === true ? "on" : value === false ? "off" : value;
      const mode = oneOf("--ocr", v, ["auto", "on", "off"] as const, c);
      step.ocr = mode === "auto" ? "auto" : mode === "on";
      return;
    }
    case "textLimit":
      step.textLimit = value === "max" ? "max" : wholeNumber("--text-limit", value, 1, 1e9, c);
      return;
    case "maxNodes":
      step.maxNodes = wholeNumber("--max-nodes", value, 1, 1e7, c);
      return;
    case "maxDepth":
      step.maxDepth = wholeNumber("--max-depth", value, 1, 512, c);
      return;
    case "deadlineMs":
      step.deadlineMs = wholeNumber("--deadline", value, 1, 600_000, c);
      return;
    case "root":
      step.root = targetOf("--root", value, c);
      return;
    case "depth":
      step.depth = wholeNumber("--depth", value, 0, 512, c);
      return;
    case "maxTokens":
      step.maxTokens = wholeNumber("--max-tokens", value, MIN_MAX_TOKENS, 1e7, c);
      return;
    case "screenshot":
      step.screenshot = nonEmpty("--screenshot", value, c);
      return;
    case "target":
    case "into":
    case "from":
    case "to":
      step[field] = targetOf(field === "into" ? "--into" : field.toUpperCase(), value, c);
      return;
    case "text":
      step.text = mods.escapes
        ? unescaped("TEXT", nonEmpty("TEXT", value, c), c)
        : nonEmpty("TEXT", value, c);
      return;
    case "key":
      step.key = nonEmpty("KEY", value, c);
      return;
    case "name":
      step.name = nonEmpty("NAME", value, c);
      return;
    case "value":
      if (mods.number || typeof value === "number") {
        const n = typeof value === "string" ? Number(value) : value;
        if (
          typeof n !== "number" ||
          !Number.isFinite(n) ||
          (typeof value === "string" && value.trim() === "")
        )
          throw new UsageError(`VALUE must be a number with --number, got ${show(value)}`, c);
        step.value = n;
      } else if (typeof value === "string") step.value = mods.escapes ? unescaped("VALUE", value, c) : value;
      else throw new UsageError(`VALUE must be a text or a number, got ${show(value)}`, c);
      return;
    case "direction":
      step.direction = oneOf("DIRECTION", value, ["up", "down", "left", "right"] as const, c);
      return;
    case "pages":
      step.pages = wholeNumber("PAGES", value, 1, 50, c);
      return;
    case "x":
    case "y":
      step[field] = finite(field.toUpperCase(), value, c);
      return;
    case "button":
      step.button = oneOf("--button", value, ["left", "right"] as const, c);
      return;
    case "count":
      step.count = wholeNumber("--count", value, 1, 2, c) as 1 | 2;
      return;
    case "role":
      step.role = nonEmpty("--role", value, c);
      return;
    case "window":
      step.window = nonEmpty("--window", value, c);
      return;
    case "timeoutMs":
      step.timeoutMs = wholeNumber("--timeout", value, 1, 600_000, c);
      return;
    case "program":
      step.program = nonEmpty("PROGRAM", value, c);
      return;
    case "launchArgs":
      if (!Array.isArray(value) || value.some((a) => typeof a !== "string"))
        throw new UsageError(`args must be an array of texts, got ${show(value)}`, c);
      step.launchArgs = value as string[];
      return;
    case "gone":
    case "idle":
    case "marks":
    case "raw":
    case "full":
    case "launchable":
    case "skeleton":
      if (typeof value !== "boolean")
        throw new UsageError(`${field} must be true or false, got ${show(value)}`, c);
      step[field] = value;
      return;
    case "states": {
      const list = typeof value === "string" ? [value] : value;
      if (
        !Array.isArray(list) ||
        list.length === 0 ||
        list.some((v) => typeof v !== "string" || v.trim() === "")
      )
        throw new UsageError(`--state must be a state word like checked, got ${show(value)}`, c);
      step.states = [...(step.states ?? []), ...(list as string[])];
      return;
    }
    case "limit":
      step.limit = wholeNumber("--limit", value, 1, 1000, c);
      return;
    case "exact":
      if (typeof value !== "boolean")
        throw new UsageError(`exact must be true or false, got ${show(value)}`, c);
      step.exact = value;
      return;
    case "secret":
      if (typeof value !== "boolean")
        throw new UsageError(`secret must be true or false, got ${show(value)}`, c);
      step.secret = value;
      return;
    case "locateTimeoutMs":
      step.locateTimeoutMs = wholeNumber("--locate-timeout", value, 1, 600_000, c);
      return;
    case "locator": {
      const t = typeof value === "string" ? value.trim() : "";
      if (/^(@|\d+$)/.test(t))
        throw new UsageError(
          `locate takes a locator (app=NAME >> role "name"), not ${show(value)}; a ref needs no locating: \`axsnap resolve REF\` checks one`,
          c,
        );
      step.locator = locatorOf("LOCATOR", nonEmpty("LOCATOR", value, c), c);
      return;
    }
    case "of":
      if (typeof value !== "string" || !/^s[a-z0-9]{7}$/.test(value.trim()))
        throw new UsageError(`--of must be a snapshot id like s8f3k2p9, got ${show(value)}`, c);
      step.of = value.trim();
      return;
  }
}

/** Positional name → step field. */
export const POSITIONAL: Record<string, Field> = {
  target: "target",
  from: "from",
  to: "to",
  text: "text",
  value: "value",
  key: "key",
  direction: "direction",
  pages: "pages",
  name: "name",
  x: "x",
  y: "y",
  program: "program",
  locator: "locator",
};

/** What every command needs beyond its positionals; checked for argv and call steps alike. */
export function checkComplete(step: Step, inCall: boolean): void {
  const c = step.command;
  const spec = COMMANDS[c]!;
  for (const a of spec.args) {
    if (a.endsWith("?") || c === "help") continue;
    const field = POSITIONAL[a]!;
    if (step[field] === undefined)
      throw new UsageError(
        `${c} needs ${a.toUpperCase()}${inCall ? ` (the key "${field}")` : ""}; see \`axsnap ${c} --help\``,
        c,
      );
  }
  // A snapshot of a ref's subtree knows its app from the ref (a locator's from its app= segment).
  const rootRef = c === "snapshot" && step.root !== undefined && typeof step.root !== "number";
  if (
    (c === "snapshot" || c === "wait" || c === "windows" || c === "find") &&
    step.app === undefined &&
    !rootRef
  )
    throw new UsageError(`${c} needs --app NAME|PID; \`axsnap apps\` lists the apps`, c);
  if (step.marks === true && step.screenshot === undefined)
    throw new UsageError("--marks draws on the screenshot: give --screenshot FILE too", c);
  if (
    c === "find" &&
    step.role === undefined &&
    step.name === undefined &&
    step.text === undefined &&
    step.states === undefined
  )
    throw new UsageError(
      "find needs at least one of --role, --name, --text, --state; `axsnap snapshot` prints the whole window",
      c,
    );
  if (c === "wait") {
    const kinds = [
      step.text !== undefined,
      step.role !== undefined || step.name !== undefined,
      step.idle === true,
      step.window !== undefined,
    ];
    if (kinds.filter(Boolean).length !== 1)
      throw new UsageError("wait needs exactly one of --text, --role/--name, --window, --idle", c);
    if (step.idle === true && step.gone === true)
      throw new UsageError("--gone goes with --text or --role/--name", c);
  }
  if (
    !inCall &&
    (c === "press" || (c === "type" && step.into === undefined)) &&
    step.app === undefined &&
    !step.of
  )
    throw new UsageError(`${c} needs --app NAME|PID or --of SNAPSHOT_ID: which app the keys go to`, c);
  if (!inCall)
    for (const f of ["target", "into", "from", "to"] as const)
      if (typeof step[f] === "number")
        throw new UsageError(
          `a bare index (${step[f]}) means something only inside \`axsnap call\`; use the ref @<snapshot id>:e${step[f]} printed by \`axsnap snapshot\``,
          c,
        );
}
