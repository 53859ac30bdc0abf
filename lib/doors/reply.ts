/**
 * What an action answers through the MCP server and the CLI, composed in one
 * place for both doors from the library's ActionResult: the action line
 * (what, delivery, channel, retry), the notes, how the app settled, the
 * surfaces the action opened or closed, and then the fresh snapshot — as the
 * diff against the snapshot acted on (its lines carry the fresh snapshot's
 * indices, so every line printed is addressable at once), or whole when the
 * whole is not longer, when it shows another surface than the one acted on
 * (a menu or dialog that opened prints whole), when there is nothing to
 * compare with, or when the caller asked for the full reply. A whole window
 * longer than the reply budget prints through the budget view (indices kept,
 * its last line saying what was collapsed), except in the full reply.
 *
 * The doors differ only in words (how to ask for the whole window, how to
 * wait) and in how they print a snapshot's header, which each passes in; the
 * data (`ReplyData`) is the same object in the CLI's `--json` envelope and in
 * the MCP tool's structured content.
 *
 * Why diffs by default: an agent reads every reply. On gtk3-widget-factory a
 * click's whole snapshot is about 1,100 text tokens and its screenshot about
 * 1,200 more; the diff of a toggle is a few dozen.
 */

import { collapsedInto } from "../observe/collapsed.js";
import { type Change, changedMark, type SnapshotChanges } from "../observe/diff.js";
import { rerenderView } from "../observe/rerender.js";
import type { Snapshot } from "../observe/snapshot.js";
import type { WindowListing } from "../observe/windows.js";
import { quoted, sanitize } from "../render/sanitize.js";
import { estimateTokens, TOKEN_ESTIMATE_ERROR } from "../render/tokens.js";
import type { ActionResult } from "../session/act/result.js";
import type { ActionScreenshots, ReplyMode } from "./modes.js";
import type { ChangeData, ReplyData, SurfaceData } from "./reply-schema.js";

export type { ActionScreenshots, ReplyMode } from "./modes.js";
export { DEFAULT_REPLY_TOKENS } from "./modes.js";
export type { ReplyData, SurfaceData } from "./reply-schema.js";

/** The words a door uses for what the reply tells an agent to do next. */
export interface DoorWords {
  /** How to see the whole window: `reply: "full"` or get_app_state; `--full`. */
  whole: string;
  /** How to wait until the app is idle. */
  idle: string;
  /** How to see which apps run (and start one again), for an app that exited: list_apps; `axsnap apps`. */
  apps: string;
  /** How to observe the app again: get_app_state; `axsnap snapshot --app NAME`. */
  snapshot: string;
}

export interface ReplyOptions {
  mode?: ReplyMode;
  words: DoorWords;
  /** What was acted on, as the action line names it; default the result's target as a ref. */
  what?: string;
  /** Notes of the door's own (a ref found again in a new observation), before the library's. */
  notes?: readonly string[];
  /** False when the caller asked for no fresh snapshot (`--no-snapshot`): its absence needs no words. */
  snapshotAsked?: boolean;
  /**
   * Estimated tokens above which a whole window prints through the budget
   * view instead (not with mode "full"); absent: no budget.
   */
  replyTokens?: number;
}

/** The fresh snapshot's part of a reply. */
export interface ReplyView {
  snapshot: Snapshot;
  shows: "diff" | "whole" | "budget";
  /** One line saying what follows: the changes since which snapshot, or why the whole came. */
  intro: string;
  /** The diff text, the whole snapshot text, or its budget view. */
  body: string;
}

export interface ActionReply {
  /** `click @s8f3k2p9:e12: delivered_unverified (semantic), retry unsafe` */
  action: string;
  notes: string[];
  /** `settled: quiet after 152 ms …`; absent when the action did not wait. */
  settled?: string;
  /** `opened: menu …`, `closed: dialog "Save" …` */
  surfaces: string[];
  /** Absent when no fresh snapshot came back. */
  view?: ReplyView;
  /** Without a view: why there is none, and the next step that works (never a snapshot of an app that exited). */
  missing?: string;
  data: ReplyData;
}

const ref = (id: string, index: number): string => `@${id}:e${index}`;

/** A surface's title as a line may show it: the app chose it, so it cannot forge a line. */
function titleOf(title: string): string {
  return sanitize(title, 100) === "" ? "(untitled)" : quoted(title, 100);
}

function surfaceOf(w: WindowListing): SurfaceData {
  return {
    id: w.id,
    title: w.title,
    kind: w.kind,
    role: w.role,
    modal: w.modal,
    visible: w.visible,
    inParent: w.inParent,
  };
}

function surfaceLine(verb: "opened" | "closed", w: WindowListing): string {
  return `${verb}: ${w.modal && w.kind === "dialog" ? "modal dialog" : w.kind} ${titleOf(w.title)}, id ${w.id}${w.inParent ? " (shown inside its window)" : ""}`;
}

function settledLine(s: NonNullable<ActionResult["settled"]>, words: DoorWords): string {
  switch (s.mode) {
    case "quiet":
      // The quiet period is said only when it is not the default (Chromium's batches need longer).
      return `settled: quiet after ${s.ms} ms (${s.events} change event${s.events === 1 ? "" : "s"}${s.quietMs !== undefined && s.quietMs > 150 ? `, then none for ${s.quietMs} ms` : ""})`;
    case "cap":
      return `settled: not quiet: change events were still coming at the ${s.ms} ms cap (${s.events}), so the app may be mid-change; ${words.idle} before relying on it`;
    case "none":
      return "settled: not waited for (the platform reports no change events, or the app stopped answering: see the notes), so the snapshot may show the app before it reacted";
  }
}

/** `shown`: the snapshot the index is in, when its collapsed lines hide records (the fresh one). */
function changeData(c: Change, id: string, shown?: Snapshot): ChangeData {
  // As the text: a record the snapshot printed only collapsed is no address (the store refuses it).
  const into = shown === undefined ? undefined : collapsedInto(shown, c.index);
  return {
    index: c.index,
    ...(into === undefined ? { ref: ref(id, c.index) } : { inside: into, insideRef: ref(id, into) }),
    role: c.role,
    ...(c.name === undefined ? {} : { name: c.name }),
    line: c.line,
    ...(c.fields ? { fields: [...c.fields] } : {}),
    ...(c.states ? { states: { added: [...c.states.added], removed: [...c.states.removed] } } : {}),
    ...(c.previousIndex === undefined ? {} : { previousIndex: c.previousIndex }),
    ...(c.previousLine === undefined ? {} : { previousLine: c.previousLine }),
  };
}

function surfaceWords(s: Snapshot): string {
  const kind = s.window.kind && s.window.kind !== "window" ? s.window.kind : "window";
  return `${kind}${s.window.title ? ` ${titleOf(s.window.title)}` : ""}`;
}

/** An app as the reply names it: `gedit (pid 4242)`. */
function appWords(app: { name: string; pid: number }): string {
  return `${sanitize(app.name, 100)} (pid ${app.pid})`;
}

/** The platform's usual input routes: named in the data, not paid for on every action line. */
const USUAL_ROUTES: ReadonlySet<string> = new Set(["x11", "quartz"]);

/** The action line: what was done to what, how far it got (and by which route, when not the usual), and whether it may be repeated. */
function actionLine(result: ActionResult, what: string | undefined): string {
  const on = what ?? (result.target ? ref(result.target.snapshotId, result.target.index) : undefined) ?? "";
  const via = result.route && !USUAL_ROUTES.has(result.route) ? ` via ${result.route}` : "";
  return `${result.action}${on ? ` ${on}` : ""}: ${result.delivery} (${result.channel}${via}), retry ${result.retry}`;
}

/** The one line naming the fresh snapshot, so refs `@<id>:eN` can be formed from the lines below it. */
function named(fresh: Snapshot): string {
  return `snapshot ${fresh.id}${fresh.complete ? "" : ` (incomplete: cut by ${fresh.cutBy.join(", ")})`}`;
}

/**
 * The whole fresh snapshot, or, when its text is longer than the reply
 * budget, the same snapshot through the budget view (render/budget.ts: the
 * fullest rendering that fits, indices kept, its last line saying what was
 * collapsed and how to open it). A snapshot the agent asked a view of
 * (depth, skeleton, maxTokens) prints as it came.
 */
function wholeOf(
  fresh: Snapshot,
  why: string,
  budget: number | undefined,
  words: DoorWords,
  changes?: { c: SnapshotChanges; from: string },
): ReplyView {
  const what = `the whole ${surfaceWords(fresh)}`;
  if (budget !== undefined && fresh.view === undefined && estimateTokens(fresh.text) > budget) {
    const short = rerenderView(fresh, { maxTokens: budget });
    // Shorter by collapsed lines or by cut texts, in the snapshot's own style: its last line says which.
    if (short?.view !== undefined && short.text !== fresh.text)
      return {
        snapshot: fresh,
        shows: "budget",
        intro: `${named(fresh)}: ${what} (${why}), shortened to the reply budget of ${budget} tokens (${words.whole} prints all of it):`,
        body: [short.text, ...changedLines(changes)].join("\n"),
      };
  }
  return { snapshot: fresh, shows: "whole", intro: `${named(fresh)}: ${what} (${why}):`, body: fresh.text };
}

/** Most changed lines a shortened whole adds: what the action did to the elements that stayed. */
const CHANGED_LINES = 20;

/**
 * The elements that changed (not those added or removed), as the diff prints them: a budget view
 * may collapse the very controls the action moved (a page switcher in a flat window), and those
 * are what an agent acts on next.
 */
function changedLines(changes: { c: SnapshotChanges; from: string } | undefined): string[] {
  const changed = changes?.c.changed ?? [];
  if (changed.length === 0) return [];
  const shown = changed.slice(0, CHANGED_LINES);
  return [
    `changed since ${changes!.from}, numbered as above:`,
    ...shown.map((x) => `${x.index} ${x.line}${x.fields ? ` ${changedMark(x.fields, x.states)}` : ""}`),
    ...(changed.length > shown.length ? [`(+${changed.length - shown.length} more changed)`] : []),
  ];
}

/** The fresh snapshot as the reply shows it: its changes, or the whole of it and why. */
function viewOf(
  result: ActionResult,
  fresh: Snapshot,
  mode: ReplyMode,
  words: DoorWords,
  budget: number | undefined,
): ReplyView {
  const c = result.changes;
  const diffed = c && result.changesFrom !== undefined ? { c, from: result.changesFrom } : undefined;
  const whole = (why: string) => wholeOf(fresh, why, mode === "full" ? undefined : budget, words, diffed);
  if (mode === "full") return whole("the full reply, as asked");
  const from = result.changesFrom;
  if (result.sameSurface === false) {
    // A surface that just opened is new to the agent: read whole, even when GTK reuses a closed
    // popup's id and the session holds a snapshot of its last opening. Going back to a window the
    // agent has seen (a popup closed) shows what changed since it last saw that window.
    const id = fresh.window.id;
    const opened = id === undefined || !result.opened || result.opened.some((w) => w.id === id);
    if (opened) return whole("it just opened");
    if (!c || from === undefined) return whole("another surface than the one acted on");
  }
  if (!c || from === undefined) return whole("nothing to compare it with");
  if (fresh.text.length <= c.text.length) return whole("no longer than its changes");
  // Short on purpose: it is paid on every action; the tools' descriptions say how to read it.
  const renumbered =
    c.renumbered > 0 ? `; ${c.renumbered} unchanged lines got new numbers: reach those by @${from}:eN` : "";
  const since =
    result.sameSurface === false ? `${from}, the last snapshot of this ${surfaceWords(fresh)}` : from;
  return {
    snapshot: fresh,
    shows: "diff",
    intro: `${named(fresh)}, changes since ${since}${renumbered}:`,
    body: c.text,
  };
}

/**
 * Why an action's reply shows no fresh snapshot, and what to do next: an
 * app that exited is said so, with the door's way to list the apps that run
 * (a snapshot of it could only fail); otherwise the notes say why, and the
 * app can be observed again. Undefined when none was asked for.
 */
function missingLine(result: ActionResult, words: DoorWords, asked: boolean): string | undefined {
  if (result.snapshot || !asked) return undefined;
  if (result.exited) return `no fresh snapshot: the app exited; ${words.apps}`;
  return `no fresh snapshot came back (see the notes); ${words.snapshot} observes the app again`;
}

/** Composes the reply of an action, for either door. */
export function composeReply(result: ActionResult, options: ReplyOptions): ActionReply {
  const mode = options.mode ?? "diff";
  const fresh = result.snapshot;
  const view = fresh ? viewOf(result, fresh, mode, options.words, options.replyTokens) : undefined;
  const data: ReplyData = {};
  if (result.applied !== undefined) data.applied = result.applied;
  if (result.value !== undefined) data.value = result.value;
  if (result.settled) data.settled = { ...result.settled };
  if (result.opened) data.opened = result.opened.map(surfaceOf);
  if (result.closed) data.closed = result.closed.map(surfaceOf);
  if (result.exited) data.exited = { ...result.exited };
  if (fresh && result.changes && result.changesFrom !== undefined) {
    const c = result.changes;
    const from = result.changesFrom;
    data.changes = {
      from,
      to: fresh.id,
      summary: c.summary,
      added: c.added.map((x) => changeData(x, fresh.id, fresh)),
      removed: c.removed.map((x) => changeData(x, from)),
      changed: c.changed.map((x) => changeData(x, fresh.id, fresh)),
      unchanged: c.unchanged,
      renumbered: c.renumbered,
      ...(c.note === undefined ? {} : { note: c.note }),
    };
  }
  if (view) data.shows = view.shows;
  const missing = missingLine(result, options.words, options.snapshotAsked !== false);
  return {
    action: actionLine(result, options.what),
    notes: [...(options.notes ?? []), ...result.notes],
    ...(result.settled ? { settled: settledLine(result.settled, options.words) } : {}),
    surfaces: [
      ...(result.opened ?? []).map((w) => surfaceLine("opened", w)),
      ...(result.closed ?? []).map((w) => surfaceLine("closed", w)),
      ...(result.exited ? [`the app exited: ${appWords(result.exited)}`] : []),
    ],
    ...(view ? { view } : {}),
    ...(missing ? { missing } : {}),
    data,
  };
}

/**
 * The reply's data cut to about `budget` tokens as JSON (MCP structured
 * content: a client may show it to its model as well as the text, so it costs
 * no more than the budget the text keeps to). `data` is the whole structured
 * object; only its change lists are cut, keeping what the text shows, first
 * the changed (what the budget view prints after the window), then the added,
 * then the removed, as many as fit; a budget view prints only the changed,
 * so only those are kept. `changes.omitted` counts the rest. Estimated
 * tokens, kept under the budget by the estimate's stated error.
 */
export function withinBudget<T extends ReplyData>(data: T, budget: number): T {
  const c = data.changes;
  if (!c) return data;
  const total = c.changed.length + c.added.length + c.removed.length;
  const shown =
    data.shows === "budget" ? c.changed.slice(0, CHANGED_LINES) : [...c.changed, ...c.added, ...c.removed];
  const limit = Math.floor(budget * (1 - TOKEN_ESTIMATE_ERROR));
  const cost = (x: unknown) => estimateTokens(JSON.stringify(x)) + 1;
  const bare = { ...data, changes: { ...c, added: [], removed: [], changed: [], omitted: total } };
  let used = cost(bare);
  const kept = new Set<ChangeData>();
  for (const x of shown) {
    used += cost(x);
    if (used > limit) break;
    kept.add(x);
  }
  if (kept.size === total) return data;
  return {
    ...data,
    changes: {
      ...c,
      changed: c.changed.filter((x) => kept.has(x)),
      added: c.added.filter((x) => kept.has(x)),
      removed: c.removed.filter((x) => kept.has(x)),
      omitted: total - kept.size,
    },
  };
}

/**
 * The reply as text: the action line, notes, settling, surfaces, then the
 * line naming the fresh snapshot and saying what follows, the door's lines
 * about it (its screenshot), and the diff or the whole text.
 */
export function replyText(reply: ActionReply, snapshotHead: readonly string[]): string {
  const lines = [reply.action, ...reply.notes.map((n) => `note: ${n}`)];
  if (reply.settled) lines.push(reply.settled);
  lines.push(...reply.surfaces);
  if (reply.view) lines.push(reply.view.intro, ...snapshotHead, reply.view.body);
  else if (reply.missing) lines.push(reply.missing);
  return `${lines.join("\n")}\n`;
}

/** Below this many printed elements a window's tree is too thin to show what an action did. */
export const THIN_TREE = 5;

/**
 * Whether an MCP action reply attaches its screenshot. Asked per call, it
 * decides; else the server's mode: "always", "never", or "auto" — attach when
 * the text alone cannot show what happened:
 *
 * - the surface changed (a menu, popup or dialog opened or closed, or the
 *   fresh snapshot faces another window than the one acted on): a new surface
 *   is where layout, icons and pictures matter most, and it is read whole anyway;
 * - the action was at pixels (x/y): the agent is working from the picture,
 *   and its next x/y need the picture they are pixels of;
 * - the tree shows nothing: the diff found no change after the action (a
 *   canvas, a drawing, an app that does not announce its changes), or the
 *   fresh snapshot prints fewer than THIN_TREE elements.
 *
 * A toggle, a typed text, a value set (whose effect the diff shows) get none.
 */
export function screenshotWanted(
  result: ActionResult,
  mode: ActionScreenshots,
  asked: boolean | undefined,
  atPixels: boolean,
): boolean {
  if (asked !== undefined) return asked;
  if (mode !== "auto") return mode === "always";
  const fresh = result.snapshot;
  if (!fresh) return false;
  if (result.sameSurface === false) return true;
  if ((result.opened?.length ?? 0) + (result.closed?.length ?? 0) > 0) return true;
  if (atPixels) return true;
  if (fresh.records.length < THIN_TREE) return true;
  const c = result.changes;
  return c !== undefined && c.added.length + c.removed.length + c.changed.length === 0;
}
