/**
 * `axsnap trace show|view|export FILE` and `axsnap replay FILE` (issue 34):
 * reading a trace a run recorded with --trace, and running it again. They
 * run in the caller's own process (main.ts never hands them to the warm
 * process): file work in the caller's directory, or a replay that may take
 * minutes, which would hold the warm process from every other command.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { AxsnapError } from "../../model/errors.js";
import { createSession } from "../../session/session.js";
import { exportSkill } from "../../session/trace/export-skill.js";
import { exportTs } from "../../session/trace/export-ts.js";
import { readTrace } from "../../session/trace/read.js";
import { type ReplayReport, replayText, replayTrace } from "../../session/trace/replay.js";
import { showTrace } from "../../session/trace/show.js";
import { renderTraceHtml } from "../../session/trace/view.js";
import type { Invocation } from "./grammar.js";
import type { Outcome } from "./output.js";

type TraceInvocation = Extract<Invocation, { kind: "trace" }>;
type ReplayInvocation = Extract<Invocation, { kind: "replay" }>;

/** The page `trace view` writes by default: FILE.html beside the trace directory. */
export function pagePathOf(file: string): string {
  return `${resolve(file).replace(/\/+$/, "")}.html`;
}

function write(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new AxsnapError("INVALID_ARGUMENT", `cannot write ${path}: ${(e as Error).message}`, {
      hint: "pass --out with a file in a directory you can write",
    });
  }
}

export function traceCommand(inv: TraceInvocation): Outcome {
  const path = resolve(inv.file);
  const trace = readTrace(path);
  const about = { path, runId: trace.header.runId, steps: trace.steps.length };
  switch (inv.action) {
    case "show": {
      const text = showTrace(trace);
      return { data: { ...about, text }, text: text.endsWith("\n") ? text : `${text}\n` };
    }
    case "view": {
      const page = inv.out === undefined ? pagePathOf(inv.file) : resolve(inv.out);
      write(page, renderTraceHtml(trace, { images: "inline" }));
      return { data: { ...about, page }, text: `${page}\n` };
    }
    case "export": {
      const code =
        inv.to === "skill"
          ? exportSkill(trace)
          : exportTs(trace, inv.importFrom === undefined ? {} : { importFrom: inv.importFrom });
      if (inv.out === undefined) return { data: { ...about, to: inv.to, text: code }, text: code };
      const out = resolve(inv.out);
      write(out, code);
      return { data: { ...about, to: inv.to, out }, text: `${out}\n` };
    }
  }
}

/**
 * Replays a trace; with --trace the replay is itself recorded. Resolves with
 * the report (ok false at a drift); the caller prints it and exits 1 then.
 */
export async function replayCommand(
  inv: ReplayInvocation,
  env: NodeJS.ProcessEnv,
): Promise<{ report: ReplayReport; text: string }> {
  const trace = inv.globals.trace ?? (env.AXSNAP_TRACE || undefined);
  const session = createSession({
    ...(trace === undefined
      ? {}
      : {
          trace: {
            path: resolve(trace),
            ...(inv.globals.traceScreenshots === undefined
              ? {}
              : { screenshots: inv.globals.traceScreenshots }),
          },
        }),
    ...(inv.globals.confirm ? { confirm: () => true } : {}),
  });
  try {
    // Read first: a path that holds no trace is refused before anything runs.
    readTrace(resolve(inv.file));
    const report = await replayTrace(resolve(inv.file), {
      session,
      secrets: (name) => env[name],
      continueOnDrift: inv.continueOnDrift,
      ...(inv.stepTimeoutMs === undefined ? {} : { stepTimeoutMs: inv.stepTimeoutMs }),
    });
    return { report, text: replayText(report) };
  } finally {
    await session.close();
  }
}
