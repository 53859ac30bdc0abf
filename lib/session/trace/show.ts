/**
 * `axsnap trace show FILE`: a header line, then one line a step. The words a
 * step is summed up in (its target, its effects, REFUSED or UNCERTAIN) are
 * made here once; the viewer (view.ts) names its steps with the same words.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ReadTrace, TraceStepLine, TraceSurface } from "./types.js";

/**
 * A string quoted for a line of text: JSON quoting, plus the characters that
 * break a line or reorder it on a terminal (U+2028/9, C1 controls, bidi
 * overrides). Names are whatever the app says: hostile input.
 */
export function quote(s: string): string {
  return JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** Plain words from a line an app printed: the same unsafe characters, escaped, no quotes. */
export function plain(s: string): string {
  return quote(s).slice(1, -1).replace(/\\"/g, '"');
}

/** Steps in the order they started: `n` is the order they finished (concurrent MCP calls). */
export function orderedSteps(trace: ReadTrace): TraceStepLine[] {
  return [...trace.steps].sort((a, b) => a.startedAt - b.startedAt || a.n - b.n);
}

/** `12:00:02.900`, in UTC, as trace.json's createdAt. */
export function clockOf(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}

/** What a step acted on or observed: `menu item "Save As..."`, or the window a snapshot saw. */
export function targetOf(step: TraceStepLine, trace: ReadTrace): string {
  const t = step.targets?.[0];
  if (t) {
    const more = (step.targets?.length ?? 0) > 1 ? ` (+${step.targets!.length - 1})` : "";
    return `${plain(t.roleText || t.role)}${t.name !== undefined && t.name !== "" ? ` ${quote(t.name)}` : ""}${more}`;
  }
  if (step.point)
    return `point ${step.point.x},${step.point.y}${step.point.to ? ` → ${step.point.to.x},${step.point.to.y}` : ""}`;
  if (step.keys !== undefined) return `keys ${quote(step.keys)}`;
  const seen = trace.snapshots.get(step.after ?? step.before ?? "");
  if (seen) return `${seen.window?.kind ?? "window"} ${quote(seen.window?.title ?? seen.app.name)}`;
  return "";
}

/** `REFUSED NOT_ENABLED` or `UNCERTAIN`: what must stand out; undefined otherwise. */
export function flagOf(step: TraceStepLine): string | undefined {
  if (step.error) return `REFUSED ${step.error.code}`;
  if (step.result?.delivery === "delivery_uncertain") return "UNCERTAIN";
  return undefined;
}

function surface(verb: string, s: TraceSurface): string {
  return `${verb} ${plain(s.kind)}${s.title !== undefined ? ` ${quote(s.title)}` : ""}`;
}

/** What the step did that an agent would look for: surfaces opened and closed, else the first change, else what it read. */
export function effectsOf(step: TraceStepLine): string[] {
  const r = step.result;
  if (!r) {
    if (step.error || step.read === undefined) return [];
    return [`read ${step.read.length === 1 ? "line" : "lines"} ${step.read.join(", ")}`];
  }
  const out = [
    ...(r.opened ?? []).map((s) => surface("opened", s)),
    ...(r.closed ?? []).map((s) => surface("closed", s)),
  ];
  if (out.length === 0 && r.changes && r.changes.length > 0) {
    const c = r.changes[0]!;
    out.push(`${c.kind} ${plain(c.line)}${r.changes.length > 1 ? ` (+${r.changes.length - 1} more)` : ""}`);
  }
  return out;
}

/** The viewer's name for a step: `3 click menu item "Save As..." — opened dialog "Save As"`. */
export function stepName(step: TraceStepLine, trace: ReadTrace): string {
  const flag = flagOf(step);
  const effects = effectsOf(step);
  const outcome = [...(flag ? [flag] : []), ...effects].join(" · ") || step.result?.delivery || "";
  return (
    [`${step.n} ${step.method}`, targetOf(step, trace)].filter((s) => s !== "").join(" ") +
    (outcome ? ` — ${outcome}` : "")
  );
}

/** One `trace show` line: `3 12:00:02.900 mcp click  menu item "Save As..."  delivered_unverified · opened dialog "Save As"  655 ms`. */
export function showStep(step: TraceStepLine, trace: ReadTrace): string {
  const flag = flagOf(step);
  const delivery = step.result && step.result.delivery !== "delivery_uncertain" ? [step.result.delivery] : [];
  const outcome = [...(flag ? [flag] : []), ...delivery, ...effectsOf(step)].join(" · ");
  const cols = [
    `${step.n} ${clockOf(step.startedAt)} ${step.door} ${step.method}`,
    targetOf(step, trace),
    outcome,
  ];
  return `${cols.filter((c) => c !== "").join("  ")}  ${Math.round(step.timings.ms)} ms`;
}

function sizeOf(path: string): number | undefined {
  try {
    let total = 0;
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else total += statSync(p).size;
      }
    };
    walk(path);
    return total;
  } catch {
    return undefined;
  }
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** The header line: run id, steps, processes, screenshots, size, and `truncated` when the last line was cut short. */
export function showHeader(trace: ReadTrace): string {
  const steps = trace.steps;
  const pids = new Set(steps.map((s) => s.pid));
  const doors = [...new Set(steps.map((s) => s.door))];
  let shots = 0;
  let withheld = 0;
  for (const s of trace.snapshots.values()) {
    if (s.shot && "file" in s.shot) shots++;
    else if (s.shot) withheld++;
  }
  const size = sizeOf(trace.path);
  const parts = [
    `run ${plain(trace.header.runId)}`,
    `${steps.length} ${steps.length === 1 ? "step" : "steps"}`,
    `${pids.size} ${pids.size === 1 ? "process" : "processes"}${doors.length > 0 ? ` (${doors.join(", ")})` : ""}`,
    `${shots} screenshots${withheld > 0 ? ` (${withheld} withheld: secret)` : ""}${trace.header.screenshots ? "" : " (off)"}`,
    ...(size !== undefined ? [bytes(size)] : []),
    `started ${plain(trace.header.createdAt)}`,
    ...(trace.truncated ? ["truncated (the last line was cut short and skipped)"] : []),
  ];
  return parts.join(" · ");
}

export function showTrace(trace: ReadTrace): string {
  return [showHeader(trace), ...orderedSteps(trace).map((s) => showStep(s, trace))].join("\n");
}
