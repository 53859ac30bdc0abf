/**
 * Input at screenshot pixels: the point is mapped through the snapshot's
 * coordinate contract to the screen, kept inside the observed window, and
 * hit-tested live (what is under the point now, not what the snapshot's
 * frames say): input goes only where the element the snapshot showed there
 * still is, unless the caller asked for raw pixels, and the guards run on
 * what is there now either way.
 */
import type { CallContext } from "../call.js";
import { type LiveObservation, liveObservation } from "../desktop.js";
import { AxsnapError, invalidArgument } from "../errors.js";
import { identityOf, sameIdentity } from "../identity.js";
import { holdsPoint, type RawNode, type Rect } from "../model.js";
import type { NativePointerEvent } from "../native.js";
import { destructiveWordIn } from "../policy/normalize.js";
import type { ElementRecord } from "../records.js";
import { isInteractive } from "../render/roles.js";
import { cut } from "../render/sanitize.js";
import type { Snapshot } from "../snapshot.js";
import type { ActEnv } from "./env.js";
import { clamp, describe, guardDestructiveLive, guardFresh, nameOf, PASS_THROUGH } from "./guards.js";
import { releaseLater } from "./resolve.js";
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

/**
 * Pointer input at a screen point of a snapshot's window, after the checks
 * every pixel action gets: what the snapshot showed there is what is there
 * now (unless raw), the guards on it, then `beforeSend` (an OCR line reads
 * its text again: lib/act/ocr.ts) right before the input leaves.
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
  beforeSend?: () => Promise<void>,
): Promise<ActionResult> {
  // What the snapshot showed under the point, and what is there now.
  const shown = recordAt(at.snap.records, at.x, at.y);
  const now = await coarse(
    judge(at.snap, at.live, shown, await liveAt(at, ctx, printedHandles(at.snap))),
    shown,
    at,
    ctx,
  );
  if (!now.same && options.raw !== true)
    throw new AxsnapError(
      "STALE_REF",
      `the point is on ${thereNow(at.snap, now)} now, not on ${printed(shown)} as snapshot ${at.snap.id} showed; nothing was sent`,
      {
        hint: "the window changed under the point since that snapshot: take a new snapshot and use its pixels (or act on an element by index); pass raw: true to send the input to whatever is there now",
      },
    );
  notes.push(
    now.same
      ? `the point is on element ${now.record!.index} (${now.record!.roleText}${nameOf(now.node!) ? ` ${nameOf(now.node!)}` : ""})`
      : `the point is on ${thereNow(at.snap, now)}, not on ${printed(shown)} as snapshot ${at.snap.id} showed (raw pixels)`,
  );
  if (
    event.kind === "click" &&
    action !== "rightClickAt" &&
    now.guarded.some((n) => securePrinted(n, at.live))
  )
    notes.push("it is a secure field: typing into it will be refused");
  await guardLive(env, action, at.snap, now, event.kind);
  await noteWindows(env, at.snap, ctx);
  await beforeSend?.();
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
  const unseen = guarded.filter((n) => (n.handle === undefined || !known.has(n.handle)) && isInteractive(n));
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
): Promise<void> {
  for (const n of now.guarded) {
    if (
      destructiveWordIn(`${n.title ?? ""} ${n.description ?? ""}`, env.policy.destructiveWords) === undefined
    )
      continue;
    await guardDestructiveLive(env, action, snap, n);
    break;
  }
  if (kind !== "click" && kind !== "drag") return;
  const control = now.guarded.find((n) => isInteractive(n));
  if (control?.states?.enabled === false)
    throw new AxsnapError(
      "NOT_ENABLED",
      `the point is on ${describe(control)}, which is disabled; nothing was sent`,
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
