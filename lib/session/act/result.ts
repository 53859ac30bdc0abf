/**
 * What an action returns: how far it got (delivery, retry), the notes an
 * agent should read, and its next view — a fresh snapshot taken with the
 * options of the snapshot acted on, the changes from that snapshot, and the
 * text to read (the diff when it is shorter than the whole window).
 */
import { readFileSync } from "node:fs";
import { AxsnapError, type Delivery, invalidArgument, type Retry } from "../../model/errors.js";
import type { InputRoute } from "../../native.js";
import { listWindows, liveObservation, type ObservationOptions } from "../../observe/desktop.js";
import { diffSnapshots, type SnapshotChanges } from "../../observe/diff.js";
import { screenshotRequest } from "../../observe/marks.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { compareWindows, type WindowListing } from "../../observe/windows.js";
import { sameIdentity } from "../../render/identity.js";
import { normaliseRenderOptions, type RenderOptions } from "../../render/index.js";
import type { ElementRecord } from "../../render/records.js";
import { cut } from "../../render/sanitize.js";
import type { CallContext } from "../call.js";
import type { ActEnv } from "./env.js";
import { heldAfterAction } from "./held.js";
import { inWords } from "./plain.js";
import type { Resolved } from "./resolve.js";
import { scopeOf } from "./root.js";

export interface ActionResult {
  action: string;
  delivery: Delivery;
  retry: Retry;
  channel: "semantic" | "synthetic";
  /**
   * With channel "synthetic": the way the input went to the window, as its snapshot found it:
   * "x11" (XTest), "gnome-mutter" (GNOME on Wayland: Mutter's RemoteDesktop), "quartz" (macOS).
   */
  route?: InputRoute;
  notes: string[];
  /** The element acted on; `locator` when it was named by a locator (design: issue 34). */
  target?: { snapshotId: string; index: number; locator?: string };
  /**
   * setValue: whether the element holds the value asked for, read back after the write; false
   * when the app made it something else (rounded to its step, clamped to its range), which a
   * note says and `value` holds. Absent when it could not be read back.
   */
  applied?: boolean;
  /** setValue: the value the element holds once read back. */
  value?: string | number | boolean;
  /** A fresh snapshot of the app after the action, unless turned off. */
  snapshot?: Snapshot;
  /** With a fresh snapshot: what changed from the snapshot acted on to it (diff.ts), keyed by live handle. */
  changes?: SnapshotChanges;
  /**
   * With changes: the id of the snapshot they are from — the one acted on, or, when the fresh
   * snapshot shows another surface, the session's last snapshot of that surface.
   */
  changesFrom?: string;
  /**
   * With a fresh snapshot: whether it is of the surface acted on (same window id and kind). False
   * when a menu, popup or dialog opened (or closed back to its window) and the fresh snapshot faces it.
   */
  sameSurface?: boolean;
  /**
   * With a fresh snapshot: what an agent reads. `changes.text` when it is shorter than the fresh
   * snapshot's text, else that text; the full snapshot is always `snapshot.text`.
   */
  text?: string;
  /**
   * How the app was given time to react before the fresh snapshot: "quiet" when its change events
   * stopped for the quiet period (`quietMs`: the one asked, or longer for an app that sends its
   * changes in batches, as Chromium does), "cap" when they were still coming at the cap (the
   * snapshot may show the app mid-change), "none" when nothing shows it settled: the platform
   * reports no events (the snapshot was taken at once), or the app stopped answering (its silence
   * was not settling; a note says so).
   */
  settled?: { mode: "quiet" | "cap" | "none"; ms: number; events: number; quietMs?: number };
  /**
   * The app's windows, dialogs, menus and popups the action opened and closed (by window id), when
   * they could be listed before and after; absent when they could not.
   */
  opened?: WindowListing[];
  closed?: WindowListing[];
  /**
   * The app, when its process ended after the action (a Quit, its last window closed): there is
   * no fresh snapshot, and `closed` holds every window it had.
   */
  exited?: { name: string; pid: number };
}

/** Waiting for the app to go quiet after an action, before its fresh snapshot. */
export interface SettleOptions {
  /** No change event for this long means the app has reacted. Default 150 ms. */
  quietMs?: number;
  /** Never wait longer than this (nor past half of the call's remaining time). Default 2000 ms. */
  capMs?: number;
}

export interface ActOptions {
  /** Which app a bare index refers to; default the app of the session's latest snapshot. */
  app?: string | number;
  /**
   * The fresh snapshot after acting: true (default) takes it with the options of the snapshot acted
   * on (style, screenshot, limits); an object overrides some of them; false takes none.
   */
  snapshot?: boolean | ObservationOptions;
  /** Before the fresh snapshot, wait until the app's change events stop (default true). */
  settle?: boolean | SettleOptions;
  /**
   * What the fresh snapshot's changes are from: "acted" (default) the snapshot acted on; "latest"
   * the session's latest snapshot of the same surface (the MCP server: its agent has read every
   * reply, so an action by an older ref needs only what changed since the last one, not every
   * change since the snapshot the ref names).
   */
  changesFrom?: "acted" | "latest";
  /** This call's deadline in ms (1-600000); default the session's deadlineMs. The call settles by it. */
  deadlineMs?: number;
  /** Aborts the call: it settles with ABORTED; its delivery says whether anything had been sent. */
  signal?: AbortSignal;
}

/** A click's options: beside ActOptions, so the OCR line's click (act/ocr.ts) takes them without importing element.ts. */
export interface ClickOptions extends ActOptions {
  button?: "left" | "right";
  count?: 1 | 2;
}

/** What was done: everything a result says before the fresh snapshot is taken. */
export interface Outcome {
  action: string;
  /** The snapshot acted on: the diff's "before", and the app the fresh snapshot observes. */
  snapshot: Snapshot;
  record?: ElementRecord;
  channel: "semantic" | "synthetic";
  delivery: Delivery;
  notes: string[];
  /** setValue's read-back (ActionResult.applied, .value). */
  applied?: boolean;
  value?: string | number | boolean;
}

const DEFAULT_QUIET_MS = 150;
const DEFAULT_SETTLE_CAP_MS = 2000;

/** The app's windows as listed right before an action sent anything, per call. */
const windowsBefore = new WeakMap<CallContext, WindowListing[]>();

/** The app's windows, asked now; undefined when they could not be listed (the result then says nothing). */
async function windowsOf(
  env: ActEnv,
  snap: Snapshot,
  ctx: CallContext,
): Promise<WindowListing[] | undefined> {
  try {
    return await ctx.step("read", () =>
      listWindows(
        snap.app.pid,
        {
          // A listing is a few ms; it must never eat the action's budget.
          deadlineMs: Math.max(1, Math.min(1000, ctx.remaining() / 4)),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        },
        liveObservation(snap)?.backend ?? env.backend,
      ),
    );
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "ABORTED") throw e;
    return undefined;
  }
}

/**
 * Lists the app's windows right before the action sends anything, so its
 * result can say which menus, popups and dialogs the action opened or closed.
 */
export async function noteWindows(env: ActEnv, snap: Snapshot, ctx: CallContext): Promise<void> {
  const list = await windowsOf(env, snap, ctx);
  if (list) windowsBefore.set(ctx, list);
}

/** The app's windows as listed right before the action (noteWindows), if they could be listed. */
export function windowsListedBefore(ctx: CallContext): readonly WindowListing[] | undefined {
  return windowsBefore.get(ctx);
}

/** Notes are for an agent to read: one is cut at the text limit, like a printed field, and says no D-Bus text. */
export const NOTE_LIMIT = 500;

const note = (text: string): string => cut(inWords(text), NOTE_LIMIT);

/**
 * A refusal that delivered nothing: only then may another way of doing the
 * same thing follow (selecting a row, then pressing; pressing, then clicking).
 */
export function refusedUndelivered(e: unknown): e is AxsnapError {
  return (
    e instanceof AxsnapError &&
    (e.code === "ACTION_NOT_SUPPORTED" || e.code === "ACTION_FAILED") &&
    e.delivery === "not_delivered"
  );
}

/** A semantic call's outcome: unverified when the app answered, uncertain (with why) when it may have acted. */
export function semanticOutcome(
  action: string,
  r: Resolved,
  notes: string[],
  uncertain: string | undefined,
): Outcome {
  return {
    action,
    snapshot: r.snapshot,
    record: r.record,
    channel: "semantic",
    delivery: uncertain === undefined ? "delivered_unverified" : "delivery_uncertain",
    notes: uncertain === undefined ? notes : [...notes, uncertain],
  };
}

function routeOf(o: Outcome): { route?: InputRoute } {
  const route = o.channel === "synthetic" ? liveObservation(o.snapshot)?.route : undefined;
  return route ? { route } : {};
}

/** The result of an outcome, with the agent's next view unless `options.snapshot` is false. */
export async function finish(
  env: ActEnv,
  ctx: CallContext,
  options: ActOptions,
  o: Outcome,
): Promise<ActionResult> {
  const result: ActionResult = {
    action: o.action,
    delivery: o.delivery,
    retry: o.delivery === "not_delivered" ? "safe" : "unsafe",
    channel: o.channel,
    ...routeOf(o),
    notes: o.notes.map(note),
    ...(o.record ? { target: { snapshotId: o.snapshot.id, index: o.record.index } } : {}),
    ...(o.applied === undefined ? {} : { applied: o.applied }),
    ...(o.value === undefined ? {} : { value: o.value }),
  };
  if (options.snapshot === false) return result;
  const live = liveObservation(o.snapshot);
  if (live && options.settle !== false) {
    const settle = typeof options.settle === "object" ? options.settle : {};
    try {
      const s = await ctx.step("read", () =>
        live.backend.waitQuiet(o.snapshot.app.pid, {
          quietMs: settle.quietMs ?? DEFAULT_QUIET_MS,
          // Half of what is left at most: the fresh snapshot needs the rest.
          capMs: Math.max(1, Math.min(settle.capMs ?? DEFAULT_SETTLE_CAP_MS, ctx.remaining() / 2)),
        }),
      );
      result.settled =
        s.settled === "unsupported"
          ? { mode: "none", ms: 0, events: 0 }
          : { mode: s.settled, ms: Math.round(s.ms), events: s.events, quietMs: Math.round(s.quietMs) };
    } catch (e) {
      if (e instanceof AxsnapError && e.code === "ABORTED") throw e;
      result.settled = { mode: "none", ms: 0, events: 0 };
      result.notes.push(note(`could not wait for the app to settle: ${(e as Error).message}`));
    }
  }
  const before = windowsBefore.get(ctx);
  const after = before ? await windowsOf(env, o.snapshot, ctx) : undefined;
  if (before && after) {
    const { opened, closed } = compareWindows(before, after);
    result.opened = opened;
    result.closed = closed;
  }
  // The fresh snapshot is the agent's new view: it becomes the app's latest.
  // Inside the call's own deadline: the call settles by it, fresh snapshot included.
  const kept = liveObservation(o.snapshot)?.options ?? {};
  const asked = typeof options.snapshot === "object" && options.snapshot !== null ? options.snapshot : {};
  const follow = followedWindow(o.snapshot, before, after);
  const observe = (which: "followed" | "default") => {
    const { window, ...rest } = { ...kept, ...asked };
    return env.observe({
      ...rest,
      app: o.snapshot.app.pid,
      // A subtree snapshot's fresh one is that subtree again while its window is still there (its
      // root names the window); another surface now: the whole of it. The default choice, after
      // the window asked for closed: whatever the app shows now.
      ...(which === "default"
        ? { root: undefined }
        : follow
          ? kept.root !== undefined
            ? window === undefined
              ? {}
              : { window }
            : { window: { id: follow } }
          : { root: undefined, ...(window === undefined ? {} : { window }) }),
      deadlineMs: ctx.remaining(),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  };
  try {
    try {
      result.snapshot = await observe("followed");
    } catch (e) {
      // The window it faced closed under it (a dialog that lingered a moment after the action
      // closed it): the app's other windows are what the agent faces now.
      if (!(e instanceof AxsnapError && e.code === "WINDOW_NOT_FOUND") || ctx.remaining() < 1) throw e;
      result.snapshot = await observe("default");
      // The listing after the action still showed it: it closed since, and the reply says so.
      const gone = after?.find((w) => w.id === follow && !result.closed?.some((c) => c.id === w.id));
      if (gone && result.closed) result.closed.push(gone);
    }
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "ABORTED") throw e;
    // It answered while the action was resolved: what the action opened holds it (act/held.ts).
    const held = () => heldAfterAction(env.store, o.snapshot, o.action);
    await missedFresh(result, o.snapshot, before, e, ctx, held);
  }
  const fresh = result.snapshot;
  if (!fresh) return result;
  // The user may now face another surface (a menu or dialog opened, or one closed back to its
  // window): the diff is then against the session's last snapshot of that surface, if it holds
  // one; a diff between two different windows would mean nothing.
  const same = sameWindow(o.snapshot, fresh);
  result.sameSurface = same;
  const comparable = (s: Snapshot) => sameWindow(s, fresh) && sameView(s, fresh);
  // "latest": the agent read every reply, so the changes since the last one of this surface.
  const latest = options.changesFrom === "latest" ? env.store.lastOf(fresh, comparable) : undefined;
  const base = same
    ? (latest ?? (sameView(o.snapshot, fresh) ? o.snapshot : undefined))
    : env.store.lastOf(fresh, comparable);
  if (!same) {
    const w = fresh.window;
    const what = w.kind && w.kind !== "window" ? `a ${w.kind}` : "a window";
    result.notes.push(
      note(
        `the app now shows ${what}${w.title ? ` "${w.title}"` : ""} other than the one acted on; ${base ? `compared with snapshot ${base.id} of it` : "read it whole"}`,
      ),
    );
  }
  if (!base) {
    result.text = fresh.text;
    return result;
  }
  result.changes = diffSnapshots(base, fresh);
  result.changesFrom = base.id;
  result.text = result.changes.text.length < fresh.text.length ? result.changes.text : fresh.text;
  const changed = same && o.record ? changedAround(o.record, fresh) : undefined;
  if (changed) result.notes.push(note(changed));
  return result;
}

/** How long an app that left the accessibility bus is given to end its process, at most. */
const EXIT_WAIT_MS = 2000;
const EXIT_POLL_MS = 25;

/**
 * Why no fresh snapshot came, in words an agent can act on: the app exited
 * (every window it had closed with it: `closed`, `exited`), it has no window
 * left, it did not answer. An app that left the bus is given a moment to end
 * its process (GTK leaves the bus while quitting), checked every 25 ms.
 */
async function missedFresh(
  result: ActionResult,
  acted: Snapshot,
  before: WindowListing[] | undefined,
  e: unknown,
  ctx: CallContext,
  held: () => string,
): Promise<void> {
  const { pid, name } = acted.app;
  const code = e instanceof AxsnapError ? e.code : undefined;
  if (code === "APP_NOT_FOUND") {
    const until = Date.now() + Math.max(0, Math.min(EXIT_WAIT_MS, ctx.remaining() - 1));
    while (!processEnded(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, EXIT_POLL_MS));
    if (processEnded(pid)) {
      result.exited = { name, pid };
      // Every window it had went with it. A listing taken while it quit may show its X11 window
      // without its accessibility (x11:…): nothing opened.
      if (before) result.closed = [...before];
      result.opened = [];
      result.notes.push(note(`${name} (pid ${pid}) exited after the action, so there is no fresh snapshot`));
      return;
    }
    result.notes.push(
      note(
        `no fresh snapshot: ${name} (pid ${pid}) left the accessibility bus after the action, though its process still runs (it may be quitting)`,
      ),
    );
    return;
  }
  if (code === "WINDOW_NOT_FOUND") {
    result.notes.push(note(`no fresh snapshot: ${name} has no window open after the action`));
    return;
  }
  result.notes.push(note(`no fresh snapshot after the action: ${(e as Error).message}`));
  if (code === "APP_UNRESPONSIVE" && result.delivery !== "not_delivered") result.notes.push(note(held()));
  // Silence from an app that then does not answer is not settling: it may have stopped mid-reaction.
  if (result.settled?.mode === "quiet" && (code === "APP_UNRESPONSIVE" || code === "TIMEOUT")) {
    result.settled = { ...result.settled, mode: "none" };
    result.notes.push(
      code === "APP_UNRESPONSIVE"
        ? "the app did not answer after the action, so its silence does not show that it settled"
        : "the fresh snapshot ran out of time, so the silence before it does not show that the app settled",
    );
  }
}

/** Whether a process has ended: no such process, or a zombie (Linux) its parent has not reaped. */
export function processEnded(pid: number): boolean {
  if (process.platform === "linux") {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
      return state === "Z" || state === "X";
    } catch {
      return true;
    }
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Whether two snapshots of a window show it the same way, so a diff of them
 * says what changed: the same scope (the same root element, or the whole
 * window: a subtree against the whole window would read everything outside it
 * as added) and the same view options (depth, skeleton, maxTokens).
 */
function sameView(a: Snapshot, b: Snapshot): boolean {
  if (scopeOf(a) !== scopeOf(b)) return false;
  const va = liveObservation(a)?.options ?? {};
  const vb = liveObservation(b)?.options ?? {};
  return (
    va.depth === vb.depth &&
    (va.skeleton === true) === (vb.skeleton === true) &&
    va.maxTokens === vb.maxTokens
  );
}

/**
 * Whether two snapshots observed the same window: by id when both have one (two windows may share
 * a title: a dialog titled like its document, a second document window). A handle-made id is
 * stable while a snapshot holds the window, which the snapshot acted on and stored ones do.
 */
function sameWindow(a: Snapshot, b: Snapshot): boolean {
  const sameKind = (a.window.kind ?? "window") === (b.window.kind ?? "window");
  // The kind too: GTK reuses a closed window's object path for the next one.
  if (a.window.id !== undefined && b.window.id !== undefined) return a.window.id === b.window.id && sameKind;
  return a.window.title === b.window.title && sameKind;
}

/**
 * The window the fresh snapshot follows: the one acted on, by id, while it is still listed and the
 * action opened nothing; undefined lets the default choice face what opened (a menu, a dialog) or
 * what is left when the window closed. Without both listings nothing is known: the default choice.
 */
function followedWindow(
  acted: Snapshot,
  before: WindowListing[] | undefined,
  after: WindowListing[] | undefined,
): string | undefined {
  const id = acted.window.id;
  if (id === undefined || !before || !after) return undefined;
  if (compareWindows(before, after).opened.length > 0) return undefined;
  const kind = acted.window.kind ?? "window";
  return after.some((w) => w.id === id && w.kind === kind) ? id : undefined;
}

/** An action's options that take effect only after sending, checked before anything is sent. */
export function checkActOptions(options: ActOptions | undefined): void {
  checkSnapshotOption(options?.snapshot);
  const from = options?.changesFrom;
  if (from !== undefined && from !== "acted" && from !== "latest")
    throw invalidArgument(`changesFrom must be "acted" or "latest", got ${JSON.stringify(from)}`);
  const settle = options?.settle;
  if (settle === undefined || typeof settle === "boolean") return;
  if (settle === null || typeof settle !== "object" || Array.isArray(settle))
    throw invalidArgument("settle must be true, false or { quietMs, capMs }");
  const { quietMs, capMs } = settle;
  if (quietMs !== undefined && (typeof quietMs !== "number" || !(quietMs >= 10 && quietMs <= 10_000)))
    throw invalidArgument(`settle.quietMs must be between 10 and 10000 ms, got ${String(quietMs)}`);
  if (capMs !== undefined && (typeof capMs !== "number" || !(capMs >= 1 && capMs <= 60_000)))
    throw invalidArgument(`settle.capMs must be between 1 and 60000 ms, got ${String(capMs)}`);
}

/** The `snapshot` option of an action, checked before anything is sent (a bad one would fail only after). */
function checkSnapshotOption(value: unknown): void {
  if (value === undefined || typeof value === "boolean") return;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalidArgument("snapshot must be true, false or an object of snapshot options");
  const o = value as Record<string, unknown>;
  for (const k of ["app", "deadlineMs", "signal"])
    if (k in o)
      throw invalidArgument(
        `snapshot.${k} cannot be set: the fresh snapshot is of the same app, in the call's budget`,
      );
  screenshotRequest(o.screenshot, "snapshot.screenshot");
  normaliseRenderOptions(o as RenderOptions);
}

/**
 * The one race no client can close: an app may change an element between
 * the last live check and the moment it handles the action (Chromium's tree
 * lags the page by a few milliseconds). When the fresh snapshot shows the
 * same element under another identity, the result says so.
 */
function changedAround(record: ElementRecord, fresh: Snapshot): string | undefined {
  if (record.handle === undefined) return undefined;
  const now = fresh.records.find((r) => r.handle === record.handle);
  if (!now || sameIdentity(now.identity, record.identity)) return undefined;
  return `element ${record.index} reads as ${now.roleText} "${now.identity.name ?? ""}" right after the action (it was "${record.identity.name ?? ""}"): the app changed it around the action, so check which one it reached`;
}
