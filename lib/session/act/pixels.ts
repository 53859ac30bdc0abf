/**
 * Input at screenshot pixels: the point is mapped through the snapshot's
 * coordinate contract to the screen, kept inside the observed window, and
 * hit-tested live (what is under the point now, not what the snapshot's
 * frames say), before the pointer moves and again once it is there (an app
 * may change what is under the pointer when it arrives): input goes only
 * where the element the snapshot showed there still is, unless the caller
 * asked for raw pixels, and the guards run on what is there now either way.
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { holdsPoint, type RawNode, type Rect } from "../../model/model.js";
import { destructiveWordIn } from "../../model/policy/normalize.js";
import type { NativePointerEvent } from "../../native.js";
import { type LiveObservation, liveObservation } from "../../observe/desktop.js";
import { NO_ROUTE_HINT, NO_ROUTE_NOTE } from "../../observe/linux-checks.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { identityOf, sameIdentity } from "../../render/identity.js";
import type { ElementRecord } from "../../render/records.js";
import { isInteractive } from "../../render/roles.js";
import { cut } from "../../render/sanitize.js";
import type { CallContext } from "../call.js";
import type { ActEnv } from "./env.js";
import {
  clamp,
  describe,
  type GuardTurn,
  guardDestructive,
  guardDestructiveLive,
  guardFresh,
  nameOf,
  PASS_THROUGH,
} from "./guards.js";
import { AFTER_HOVER, hover } from "./hover.js";
import { ocrLineAt, readLineNow } from "./ocr-line.js";
import { nodeNow, type Resolved, releaseLater } from "./resolve.js";
import { type ActionResult, type ActOptions, finish, noteWindows } from "./result.js";
import { securePrinted } from "./secrets.js";

/** Which snapshot's screenshot the pixels belong to: `of`, else the latest of `app`. */
export interface PixelOptions extends ActOptions {
  of?: Snapshot;
  /**
   * Raw pixels: send the input even when the element under the point now is
   * not the one the snapshot showed there (it moved, or something new is
   * there). The guards still run on what is there now: a destructive name
   * still needs confirm, a disabled control is still refused.
   */
  raw?: boolean;
}

/** Screenshot pixels of a snapshot → a screen point, clamped into its window. */
function pixels(
  env: ActEnv,
  x: number,
  y: number,
  options: PixelOptions,
  notes: string[],
): { snap: Snapshot; live: LiveObservation; x: number; y: number } {
  for (const [k, v] of [
    ["x", x],
    ["y", y],
  ] as const)
    if (typeof v !== "number" || !Number.isFinite(v))
      throw invalidArgument(`${k} must be a finite number of screenshot pixels`);
  const snap = options.of ?? env.store.latestOf(options.app);
  const live = liveObservation(snap);
  if (!live) throw invalidArgument("coordinates need a snapshot observed live, not one rendered from a tree");
  const shot = snap.screenshot;
  if (!shot) {
    // Asked without a screenshot: the caller's mistake. Asked with one and none came: the display's fault.
    const failed = live.raw.walk.notes?.find((n) => /screenshot|capture|display/i.test(n));
    // A Wayland compositor with no route (sway, KDE): no screenshot will ever come, so not a passing failure.
    const noRoute = live.raw.walk.notes?.find(
      (n) => n.startsWith("no screenshot: ") && NO_ROUTE_NOTE.test(n),
    );
    if (noRoute)
      throw new AxsnapError(
        "ACTION_NOT_SUPPORTED",
        `the snapshot has no screenshot (${noRoute.slice("no screenshot: ".length)}), and no pointer input reaches the window; nothing was sent`,
        { hint: NO_ROUTE_HINT },
      );
    if (failed)
      throw new AxsnapError("ACTION_FAILED", `the snapshot has no screenshot (${failed}); nothing was sent`, {
        hint: "the window could not be captured; take a new snapshot, or act by index instead of pixels",
      });
    throw invalidArgument(
      "coordinates need a snapshot taken with a screenshot",
      "take a snapshot with screenshot: true and use its pixel coordinates",
    );
  }
  guardFresh(env, snap);
  const p = clamp(live, shot.windowOrigin.x + x / shot.scale, shot.windowOrigin.y + y / shot.scale, notes);
  return { snap, live, ...p };
}

/** Pointer input at a point (and, for a drag, to a second point) of a snapshot's screenshot. */
export async function atPixels(
  env: ActEnv,
  ctx: CallContext,
  action: string,
  x: number,
  y: number,
  event: Omit<NativePointerEvent, "x" | "y">,
  options: PixelOptions,
  to?: { x: number; y: number },
): Promise<ActionResult> {
  if (options.raw !== undefined && typeof options.raw !== "boolean")
    throw invalidArgument("raw must be true or false");
  const notes: string[] = [];
  const at = pixels(env, x, y, options, notes);
  const end = to ? pixels(env, to.x, to.y, options, notes) : undefined;
  return atPoint(env, ctx, action, at, event, options, notes, end);
}

/** A point the pointer lands on, and what the snapshot showed there. */
interface Landing {
  x: number;
  y: number;
  /** The smallest printed element holding the point. */
  shown: ElementRecord | undefined;
  /** The OCR line the input is meant for (a click by ref), else the one printed under the point. */
  line: ElementRecord | undefined;
  /** A drag's end: where it is released, not what is pressed. */
  end?: boolean;
}

/**
 * Pointer input at a screen point of a snapshot's window (and, for a drag, to a second one). Each point
 * is judged twice. Before the pointer moves: what the snapshot showed there is what is there now (unless
 * raw), and the guards pass on it; a refusal then sends nothing at all. Then the pointer is moved there
 * and the app given time to react (act/hover.ts: a hover can swap, relabel or redraw what is under it),
 * and the point is judged again, an OCR line's text read again, the guards run on what is there now, and
 * only then does the input leave. A drag's end is judged first, so that the pointer is at the start when
 * the drag begins.
 */
export async function atPoint(
  env: ActEnv,
  ctx: CallContext,
  action: string,
  at: { snap: Snapshot; live: LiveObservation; x: number; y: number },
  event: Omit<NativePointerEvent, "x" | "y">,
  options: PixelOptions,
  notes: string[],
  end?: { x: number; y: number },
  line?: ElementRecord,
): Promise<ActionResult> {
  const landing = (x: number, y: number, meant?: ElementRecord): Landing => ({
    x,
    y,
    shown: recordAt(at.snap.records, x, y),
    line: meant ?? ocrLineAt(at.snap.records, x, y),
  });
  const start = landing(at.x, at.y, line);
  const lands = end ? [{ ...landing(end.x, end.y), end: true }, start] : [start];
  const asked = new Set<string>();
  for (const l of lands) await judgeLanding(env, ctx, action, at, l, event.kind, options, { asked });
  // Listed before the pointer moves, never between the last check and the input.
  await noteWindows(env, at.snap, ctx);
  for (const l of lands) {
    await hover(at.live, l, ctx, notes);
    await judgeLanding(env, ctx, action, at, l, event.kind, options, { asked, sent: AFTER_HOVER }, notes);
  }
  await ctx.step("input", () =>
    at.live.backend.pointer(
      at.live.window,
      { ...event, x: at.x, y: at.y, ...(end ? { toX: end.x, toY: end.y } : {}) },
      ctx.remaining(),
    ),
  );
  return finish(env, ctx, options, {
    action,
    snapshot: at.snap,
    channel: "synthetic",
    delivery: "delivered_unverified",
    notes,
  });
}

/**
 * Judges one point: the element the snapshot showed there is what is there now (unless raw), the guards
 * on what is there, and, once the pointer is there (`notes` given, `turn.sent` saying so), an OCR line's
 * text read again. Before the pointer moves an OCR line is judged by its printed text.
 */
async function judgeLanding(
  env: ActEnv,
  ctx: CallContext,
  action: string,
  at: { snap: Snapshot; live: LiveObservation },
  l: Landing,
  kind: NativePointerEvent["kind"],
  options: PixelOptions,
  turn: GuardTurn,
  notes?: string[],
): Promise<void> {
  const point = { live: at.live, x: l.x, y: l.y };
  const now = await coarse(
    judge(at.snap, at.live, l.shown, await liveAt(point, ctx, printedHandles(at.snap))),
    l.shown,
    point,
    ctx,
  );
  const hovered = notes !== undefined;
  const which = l.end ? "the drag's end" : "the point";
  if (!now.same && options.raw !== true)
    throw new AxsnapError(
      "STALE_REF",
      hovered
        ? `now that the pointer is there, ${which} is on ${thereNow(at.snap, now)}, not on ${printed(l.shown)} as snapshot ${at.snap.id} showed (the app changed it when the pointer arrived); ${AFTER_HOVER}`
        : `${which} is on ${thereNow(at.snap, now)} now, not on ${printed(l.shown)} as snapshot ${at.snap.id} showed; nothing was sent`,
      {
        hint: hovered
          ? "the app changes what is under the point when the pointer arrives: take a new snapshot (the pointer is still there, so it shows what a press would reach) and act on what it shows; pass raw: true to send the input to whatever is there"
          : "the window changed under the point since that snapshot: take a new snapshot and use its pixels (or act on an element by index); pass raw: true to send the input to whatever is there now",
      },
    );
  if (hovered && (!l.end || !now.same))
    notes.push(
      now.same
        ? `${which} is on element ${now.record!.index} (${now.record!.roleText}${nameOf(now.node!) ? ` ${nameOf(now.node!)}` : ""})`
        : `${which} is on ${thereNow(at.snap, now)}, not on ${printed(l.shown)} as snapshot ${at.snap.id} showed (raw pixels)`,
    );
  if (
    hovered &&
    !l.end &&
    kind === "click" &&
    action !== "rightClickAt" &&
    now.guarded.some((n) => securePrinted(n, at.live))
  )
    notes.push("it is a secure field: typing into it will be refused");
  // A drag's end is where the button is released: no press there, so no enabled check.
  await guardLive(env, action, at.snap, now, l.end ? "move" : kind, turn);
  if (l.line) await judgeLine(env, ctx, action, at, l, l.line, options, turn, notes);
}

/**
 * An OCR line under the point: its text is its identity and the name the destructive guard reads. Before
 * the pointer moves, its printed text is guarded; once the pointer is there, its place is read again, and
 * anything but the same text is STALE_REF (raw: the guard reads what is there now).
 */
async function judgeLine(
  env: ActEnv,
  ctx: CallContext,
  action: string,
  at: { snap: Snapshot; live: LiveObservation },
  l: Landing,
  line: ElementRecord,
  options: PixelOptions,
  turn: GuardTurn,
  notes?: string[],
): Promise<void> {
  if (!notes || !line.frame) {
    await guardDestructive(env, action, { snapshot: at.snap, record: line }, turn);
    return;
  }
  const read = await readLineNow(
    at.live,
    ctx,
    {
      index: line.index,
      frame: line.frame,
      ...(line.title === undefined ? {} : { title: line.title }),
      ...(line.ocr?.ink ? { ink: line.ocr.ink } : {}),
    },
    l,
  );
  const was = `element ${line.index} read "${cut(line.title ?? "", 60)}" in snapshot ${at.snap.id}`;
  const reads = read.there ? `"${cut(read.there, 60)}"` : "nothing";
  if (!read.same && options.raw !== true)
    throw new AxsnapError(
      "STALE_REF",
      `${was}; with the pointer there, its place reads ${reads}; ${AFTER_HOVER}`,
      {
        hint: "the app redrew that text (when the pointer arrived, or since the snapshot): take a new snapshot (the pointer is still there, so it shows what a press would reach) and pick the line again",
      },
    );
  if (read.same) {
    if (read.by === "ink")
      notes.push(
        `element ${line.index}'s pixels are drawn as snapshot ${at.snap.id} showed them (the same shape in the same place), so they were not read as text again`,
      );
    return;
  }
  notes.push(`${was}; its place reads ${reads} now (raw pixels)`);
  // Both reads: the line's own frame, and the text at the point across the row.
  await guardDestructive(
    env,
    action,
    { snapshot: at.snap, record: { ...line, title: read.there, description: read.text } },
    turn,
  );
}

/**
 * Pointer input at an element's click point (a click or scroll by ref that falls back to the pointer, a
 * drag between refs): with the pointer there and the app settled (act/hover.ts), the element must be what
 * is under the point, still itself, with nothing interactive the observation did not have in front of it;
 * else STALE_REF naming what is there. Returns the element as read now (its states decide "disabled").
 */
export async function underPointer(
  r: Resolved,
  at: { x: number; y: number },
  ctx: CallContext,
): Promise<RawNode> {
  const chain = await liveAt({ live: r.live, ...at }, ctx, [r.handle]);
  const k = chain.findIndex((n) => n.handle === r.handle);
  const known = parentsOf(r.live);
  const unseen = (k < 0 ? chain : chain.slice(0, k)).filter((n) => newInFront(n, known));
  let node: RawNode | undefined;
  if (k >= 0 && unseen.length === 0) node = chain[k];
  else if (k < 0 && unseen.length === 0)
    node = await heldBy(r, optionOfOpenSelect(r.live, r.handle) ? undefined : chain[0], at, ctx);
  const was = `element ${r.record.index} (${r.record.roleText}${r.record.title ? ` ${cut(r.record.title, 60)}` : ""})`;
  if (!node) {
    const there =
      unseen.length > 0
        ? `${describe(unseen[0]!)}, which the observation did not have`
        : chain.length > 0
          ? describe(chain.find((n) => isInteractive(n)) ?? chain[0]!)
          : "nothing of the app";
    throw new AxsnapError(
      "STALE_REF",
      `the click point of ${was} is on ${there} now that the pointer is there; ${AFTER_HOVER}`,
      { hint: HOVER_HINT },
    );
  }
  if (!sameIdentity(identityOf(node), r.record.identity)) {
    // A hit test reads the element alone; its name may come from its children (a GTK list row's label).
    // Read it as resolving did before the move, and judge that.
    const whole = await nodeNow(r.live, r.handle, ctx);
    if (typeof whole !== "string" && sameIdentity(identityOf(whole), r.record.identity)) return whole;
    throw new AxsnapError(
      "STALE_REF",
      `${was} reads as ${describe(typeof whole === "string" ? node : whole)} now that the pointer is on it; ${AFTER_HOVER}`,
      { hint: HOVER_HINT },
    );
  }
  return node;
}

const HOVER_HINT =
  "the app changes the element when the pointer arrives: take a new snapshot (the pointer is still there, so it shows what a press would reach) and pick the element again";

/**
 * Where the hit test stops above the element (GTK tables answer for their column headers), or answers
 * nothing (a toolkit without hit tests), the element is read itself: it is under the point when its live
 * frame still holds it.
 */
async function heldBy(
  r: Resolved,
  stoppedAt: RawNode | undefined,
  at: { x: number; y: number },
  ctx: CallContext,
): Promise<RawNode | undefined> {
  if (
    stoppedAt &&
    (stoppedAt.handle === undefined || !ancestorsOf(r.live, r.handle).includes(stoppedAt.handle))
  )
    return undefined;
  let read: Awaited<ReturnType<LiveObservation["backend"]["readElement"]>>;
  try {
    read = await ctx.step(
      "read",
      () => r.live.backend.readElement(r.handle, 1, ctx.remaining()),
      (late) => releaseLater(r.live, late.handles),
    );
  } catch (e) {
    if (e instanceof AxsnapError && PASS_THROUGH.has(e.code)) throw e;
    return undefined;
  }
  releaseLater(r.live, read.handles);
  return holdsPoint(read.node.frame, at.x, at.y) ? read.node : undefined;
}

/**
 * Of records with screen frames (a snapshot's, or a stored one's), the smallest that holds the point:
 * the most specific element printed there.
 */
export function recordAt<R extends { screenFrame?: Rect }>(
  records: readonly R[],
  x: number,
  y: number,
): R | undefined {
  let best: R | undefined;
  for (const rec of records) {
    // Text read off the pixels is no element: the point is on the element that drew it.
    if ((rec as { ocr?: unknown }).ocr !== undefined) continue;
    const f = rec.screenFrame;
    if (!f || !holdsPoint(f, x, y)) continue;
    if (!best || f.w * f.h <= best.screenFrame!.w * best.screenFrame!.h) best = rec;
  }
  return best;
}

/** Live nodes under the point, the deepest first, then its ancestors up to the window. */
async function liveAt(
  at: { live: LiveObservation; x: number; y: number },
  ctx: CallContext,
  stopAt: number[],
): Promise<RawNode[]> {
  let read: Awaited<ReturnType<LiveObservation["backend"]["elementAt"]>>;
  try {
    read = await ctx.step(
      "read",
      () => at.live.backend.elementAt(at.live.window, at.x, at.y, stopAt, ctx.remaining()),
      (late) => late && releaseLater(at.live, late.handles),
    );
  } catch (e) {
    // Gone, timed out, refused by the platform: those answers say more than "could not look".
    if (
      e instanceof AxsnapError &&
      (PASS_THROUGH.has(e.code) || e.code === "STALE_REF" || e.code === "ACTION_FAILED")
    )
      throw e;
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `what is under the point now could not be read (${(e as Error).message}); nothing was sent`,
      { hint: "take a new snapshot and try again, or act on an element by its index", cause: e },
    );
  }
  if (read === null) return [];
  releaseLater(at.live, read.handles);
  return [read.node, ...read.ancestors];
}

/** The handles of a snapshot's printed elements: the climb from the deepest element stops at the first. */
function printedHandles(snap: Snapshot): number[] {
  const out: number[] = [];
  for (const r of snap.records) if (r.handle !== undefined) out.push(r.handle);
  return out;
}

/** What is under the point now, measured against the snapshot. */
interface Judged {
  /** The live nodes under the point, deepest first. */
  chain: RawNode[];
  /** The printed record of the nearest of them the snapshot printed, and that node, read now. */
  record?: ElementRecord;
  node?: RawNode;
  /** What the guards look at: the chain from the deepest up to that node (the whole chain when none). */
  guarded: RawNode[];
  /** Interactive nodes of `guarded` the snapshot did not have at all: new since, or never read. */
  unseen: RawNode[];
  /** The element the snapshot showed under the point is what is there now. */
  same: boolean;
  /**
   * The toolkit's hit test stopped at a printed element (nothing deeper answered) that, in the snapshot,
   * holds the element shown there: GTK tables answer for their column headers. That element is then read.
   */
  holds?: boolean;
}

function judge(
  snap: Snapshot,
  live: LiveObservation,
  shown: ElementRecord | undefined,
  chain: RawNode[],
): Judged {
  const byHandle = new Map<number, ElementRecord[]>();
  for (const r of snap.records)
    if (r.handle !== undefined) byHandle.set(r.handle, [...(byHandle.get(r.handle) ?? []), r]);
  const k = chain.findIndex((n) => n.handle !== undefined && byHandle.has(n.handle));
  const guarded = k < 0 ? chain : chain.slice(0, k + 1);
  const known = parentsOf(live);
  // A printed control's own text and icons may be hidden from its child list yet answer a hit test
  // (Chromium's button text): only an unseen element an agent would act on is something new in front.
  const unseen = guarded.filter((n) => newInFront(n, known));
  if (k < 0) return { chain, guarded, unseen, same: false };
  const node = chain[k]!;
  const records = byHandle.get(node.handle!)!;
  const record = records.find((r) => r === shown) ?? records[0]!;
  // The same element (handle), still itself (identity: not renamed or reused), nothing new in front of it.
  const id = identityOf(node);
  const same =
    shown !== undefined &&
    shown.handle === node.handle &&
    unseen.length === 0 &&
    records.some((r) => sameIdentity(r.identity, id));
  const holds =
    !same &&
    k === 0 &&
    shown?.handle !== undefined &&
    records.some((r) => sameIdentity(r.identity, id)) &&
    ancestorsOf(live, shown.handle).includes(node.handle!);
  return { chain, record, node, guarded, unseen, same, ...(holds ? { holds } : {}) };
}

/**
 * Where the hit test stopped above the element shown at the point (`holds`), that element is asked
 * directly: still itself, and its live frame still holds the point. Then it is what the point reaches.
 */
async function coarse(
  now: Judged,
  shown: ElementRecord | undefined,
  at: { live: LiveObservation; x: number; y: number },
  ctx: CallContext,
): Promise<Judged> {
  if (!now.holds || shown?.handle === undefined) return now;
  let read: Awaited<ReturnType<LiveObservation["backend"]["readElement"]>>;
  try {
    read = await ctx.step(
      "read",
      () => at.live.backend.readElement(shown.handle!, 1, ctx.remaining()),
      (late) => releaseLater(at.live, late.handles),
    );
  } catch (e) {
    if (e instanceof AxsnapError && PASS_THROUGH.has(e.code)) throw e;
    return now;
  }
  releaseLater(at.live, read.handles);
  const f = read.node.frame;
  const inside = holdsPoint(f, at.x, at.y);
  if (!inside || !sameIdentity(identityOf(read.node), shown.identity)) return now;
  return { ...now, record: shown, node: read.node, guarded: [read.node, ...now.guarded], same: true };
}

/**
 * An element under the point that the observation did not have, which an agent would act on: something
 * new in front. One that says it is not on screen is not in front of anything: Chromium answers a hit
 * test on a collapsed <select> with one of its hidden options.
 */
function newInFront(n: RawNode, known: Map<number, number | undefined>): boolean {
  return (n.handle === undefined || !known.has(n.handle)) && isInteractive(n) && n.states?.visible !== false;
}

/** Every handle of a live observation's tree (what the snapshot read, printed or not), with its parent's. */
const observed = new WeakMap<LiveObservation, Map<number, number | undefined>>();
function parentsOf(live: LiveObservation): Map<number, number | undefined> {
  let map = observed.get(live);
  if (map) return map;
  map = new Map();
  const stack: [RawNode, number | undefined][] = [
    [live.raw.root, undefined],
    ...(live.raw.menuBar ? [[live.raw.menuBar, undefined] as [RawNode, undefined]] : []),
  ];
  while (stack.length > 0) {
    const [n, parent] = stack.pop()!;
    if (n.handle !== undefined && !map.has(n.handle)) map.set(n.handle, parent);
    if (n.children) for (const c of n.children) stack.push([c, n.handle ?? parent]);
  }
  observed.set(live, map);
  return map;
}

/**
 * Whether the element is an option of an open <select> (a menu item under an expanded combo box), as the
 * snapshot read it. Chromium draws the options on a popup surface of their own, which has no tree; a hit
 * test of the page answers with what lies under the popup (GNOME Wayland), so such an option is under the
 * point when its own live frame holds it. The input route has already checked that the point is on the
 * window or one of its own popups (gnome_shell.h MenuOfWindow, x11_observed.cc MayReceive).
 */
function optionOfOpenSelect(live: LiveObservation, handle: number): boolean {
  const path: RawNode[] = [];
  const walk = (n: RawNode): boolean => {
    if (n.handle === handle)
      return (
        n.role === "menu item" && path.some((a) => a.role === "combo box" && a.states?.expanded === true)
      );
    if (path.length >= 2048) return false;
    path.push(n);
    for (const c of n.children ?? []) if (walk(c)) return true;
    path.pop();
    return false;
  };
  return walk(live.raw.root);
}

/** The handles above one in the snapshot's tree, nearest first (bounded by the tree's depth). */
function ancestorsOf(live: LiveObservation, handle: number): number[] {
  const parents = parentsOf(live);
  const out: number[] = [];
  for (let h = parents.get(handle); h !== undefined && out.length < 2048; h = parents.get(h)) out.push(h);
  return out;
}

/**
 * The guards on what is under the point now: a destructive name on any of the guarded nodes goes through
 * confirm (the nearest one names it), and a click on a disabled control is refused.
 */
async function guardLive(
  env: ActEnv,
  action: string,
  snap: Snapshot,
  now: Judged,
  kind: NativePointerEvent["kind"],
  turn: GuardTurn,
): Promise<void> {
  for (const n of now.guarded) {
    if (
      destructiveWordIn(`${n.title ?? ""} ${n.description ?? ""}`, env.policy.destructiveWords) === undefined
    )
      continue;
    await guardDestructiveLive(env, action, snap, n, turn);
    break;
  }
  if (kind !== "click" && kind !== "drag") return;
  const control = now.guarded.find((n) => isInteractive(n));
  if (control?.states?.enabled === false)
    throw new AxsnapError(
      "NOT_ENABLED",
      `the point is on ${describe(control)}, which is disabled; ${turn.sent ?? "nothing was sent"}`,
    );
}

function printed(r: ElementRecord | undefined): string {
  if (!r) return "no element";
  return `element ${r.index} (${r.roleText}${r.title ? ` ${cut(r.title, 60)}` : ""})`;
}

/** What is under the point now, for a message: the first thing the snapshot did not have, else what it printed. */
function thereNow(snap: Snapshot, now: Judged): string {
  if (now.chain.length === 0) return "nothing of the app";
  if (now.unseen.length > 0) return `${describe(now.unseen[0]!)}, which snapshot ${snap.id} did not have`;
  // A handle the snapshot printed that now reads as another element (renamed, or reused) is not that element.
  const id = identityOf(now.node!);
  if (!snap.records.some((r) => r.handle === now.node!.handle && sameIdentity(r.identity, id)))
    return describe(now.node!);
  return `${describe(now.node!)} (element ${now.record!.index} of snapshot ${snap.id})`;
}
