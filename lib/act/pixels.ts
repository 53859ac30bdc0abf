/**
 * Input at screenshot pixels: the point is mapped through the snapshot's
 * coordinate contract to the screen, kept inside the observed window, and
 * hit-tested, so the element under it passes the same guards as a click by
 * index.
 */
import type { CallContext } from "../call.js";
import { type LiveObservation, liveObservation } from "../desktop.js";
import { AxsnapError, invalidArgument } from "../errors.js";
import type { NativePointerEvent } from "../native.js";
import type { ElementRecord } from "../records.js";
import type { Snapshot } from "../snapshot.js";
import type { ActEnv } from "./env.js";
import { clamp, guardDestructive, guardFresh } from "./guards.js";
import { type ActionResult, type ActOptions, finish, noteWindows } from "./result.js";

/** Which snapshot's screenshot the pixels belong to: `of`, else the latest of `app`. */
export interface PixelOptions extends ActOptions {
  of?: Snapshot;
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
  const notes: string[] = [];
  const at = pixels(env, x, y, options, notes);
  const end = to ? pixels(env, to.x, to.y, options, notes) : undefined;
  // Hit-test the point: the element under it gets the same safety rules as a click by index.
  const hit = hitTest(at.snap, at.x, at.y);
  if (hit) {
    notes.push(`the point is on element ${hit.index} (${hit.roleText}${hit.title ? ` ${hit.title}` : ""})`);
    if (hit.secure && event.kind === "click" && action !== "rightClickAt")
      notes.push("it is a secure field: typing into it will be refused");
    await guardDestructive(env, action, { snapshot: at.snap, record: hit });
  }
  await noteWindows(env, at.snap, ctx);
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

/** The smallest printed element whose frame holds the screen point: the most specific one. */
function hitTest(snap: Snapshot, x: number, y: number): ElementRecord | undefined {
  let best: ElementRecord | undefined;
  for (const rec of snap.records) {
    const f = rec.screenFrame;
    if (!f || f.w <= 0 || f.h <= 0 || x < f.x || y < f.y || x >= f.x + f.w || y >= f.y + f.h) continue;
    if (!best || f.w * f.h <= best.screenFrame!.w * best.screenFrame!.h) best = rec;
  }
  return best;
}
