/**
 * Parsing the command line, and the steps of `axsnap call`, into one shape
 * (`Step`), so a command behaves the same typed by hand and inside a
 * sequence. Everything wrong here is a usage error (exit 2), raised before
 * anything touches the desktop.
 *
 * What is parsed is declared in grammar.ts (COMMANDS, OPTIONS); values are
 * checked in values.ts; help.ts prints the help from the same tables.
 * Tokenizing is node:util parseArgs (built in, strict); a parser from npm
 * would not make this shorter: what is long is checking values (refs,
 * locators, ranges), which a `call` step given as JSON needs as much as argv
 * does, so one checker (setField) serves both, and the help keeps its own
 * format.
 */
import { parseArgs } from "node:util";
import { AxsnapError } from "../../model/errors.js";
import { parseMcpArgs } from "../mcp/options.js";
import { NotServedHere, readCallerText } from "./caller.js";
import {
  COMMANDS,
  DAEMON_ACTIONS,
  type DaemonAction,
  DESKTOP_ACTIONS,
  type DesktopAction,
  type Globals,
  type Invocation,
  type Modifiers,
  OPTIONS,
  type OptionSpec,
  type Setting,
  type Step,
  TRACE_ACTIONS,
  type TraceAction,
  UsageError,
} from "./grammar.js";
import { checkComplete, POSITIONAL, setField, show, wholeNumber } from "./values.js";

type ParseOption = { type: "string" | "boolean"; short?: string; multiple?: boolean };

/** What node:util parseArgs takes for these options, from the table. */
function parserOptions(specs: readonly OptionSpec[]): Record<string, ParseOption> {
  return Object.fromEntries(
    specs.map((x) => [
      x.flag,
      {
        type: x.value === undefined ? "boolean" : "string",
        ...(x.short ? { short: x.short } : {}),
        ...(x.repeat ? { multiple: true } : {}),
      },
    ]),
  );
}

const GLOBAL_OPTIONS = parserOptions(OPTIONS.global);

/** The flags every command but `mcp` takes, without their dashes. */
export const GLOBAL_FLAGS: readonly string[] = OPTIONS.global.map((x) => x.flag);

/** Global flags that take a value: that value is never the command word. */
export const VALUED_GLOBALS: readonly string[] = OPTIONS.global
  .filter((x) => x.value !== undefined)
  .map((x) => `--${x.flag}`);

/** The options of a command beyond the global ones, in its help's order. */
function ownOptions(command: string): OptionSpec[] {
  return (COMMANDS[command]?.options ?? []).flatMap((g) => OPTIONS[g]);
}

/**
 * The flags `axsnap COMMAND` takes besides the global ones, without their dashes: what its
 * parser is built from, so docs/cli.md can be checked against it (test/doors/docs-match.test.ts).
 * `mcp` takes the server's own options (lib/doors/mcp/options.ts), listed by its help.
 */
export function commandFlags(command: string): string[] {
  return ownOptions(command).map((x) => x.flag);
}

/** Parses the command line (without node and the script). */
export function parseCommandLine(
  argv: string[],
  readText: (file: string) => string = readCallerText,
): Invocation {
  // The command is the first word that is neither a flag nor the value of a global flag before it.
  let first = -1;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") break;
    if (VALUED_GLOBALS.includes(a)) i++;
    else if (!a.startsWith("-")) {
      first = i;
      break;
    }
  }
  const command = first === -1 ? undefined : argv[first]!;
  let rest = first === -1 ? argv : [...argv.slice(0, first), ...argv.slice(first + 1)];
  // launch: everything after `--` is the app's own argv, never axsnap's options.
  let launchArgs: string[] | undefined;
  if (command === "launch" && rest.includes("--")) {
    launchArgs = rest.slice(rest.indexOf("--") + 1);
    rest = rest.slice(0, rest.indexOf("--"));
  }

  if (command === undefined) {
    const { values } = parse(rest, GLOBAL_OPTIONS, "axsnap", 0);
    const globals = toGlobals(values);
    if (values.version) return { kind: "version", globals };
    if (values.help) return { kind: "help", globals };
    throw new UsageError("no command given; run `axsnap help`");
  }
  const spec = COMMANDS[command];
  if (!spec) throw new UsageError(`no command "${command}"; run \`axsnap help\` for the list`);
  if (command === "mcp") return mcpInvocation(rest);
  if (command === "daemon") return daemonInvocation(rest);
  if (command === "desktop") return desktopInvocation(rest);
  if (command === "trace") return traceInvocation(rest);
  if (command === "replay") return replayInvocation(rest);
  const options = { ...GLOBAL_OPTIONS, ...parserOptions(ownOptions(command)) };
  const { values, positionals } = parse(rest, options, command, spec.args.length);
  const globals = toGlobals(values, command);
  if (values.version) return { kind: "version", globals };
  if (values.help) return { kind: "help", topic: command, globals };
  if (command === "help") {
    const topic = positionals[0];
    if (topic !== undefined && !COMMANDS[topic])
      throw new UsageError(`no command "${topic}"; run \`axsnap help\` for the list`, "help");
    return topic === undefined ? { kind: "help", globals } : { kind: "help", topic, globals };
  }
  if (command === "call") return { kind: "call", steps: readCalls(values, readText), globals };

  const step: Step = { command, snapshot: true };
  const deadline = values.deadline;
  if (deadline !== undefined) setField(step, "deadlineMs", deadline);
  for (const { flag, sets } of ownOptions(command)) {
    const v = values[flag];
    // --number and --escapes change how a positional is read, below; they set no field.
    if (v === undefined || sets === undefined || sets === "number" || sets === "escapes") continue;
    if (sets === "no-snapshot") step.snapshot = v !== true;
    else setField(step, sets, v);
  }
  spec.args.forEach((a, i) => {
    const v = positionals[i];
    if (v === undefined) return;
    const field = POSITIONAL[a.replace(/\?$/, "")]!;
    setField(step, field, v, { number: values.number === true, escapes: values.escapes === true });
  });
  if (launchArgs !== undefined) step.launchArgs = launchArgs;
  checkComplete(step, false);
  return { kind: "run", step, globals };
}

/** `axsnap mcp ...`: the server's options, one parser for both entry points; anything else is a usage error. */
function mcpInvocation(args: string[]): Invocation {
  const globals: Globals = { json: false, confirm: false };
  try {
    if (parseMcpArgs(args).help) return { kind: "help", topic: "mcp", globals };
  } catch (e) {
    if (e instanceof AxsnapError) throw new UsageError(`${e.message}; ${e.hint}`, "mcp");
    throw e;
  }
  return { kind: "mcp", argv: args, globals };
}

/** `axsnap daemon ACTION`: only the global options; `run` is what `start` spawns (the server in the foreground). */
function daemonInvocation(args: string[]): Invocation {
  // `run APP`: the app to walk once at the start (the command that started it named it).
  const { values, positionals } = parse(args, GLOBAL_OPTIONS, "daemon", args.includes("run") ? 2 : 1);
  const globals = toGlobals(values, "daemon");
  if (values.help) return { kind: "help", topic: "daemon", globals };
  const action = positionals[0];
  if (action === undefined) throw new UsageError("daemon needs an action: status, start or stop", "daemon");
  if (!(DAEMON_ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`no daemon action "${action}": status, start or stop`, "daemon");
  const warm = action === "run" ? positionals[1] : undefined;
  return { kind: "daemon", action: action as DaemonAction, globals, ...(warm === undefined ? {} : { warm }) };
}

/** `axsnap desktop ACTION [NAME] [--size WxH] [--wm] [--wayland]`; the name and size are checked by the library (INVALID_ARGUMENT). */
function desktopInvocation(args: string[]): Invocation {
  const { values, positionals } = parse(
    args,
    { ...GLOBAL_OPTIONS, ...parserOptions(OPTIONS.desktop) },
    "desktop",
    2,
  );
  const globals = toGlobals(values, "desktop");
  if (values.help) return { kind: "help", topic: "desktop", globals };
  const [action, name] = positionals;
  if (action === undefined)
    throw new UsageError("desktop needs an action: start [NAME], stop NAME, list or env NAME", "desktop");
  if (!(DESKTOP_ACTIONS as readonly string[]).includes(action))
    throw new UsageError(`no desktop action "${action}": start, stop, list or env`, "desktop");
  if ((action === "stop" || action === "env") && name === undefined)
    throw new UsageError(
      `desktop ${action} needs the desktop's NAME; \`axsnap desktop list\` lists them`,
      "desktop",
    );
  if (action === "list" && name !== undefined)
    throw new UsageError(`desktop list takes no name, got ${show(name)}`, "desktop");
  if (
    action !== "start" &&
    (values.size !== undefined || values.wm !== undefined || values.wayland !== undefined)
  )
    throw new UsageError("--size, --wm and --wayland go with `axsnap desktop start`", "desktop");
  if (values.wm === true && values.wayland === true)
    throw new UsageError(
      "--wm and --wayland do not go together: gnome-shell is a Wayland desktop's window manager",
      "desktop",
    );
  // `desktop start NAME` names its desktop with the positional; --desktop NAME says the same.
  const named = name ?? globals.desktop;
  return {
    kind: "desktop",
    action: action as DesktopAction,
    ...(named === undefined ? {} : { name: named }),
    ...(typeof values.size === "string" ? { size: values.size } : {}),
    wm: values.wm === true,
    wayland: values.wayland === true,
    globals,
  };
}

/** `axsnap trace show|view|export FILE [--out F] [--to ts|skill] [--import-from SPEC]`. */
function traceInvocation(args: string[]): Invocation {
  const { values, positionals } = parse(
    args,
    { ...GLOBAL_OPTIONS, ...parserOptions(OPTIONS.trace) },
    "trace",
    2,
  );
  const globals = toGlobals(values, "trace");
  if (values.help) return { kind: "help", topic: "trace", globals };
  const [action, file] = positionals;
  if (action === undefined || !(TRACE_ACTIONS as readonly string[]).includes(action))
    throw new UsageError(
      `${action === undefined ? "trace needs an action" : `no trace action ${show(action)}`}: show, view or export`,
      "trace",
    );
  if (file === undefined || file === "")
    throw new UsageError(`trace ${action} needs FILE, the trace directory (--trace FILE)`, "trace");
  const out = values.out;
  const to = values.to;
  const importFrom = values["import-from"];
  if (out === "") throw new UsageError("--out needs a file", "trace");
  if (action === "show" && out !== undefined)
    throw new UsageError("--out goes with view and export", "trace");
  if (action !== "export" && (to !== undefined || importFrom !== undefined))
    throw new UsageError("--to and --import-from go with `axsnap trace export`", "trace");
  if (action === "export" && to === undefined)
    throw new UsageError(
      "trace export needs --to ts|skill: a TypeScript program or a Markdown skill",
      "trace",
    );
  if (to !== undefined && to !== "ts" && to !== "skill")
    throw new UsageError(`--to must be ts or skill, got ${show(to)}`, "trace");
  if (importFrom !== undefined && (importFrom === "" || to !== "ts"))
    throw new UsageError("--import-from names a module, and goes with --to ts", "trace");
  return {
    kind: "trace",
    action: action as TraceAction,
    file,
    ...(typeof out === "string" ? { out } : {}),
    ...(to === undefined ? {} : { to: to as "ts" | "skill" }),
    ...(typeof importFrom === "string" ? { importFrom } : {}),
    globals,
  };
}

/** `axsnap replay FILE [--continue-on-drift] [--step-timeout MS]`. */
function replayInvocation(args: string[]): Invocation {
  const { values, positionals } = parse(
    args,
    { ...GLOBAL_OPTIONS, ...parserOptions(OPTIONS.replay) },
    "replay",
    1,
  );
  const globals = toGlobals(values, "replay");
  if (values.help) return { kind: "help", topic: "replay", globals };
  const [file] = positionals;
  if (file === undefined || file === "")
    throw new UsageError("replay needs FILE, the trace directory to run again", "replay");
  const timeout = values["step-timeout"];
  return {
    kind: "replay",
    file,
    continueOnDrift: values["continue-on-drift"] === true,
    ...(timeout === undefined
      ? {}
      : { stepTimeoutMs: wholeNumber("--step-timeout", timeout, 1, 600_000, "replay") }),
    globals,
  };
}

type ParsedValues = Record<string, string | boolean | string[] | undefined>;
function parse(
  args: string[],
  options: Record<string, ParseOption>,
  command: string,
  maxPositionals: number,
): { values: ParsedValues; positionals: string[] } {
  let out: { values: ParsedValues; positionals: string[] };
  try {
    out = parseArgs({ args, options, strict: true, allowPositionals: true }) as typeof out;
  } catch (e) {
    // parseArgs' messages are one line already ("Unknown option '--foo'...").
    const msg = (e as Error).message.split("\n")[0]!.replace(/\. To specify a positional.*$/, "");
    throw new UsageError(
      `${msg}; see \`axsnap ${command === "axsnap" ? "help" : `${command} --help`}\``,
      command,
    );
  }
  if (out.positionals.length > maxPositionals && !out.values.help)
    throw new UsageError(
      `too many arguments for ${command}: ${out.positionals.slice(maxPositionals).map(show).join(" ")} (quote a text with spaces)`,
      command,
    );
  return out;
}

function toGlobals(values: ParsedValues, command?: string): Globals {
  const session = values.session;
  if (session === "") throw new UsageError("--session needs a directory", command);
  const desktop = values.desktop;
  if (desktop === "") throw new UsageError("--desktop needs a desktop's name", command);
  const trace = values.trace;
  if (trace === "") throw new UsageError("--trace needs a trace directory (FILE.axtrace)", command);
  const shots = values["trace-screenshots"];
  if (shots !== undefined && shots !== "on" && shots !== "off")
    throw new UsageError(`--trace-screenshots must be on or off, got ${show(shots)}`, command);
  return {
    json: values.json === true,
    confirm: values.confirm === true,
    ...(typeof session === "string" ? { session } : {}),
    ...(typeof desktop === "string" ? { desktop } : {}),
    ...(typeof trace === "string" ? { trace } : {}),
    ...(shots === undefined ? {} : { traceScreenshots: shots === "on" }),
  };
}

const camelCase = (flag: string): string => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The keys a step of `call` takes for a command, from its grammar itself (no
 * second list): its positionals by name; each of its options as typed
 * (max-nodes), in camelCase (maxNodes) and as the field it sets (states,
 * timeoutMs); --deadline; and `snapshot: false` for --no-snapshot, `args`
 * for launch's arguments.
 */
function callKeys(command: string): Map<string, Setting | "snapshot"> {
  const spec = COMMANDS[command]!;
  const keys = new Map<string, Setting | "snapshot">();
  const add = (key: string, to: Setting | "snapshot") => {
    keys.set(key, to);
    keys.set(camelCase(key), to);
  };
  for (const a of spec.args) {
    const field = POSITIONAL[a.replace(/\?$/, "")]!;
    add(a.replace(/\?$/, ""), field);
  }
  add("deadline", "deadlineMs");
  add("deadlineMs", "deadlineMs");
  if (command === "launch") add("args", "launchArgs");
  for (const { flag, sets } of ownOptions(command)) {
    if (sets === undefined) continue;
    add(flag, sets);
    add(sets, sets);
    if (sets === "no-snapshot") add("snapshot", "snapshot");
  }
  return keys;
}

const NOT_IN_CALL = new Set(["call", "mcp", "help", "daemon", "trace", "replay"]);

/** `readText` reads --calls-file as the caller (lib/doors/cli/caller.ts): its directory, its stdin. */
function readCalls(values: ParsedValues, readText: (file: string) => string): Step[] {
  const inline = values.calls;
  const file = values["calls-file"];
  if ((inline === undefined) === (file === undefined))
    throw new UsageError("call needs exactly one of --calls JSON or --calls-file FILE", "call");
  let text: string;
  if (typeof inline === "string") text = inline;
  else {
    try {
      text = readText(String(file));
    } catch (e) {
      if (e instanceof NotServedHere) throw e;
      throw new UsageError(`cannot read --calls-file ${String(file)}: ${(e as Error).message}`, "call");
    }
  }
  let list: unknown;
  try {
    list = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--calls is not JSON: ${(e as Error).message}`, "call");
  }
  if (!Array.isArray(list) || list.length === 0)
    throw new UsageError(
      '--calls must be a non-empty JSON array of steps like {"command":"snapshot",...}',
      "call",
    );
  if (list.length > 100) throw new UsageError("--calls takes at most 100 steps", "call");
  return list.map((raw, i) => {
    const where = `step ${i + 1}`;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw))
      throw new UsageError(`${where} must be an object with a "command"`, "call");
    const obj = raw as Record<string, unknown>;
    const command = obj.command;
    if (typeof command !== "string" || !COMMANDS[command] || NOT_IN_CALL.has(command))
      throw new UsageError(
        `${where}: "command" must be one of ${Object.keys(COMMANDS)
          .filter((c) => !NOT_IN_CALL.has(c))
          .join(", ")}, got ${show(command)}`,
        "call",
      );
    const step: Step = { command, snapshot: true };
    const keys = callKeys(command);
    try {
      // Modifiers first: "number": true reads "value" as a number wherever the keys stand.
      const mods: Modifiers = {};
      for (const [key, value] of Object.entries(obj)) {
        const to = keys.get(key);
        if (to !== "number" && to !== "escapes") continue;
        if (typeof value !== "boolean") throw new UsageError(`"${key}" must be true or false`, command);
        mods[to] = value;
      }
      for (const [key, value] of Object.entries(obj)) {
        if (key === "command") continue;
        const to = keys.get(key);
        if (to === undefined) throw new UsageError(`unknown key "${key}" for ${command}`, command);
        if (to === "number" || to === "escapes") continue;
        if (to === "snapshot" || to === "no-snapshot") {
          if (typeof value !== "boolean") throw new UsageError(`"${key}" must be true or false`, command);
          step.snapshot = to === "snapshot" ? value : !value;
        } else setField(step, to, value, mods);
      }
      checkComplete(step, true);
    } catch (e) {
      if (e instanceof UsageError) throw new UsageError(`${where} (${command}): ${e.message}`, "call");
      throw e;
    }
    return step;
  });
}
