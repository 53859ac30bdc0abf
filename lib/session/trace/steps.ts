/**
 * A recorded step read back for doing it again (export and replay share
 * this reading, so a program and a replay of one trace do the same thing):
 * which app, which targets by locator, the method's arguments, and whether
 * it can be done again at all.
 */
import { parseLocator } from "../locator/grammar.js";
import { shortLocator } from "./effects.js";
import type { ReadTrace, TraceStepLine, TraceTarget } from "./types.js";

/** The Session methods that act (everything else a trace holds is an observation). */
export const ACTIONS = new Set([
  "click",
  "setValue",
  "performAction",
  "pressKey",
  "typeText",
  "scroll",
  "drag",
  "clickAt",
  "rightClickAt",
  "doubleClickAt",
  "scrollAt",
  "dragAt",
]);
const PIXELS = new Set(["clickAt", "rightClickAt", "doubleClickAt", "scrollAt", "dragAt"]);

export const SECRET_MARK = "«secret»";

/** What a step does, as export and replay do it again. */
export type Plan =
  | { kind: "skip"; why: string }
  | { kind: "refused"; code: string; message: string }
  | { kind: "unreplayable"; why: string }
  | { kind: "wait"; app: string | number; condition: Record<string, unknown>; timeoutMs?: number }
  | {
      kind: "act";
      /** The Session method to call: a pixel click becomes a click on the element recorded under the point. */
      method: "click" | "setValue" | "performAction" | "pressKey" | "typeText" | "scroll" | "drag";
      app: string;
      targets: { locator: string; target: TraceTarget }[];
      text?: string;
      value?: string | number;
      keys?: string;
      name?: string;
      direction?: "up" | "down" | "left" | "right";
      pages?: number;
      button?: "left" | "right";
      count?: 1 | 2;
      /** The environment variable the typed text or value comes from. */
      secret?: string;
      /** A pixel step done on its element: where it was. */
      wasPoint?: { x: number; y: number };
    };

export function planOf(trace: ReadTrace, step: TraceStepLine): Plan {
  if (step.method === "waitFor") return waitPlan(trace, step);
  if (!ACTIONS.has(step.method)) return { kind: "skip", why: "an observation" };
  if (step.error) return { kind: "refused", code: step.error.code, message: step.error.message };
  const app = appOf(trace, step);
  if (app === undefined) return { kind: "unreplayable", why: "the trace does not say which app it acted on" };
  const recorded = step.targets ?? [];
  const targets: { locator: string; target: TraceTarget }[] = [];
  for (const t of recorded) {
    if (t.locator === undefined)
      return {
        kind: "unreplayable",
        why: `${t.line} was recorded without a locator (a subtree snapshot cannot show it is unique)`,
      };
    targets.push({ locator: t.locator, target: t });
  }
  const a = step.args;
  const secret = step.secret?.env;
  if (PIXELS.has(step.method)) {
    const point =
      step.point ??
      (num(a.x) !== undefined && num(a.y) !== undefined ? { x: num(a.x)!, y: num(a.y)! } : undefined);
    const at = point ? `${point.x}/${point.y}` : "a point";
    if (step.method === "scrollAt" || step.method === "dragAt")
      return {
        kind: "unreplayable",
        why: `${step.method} at ${at}: wheel and drag input at pixels has no element to find again`,
      };
    if (targets.length === 0)
      return { kind: "unreplayable", why: `${step.method} at ${at} hit no element the trace recorded` };
    const right = step.method === "rightClickAt" || a.button === 3 || a.button === "right";
    const double = step.method === "doubleClickAt" || a.count === 2;
    return {
      kind: "act",
      method: "click",
      app,
      targets: targets.slice(0, 1),
      ...(right ? { button: "right" as const } : {}),
      ...(double ? { count: 2 as const } : {}),
      ...(point ? { wasPoint: point } : {}),
    };
  }
  const needs = step.method === "drag" ? 2 : ["pressKey", "typeText"].includes(step.method) ? 0 : 1;
  if (targets.length < needs)
    return { kind: "unreplayable", why: `${step.method} was recorded without its target` };
  const base = { kind: "act" as const, app, targets };
  switch (step.method) {
    case "click": {
      const right = a.button === "right" || a.button === 3;
      return {
        ...base,
        method: "click",
        ...(right ? { button: "right" } : {}),
        ...(a.count === 2 ? { count: 2 } : {}),
      };
    }
    case "setValue": {
      const value = a.value;
      if (secret !== undefined) return { ...base, method: "setValue", secret };
      if (typeof value !== "string" && typeof value !== "number")
        return { kind: "unreplayable", why: "setValue was recorded without its value" };
      return { ...base, method: "setValue", value };
    }
    case "performAction":
      if (typeof a.name !== "string")
        return { kind: "unreplayable", why: "performAction was recorded without the action's name" };
      return { ...base, method: "performAction", name: a.name };
    case "pressKey": {
      const keys = step.keys ?? a.keys ?? a.key;
      if (typeof keys !== "string")
        return { kind: "unreplayable", why: "pressKey was recorded without its keys" };
      return { ...base, method: "pressKey", keys };
    }
    case "typeText": {
      if (secret !== undefined) return { ...base, method: "typeText", secret };
      const text = step.text ?? a.text;
      if (typeof text !== "string" || text === SECRET_MARK)
        return {
          kind: "unreplayable",
          why: "typeText was recorded without its text (a secret with no variable name)",
        };
      return { ...base, method: "typeText", text };
    }
    case "scroll": {
      const direction = a.direction;
      if (direction !== "up" && direction !== "down" && direction !== "left" && direction !== "right")
        return { kind: "unreplayable", why: "scroll was recorded without its direction" };
      return { ...base, method: "scroll", direction, pages: num(a.pages) ?? 1 };
    }
    default:
      return { ...base, method: "drag" };
  }
}

function waitPlan(trace: ReadTrace, step: TraceStepLine): Plan {
  const condition = step.args.condition;
  if (condition === null || typeof condition !== "object" || Array.isArray(condition))
    return { kind: "skip", why: "a wait recorded without its condition" };
  // A held element's ref means nothing in another run.
  if ("target" in condition) return { kind: "skip", why: "a wait on a held element" };
  const app = appOf(trace, step) ?? (step.args.app as string | number | undefined);
  if (app === undefined) return { kind: "skip", why: "a wait on an app the trace does not name" };
  const timeoutMs = num(step.args.timeoutMs);
  return {
    kind: "wait",
    app,
    condition: condition as Record<string, unknown>,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}

/** The app a step acted on, by name: its snapshot's app, else its target's locator, else its arguments. */
export function appOf(trace: ReadTrace, step: TraceStepLine): string | undefined {
  for (const id of [step.before, step.after, step.targets?.[0]?.snapshot])
    if (id !== undefined) {
      const s = trace.snapshots.get(id);
      if (s) return s.app.name;
    }
  for (const t of step.targets ?? [])
    if (t.locator !== undefined)
      try {
        const app = parseLocator(t.locator).app;
        if (app !== undefined) return app;
      } catch {
        // A locator that does not parse names no app; the next source may.
      }
  const a = step.args.app;
  return typeof a === "string" ? a : undefined;
}

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** One line, safe in a comment or a Markdown list: no line breaks, no control characters. */
export function oneLine(s: string, max = 160): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
  const flat = s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** What a step's result showed, in a few words: `opened dialog "Details"`, `changed: label "Status: saved Ada" (name)`. */
export function effectWords(step: TraceStepLine): string {
  const r = step.result;
  if (!r) return "";
  const parts: string[] = [];
  for (const s of r.opened ?? [])
    parts.push(`opened ${s.kind}${s.title === undefined ? "" : ` ${JSON.stringify(s.title)}`}`);
  for (const s of r.closed ?? [])
    parts.push(`closed ${s.kind}${s.title === undefined ? "" : ` ${JSON.stringify(s.title)}`}`);
  const changed = (r.changes ?? []).filter(
    (c) => c.kind === "changed" && c.fields?.some((f) => f !== "moved" && f !== "resized"),
  );
  if (changed.length > 0)
    parts.push(
      `changed: ${changed
        .slice(0, 3)
        .map((c) => `${c.locator ? shortLocator(c.locator) : c.line} (${(c.fields ?? []).join(", ")})`)
        .join("; ")}${changed.length > 3 ? ` and ${changed.length - 3} more` : ""}`,
    );
  const added = (r.changes ?? []).filter((c) => c.kind === "added").length;
  const removed = (r.changes ?? []).filter((c) => c.kind === "removed").length;
  if (added > 0) parts.push(`${added} added`);
  if (removed > 0) parts.push(`${removed} removed`);
  return parts.join(" · ");
}
