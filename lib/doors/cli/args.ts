/**
 * The command line's grammar: which commands exist, their positionals and
 * options, the help text, and the parsing of both argv and the steps of
 * `axsnap call` into one shape (`Step`), so a command behaves the same typed
 * by hand and inside a sequence. Everything wrong here is a usage error
 * (exit 2), raised before anything touches the desktop.
 *
 * Commands (COMMANDS) and options (OPTIONS) are each one declarative table;
 * the parser, the help text, `call`'s keys and the check of docs/cli.md
 * (test/doors/cli-docs.test.ts) are all read from them. Tokenizing is
 * node:util parseArgs (built in, strict); a parser from npm would not make
 * this shorter: what is long here is checking values (refs, locators,
 * ranges), which a `call` step given as JSON needs as much as argv does, so
 * one checker (setField) serves both, and the help keeps its own format.
 */
import { parseArgs } from "node:util";
import { AxsnapError } from "../../model/errors.js";
import { MIN_MAX_TOKENS } from "../../render/budget.js";
import { parseLocator } from "../../session/locator/grammar.js";
import { MCP_OPTION_HELP, parseMcpArgs } from "../mcp/options.js";
import { NotServedHere, readCallerText } from "./caller.js";

/** A mistake in how the command was typed: one line on stderr, exit 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** A ref "@s…:eN", a bare index (inside `call`), or a locator (docs/trace.md), kept as typed. */
export type Target = string | number | { locator: string };

/** One command with its arguments, as given on the command line or as one step of `call`. */
export interface Step {
  command: string;
  app?: string | number;
  style?: "tree" | "compact";
  textLimit?: number | "max";
  maxNodes?: number;
  maxDepth?: number;
  /** File to write the screenshot to (the snapshot is then taken with one). */
  screenshot?: string;
  /** snapshot: only this element's subtree (--root @ref). */
  root?: Target;
  /** snapshot: print down to this depth (--depth N). */
  depth?: number;
  /** snapshot: an outline of the window's regions (--skeleton). */
  skeleton?: boolean;
  /** snapshot: at most about this many tokens (--max-tokens N). */
  maxTokens?: number;
  /** Text from the pixels (--ocr auto|on|off): "auto", true, false. */
  ocr?: "auto" | boolean;
  deadlineMs?: number;
  /** false: no fresh snapshot after an action (--no-snapshot). */
  snapshot: boolean;
  target?: Target;
  into?: Target;
  from?: Target;
  to?: Target;
  text?: string;
  value?: string | number;
  key?: string;
  direction?: "up" | "down" | "left" | "right";
  pages?: number;
  name?: string;
  x?: number;
  y?: number;
  button?: "left" | "right";
  count?: 1 | 2;
  /** click-at: send the click to whatever is under the point now, even if it is not what the snapshot showed there. */
  raw?: boolean;
  /** A snapshot id: whose screenshot pixels click-at means, or which app press/type go to. */
  of?: string;
  /** With --screenshot: draw each printed element's index on its frame. */
  marks?: boolean;
  /** snapshot: which of the app's windows (a title, or part of one); wait: a window to open or close. */
  window?: string;
  /** wait: the role text an element must have (with --name, or alone). */
  role?: string;
  /** wait: until the text or element is gone instead of there. */
  gone?: boolean;
  /** wait: until the app sends no change event for a moment. */
  idle?: boolean;
  /** wait: how long, in ms. */
  timeoutMs?: number;
  /** find: states the line must print (--state, repeated). */
  states?: string[];
  /** find: most matches printed. */
  limit?: number;
  /** find: --name is the whole name, case and all. */
  exact?: boolean;
  /** An action: print the whole fresh snapshot instead of its changes (--full). */
  full?: boolean;
  /** launch: the app (a name, a desktop or bundle id, or a path). */
  program?: string;
  /** launch: the arguments after `--`. */
  launchArgs?: string[];
  /** apps: list what can be launched instead of what runs. */
  launchable?: boolean;
  /** type, set-value: the text is a secret (--secret): a trace keeps «secret» in its place. */
  secret?: boolean;
  /** An action on a locator TARGET: how long to wait for the element it names (--locate-timeout). */
  locateTimeoutMs?: number;
  /** locate: the locator. */
  locator?: string;
}

/** Options every command takes. */
export interface Globals {
  json: boolean;
  /** Session directory (--session); default $XDG_STATE_HOME/axsnap. */
  session?: string;
  /** Destructive targets are allowed (the library's confirm callback answers yes). */
  confirm: boolean;
  /** The agent's desktop to observe and act on (--desktop NAME; lib/agent-desktop/). */
  desktop?: string;
  /** Append each step to this trace directory (--trace FILE, as typed; else AXSNAP_TRACE). */
  trace?: string;
  /** --trace-screenshots on|off: before and after screenshots in the trace (default on). */
  traceScreenshots?: boolean;
}

export const TRACE_ACTIONS = ["show", "view", "export"] as const;
export type TraceAction = (typeof TRACE_ACTIONS)[number];

export type Invocation =
  | { kind: "help"; topic?: string; globals: Globals }
  | { kind: "version"; globals: Globals }
  | { kind: "run"; step: Step; globals: Globals }
  | { kind: "call"; steps: Step[]; globals: Globals }
  /** `axsnap mcp`: the server's own options (lib/doors/mcp/options.ts), checked here, parsed again by the server. */
  | { kind: "mcp"; argv: string[]; globals: Globals }
  /** `axsnap daemon ACTION`: the warm process that serves commands (lib/doors/cli/daemon.ts). */
  | { kind: "daemon"; action: DaemonAction; warm?: string; globals: Globals }
  /** `axsnap desktop ACTION [NAME]`: the agent's desktops (lib/doors/cli/desktop.ts). */
  | {
      kind: "desktop";
      action: DesktopAction;
      name?: string;
      size?: string;
      wm: boolean;
      wayland: boolean;
      globals: Globals;
    }
  /** `axsnap trace show|view|export FILE`: reading a trace, in the caller's own process (lib/doors/cli/trace.ts). */
  | {
      kind: "trace";
      action: TraceAction;
      file: string;
      out?: string;
      to?: "ts" | "skill";
      importFrom?: string;
      globals: Globals;
    }
  /** `axsnap replay FILE`: runs a trace again, in the caller's own process (lib/doors/cli/trace.ts). */
  | { kind: "replay"; file: string; continueOnDrift: boolean; stepTimeoutMs?: number; globals: Globals };

export const DESKTOP_ACTIONS = ["start", "stop", "list", "env"] as const;
export type DesktopAction = (typeof DESKTOP_ACTIONS)[number];

export const DAEMON_ACTIONS = ["status", "start", "stop", "run"] as const;
export type DaemonAction = (typeof DAEMON_ACTIONS)[number];

type Field = Exclude<keyof Step, "command" | "snapshot">;
/** Options that change how another value is read: --number (VALUE), --escapes (TEXT, VALUE). */
type Modifier = "number" | "escapes";
type Modifiers = Partial<Record<Modifier, boolean>>;
/** What an option or call key sets: a field, the fresh snapshot (no-snapshot), or a modifier. */
type Setting = Field | "no-snapshot" | Modifier;

interface CommandSpec {
  summary: string;
  /** Positional names, in order; a trailing "?" marks an optional one. */
  args: string[];
  /** The usage after the command word, where the positionals' names say too little (its actions). */
  usage?: string;
  /** Option groups (OPTIONS) the command takes beyond the globals. */
  options: Group[];
  details?: string;
}

const TARGET_NOTE = [
  "TARGET is a ref @<snapshot id>:e<index> printed by `axsnap snapshot` (a bare index only inside `axsnap call`),",
  "or a locator that names the element by its app, window, role and name, found when the command runs:",
  `'app=mousepad >> window:dialog="Save As" >> push button "Save"' (see \`axsnap locate\`).`,
].join("\n");

export const COMMANDS: Record<string, CommandSpec> = {
  apps: {
    summary: "list the apps the accessibility service knows, with their pids",
    args: [],
    options: ["launchable"],
  },
  launch: {
    summary:
      "start an app and wait for its first window: PROGRAM is a name, a desktop or bundle id, or a path",
    args: ["program"],
    usage: "PROGRAM [-- ARGS]",
    options: [],
    details: [
      "Arguments for the app go after `--`: axsnap launch /usr/bin/galculator -- --help. For a desktop entry",
      "they are files or URIs it opens. Prints the pid (pass it as --app), the name and the first window; --deadline",
      "is how long to wait for that window (default 20000). TIMEOUT means the app was started and left running:",
      "the error gives its pid. `axsnap apps --launchable` lists what can be started.",
    ].join("\n  "),
  },
  snapshot: {
    summary: "observe one window of an app: numbered lines, one element each",
    args: [],
    options: ["app", "snapshot", "window", "view"],
    details:
      "The first line names the snapshot id; act on the element printed as N with the ref @<id>:eN, from this or a later process.",
  },
  find: {
    summary: "find elements of an app's window by --role, --name, --text, --state: their lines, with refs",
    args: [],
    options: ["app", "find", "window"],
    details:
      "Observes the window once and prints only the lines that matched, each as its ref @<id>:eN and the elements it sits in; act on a ref as on one `axsnap snapshot` printed, from this or a later process. --name NAME matches a part of the name in any case (--exact: the whole name); --name and --text also take a regular expression written /source/flags.",
  },
  click: { summary: "click an element", args: ["target"], options: ["target", "act", "snapshot", "click"] },
  "double-click": {
    summary: "double-click an element",
    args: ["target"],
    options: ["target", "act", "snapshot"],
  },
  "right-click": {
    summary: "right-click an element (its menu)",
    args: ["target"],
    options: ["target", "act", "snapshot"],
  },
  type: {
    summary: "type text: into TARGET (--into), or where keyboard focus is in the app (--app / --of)",
    args: ["text"],
    options: ["act", "snapshot", "into", "target", "app", "of", "escapes", "secret"],
  },
  "set-value": {
    summary: "set an element's value (a text, or a number with --number)",
    args: ["target", "value"],
    options: ["target", "act", "snapshot", "number", "escapes", "secret"],
  },
  press: {
    summary: 'press a key combination in the app, e.g. "ctrl+a", "Return"',
    args: ["key"],
    options: ["act", "snapshot", "app", "of"],
  },
  scroll: {
    summary: "scroll an element by pages: DIRECTION is up, down, left or right",
    args: ["target", "direction", "pages?"],
    options: ["target", "act", "snapshot"],
  },
  drag: {
    summary: "drag from one element to another",
    args: ["from", "to"],
    options: ["target", "act", "snapshot"],
  },
  "perform-action": {
    summary: 'run an element\'s named action, raw or as printed ("Scroll Down")',
    args: ["target", "name"],
    options: ["target", "act", "snapshot"],
  },
  "click-at": {
    summary: "click at X Y in pixels of a snapshot's screenshot (--of ID; default the newest with one)",
    args: ["x", "y"],
    options: ["act", "snapshot", "click", "of", "app", "raw"],
    details:
      "The snapshot must have been taken with --screenshot FILE and be at most 60 s old; the window must not have moved since, and the element under the point must still be the one the snapshot showed there (else STALE_REF; --raw clicks what is there now).",
  },
  locate: {
    summary: "find the one element a locator names, waiting for it: its line, its ref and its locator",
    args: ["locator"],
    options: ["app", "locate"],
    details: [
      'LOCATOR is [app=NAME >> ] [window[:dialog]="TITLE" >> ] role "name" [id="…"] [nth=N] >> …, names as JSON',
      "strings or /regex/flags. Waits (woken by the app's change events) until exactly one element matches; the ref",
      "it prints acts from this or a later process. None: ELEMENT_NOT_FOUND with the closest candidates (their",
      "refs and locators); several: AMBIGUOUS_TARGET with each match and the locator that tells it apart. --app",
      "names the app when the locator does not.",
    ].join("\n  "),
  },
  resolve: {
    summary: "check that a ref still reaches its element (or find the one a locator names), without acting",
    args: ["target"],
    options: ["target"],
  },
  windows: {
    summary: "list an app's windows, dialogs, open menus and popups",
    args: [],
    options: ["app"],
  },
  wait: {
    summary: "wait until text or an element appears (or, with --gone, disappears) in an app, or it goes idle",
    args: [],
    options: ["app", "wait", "window", "snapshot"],
    details:
      "Woken by the app's change events (a slow poll is the safety net). Prints the snapshot that met the condition; after --timeout, exits 1 with TIMEOUT.",
  },
  permissions: {
    summary: "what this process may do (macOS Accessibility, Screen Recording)",
    args: [],
    options: [],
  },
  call: {
    summary: "run a sequence of commands in one process: --calls JSON (or --calls-file FILE, - for stdin)",
    args: [],
    options: ["calls"],
    details: [
      'Each step is an object: {"command":"snapshot","app":"gtk3-widget-factory"}, {"command":"click","target":12}.',
      "Keys are the command's arguments and the options its help lists, as typed or in camelCase (target, text,",
      'value, max-nodes or maxNodes, deadline, "number": true, "escapes": true, "no-snapshot": true or "snapshot":',
      "false, state as a list; launch: program, args as a list); --json, --session, --confirm and --desktop are",
      "call's own. A bare index means that element of the latest snapshot the sequence printed",
      "(of the step's app when it names one). The sequence stops at the first error and says which step failed.",
    ].join("\n  "),
  },
  mcp: {
    summary: "run the MCP server on stdin/stdout",
    args: [],
    options: [],
    details: "The same options as `node dist/mcp-main.js`; the CLI's global options do not apply.",
  },
  daemon: {
    summary: "the warm process that serves later commands of this desktop: status, start, stop",
    args: ["action"],
    usage: "status|start|stop",
    options: [],
    details: [
      "A command run with no warm process answers itself and starts one; the next commands with the same desktop",
      "and environment (DISPLAY, the buses, HOME, XDG dirs, locale, AXSNAP_* ...) and the same code are served by",
      "it, so they skip node's module loading and the first walk of an app, each with the caller's environment,",
      "umask and directory, and the caller's own process reading and writing the files it names (stdin and",
      "/dev/stdout too). It serves one command at a time (a second runs in its own process), exits after",
      "AXSNAP_DAEMON_IDLE_MS idle (default 600000), when its desktop goes away or its code changes, and is never",
      "used with AXSNAP_DAEMON=off. `launch` (a `call` with a launch step too) and `mcp` always run in their own",
      "process. status prints its pid and how many commands it served; stop ends it.",
    ].join("\n  "),
  },
  desktop: {
    summary: "a private headless desktop for the agent: start [NAME], stop NAME, list, env NAME",
    args: ["action", "name?"],
    usage: "start [NAME]|stop NAME|list|env NAME",
    options: ["desktop"],
    details: [
      "start [NAME] (default agent) starts Xvfb, a session bus and the AT-SPI registry (with --wm, openbox too;",
      "with --wayland, headless gnome-shell, PipeWire and WirePlumber in place of Xvfb: apps run as Wayland clients),",
      "detached: it runs until `axsnap desktop stop NAME`. Apps and input there never touch the user's pointer,",
      "focus or windows. `axsnap --desktop NAME COMMAND` observes and acts there (launch starts apps there);",
      'eval "$(axsnap desktop env NAME)" points a shell at it. list shows each desktop running or gone (a gone',
      "one is cleaned up as it is listed). State: $XDG_RUNTIME_DIR/axsnap/desktops (else /tmp/axsnap-UID), 0700.",
    ].join("\n  "),
  },
  trace: {
    summary:
      "read a trace (--trace FILE): show (one line a step), view (an HTML page), export (--to ts|skill)",
    args: ["action", "file"],
    usage: "show|view|export FILE",
    options: ["trace"],
    details: [
      "show FILE prints one line a step (time, door, call, target, delivery, effect, duration) under a header",
      "naming the run. view FILE writes one self-contained HTML page (no request leaves it: screenshots inline)",
      "to --out or FILE.html beside the trace, and prints its path. export FILE --to ts writes a TypeScript",
      "program against the public API (locators, and a check of each step's effect); --to skill a Markdown",
      "procedure for a model; to --out, else stdout. Runs in this process, never the warm one.",
    ].join("\n  "),
  },
  replay: {
    summary: "run a trace's steps again by their locators, stopping at the first drift (exit 1)",
    args: ["file"],
    options: ["replay"],
    details: [
      "Each step's targets are located by the locators the trace recorded, the action is sent with its recorded",
      "arguments (a secret from the environment variable the trace names), and its recorded effect is waited for.",
      "The first step that differs (not found, ambiguous, refused, no effect, a secret missing) stops the replay",
      "and is printed with what was looked for, what is there now and what was recorded; --json prints the report.",
      "Runs in this process, never the warm one.",
    ].join("\n  "),
  },
  help: { summary: "this help; `axsnap help COMMAND` for one command", args: ["command?"], options: [] },
};

/**
 * One option as the command line takes it: its flag, the name of its value
 * (none: a switch), what it sets, and its line of help. Parser, help text,
 * `call`'s keys and docs/cli.md's check (test/doors/cli-docs.test.ts) all
 * read this one table, so none of them can name an option the others lack.
 */
interface OptionSpec {
  flag: string;
  /** The value's name as the help prints it ("MS", "tree|compact"); none for a switch. */
  value?: string;
  short?: string;
  /** May be given more than once; each adds to a list (--state). */
  repeat?: true;
  /** The step field it sets (also its `call` key); none when its command reads it itself (--size, --calls). */
  sets?: Setting;
  help: string;
}

/** A switch (no value) or an option with a value: `o("max-nodes N", "maxNodes", "most elements ...")`. */
function o(
  synopsis: string,
  sets: Setting | undefined,
  help: string,
  more: Partial<OptionSpec> = {},
): OptionSpec {
  const [flag, value] = synopsis.split(" ") as [string, string | undefined];
  return {
    flag,
    ...(value === undefined ? {} : { value }),
    ...(sets === undefined ? {} : { sets }),
    help,
    ...more,
  };
}

const OPTIONS = {
  // The process-wide options: read by toGlobals (and --deadline by each step), never a group's field.
  global: [
    o("json", undefined, "one JSON envelope on stdout: {ok, command, data} or {ok: false, command, error}"),
    o("session DIR", undefined, "where snapshots are kept for later refs (default $XDG_STATE_HOME/axsnap)"),
    o("deadline MS", undefined, "deadline of each observation and action, 1-600000 (default 5000)"),
    o("confirm", undefined, "allow destructive targets (Delete, Send, ...); without it they are refused"),
    o("desktop NAME", undefined, "observe and act on the agent's desktop NAME (`axsnap desktop start NAME`)"),
    o(
      "trace FILE",
      undefined,
      "append each step to the trace directory FILE (created if new; also AXSNAP_TRACE)",
    ),
    o("trace-screenshots on|off", undefined, "before and after screenshots in the trace (default on)"),
    o("help", undefined, "help for the command", { short: "h" }),
    o("version", undefined, "the version"),
  ],
  desktop: [
    o("size WxH", undefined, "start: the screen's size in pixels (default 1280x800)"),
    o("wm", undefined, "start: run openbox on it (frames, focus and stacking as on a user's desktop)"),
    o("wayland", undefined, "start: a Wayland desktop (headless gnome-shell, PipeWire); not with --wm"),
  ],
  app: [o("app NAME|PID", "app", "the app (a unique prefix of its name works)")],
  snapshot: [
    o("style tree|compact", "style", "the text style (default tree)"),
    o("text-limit N|max", "textLimit", "longest printed text (default 500)"),
    o("max-nodes N", "maxNodes", "most elements printed (default 1200)"),
    o("max-depth N", "maxDepth", "deepest printed level (default 64)"),
    o("screenshot FILE", "screenshot", "also capture the window, as PNG into FILE"),
    o("marks", "marks", "with --screenshot: draw each element's index on its frame"),
    o("ocr auto|on|off", "ocr", "text from the pixels as (ocr) lines: auto (default) where the tree is thin"),
  ],
  view: [
    o(
      "root @REF",
      "root",
      "only that element's subtree, as a snapshot of its own (open a line marked (+N elements))",
    ),
    o("depth N", "depth", "print down to depth N; a container cut there ends with (+N elements)"),
    o(
      "skeleton",
      "skeleton",
      "an outline: the window's regions and the branch holding focus, the rest collapsed",
    ),
    o(
      "max-tokens N",
      "maxTokens",
      "at most about N tokens, same style: whole, else texts cut, else a skeleton as deep as fits",
    ),
  ],
  act: [
    o("no-snapshot", "no-snapshot", "no fresh snapshot after acting"),
    o("full", "full", "print the whole fresh snapshot, not only what changed"),
  ],
  target: [
    o(
      "locate-timeout MS",
      "locateTimeoutMs",
      "a locator TARGET: how long to wait for its element, 1-600000 (default 5000)",
    ),
  ],
  secret: [
    o("secret", "secret", "the text is a secret: a trace keeps «secret» in its place, never the text"),
  ],
  locate: [o("timeout MS", "timeoutMs", "how long to wait for the element, 1-600000 (default 5000)")],
  trace: [
    o(
      "out FILE",
      undefined,
      "view: the page (default FILE.html beside the trace); export: the file (default stdout)",
    ),
    o("to ts|skill", undefined, "export: a TypeScript program, or a Markdown skill for a model"),
    o(
      "import-from SPEC",
      undefined,
      "export --to ts: the module the program imports axsnap from (default axsnap)",
    ),
  ],
  replay: [
    o("continue-on-drift", undefined, "go on after a drift (each is reported); exit 1 still"),
    o(
      "step-timeout MS",
      undefined,
      "per step: locating, acting and seeing its effect, 1-600000 (default 10000)",
    ),
  ],
  calls: [
    o("calls JSON", undefined, "the steps, a JSON array"),
    o("calls-file FILE", undefined, "the steps from a file (- for stdin)"),
  ],
  click: [o("button left|right", "button", "(default left)"), o("count 1|2", "count", "(default 1)")],
  of: [o("of SNAPSHOT_ID", "of", "the snapshot that names the app (and, for click-at, the screenshot)")],
  raw: [o("raw", "raw", "click whatever is under the point now (destructive names are still refused)")],
  into: [o("into TARGET", "into", "the field to type into (focused and checked first)")],
  number: [o("number", "number", "set VALUE as a number (sliders, spin buttons)")],
  escapes: [
    o(
      "escapes",
      "escapes",
      "read \\n in the text as a newline, \\t as a tab, \\\\ as a backslash (as values print)",
    ),
  ],
  launchable: [
    o("launchable", "launchable", "list what can be started (desktop entries, app bundles) instead"),
  ],
  window: [
    o(
      "window TITLE",
      "window",
      "one of the app's windows by (part of) its title; `axsnap windows` lists them",
    ),
  ],
  find: [
    o("role ROLE", "role", 'the role in either style\'s words ("push button", "button"), whole, any case'),
    o("name NAME", "name", "a part of the name, any case; /regex/flags for a regular expression"),
    o("exact", "exact", "--name is the whole name, case and all"),
    o(
      "text TEXT",
      "text",
      "a part of anything the element says (name, description, value, row text); or /regex/",
    ),
    o(
      "state STATE",
      "states",
      'a state its line prints ("checked", "focused", "enabled", "!checked"); repeat for more',
      { repeat: true },
    ),
    o("limit N", "limit", "most matches printed, 1-1000 (default 20)"),
  ],
  wait: [
    o("text TEXT", "text", "some printed name or value contains TEXT (case-insensitive)"),
    o("role ROLE", "role", 'an element with this role ("push button" or "button")...'),
    o("name NAME", "name", "...and/or whose name contains NAME"),
    o("gone", "gone", "wait until it is no longer printed (with --window: until it closed)"),
    o("idle", "idle", "wait until the app sends no change event for 150 ms"),
    o("timeout MS", "timeoutMs", "how long to wait, 1-600000 (default 10000)"),
  ],
} satisfies Record<string, OptionSpec[]>;

type Group = Exclude<keyof typeof OPTIONS, "global">;

/** An option's help line: its synopsis in a column of 20, then what it does. */
function helpLine({ flag, value, short, help }: OptionSpec): string {
  const synopsis = `${short ? `-${short}, ` : ""}--${flag}${value ? ` ${value}` : ""}`;
  return `  ${synopsis.length > 20 ? `${synopsis} ` : synopsis.padEnd(20)} ${help}`;
}

/** The usage line's words after the command: its own synopsis, else its positionals. */
function usageOf(name: string): string {
  const spec = COMMANDS[name]!;
  const args = spec.args.map((a) =>
    a.endsWith("?") ? `[${a.slice(0, -1).toUpperCase()}]` : a.toUpperCase(),
  );
  return [name, spec.usage ?? args.join(" ")].filter(Boolean).join(" ");
}

// --version prints the version whatever else is typed: the main help lists it, once.
const commandGlobals = OPTIONS.global.filter((x) => x.flag !== "version");

export function helpText(topic?: string): string {
  if (topic !== undefined) {
    const spec = COMMANDS[topic];
    if (!spec) throw new UsageError(`no command "${topic}"; run \`axsnap help\` for the list`, "help");
    const lines = [`usage: axsnap ${usageOf(topic)} [options]`, "", spec.summary];
    if (spec.args.some((a) => ["target", "from", "to"].includes(a)) || spec.options.includes("into"))
      lines.push(TARGET_NOTE);
    if (spec.details) lines.push("", spec.details);
    lines.push("", "options:");
    // `mcp` takes the server's own options (lib/doors/mcp/options.ts), which print their own help lines.
    if (topic === "mcp") lines.push(...MCP_OPTION_HELP.map((l) => `  ${l}`));
    else lines.push(...[...spec.options.flatMap((g) => OPTIONS[g]), ...commandGlobals].map(helpLine));
    return `${lines.join("\n")}\n`;
  }
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return `${[
    "axsnap: desktop apps as numbered accessibility lines, and actions that reach exactly the printed element",
    "",
    "usage: axsnap COMMAND [ARGS] [options]",
    "",
    "commands:",
    ...Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(width)}  ${spec.summary}`),
    "",
    "  axsnap snapshot --app gtk3-widget-factory      prints `snapshot s8f3k2p9 ...` and the lines",
    "  axsnap click @s8f3k2p9:e12                     clicks the element printed as 12, from any later process",
    "",
    TARGET_NOTE,
    "A ref is checked against a new observation before acting: the element must still be there, and be the only one",
    "with its identity (role, name, id); otherwise STALE_REF, AMBIGUOUS_TARGET or IDENTITY_UNPROVEN, nothing sent.",
    "",
    "global options:",
    ...OPTIONS.global.map(helpLine),
    "",
    "exit status: 0 ok, 1 an axsnap error (its code, message and hint on stderr), 2 a usage error",
    "`axsnap help COMMAND` or `axsnap COMMAND --help` for one command.",
  ].join("\n")}\n`;
}

// ---- values ----------------------------------------------------------------

function wholeNumber(name: string, value: unknown, min: number, max: number, command: string): number {
  const n = typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${name} must be a whole number from ${min} to ${max}, got ${show(value)}`, command);
  return n;
}

function show(value: unknown): string {
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
function setField(step: Step, field: Field, value: unknown, mods: Modifiers = {}): void {
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
const POSITIONAL: Record<string, Field> = {
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
function checkComplete(step: Step, inCall: boolean): void {
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
