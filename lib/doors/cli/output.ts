/**
 * What the CLI prints: the data of each command (the same object in text and
 * in `--json`), the text form, the envelope, hints in CLI terms, and the
 * writing itself. Output is written with process.stdout.write and the exit
 * code set on process.exitCode: the process ends when stdout has drained,
 * so a pipe never gets a cut snapshot.
 */

import {
  AxsnapError,
  type Delivery,
  type LocatorCandidate,
  type Retry,
  unexpectedErrorJson,
} from "../../model/errors.js";
import type { RawApp, Rect } from "../../model/model.js";
import type { InputRoute } from "../../native.js";
import type { PermissionStatus } from "../../observe/desktop.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { WindowListing } from "../../observe/windows.js";
import type { ActionResult, ResolvedTarget } from "../../session/session.js";
import { LIBRARY_PHRASES as P } from "../phrases.js";
import { type ActionReply, composeReply, type ReplyData, replyText } from "../reply.js";
import { type NextContext, withContext } from "./next.js";

export interface ScreenshotData {
  path: string;
  pixelWidth: number;
  pixelHeight: number;
  scale: number;
  windowOrigin: { x: number; y: number };
}

/** One command's outcome: the data of the envelope and its text form. */
export interface Outcome {
  data: unknown;
  text: string;
}

export interface SnapshotData {
  snapshotId: string;
  app: { name: string; pid: number; bundleId?: string };
  window: { title: string; frame: Rect };
  text: string;
  /** index → ref, for every printed index. */
  refs: Record<string, string>;
  complete: boolean;
  cutBy: string[];
  focusedIndex?: number;
  screenshot?: ScreenshotData;
  /** The stored snapshot's file (what later processes resolve refs against). */
  stored: string;
}

export interface TargetData {
  /** The ref as given (a bare index inside `call` is shown as the ref it meant). */
  ref: string;
  snapshotId: string;
  index: number;
  /** When the ref came from another process: the element in the new observation that was acted on. */
  foundAs?: string;
  /** A locator TARGET: the locator, and `ref` the element it was located as. */
  locator?: string;
}

export interface ActionData {
  action: string;
  target?: TargetData;
  /** click-at: the pixels and the snapshot whose screenshot they belong to. */
  at?: { x: number; y: number; snapshotId: string };
  delivery: Delivery;
  retry: Retry;
  channel: "semantic" | "synthetic";
  route?: InputRoute;
  notes: string[];
  snapshot?: SnapshotData;
  /** How it settled, what opened and closed, the changes (refs into the fresh snapshot), what the text shows. */
  settled?: ReplyData["settled"];
  opened?: ReplyData["opened"];
  closed?: ReplyData["closed"];
  changes?: ReplyData["changes"];
  shows?: ReplyData["shows"];
}

export interface ResolveData extends ResolvedTarget {
  ref: string;
  foundAs?: string;
}

export interface ErrorData {
  code: string;
  message: string;
  hint: string;
  delivery: Delivery;
  retry: Retry;
  /** `call`: the step that failed (1-based) and its command. */
  step?: number;
  stepCommand?: string;
  /** A process the command started and left running (launch's TIMEOUT). */
  pid?: number;
  /** A locator found nothing: the closest elements, best first, with their refs and locators. */
  candidates?: LocatorCandidate[];
  /** A locator named several elements: each, with the locator that tells it apart. */
  matches?: LocatorCandidate[];
}

export type Envelope =
  | { ok: true; command: string; data: unknown }
  | { ok: false; command: string; error: ErrorData; data?: unknown };

export const refOf = (id: string, index: number): string => `@${id}:e${index}`;

export function snapshotData(snap: Snapshot, stored: string, screenshotPath?: string): SnapshotData {
  const refs: Record<string, string> = {};
  for (const r of snap.records) refs[String(r.index)] = refOf(snap.id, r.index);
  const shot = snap.screenshot;
  return {
    snapshotId: snap.id,
    app: {
      name: snap.app.name,
      pid: snap.app.pid,
      ...(snap.app.bundleId === undefined ? {} : { bundleId: snap.app.bundleId }),
    },
    window: { title: snap.window.title, frame: snap.window.frame },
    text: snap.text,
    refs,
    complete: snap.complete,
    cutBy: [...snap.cutBy],
    ...(snap.focusedIndex === undefined ? {} : { focusedIndex: snap.focusedIndex }),
    ...(shot && screenshotPath !== undefined
      ? {
          screenshot: {
            path: screenshotPath,
            pixelWidth: shot.pixelWidth,
            pixelHeight: shot.pixelHeight,
            scale: shot.scale,
            windowOrigin: shot.windowOrigin,
          },
        }
      : {}),
    stored,
  };
}

/** The header line an agent forms refs from, then the screenshot line, then the text. */
export function snapshotText(d: SnapshotData, screenshotWanted: boolean): string {
  return `${[...snapshotHead(d, screenshotWanted), d.text].join("\n")}\n`;
}

/** The header line an agent forms refs from, then the screenshot line. */
function snapshotHead(d: SnapshotData, screenshotWanted: boolean): string[] {
  const lines = [
    `snapshot ${d.snapshotId} of ${d.app.name} (pid ${d.app.pid}); refs: @${d.snapshotId}:e<index>`,
  ];
  const s = d.screenshot;
  if (s)
    lines.push(
      `screenshot ${s.path}: ${s.pixelWidth}x${s.pixelHeight} px, ${s.scale} px per point, window at ${s.windowOrigin.x},${s.windowOrigin.y}; click-at X Y --of ${d.snapshotId}`,
    );
  else if (screenshotWanted)
    lines.push("screenshot: none was captured (see the notes at the end of the text)");
  return lines;
}

/** An action's data and text, both from one composed reply (doors/reply.ts, shared with MCP). */
export function actionOutcome(
  result: ActionResult,
  o: {
    target?: TargetData | undefined;
    at?: ActionData["at"];
    snapshot?: SnapshotData | undefined;
    notes?: string[];
    full: boolean;
    screenshotWanted: boolean;
    /** False with --no-snapshot: no fresh snapshot was asked for. */
    snapshotAsked?: boolean;
    /** Observations made in this command to find refs printed by another process (never shown to the agent). */
    reobserved?: readonly string[];
    /** Observations a locator TARGET was located in (never shown to the agent either). */
    located?: readonly string[];
  },
): { data: ActionData; text: string } {
  const app = o.snapshot ? cliApp(o.snapshot.app.name) : "NAME";
  const reply: ActionReply = composeReply(result, {
    mode: o.full ? "full" : "diff",
    words: {
      whole: `--full (or \`axsnap snapshot --app ${app}\`)`,
      idle: `\`axsnap wait --app ${app} --idle\``,
      apps: "`axsnap apps` lists the apps that run (`axsnap launch` starts one)",
      snapshot: `\`axsnap snapshot --app ${o.snapshot ? app : "<its name or pid>"}\``,
    },
    snapshotAsked: o.snapshotAsked !== false,
    what: o.target ? o.target.ref : o.at ? `${o.at.x},${o.at.y} of ${o.at.snapshotId}` : "",
    notes: o.notes ?? [],
  });
  // A diff since an observation the agent never read: what changed before it is not in the reply.
  const from = result.changesFrom;
  if (reply.view?.shows === "diff" && from !== undefined && o.reobserved?.includes(from))
    reply.notes.splice(
      o.notes?.length ?? 0,
      0,
      `changes since ${from}, observed right before the action to find your ref: earlier ones are not shown`,
    );
  else if (reply.view?.shows === "diff" && from !== undefined && o.located?.includes(from))
    reply.notes.splice(
      o.notes?.length ?? 0,
      0,
      `changes since ${from}, observed to locate the element: earlier ones are not shown`,
    );
  const data: ActionData = {
    action: result.action,
    ...(o.target ? { target: o.target } : {}),
    ...(o.at ? { at: o.at } : {}),
    delivery: result.delivery,
    retry: result.retry,
    channel: result.channel,
    ...(result.route ? { route: result.route } : {}),
    notes: reply.notes,
    ...(o.snapshot ? { snapshot: o.snapshot } : {}),
    ...reply.data,
  };
  // The reply's own line names the fresh snapshot; only its screenshot's line is added here.
  const head = o.snapshot ? snapshotHead(o.snapshot, o.screenshotWanted).slice(1) : [];
  return { data, text: replyText(reply, head) };
}

/** An app name as a command line takes it. */
function cliApp(name: string): string {
  return /^[\w.-]+$/.test(name) ? name : JSON.stringify(name);
}

export function resolveText(d: ResolveData): string {
  const lines = [
    `${d.ref}: ${d.role}${d.name === undefined ? "" : ` "${d.name}"`}, reached ${d.how === "live" ? "through its live element" : "by its identity in a new observation"}${d.foundAs ? ` (${d.foundAs})` : ""}`,
  ];
  for (const n of d.notes) lines.push(`note: ${n}`);
  return `${lines.join("\n")}\n`;
}

export function appsText(apps: RawApp[]): string {
  return apps
    .map(
      (a) =>
        // An X11 client found through its windows (issue 20): its snapshot is its window and its pixels' text.
        `${a.name}\tpid ${a.pid}${a.noTree ? "\t(no accessibility tree)" : ""}${a.responsive === false ? "\t(not answering)" : ""}\n`,
    )
    .join("");
}

export function windowsText(windows: WindowListing[]): string {
  if (windows.length === 0) return "no windows\n";
  return windows
    .map(
      (w) =>
        `${w.index}\t${w.kind}${w.modal ? " (modal)" : ""}\t${JSON.stringify(w.title)}\t${w.visible ? "" : "hidden\t"}id ${w.id}\n`,
    )
    .join("");
}

export function permissionsText(p: PermissionStatus): string {
  const d = p.desktop;
  const desktop = d
    ? `session ${d.session}${d.display ? ` (DISPLAY ${d.display})` : ""}${d.agentDesktop ? `, the agent's desktop ${d.agentDesktop.name}` : ""}
${
  d.compositor
    ? `compositor ${d.compositor.name} (${d.compositor.evidence})
`
    : ""
}${
  d.session === "wayland" && d.windows
    ? `windows ${d.windows.source}: ${d.windows.detail}
`
    : ""
}${
  d.routes
    ? `capture ${d.routes.capture}, input ${d.routes.input}: ${d.routes.detail}
`
    : ""
}${d.appsWithoutTree
  .map((a) => `no accessibility tree: ${a.name}\tpid ${a.pid}\t${a.cause}: ${a.evidence}\n`)
  .join("")}`
    : "";
  return `platform ${p.platform}\naccessibility ${p.accessibility}\nscreen recording ${p.screenRecording}\n${desktop}${p.hint ? `hint: ${p.hint}\n` : ""}`;
}

// ---- hints -----------------------------------------------------------------

const CLI_HINTS: Partial<Record<string, string>> = {
  APP_NOT_FOUND: "run `axsnap apps` to see what runs (or start the app), then pass --app NAME or --app PID",
  WINDOW_NOT_FOUND:
    "the app has no usable window; open or unminimize one, then run `axsnap snapshot --app APP` again",
  SNAPSHOT_NOT_FOUND: "run `axsnap snapshot --app APP` and use a ref it prints",
  ELEMENT_NOT_FOUND:
    "use a ref whose index the snapshot printed; `axsnap snapshot --app APP` prints new ones",
  STALE_REF: "the element changed or is gone; run `axsnap snapshot --app APP` and pick it again by a new ref",
  AMBIGUOUS_TARGET:
    "run `axsnap snapshot --app APP` and pick the element by a new ref (the warm process tells elements with the same role and name apart in the snapshots it printed), or snapshot and act in one process with `axsnap call`; a click can also go by its pixels (`axsnap click-at`)",
  IDENTITY_UNPROVEN:
    "run `axsnap snapshot --app APP` again (with a larger --max-nodes or --deadline if it was cut) and use a new ref",
  STALE_OBSERVATION:
    "run `axsnap snapshot --app APP --screenshot FILE` and use its pixels within 60 s (click-at X Y --of ID)",
  TIMEOUT: "try again with a longer --deadline, or fewer elements with --max-nodes",
  AMBIGUOUS_APP: "pass --app PID with the pid of the one you mean (the message lists them)",
  NOT_ENABLED:
    "the element is disabled; wait, run `axsnap snapshot --app APP` to see when it is enabled, or pick another",
  ACTION_FAILED:
    "run `axsnap snapshot --app APP` to see what happened, then pick the element again (a click can also go by its pixels: `axsnap click-at`)",
  ABORTED: "run `axsnap snapshot --app APP` before acting again",
};

/** Library phrasings → the command line's. */
const PHRASES: [RegExp, string][] = [
  [P.openCollapsed, "open it with `axsnap snapshot --root $1`"],
  // The CLI names a window by its title only (--window TITLE).
  [
    P.passWindow,
    "pass --window with a window's title (or part of one); `axsnap windows --app APP` lists them",
  ],
  [P.ambiguousWindow, "pass --window with the window's whole title (`axsnap windows --app APP` lists them)"],
  [P.withoutWindowOption, "run `axsnap snapshot --app APP` without --window"],
  [P.listWindows, "`axsnap windows --app APP`"],
  // A wait's last observation dies with its process: the CLI looks again instead.
  [
    P.waitObserved,
    "run `axsnap snapshot --app APP` to see the app as it is now and act on that, or wait longer with a larger --timeout",
  ],
  [P.byIndex, "act on an element by its ref"],
  [/pass raw: true/g, "pass --raw"],
  [/\{ app: "([^"]*)" \}/g, "--app $1"],
  [P.deadlineMs, "--deadline"],
  [P.timeoutMs, "--timeout"],
  [P.maxDepth, "--max-depth"],
  [P.confirmCallback, "pass --confirm if the user asked for exactly this"],
  [P.withScreenshot, "run `axsnap snapshot --app APP --screenshot FILE`"],
  [P.takeSnapshot, "run `axsnap snapshot --app APP`"],
  [P.listApps, "`axsnap apps`"],
  [P.listLaunchable, "`axsnap apps --launchable`"],
  [P.snapshotOfPid, "`axsnap snapshot --app $1`"],
  [/\{ app: (\d+) \}/g, "--app $1"],
  [P.asPid, "as --app PID"],
  [P.maxNodes, "--max-nodes"],
];

function isDefaultHint(e: AxsnapError): boolean {
  return new AxsnapError(e.code, "").hint === e.hint;
}

/** An error's hint in CLI terms; APP is the app's name (or pid) when known. */
export function cliHint(e: AxsnapError, app?: string | number): string {
  return cliText((isDefaultHint(e) && CLI_HINTS[e.code]) || e.hint, app);
}

/** A library hint in CLI terms. */
function cliText(text: string, app?: string | number): string {
  let hint = text;
  for (const [re, to] of PHRASES) hint = hint.replace(re, to);
  return hint.replace(/--app APP/g, `--app ${app === undefined ? "NAME" : cliApp(String(app))}`);
}

/**
 * An error as the CLI prints it; `context`: the refused command's --desktop
 * and --session, carried into the commands its hint names (next.ts).
 */
export function errorData(e: unknown, app?: string | number, context: NextContext = {}): ErrorData {
  if (e instanceof AxsnapError)
    return {
      code: e.code,
      message: e.message,
      hint: withContext(cliHint(e, app), context),
      delivery: e.delivery,
      retry: e.retry,
      ...(e.pid === undefined ? {} : { pid: e.pid }),
      ...(e.candidates === undefined ? {} : { candidates: e.candidates }),
      ...(e.matches === undefined ? {} : { matches: e.matches }),
    };
  const json = unexpectedErrorJson(e, true);
  return { ...json, hint: withContext(cliText(json.hint, app), context) };
}

/** Exit status: 0 ok, 2 a usage error (or an argument the library refused), 1 any other error. */
export function exitCodeOf(code: string): number {
  return code === "USAGE" || code === "INVALID_ARGUMENT" ? 2 : 1;
}

export function errorText(err: ErrorData): string {
  const where = err.step === undefined ? "" : `step ${err.step} (${err.stepCommand}): `;
  // A locator's refusal lists what is there: each with its ref (acts as printed) and its locator.
  const listed = [
    ...(err.candidates ?? []).map((c) => `candidate: ${c.locator}  ${c.ref}${c.why ? ` (${c.why})` : ""}`),
    ...(err.matches ?? []).map((c) => `match: ${c.locator}  ${c.ref}`),
  ];
  return `axsnap: ${where}${err.code}: ${err.message} (delivery ${err.delivery}, retry ${err.retry})\nhint: ${err.hint}\n${listed.map((l) => `${l}\n`).join("")}`;
}

/**
 * The text a door call printed, for its trace step (lib/session/trace/door.ts): the
 * command's text, or with --json its envelope; a failed command's error as
 * it was printed.
 */
export function doorReply(
  command: string,
  r: { out: Outcome } | { error: unknown },
  json: boolean,
  app?: string | number,
): string {
  if ("out" in r) return json ? envelopeText({ ok: true, command, data: r.out.data }) : r.out.text;
  const error = errorData(r.error, app);
  return json ? envelopeText({ ok: false, command, error }) : errorText(error);
}

// ---- writing ---------------------------------------------------------------

/** Where a command's output goes: this process's streams, or the client of the warm process (lib/doors/cli/daemon.ts). */
export interface OutputSink {
  out(text: string): void;
  err(text: string): void;
}

const STREAMS: OutputSink = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};
let sink: OutputSink = STREAMS;

/** Sends what commands write to `to` until the returned function puts the process's streams back. */
export function redirectOutput(to: OutputSink): () => void {
  sink = to;
  return () => {
    sink = STREAMS;
  };
}

export function writeOut(text: string): void {
  if (text.length > 0) sink.out(text);
}

export function writeErr(text: string): void {
  if (text.length > 0) sink.err(text);
}

export function envelopeText(envelope: Envelope): string {
  return `${JSON.stringify(envelope)}\n`;
}
