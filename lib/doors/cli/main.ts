/**
 * One command line, run in this process: parse, dispatch, print. The entry
 * (lib/cli.ts) calls it when the warm process cannot serve the command; the
 * warm process (lib/doors/cli/daemon.ts) calls it for the commands it serves, with
 * writeOut/writeErr sent to its client and the client as the command's
 * caller (lib/doors/cli/caller.ts). Exit status: 0 ok, 1 an axsnap error, 2 a
 * usage error.
 */
import { readFileSync } from "node:fs";
import { parseCommandLine } from "./args.js";
import { type Caller, NotServedHere, ownCaller } from "./caller.js";
import type { Runner } from "./commands.js";
import type { Context } from "./context.js";
import { type Globals, type Invocation, type Step, UsageError } from "./grammar.js";
import { helpText } from "./help.js";
import {
  type Envelope,
  type ErrorData,
  envelopeText,
  errorData,
  errorText,
  exitCodeOf,
  writeErr,
  writeOut,
} from "./output.js";

function version(root: URL): string {
  const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string };
  return pkg.version;
}

function usageData(e: UsageError): ErrorData {
  return {
    code: "INVALID_ARGUMENT",
    message: e.message,
    hint: `see \`axsnap ${e.command && e.command !== "axsnap" ? `${e.command} --help` : "help"}\``,
    delivery: "not_delivered",
    retry: "safe",
  };
}

/**
 * Prints an error: with --json only the envelope, on stdout (so `2>&1` still
 * parses); otherwise on stderr, a usage error as one line, an axsnap error as
 * its line and its hint.
 */
function fail(command: string, err: ErrorData, json: boolean, usage: boolean, data?: unknown): number {
  if (json) {
    const envelope: Envelope = { ok: false, command, error: err, ...(data === undefined ? {} : { data }) };
    writeOut(envelopeText(envelope));
  } else if (usage) {
    writeErr(`axsnap: ${err.message}${/help`/.test(err.message) ? "" : ` (${err.hint})`}\n`);
  } else writeErr(errorText(err));
  return usage ? 2 : exitCodeOf(err.code);
}

function succeed(command: string, data: unknown, text: string, json: boolean): number {
  writeOut(json ? envelopeText({ ok: true, command, data }) : text);
  return 0;
}

async function runMcp(argv: string[], specifier: string): Promise<number> {
  // The MCP server lives in lib/mcp.ts beside the entry; a computed specifier, so the CLI bundle leaves it out.
  let mod: { runMcpServer?: (options: { argv: string[] }) => Promise<void> };
  try {
    mod = (await import(specifier)) as typeof mod;
  } catch (e) {
    writeErr(`axsnap: this build has no MCP server (${(e as Error).message.split("\n")[0]})\n`);
    return 1;
  }
  if (typeof mod.runMcpServer !== "function") {
    writeErr("axsnap: this build's lib/mcp.js does not export runMcpServer()\n");
    return 1;
  }
  // The options were checked by the grammar (lib/doors/cli/args.ts) with the server's own parser;
  // what only starting can find (a remote address not allowed, a port in use) is said here.
  try {
    await mod.runMcpServer({ argv });
  } catch (e) {
    return fail("mcp", serverErrorData(e), false, false);
  }
  return 0;
}

/**
 * The server is dist/mcp.js, loaded beside this bundle, not from it: its AxsnapError is a
 * class of the same shape but not this bundle's, so it is read by its fields.
 */
function serverErrorData(e: unknown): ErrorData {
  const x = e as Partial<Record<keyof ErrorData | "name", unknown>> | null;
  if (x?.name !== "AxsnapError" || typeof x.code !== "string" || typeof x.hint !== "string")
    return errorData(e);
  return {
    code: x.code,
    message: String(x.message),
    hint: x.hint,
    delivery: x.delivery as ErrorData["delivery"],
    retry: x.retry as ErrorData["retry"],
  };
}

/**
 * The commands and the library under them (the addon included), loaded only
 * when a command runs: `--version`, help and a refused command line answer
 * from the few modules above.
 */
async function newRunner(globals: Globals, caller: Caller, held: Context["held"]): Promise<Runner> {
  const { Runner } = await import("./commands.js");
  return new Runner(globals, caller, held);
}

/**
 * `axsnap snapshot --app NAME`: its walk starts now, on the addon's thread,
 * while the commands and the library under them load (about 40 ms each, run
 * one after the other before). The snapshot the runner asks for takes it when
 * it is the same walk (lib/observe/desktop-backend.ts); options the library would
 * refuse start nothing, so the refusal is the library's as always.
 */
async function startEarly(step: Step): Promise<void> {
  if (step.command !== "snapshot" || step.root !== undefined || step.app === undefined) return;
  const [{ snapshotOptionsOf }, { deadlineOf, walkRequestOrUndefined }, { startEarlyWalk }] =
    await Promise.all([
      import("./observation.js"),
      import("../../observe/observe-request.js"),
      import("../../observe/desktop-backend.js"),
    ]);
  try {
    const options = snapshotOptionsOf(step, step.app);
    const request = walkRequestOrUndefined(options);
    if (request) startEarlyWalk(request, deadlineOf(options.deadlineMs, 5000));
  } catch {
    // Not startable here (bad options, no addon): the runner meets the same and says why.
  }
}

/**
 * --desktop NAME: the process goes onto that desktop before anything
 * observes (the entry has set the same variables already when it could, to
 * pick the warm process of that desktop). Its refusal, printed; else undefined.
 */
async function onDesktop(command: string, globals: Globals): Promise<number | undefined> {
  if (globals.desktop === undefined) return undefined;
  const { useDesktop } = await import("../../observe/agent-desktop/use.js");
  try {
    useDesktop(globals.desktop);
    return undefined;
  } catch (e) {
    return fail(command, errorData(e), globals.json, false);
  }
}

async function runOne(
  step: Step,
  globals: Globals,
  early: boolean,
  caller: Caller,
  held: Context["held"],
): Promise<number> {
  const refused = await onDesktop(step.command, globals);
  if (refused !== undefined) return refused;
  if (early) await startEarly(step);
  let runner: Runner;
  try {
    runner = await newRunner(globals, caller, held);
  } catch (e) {
    // A trace that cannot be appended to (another format version, not a directory): nothing ran.
    return fail(step.command, errorData(e), globals.json, false);
  }
  let code: number;
  try {
    const out = await runner.run(step);
    code = succeed(step.command, out.data, out.text, globals.json);
  } catch (e) {
    if (e instanceof UsageError) code = fail(step.command, usageData(e), globals.json, true);
    else code = fail(step.command, errorData(e, runner.app, runner.next), globals.json, false);
  }
  await closeRunner(runner);
  return code;
}

/**
 * Closes a runner: its trace's steps are written before this resolves, so
 * before a served command's client is told it exited. A trace that could
 * not be written is said on stderr; what the command did stands as printed.
 */
async function closeRunner(runner: Runner): Promise<void> {
  try {
    await runner.close();
  } catch (e) {
    if (runner.tracePath === undefined) return;
    writeErr(`axsnap: the trace ${runner.tracePath} was not written: ${(e as Error).message}\n`);
  }
}

/** `axsnap call`: the steps in one process and one Session; the first error stops the sequence. */
async function runCall(
  steps: Step[],
  globals: Globals,
  caller: Caller,
  held: Context["held"],
): Promise<number> {
  const refused = await onDesktop("call", globals);
  if (refused !== undefined) return refused;
  let runner: Runner;
  try {
    runner = await newRunner(globals, caller, held);
  } catch (e) {
    return fail("call", errorData(e), globals.json, false);
  }
  const done: { step: number; command: string; data: unknown }[] = [];
  const texts: string[] = [];
  try {
    for (const [i, step] of steps.entries()) {
      try {
        const out = await runner.run(step);
        done.push({ step: i + 1, command: step.command, data: out.data });
        texts.push(`[step ${i + 1}: ${step.command}]\n${out.text}`);
      } catch (e) {
        const err: ErrorData = {
          ...(e instanceof UsageError ? usageData(e) : errorData(e, runner.app, runner.next)),
          step: i + 1,
          stepCommand: step.command,
        };
        // What the steps before it printed still reaches the caller.
        if (!globals.json) writeOut(texts.join(""));
        return fail("call", err, globals.json, false, { steps: done });
      }
    }
    return succeed("call", { steps: done }, texts.join(""), globals.json);
  } finally {
    await closeRunner(runner);
  }
}

export type { Context } from "./context.js";

/** Runs one command line; the exit status. Output goes through writeOut/writeErr (lib/doors/cli/output.ts). */
export async function runCommandLine(argv: string[], context: Context): Promise<number> {
  const json = argv.includes("--json");
  const caller = context.caller ?? ownCaller();
  let inv: Invocation;
  try {
    inv = parseCommandLine(argv, (file) => caller.readText(file));
  } catch (e) {
    if (e instanceof UsageError) return fail(e.command ?? "axsnap", usageData(e), json, true);
    throw e;
  }
  switch (inv.kind) {
    case "help": {
      const text = helpText(inv.topic);
      return succeed("help", { text }, text, inv.globals.json);
    }
    case "version": {
      const v = version(context.root);
      return succeed("version", { version: v }, `${v}\n`, inv.globals.json);
    }
    case "mcp":
      return runMcp(inv.argv, new URL("mcp.js", context.entry).href);
    case "daemon":
      return runDaemonCommand(inv, context);
    case "call":
      return runCall(inv.steps, inv.globals, caller, context.held);
    case "run":
      return runOne(inv.step, inv.globals, context.warm !== true, caller, context.held);
    case "desktop":
      return runDesktopCommand(inv);
    case "trace":
      return runTraceCommand(inv);
    case "replay":
      return runReplayCommand(inv, caller);
  }
}

async function runTraceCommand(inv: Extract<Invocation, { kind: "trace" }>): Promise<number> {
  const { traceCommand } = await import("./trace.js");
  try {
    const out = traceCommand(inv);
    return succeed("trace", out.data, out.text, inv.globals.json);
  } catch (e) {
    return fail("trace", errorData(e), inv.globals.json, false);
  }
}

/** `axsnap replay FILE`: exit 1 at a drift, with the report (text, or in the envelope's data). */
async function runReplayCommand(
  inv: Extract<Invocation, { kind: "replay" }>,
  caller: Caller,
): Promise<number> {
  const refused = await onDesktop("replay", inv.globals);
  if (refused !== undefined) return refused;
  const { replayCommand } = await import("./trace.js");
  let out: Awaited<ReturnType<typeof replayCommand>>;
  try {
    out = await replayCommand(inv, caller.env);
  } catch (e) {
    return fail("replay", errorData(e), inv.globals.json, false);
  }
  const { report, text } = out;
  if (report.ok) return succeed("replay", report, text, inv.globals.json);
  const drift = report.drift ?? report.drifts?.[0];
  if (inv.globals.json) {
    const error: ErrorData = {
      code: drift?.error?.code ?? "EFFECT_NOT_SEEN",
      message: `the replay drifted at step ${drift?.step ?? "?"} (${drift?.kind ?? "drift"}) of ${report.steps}`,
      hint:
        drift?.error?.hint ??
        "the app differs from the recording: read the report's drift (what was looked for, what is there now)",
      // An effect not seen, or a refusal, came after the step was sent (or may have been).
      ...(drift?.kind === "effect" || drift?.kind === "refused"
        ? { delivery: "delivery_uncertain" as const, retry: "unsafe" as const }
        : { delivery: "not_delivered" as const, retry: "safe" as const }),
    };
    writeOut(envelopeText({ ok: false, command: "replay", error, data: report }));
  } else writeOut(text.endsWith("\n") ? text : `${text}\n`);
  return 1;
}

/**
 * Whether the warm process may run this command line for `caller`, decided
 * before anything runs: not when what it does needs the caller's own
 * process — a `launch` step starts an app as a child of the process that
 * runs it (its environment, working directory, umask and session), the
 * commands that are a process of their own (mcp, daemon, desktop), and a
 * --calls-file the client did not read for it. A command line the grammar
 * refuses is served: the refusal is the same anywhere.
 */
export function servedHere(argv: string[], caller: Caller): boolean {
  let inv: Invocation;
  try {
    inv = parseCommandLine(argv, (file) => caller.readText(file));
  } catch (e) {
    return !(e instanceof NotServedHere);
  }
  // trace and replay are file work or long: the caller's own process (their kinds fall through).
  if (inv.kind === "run") return inv.step.command !== "launch";
  if (inv.kind === "call") return inv.steps.every((s) => s.command !== "launch");
  return false;
}

async function runDesktopCommand(inv: Extract<Invocation, { kind: "desktop" }>): Promise<number> {
  const { desktopCommand } = await import("./desktop.js");
  try {
    const out = await desktopCommand(inv);
    return succeed("desktop", out.data, out.text, inv.globals.json);
  } catch (e) {
    return fail("desktop", errorData(e), inv.globals.json, false);
  }
}

async function runDaemonCommand(
  inv: Extract<Invocation, { kind: "daemon" }>,
  context: Context,
): Promise<number> {
  // --desktop NAME: the warm process of that desktop (keyed by, and living on, its bus), not of the caller's own.
  const refused = await onDesktop("daemon", inv.globals);
  if (refused !== undefined) return refused;
  const { daemonCommand } = await import("./daemon-commands.js");
  try {
    const out = await daemonCommand(inv.action, context, { run: runCommandLine, servedHere }, inv.warm);
    return succeed("daemon", out.data, out.text, inv.globals.json);
  } catch (e) {
    return fail("daemon", errorData(e), inv.globals.json, false);
  }
}
