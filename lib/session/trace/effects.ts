/**
 * The effects a recorded step saw, as checks a replay (or an exported
 * program) makes after doing the step again (design 4.1). Built from the
 * recorded result alone: no live snapshot exists at export time, which is
 * why the recorder stores each change with its locator.
 *
 * A check names something the step caused and a person would look for: the
 * dialog that opened, the target's new value or state, the status line that
 * now reads differently. Moves, resizes and focus moving are not effects
 * anyone asked for, so they give no check; a secret never gives one.
 */

import type { WindowKind } from "../../observe/windows.js";
import { readValue } from "../../render/sanitize.js";
import { parseLocator, printLocator } from "../locator/grammar.js";
import type { Expectation } from "./expect.js";
import type { TraceChange, TraceStepLine, TraceSurface } from "./types.js";

/** At most this many checks per step: enough to prove the step did its work, few enough to read. */
const MAX_CHECKS = 3;
/** typeText checks that the field ends up containing the last this-many typed characters. */
const TYPED_TAIL = 40;
/** Window kinds whose opening or closing is a step's effect (a menu opening is the way, not the goal). */
const SURFACE_KINDS = new Set(["dialog", "window", "sheet"]);
/** States that change as a side effect of acting at all: they never make a check. */
const INCIDENTAL_STATES = new Set(["focused"]);
const SECRET_MARK = "«secret»";

export function expectationsOf(step: TraceStepLine): Expectation[] {
  const result = step.result;
  if (!result) return [];
  const out: Expectation[] = [];
  const secret = step.secret !== undefined;
  for (const s of result.opened ?? [])
    if (SURFACE_KINDS.has(s.kind)) out.push({ window: surface(s), opened: true });
  for (const s of result.closed ?? [])
    if (SURFACE_KINDS.has(s.kind)) out.push({ window: surface(s), closed: true });
  const surfaces = out.length > 0;
  const changes = result.changes ?? [];
  const target = step.targets?.[0];
  const isTarget = (c: TraceChange) =>
    c.target === true ||
    (c.target === undefined && target?.locator !== undefined && c.locator === target.locator);

  const own = changes.find((c) => c.kind === "changed" && isTarget(c));
  if (own?.locator !== undefined) {
    const e = targetCheck(step, own, secret);
    if (e) out.push(e);
  }
  const other = changes.find(
    (c) =>
      c.kind === "changed" &&
      !isTarget(c) &&
      c.locator !== undefined &&
      !mentionsSecret(c) &&
      (c.fields?.includes("name") || (c.fields?.includes("value") && !secret)),
  );
  if (other?.locator !== undefined) {
    out.push(
      other.fields?.includes("name") || other.value === undefined
        ? { locator: other.locator, present: true }
        : { locator: other.locator, value: readValue(other.value) },
    );
  } else if (!surfaces) {
    // An element that appeared, when nothing else says what happened; with a window opened it is that window's.
    const added = changes.find((c) => c.kind === "added" && c.locator !== undefined && !mentionsSecret(c));
    if (added?.locator !== undefined) out.push({ locator: added.locator, present: true });
  }
  return out.slice(0, MAX_CHECKS);
}

function surface(s: TraceSurface): { title?: string; kind?: WindowKind } {
  return { ...(s.title === undefined ? {} : { title: s.title }), kind: s.kind };
}

/** The target's own change: its states gained and lost, or its value (never a secret's). */
function targetCheck(step: TraceStepLine, c: TraceChange, secret: boolean): Expectation | undefined {
  const locator = c.locator!;
  const fields = c.fields ?? [];
  let states: { has?: string[]; lacks?: string[] } | undefined;
  if (fields.includes("states")) {
    // The recorder leaves an empty list out: a target or change without states had none.
    const before = step.targets?.[0]?.states ?? [];
    const after = c.states ?? [];
    const has = after.filter((s) => !INCIDENTAL_STATES.has(s) && !before.includes(s));
    const lacks = before.filter((s) => !INCIDENTAL_STATES.has(s) && !after.includes(s));
    if (has.length > 0 || lacks.length > 0)
      states = { ...(has.length > 0 ? { has } : {}), ...(lacks.length > 0 ? { lacks } : {}) };
  }
  let value: string | { contains: string } | undefined;
  if (fields.includes("value") && !secret && !mentionsSecret(c)) {
    const typed = typedText(step);
    if (step.method === "typeText" && typed !== undefined) value = { contains: typed.slice(-TYPED_TAIL) };
    else if (c.value !== undefined) value = readValue(c.value);
  }
  if (!states && value === undefined) return undefined;
  return { locator, ...(states ? { states } : {}), ...(value === undefined ? {} : { value }) };
}

/** The text a typeText step typed, as recorded (undefined for a secret). */
export function typedText(step: TraceStepLine): string | undefined {
  if (step.secret !== undefined) return undefined;
  const t = step.text ?? step.args.text;
  return typeof t === "string" && t !== SECRET_MARK ? t : undefined;
}

function mentionsSecret(c: TraceChange): boolean {
  return c.line.includes(SECRET_MARK) || (c.value?.includes(SECRET_MARK) ?? false);
}

/** A check in words, as replay's report and the skill print it. */
export function describeExpectation(e: Expectation): string {
  if ("window" in e) {
    const w = e.window;
    const title =
      w.title === undefined
        ? ""
        : ` ${w.title instanceof RegExp ? String(w.title) : JSON.stringify(w.title)}`;
    return `${w.kind ?? "window"}${title} ${"opened" in e ? "opened" : "closed"}`;
  }
  const where = typeof e.locator === "string" ? shortLocator(e.locator) : "the element";
  if ("present" in e) return `${where} present`;
  if ("gone" in e) return `${where} gone`;
  const parts: string[] = [];
  if (e.states?.has?.length) parts.push(e.states.has.join(", "));
  if (e.states?.lacks?.length) parts.push(`not ${e.states.lacks.join(", not ")}`);
  if (typeof e.value === "string") parts.push(`value ${JSON.stringify(e.value)}`);
  else if (e.value) parts.push(`value contains ${JSON.stringify(e.value.contains)}`);
  return `${where} ${parts.join(", ")}`;
}

/** A locator's last element step, as a person reads it: `push button "Save"` (the whole text when it does not parse). */
export function shortLocator(locator: string): string {
  try {
    const l = parseLocator(locator);
    const last = l.path[l.path.length - 1];
    if (last) return printLocator({ path: [last] });
    return printLocator({ ...(l.window ? { window: l.window } : {}), path: [] }) || locator;
  } catch {
    return locator;
  }
}
