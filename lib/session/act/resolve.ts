/**
 * Reaching the element that was printed (refs-and-actions.md, resolution).
 * Three-valued: the held handle still shows the same identity → use it;
 * else, if the record was proven unique, observe again and count matches
 * (one → use it, none → STALE_REF, many → AMBIGUOUS_TARGET, an incomplete
 * observation → IDENTITY_UNPROVEN); else STALE_REF. Right before acting the
 * identity is read once more, live (confirmLanded); web content is flushed
 * first so that read is not older than the page (flushWebTree).
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { RawNode } from "../../model/model.js";
import { type LiveObservation, liveObservation, snapshot as observeOnce } from "../../observe/desktop.js";
import { sameInk } from "../../observe/ocr/ink.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { countMatches, identityOf, sameIdentity } from "../../render/identity.js";
import type { ElementRecord } from "../../render/records.js";
import type { CallContext } from "../call.js";
import type { ActEnv } from "./env.js";
import { nearPlace } from "./ocr-line.js";
import type { Target } from "./store.js";

/** Errors of a live read that say more than "could not read": they pass through unchanged. */
export const PASS_THROUGH = new Set([
  "ABORTED",
  "TIMEOUT",
  "APP_NOT_FOUND",
  "WINDOW_NOT_FOUND",
  "ACCESSIBILITY_UNAVAILABLE",
]);

export interface Resolved {
  /** The snapshot the agent addressed (never a transient re-observation). */
  snapshot: Snapshot;
  record: ElementRecord;
  live: LiveObservation;
  handle: number;
  how: "live" | "reobserved";
  /** The element as last read live (states decide "disabled", "secure now"). */
  node: RawNode;
  notes: string[];
}

/** How long to wait for web content to show the focus that flushes its pending changes. */
const WEB_FLUSH_MS = 400;
/** Roles of a web document's root: below one, the tree is a browser's mirror of the page. */
const WEB_ROOTS = new Set(["document web", "AXWebArea"]);

/**
 * Lets go of handles without waiting: a release queues behind other calls on
 * the backend's worker, and a call must not wait on someone else's job to
 * settle by its deadline.
 */
export function releaseLater(live: LiveObservation, handles: number[]): void {
  if (handles.length > 0) void live.backend.release(handles).catch(() => undefined);
}

/**
 * Reads what a handle shows now, asked of the app (never a cache): the
 * node, "gone" when the element no longer exists, or "unknown" when it
 * could not be read (the app did not answer). Unknown is never folded into
 * gone or into a match. A deadline spent before the read reached the app
 * (queued behind other calls on the backend's worker) is not the app's
 * silence: that is TIMEOUT, saying so.
 */
export async function nodeNow(
  live: LiveObservation,
  handle: number,
  ctx: CallContext,
): Promise<RawNode | "gone" | "unknown"> {
  const budget = ctx.remaining();
  let call: number | undefined;
  try {
    const read = await ctx.step(
      "read",
      () => {
        const p = live.backend.readElement(handle, 4, ctx.remaining());
        call = live.backend.lastCall?.();
        return p;
      },
      (late) => releaseLater(live, late.handles),
    );
    releaseLater(live, read.handles);
    return read.node;
  } catch (e) {
    if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "ACCESSIBILITY_UNAVAILABLE")) throw e;
    const code = e instanceof AxsnapError ? e.code : "";
    if (code === "TIMEOUT" && neverAsked(live, call, e, budget))
      throw new AxsnapError(
        "TIMEOUT",
        `the call's deadline of ${ctx.deadlineMs} ms passed before the identity of the element could be checked: the read waited behind other calls on axsnap's backend and never reached the app (the app was not asked); nothing was sent`,
        {
          delivery: "not_delivered",
          hint: "axsnap was busy with other calls to this desktop (snapshots, other actions): try again, with a longer deadlineMs if it keeps happening",
          cause: e,
        },
      );
    return code === "STALE_REF" || code === "APP_NOT_FOUND" ? "gone" : "unknown";
  }
}

/** Less than this much of a read's budget left when it reached the app: it was not given a chance to answer. */
const FAIR_CHANCE_MS = 50;

/**
 * The read timed out without reaching the app: still queued when the call
 * settled, or started with (almost) none of its budget left.
 */
function neverAsked(live: LiveObservation, call: number | undefined, e: unknown, budget: number): boolean {
  if (call !== undefined && live.backend.callStarted?.(call) === false) return true;
  const queued = ((e as { cause?: { queuedMs?: unknown } }).cause?.queuedMs ?? 0) as number;
  return typeof queued === "number" && queued > 0 && budget - queued < Math.min(FAIR_CHANCE_MS, budget / 2);
}

/**
 * Resolution inside an action. A re-observation made here is transient: it
 * is released when the call ends and never becomes the app's latest
 * snapshot, so a refused action leaves the agent's bare indices meaning
 * what the snapshot it read printed (refs-and-actions.md, "A refusal does
 * not move latest").
 */
export async function resolveIn(
  env: ActEnv,
  target: Target,
  app: string | number | undefined,
  ctx: CallContext,
): Promise<Resolved> {
  const { snapshot: snap, record } = env.store.address(target, app);
  const live = liveObservation(snap);
  if (!live || record.handle === undefined)
    throw new AxsnapError(
      "STALE_REF",
      "that snapshot has no live elements (it was rendered from a tree, not observed)",
    );
  const now = await nodeNow(live, record.handle, ctx);
  if (typeof now === "object" && sameIdentity(identityOf(now), record.identity))
    return { snapshot: snap, record, live, handle: record.handle, how: "live", node: now, notes: [] };
  if (now === "unknown")
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${record.index} could not be read (the app did not answer); nothing was sent`,
      { hint: "wait a moment and take a new snapshot" },
    );
  if (!record.proof.unique)
    throw new AxsnapError(
      "STALE_REF",
      `element ${record.index} changed and was not proven unique when observed (${record.proof.reason}); nothing was sent`,
      { hint: "take a new snapshot and pick the element again" },
    );
  const fresh = await ctx.step(
    "read",
    () => observeOnce({ app: snap.app.pid, screenshot: false, deadlineMs: ctx.remaining() }, env.backend),
    (late) => late.release(),
  );
  ctx.defer(() => void fresh.release().catch(() => undefined));
  const freshLive = liveObservation(fresh)!;
  if (!fresh.complete)
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${record.index} changed, and the new observation was incomplete (${fresh.cutBy.join(", ")}), so it cannot be found again with certainty; nothing was sent`,
    );
  const matches: RawNode[] = [];
  countMatches(freshLive.raw.root, record.identity, matches);
  if (freshLive.raw.menuBar) countMatches(freshLive.raw.menuBar, record.identity, matches);
  if (matches.length === 0)
    throw new AxsnapError("STALE_REF", `element ${record.index} is gone from the window; nothing was sent`);
  if (matches.length > 1)
    throw new AxsnapError(
      "AMBIGUOUS_TARGET",
      `${matches.length} elements now match element ${record.index}; nothing was sent`,
    );
  const match = matches[0]!;
  if (match.handle === undefined)
    throw new AxsnapError("IDENTITY_UNPROVEN", "the matching element has no live handle; nothing was sent");
  const printed = fresh.records.find((r) => r.handle === match.handle);
  // The agent's own snapshot stays the reference: the result names the element as it addressed it.
  const moved: ElementRecord = printed ? withFrameOf(record, printed) : record;
  const notes = [
    printed
      ? `element ${record.index} moved; found again by its identity (element ${printed.index} of a new observation)`
      : `element ${record.index} moved; found again by its identity`,
  ];
  return {
    snapshot: snap,
    record: moved,
    live: freshLive,
    handle: match.handle,
    how: "reobserved",
    node: match,
    notes,
  };
}

/** Right before acting: the identity once more, live; a change means nothing is sent. */
export async function confirmLanded(r: Resolved, ctx: CallContext, readNow?: RawNode): Promise<void> {
  // A node read live a moment ago (the web flush's last read) is that read: one round trip less
  // between the check and the action.
  const now = readNow ?? (await nodeNow(r.live, r.handle, ctx));
  if (now === "unknown")
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${r.record.index} could not be read just before acting; nothing was sent`,
    );
  if (now === "gone" || !sameIdentity(identityOf(now), r.record.identity))
    throw new AxsnapError(
      "STALE_REF",
      `element ${r.record.index} changed just before acting; nothing was sent`,
    );
  r.node = now;
}

/** The web document holding the element with this handle in the observed tree (not the document itself). */
function webRootOf(root: RawNode, handle: number): RawNode | undefined {
  const stack: { node: RawNode; web: RawNode | undefined }[] = [{ node: root, web: undefined }];
  while (stack.length > 0) {
    const { node, web } = stack.pop()!;
    if (node.handle === handle) return WEB_ROOTS.has(node.role) ? undefined : web;
    const here = WEB_ROOTS.has(node.role) ? node : web;
    if (node.children) for (const c of node.children) stack.push({ node: c, web: here });
  }
  return undefined;
}

/**
 * Web content's accessibility tree lags the page: Chromium sends most
 * changes to the browser in batches up to ~150 ms late, so a live read can
 * show a button's old name well after the page renamed it (measured here:
 * clicks that met a label changed 46-143 ms earlier). A focus change is
 * sent at once, with every change pending before it: so the element is
 * focused first, and once the live tree shows it focused, the identity read
 * that follows is no older than that moment. An element that has focus
 * already would change nothing by being focused again (a click by ref
 * leaves it focused: the stress run met one renamed 63 ms before the
 * check): focus goes to its document first, and the tree showing the
 * element unfocused is the flush. Only for elements inside web content;
 * elsewhere the tree is the app's own and current.
 */
export async function flushWebTree(
  r: Resolved,
  ctx: CallContext,
  notes: string[],
): Promise<RawNode | undefined> {
  const document = webRootOf(r.live.raw.root, r.handle);
  if (document === undefined) return undefined;
  const lag = "so its live name may lag the page";
  const until = performance.now() + Math.min(WEB_FLUSH_MS, ctx.remaining() / 2);
  if (r.node.states?.focused === true) {
    if (document.handle === undefined || !(await focused(r, ctx, document.handle))) {
      notes.push(`focus could not be moved off the web element before acting, ${lag}`);
      return undefined;
    }
    const off = await readUntil(r, ctx, until, (n) => n.states?.focused !== true);
    if (off === false) {
      notes.push(`the page did not show focus leaving the web element in time, ${lag}`);
      return undefined;
    }
    if (off === undefined || !sameIdentity(identityOf(off), r.record.identity)) return off;
  }
  if (!(await focused(r, ctx, r.handle))) {
    notes.push(`the web element could not be focused before acting, ${lag}`);
    return undefined;
  }
  const now = await readUntil(r, ctx, until, (n) => n.states?.focused === true);
  if (now !== false) return now;
  notes.push(`the page did not show the element focused in time, ${lag}`);
  return undefined;
}

/** Asks for focus on an element, for the flush: false when the app refused. */
async function focused(r: Resolved, ctx: CallContext, handle: number): Promise<boolean> {
  try {
    await ctx.step("read", () => r.live.backend.focus(handle, ctx.remaining()));
    return true;
  } catch (e) {
    if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "TIMEOUT")) throw e;
    return false;
  }
}

/**
 * Reads the element live until `shows` holds (the node), until it is not
 * the element any more or cannot be read (the node or undefined: the
 * identity check that follows says so), or until `until` (false).
 */
async function readUntil(
  r: Resolved,
  ctx: CallContext,
  until: number,
  shows: (node: RawNode) => boolean,
): Promise<RawNode | undefined | false> {
  for (;;) {
    const now = await nodeNow(r.live, r.handle, ctx);
    if (typeof now !== "object") return undefined;
    if (shows(now) || !sameIdentity(identityOf(now), r.record.identity)) return now;
    if (performance.now() >= until) return false;
    await new Promise((done) => setTimeout(done, 1));
  }
}

/** The addressed record, at the place where the element is now. */
function withFrameOf(record: ElementRecord, now: ElementRecord): ElementRecord {
  const { frame: _f, screenFrame: _s, clickPoint: _c, ...rest } = record;
  return {
    ...rest,
    ...(now.frame ? { frame: now.frame } : {}),
    ...(now.screenFrame ? { screenFrame: now.screenFrame } : {}),
    ...(now.clickPoint ? { clickPoint: now.clickPoint } : {}),
  };
}

/** The one OCR line of `fresh` drawn as `record` was (lib/observe/ocr/ink.ts), in its place; else undefined. */
function drawnAgain(
  record: Pick<ElementRecord, "ocr" | "frame">,
  fresh: Snapshot,
): ElementRecord | undefined {
  const ink = record.ocr?.ink;
  const was = record.frame;
  if (!ink || !was) return undefined;
  const found = fresh.records.filter(
    (r) =>
      r.ocr?.ink !== undefined && r.frame !== undefined && nearPlace(r.frame, was) && sameInk(ink, r.ocr.ink),
  );
  return found.length === 1 ? found[0] : undefined;
}

/**
 * Finds an element again, by a record's identity, in a fresh live snapshot of
 * its app: step 2 of resolution (refs-and-actions.md), for a record kept
 * outside any session (the CLI's store, another process), which has no live
 * handle to try first. Returns the fresh snapshot's record of the one match.
 * None → STALE_REF; several → AMBIGUOUS_TARGET; an incomplete fresh
 * observation → IDENTITY_UNPROVEN. A record not proven unique when observed
 * cannot be told from its twins without its handle: AMBIGUOUS_TARGET when
 * several match, else STALE_REF (never a guess by index or path).
 */
export function findAgain(
  record: Pick<ElementRecord, "index" | "identity" | "proof" | "ocr" | "frame">,
  fresh: Snapshot,
): ElementRecord {
  const live = liveObservation(fresh);
  if (!live) throw invalidArgument("findAgain needs a snapshot observed live, not one rendered from a tree");
  if (!fresh.complete)
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${record.index} cannot be found again with certainty: the new observation was incomplete (${fresh.cutBy.join(", ")}); nothing was sent`,
    );
  // Text read off the pixels: OCR may read the same pixels as other text each time, so the line is the one
  // drawn the same (its ink) in the same place, whatever it was read as now.
  const drawn = drawnAgain(record, fresh);
  if (drawn) return drawn;
  const matches: RawNode[] = [];
  countMatches(live.raw.root, record.identity, matches);
  if (live.raw.menuBar) countMatches(live.raw.menuBar, record.identity, matches);
  if (!record.proof.unique) {
    const why =
      record.proof.reason === "duplicates"
        ? `${record.proof.matches} elements had its identity when it was observed`
        : "its observation was incomplete";
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_TARGET",
        `element ${record.index} was not proven unique (${why}) and ${matches.length} elements match it now; nothing was sent`,
      );
    throw new AxsnapError(
      "STALE_REF",
      `element ${record.index} was not proven unique (${why}), so it cannot be found again by its identity; nothing was sent`,
    );
  }
  if (matches.length === 0)
    throw new AxsnapError("STALE_REF", `element ${record.index} is gone from the window; nothing was sent`);
  if (matches.length > 1)
    throw new AxsnapError(
      "AMBIGUOUS_TARGET",
      `${matches.length} elements now match element ${record.index}; nothing was sent`,
    );
  const handle = matches[0]!.handle;
  // Text read off the pixels has no handle: its one match is the one OCR line printed with its identity.
  const ocrMatches =
    handle === undefined && matches[0]!.ocr !== undefined
      ? fresh.records.filter((r) => r.ocr !== undefined && sameIdentity(r.identity, record.identity))
      : [];
  const printed =
    handle === undefined
      ? ocrMatches.length === 1
        ? ocrMatches[0]
        : undefined
      : (fresh.records.find((r) => r.handle === handle && sameIdentity(r.identity, record.identity)) ??
        fresh.records.find((r) => r.handle === handle));
  if (!printed)
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${record.index} matches an element the new observation did not print; nothing was sent`,
    );
  return printed;
}

/** The element's own node after a write, live; a string says why it could not be read. */
export async function readBack(r: Resolved, ctx: CallContext): Promise<RawNode | string> {
  try {
    const read = await ctx.step(
      "read",
      () => r.live.backend.readElement(r.handle, 0, ctx.remaining()),
      (late) => releaseLater(r.live, late.handles),
    );
    releaseLater(r.live, read.handles);
    return read.node;
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "ABORTED") throw e;
    return (e as Error).message;
  }
}
