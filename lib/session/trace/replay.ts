/**
 * `axsnap replay FILE` (design 4.4): runs a trace again, step by step, and
 * stops at the first drift with a report of what it looked for, what is
 * there now and what the recorded run saw.
 *
 * Each target is found again by its locator (never its index), with the
 * recorded record as the hint that ranks candidates by place; the action
 * runs with the recorded arguments; then each effect the recorded run saw
 * (effects.ts) is waited for. A control that is disabled until the app has
 * caught up (GTK enables a dialog's Save once it has seen the name) refuses
 * with nothing sent: that is tried again, located afresh, until the step's
 * time is up. A secret missing from the callback and the environment stops
 * the replay before anything is sent.
 */

import { AxsnapError, type ErrorCode, type LocatorCandidate } from "../../model/errors.js";
import type { ActionResult } from "../act/result.js";
import type { WaitCondition } from "../act/wait.js";
import type { Located } from "../locator/locate.js";
import { createSession, type Session } from "../session.js";
import { describeExpectation, expectationsOf } from "./effects.js";
import { readTrace } from "./read.js";
import { effectWords, oneLine, type Plan, planOf } from "./steps.js";
import type { TraceStepLine, TraceTarget } from "./types.js";

export type DriftKind =
  | "not_found"
  | "ambiguous"
  | "window"
  | "refused"
  | "effect"
  | "secret_missing"
  | "unreplayable";

export interface ReplayOptions {
  /** The session to replay in; default a new one, closed at the end. */
  session?: Session;
  /** A secret's value by its environment variable name; default process.env. */
  secrets?: (name: string) => string | undefined;
  continueOnDrift?: boolean;
  /** Per step: locating, acting (retried while NOT_ENABLED) and checking its effect. Default 10000 ms. */
  stepTimeoutMs?: number;
  onStep?: (result: ReplayStepResult) => void;
}

export interface ReplayStepResult {
  step: number;
  call: string;
  ok: boolean;
  ms: number;
  /** The effects checked, in words. */
  effects: string[];
  warnings?: string[];
}

export interface ReplayDrift {
  step: number;
  call: string;
  kind: DriftKind;
  locator?: string;
  error?: { code: ErrorCode; message: string; hint?: string };
  now?: { candidates?: LocatorCandidate[]; matches?: LocatorCandidate[]; changes?: string };
  recorded?: { line?: string; ancestors?: string[]; snapshot?: string; index?: number; changes?: string };
}

export interface ReplayReport {
  ok: boolean;
  trace: string;
  runId: string;
  steps: number;
  replayed: number;
  warnings: string[];
  drift?: ReplayDrift;
  drifts?: ReplayDrift[];
  results: ReplayStepResult[];
}

/** Refusals that sent nothing and may pass once the app has caught up. */
const RETRIED = new Set<ErrorCode>(["NOT_ENABLED", "STALE_REF"]);
/** Between tries of a refused step: the app gets a moment to enable the control. */
const RETRY_PAUSE_MS = 150;
/** An effect gets at least this long, whatever is left of the step's time. */
const MIN_EXPECT_MS = 1000;

/** A step that drifted: thrown inside a step, caught by the loop. */
class Drifted extends Error {
  constructor(readonly drift: ReplayDrift) {
    super(drift.kind);
  }
}

export async function replayTrace(path: string, options: ReplayOptions = {}): Promise<ReplayReport> {
  if (options === null || typeof options !== "object")
    throw new TypeError("replay options must be an object");
  const stepTimeoutMs = options.stepTimeoutMs ?? 10_000;
  if (typeof stepTimeoutMs !== "number" || !(stepTimeoutMs >= 100 && stepTimeoutMs <= 600_000))
    throw new AxsnapError(
      "INVALID_ARGUMENT",
      `stepTimeoutMs must be between 100 and 600000, got ${String(stepTimeoutMs)}`,
    );
  const trace = readTrace(path);
  const session = options.session ?? createSession();
  const secretOf = options.secrets ?? ((name: string) => process.env[name]);
  const report: ReplayReport = {
    ok: true,
    trace: path,
    runId: trace.header.runId,
    steps: trace.steps.length,
    replayed: 0,
    warnings: [],
    results: [],
  };
  if (trace.truncated)
    report.warnings.push(
      "the trace's last line was cut short (its writer was killed): that step is not replayed",
    );
  const drifts: ReplayDrift[] = [];
  try {
    for (const step of trace.steps) {
      const plan = planOf(trace, step);
      if (plan.kind === "skip" || plan.kind === "refused") continue;
      const started = performance.now();
      const warnings: string[] = [];
      let effects: string[] = [];
      try {
        effects = await replayStep(session, step, plan, {
          deadline: started + stepTimeoutMs,
          secretOf,
          warnings,
        });
        report.replayed++;
      } catch (e) {
        if (!(e instanceof Drifted)) throw e;
        drifts.push(e.drift);
      }
      const ok = drifts.at(-1)?.step !== step.n;
      const result: ReplayStepResult = {
        step: step.n,
        call: step.call,
        ok,
        ms: Math.round(performance.now() - started),
        effects,
        ...(warnings.length > 0 ? { warnings } : {}),
      };
      report.warnings.push(...warnings.map((w) => `step ${step.n}: ${w}`));
      report.results.push(result);
      options.onStep?.(result);
      if (!ok && options.continueOnDrift !== true) break;
    }
  } finally {
    if (!options.session) await session.close();
  }
  if (drifts.length > 0) {
    report.ok = false;
    report.drift = drifts[0]!;
    if (options.continueOnDrift === true) report.drifts = drifts;
  }
  return report;
}

interface StepBudget {
  deadline: number;
  secretOf: (name: string) => string | undefined;
  warnings: string[];
}

/** Does one step again; returns the effects checked, in words, or throws Drifted. */
async function replayStep(
  session: Session,
  step: TraceStepLine,
  plan: Exclude<Plan, { kind: "skip" | "refused" }>,
  budget: StepBudget,
): Promise<string[]> {
  const base = { step: step.n, call: step.call };
  if (plan.kind === "unreplayable")
    throw new Drifted({
      ...base,
      kind: "unreplayable",
      error: { code: "INVALID_ARGUMENT", message: plan.why },
    });
  const left = () => Math.max(1, Math.round(budget.deadline - performance.now()));
  if (plan.kind === "wait") {
    try {
      await session.waitFor(plan.app, plan.condition as unknown as WaitCondition, { timeoutMs: left() });
    } catch (e) {
      throw new Drifted({ ...base, kind: "effect", error: errorOf(e) });
    }
    return [`waited for ${oneLine(JSON.stringify(plan.condition))}`];
  }
  let secret: string | undefined;
  if (plan.secret !== undefined) {
    secret = budget.secretOf(plan.secret);
    if (secret === undefined || secret === "")
      throw new Drifted({
        ...base,
        kind: "secret_missing",
        error: {
          code: "INVALID_ARGUMENT",
          message: `step ${step.n} types a secret: set ${plan.secret} (or pass it through the secrets callback); nothing was sent`,
        },
      });
  }
  // Locate, act; a refusal that sent nothing and may pass later is tried again, located afresh.
  let result: ActionResult;
  for (;;) {
    const located: Located[] = [];
    for (const t of plan.targets)
      located.push(await locateTarget(session, step, t.locator, t.target, left(), budget));
    try {
      result = await act(session, plan, located, secret);
      break;
    } catch (e) {
      const retried =
        e instanceof AxsnapError &&
        RETRIED.has(e.code) &&
        e.delivery === "not_delivered" &&
        left() > RETRY_PAUSE_MS * 2;
      if (retried) {
        await new Promise((done) => setTimeout(done, RETRY_PAUSE_MS));
        continue;
      }
      const target = plan.targets[0];
      throw new Drifted({
        ...base,
        kind: "refused",
        ...(target ? { locator: target.locator, recorded: recordedOf(target.target, step) } : {}),
        error: errorOf(e),
      });
    }
  }
  const checks = expectationsOf(step);
  const effects: string[] = [];
  for (const e of checks) {
    try {
      await session.expect(plan.app, e, { timeoutMs: Math.max(MIN_EXPECT_MS, left()) });
      effects.push(describeExpectation(e));
    } catch (err) {
      if (!(err instanceof AxsnapError) || err.code !== "EFFECT_NOT_SEEN") throw err;
      const target = plan.targets[0];
      throw new Drifted({
        ...base,
        kind: "effect",
        ...(target ? { locator: target.locator } : {}),
        error: errorOf(err),
        now: {
          changes:
            result.changes?.text ??
            (result.opened?.length
              ? `opened ${result.opened.map((o) => JSON.stringify(o.title)).join(", ")}`
              : "no change seen"),
        },
        recorded: {
          ...(target ? recordedOf(target.target, step) : {}),
          changes: step.result?.changesText ?? (effectWords(step) || "no change"),
        },
      });
    }
  }
  return effects;
}

async function locateTarget(
  session: Session,
  step: TraceStepLine,
  locator: string,
  target: TraceTarget,
  timeoutMs: number,
  budget: StepBudget,
): Promise<Located> {
  try {
    const found = await session.locate(locator, {
      timeoutMs,
      near: {
        ...(target.frame ? { frame: target.frame } : {}),
        ancestors: target.ancestors,
      },
    });
    for (const note of found.notes) if (/differs/.test(note)) budget.warnings.push(note);
    return found;
  } catch (e) {
    const err = errorOf(e);
    const kind: DriftKind =
      err.code === "AMBIGUOUS_TARGET"
        ? "ambiguous"
        : err.code === "WINDOW_NOT_FOUND" || err.code === "APP_NOT_FOUND"
          ? "window"
          : "not_found";
    const a = e instanceof AxsnapError ? e : undefined;
    const now = {
      ...(a?.candidates ? { candidates: a.candidates } : {}),
      ...(a?.matches ? { matches: a.matches } : {}),
    };
    throw new Drifted({
      step: step.n,
      call: step.call,
      kind,
      locator,
      error: err,
      ...(Object.keys(now).length > 0 ? { now } : {}),
      recorded: recordedOf(target, step),
    });
  }
}

function act(
  session: Session,
  plan: Extract<Plan, { kind: "act" }>,
  located: Located[],
  secret: string | undefined,
): Promise<ActionResult> {
  const t = located.map((l) => l.record);
  const secretOpt = plan.secret === undefined ? {} : { secret: plan.secret };
  switch (plan.method) {
    case "click":
      return session.click(t[0]!, {
        ...(plan.button === "right" ? { button: "right" as const } : {}),
        ...(plan.count === 2 ? { count: 2 as const } : {}),
      });
    case "setValue":
      return session.setValue(t[0]!, secret ?? plan.value!, secretOpt);
    case "performAction":
      return session.performAction(t[0]!, plan.name!);
    case "pressKey":
      return session.pressKey(plan.keys!, { app: plan.app });
    case "typeText":
      return session.typeText(secret ?? plan.text!, {
        ...(t[0] ? { target: t[0] } : { app: plan.app }),
        ...secretOpt,
      });
    case "scroll":
      return session.scroll(t[0]!, plan.direction!, plan.pages ?? 1);
    case "drag":
      return session.drag(t[0]!, t[1]!);
  }
}

function recordedOf(t: TraceTarget, step: TraceStepLine): NonNullable<ReplayDrift["recorded"]> {
  return {
    line: t.line,
    ancestors: t.ancestors,
    snapshot: t.snapshot ?? step.before,
    index: t.index,
  };
}

function errorOf(e: unknown): { code: ErrorCode; message: string; hint?: string } {
  if (e instanceof AxsnapError) return { code: e.code, message: e.message, hint: e.hint };
  return { code: "ACTION_FAILED", message: e instanceof Error ? e.message : String(e) };
}

/** The report as text: one line a step, then the drift in words; its last line says where it stopped. */
export function replayText(report: ReplayReport): string {
  const out: string[] = [`replay ${report.trace} · run ${report.runId} · ${report.steps} steps in the trace`];
  const drifts = report.drifts ?? (report.drift ? [report.drift] : []);
  for (const r of report.results) {
    const d = drifts.find((x) => x.step === r.step);
    const what = d ? `DRIFT ${d.kind}${d.error ? ` ${d.error.code}` : ""}` : "ok";
    const effects = r.effects.length > 0 ? ` · ${r.effects.join("; ")}` : "";
    out.push(`${String(r.step).padStart(3)} ${r.call.padEnd(14)} ${what}${effects}  ${r.ms} ms`);
  }
  for (const w of report.warnings) out.push(`warning: ${w}`);
  for (const d of drifts) out.push(...driftLines(d));
  if (report.ok) out.push(`replayed ${report.replayed} steps of ${report.steps}: ok`);
  else if (report.drifts && report.drifts.length > 1)
    out.push(`${report.drifts.length} drifts (first at step ${report.drifts[0]!.step} of ${report.steps})`);
  else out.push(`stopped at step ${report.drift!.step} of ${report.steps}`);
  return out.join("\n");
}

function driftLines(d: ReplayDrift): string[] {
  const out = [
    `drift at step ${d.step} (${d.call}): ${d.kind}${d.error ? ` · ${d.error.code}: ${oneLine(d.error.message, 400)}` : ""}`,
  ];
  if (d.locator !== undefined) out.push(`  looked for: ${d.locator}`);
  const now = d.now;
  const listed = now?.candidates ?? now?.matches;
  if (listed && listed.length > 0) {
    out.push(`  now there:  ${now?.matches ? "matches" : "closest"}:`);
    for (const c of listed)
      out.push(`    ${c.locator}  (${c.ref}: ${oneLine(c.line)})${c.why ? ` · ${c.why}` : ""}`);
  } else if (d.kind === "not_found" || d.kind === "ambiguous") out.push("  now there:  nothing like it");
  if (d.recorded && (d.recorded.line !== undefined || d.recorded.snapshot !== undefined)) {
    const anc =
      d.recorded.ancestors && d.recorded.ancestors.length > 0
        ? ` in ${d.recorded.ancestors.join(" >> ")}`
        : "";
    out.push(
      `  recorded:   ${d.recorded.line ?? "?"}${anc} (snapshot ${d.recorded.snapshot ?? "?"}, line ${d.recorded.index ?? "?"})`,
    );
  }
  if (d.kind === "effect") {
    out.push("  recorded changes:", ...indent(d.recorded?.changes ?? "none"));
    out.push("  actual changes:", ...indent(now?.changes ?? "none"));
  }
  if (d.error?.hint) out.push(`  hint: ${oneLine(d.error.hint, 400)}`);
  return out;
}

function indent(text: string): string[] {
  return text.split("\n").map((l) => `    ${l}`);
}
