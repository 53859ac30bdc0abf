/**
 * The command line's declarations: the shape a command takes (`Step`,
 * `Invocation`), the commands (COMMANDS) and the options (OPTIONS), each one
 * declarative table. The parser (args.ts), the help (help.ts), `call`'s keys
 * and the check of docs/cli.md (test/doors/cli-docs.test.ts) all read them.
 */

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
  /** The agent's desktop to observe and act on (--desktop NAME; lib/observe/agent-desktop/). */
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

export type Field = Exclude<keyof Step, "command" | "snapshot">;
/** Options that change how another value is read: --number (VALUE), --escapes (TEXT, VALUE). */
export type Modifier = "number" | "escapes";
export type Modifiers = Partial<Record<Modifier, boolean>>;
/** What an option or call key sets: a field, the fresh snapshot (no-snapshot), or a modifier. */
export type Setting = Field | "no-snapshot" | Modifier;

export interface CommandSpec {
  summary: string;
  /** Positional names, in order; a trailing "?" marks an optional one. */
  args: string[];
  /** The usage after the command word, where the positionals' names say too little (its actions). */
  usage?: string;
  /** Option groups (OPTIONS) the command takes beyond the globals. */
  options: Group[];
  details?: string;
}

export const TARGET_NOTE = [
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
export interface OptionSpec {
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

export const OPTIONS = {
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

export type Group = Exclude<keyof typeof OPTIONS, "global">;
