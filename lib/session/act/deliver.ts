/**
 * Sending: semantic calls (whose doubtful answers become
 * "delivery_uncertain", never a second attempt), synthetic pointer events at
 * an element's click point (once the pointer is there and the element is
 * still what is under it), and synthetic typing in chunks that each pass
 * the key guards first.
 */

import { AxsnapError } from "../../model/errors.js";
import type { NativePointerEvent } from "../../native.js";
import type { LiveObservation } from "../../observe/desktop.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { CallContext } from "../call.js";
import type { ActEnv } from "./env.js";
import { clamp, guardFresh, guardKeys } from "./guards.js";
import { AFTER_HOVER, hover } from "./hover.js";
import { underPointer } from "./pixels.js";
import type { Resolved } from "./resolve.js";
import type { Outcome } from "./result.js";

/** Characters per synthetic typing job: each checks the live focus first and lets other calls run between. */
const TYPE_CHUNK = 32;

/**
 * Runs a semantic call. An app can answer with an error after it acted (an
 * AXPress that opens a modal answers when the modal returns), or not answer
 * in time after the request left; both are "delivery_uncertain", and must
 * never lead to a second, synthetic attempt: the returned note says what
 * happened (undefined when the app answered).
 */
export async function semanticCall(ctx: CallContext, call: () => Promise<void>): Promise<string | undefined> {
  try {
    await ctx.step("semantic", call);
    return undefined;
  } catch (e) {
    if (e instanceof AxsnapError && e.code !== "ABORTED" && e.delivery === "delivery_uncertain")
      return `${e.message}; it may have happened, so it was not tried again`;
    throw e;
  }
}

/**
 * Synthetic pointer input at the resolved element's click point (kept inside its window): the pointer
 * goes there first, and once the app has reacted to it (a hover may relabel or replace the element) the
 * element must still be what is under the point, still itself and enabled (pixels.ts `underPointer`);
 * only then is the input sent.
 */
export async function pointerAt(
  env: ActEnv,
  r: Resolved,
  event: Omit<NativePointerEvent, "x" | "y">,
  notes: string[],
  action: string,
  ctx: CallContext,
): Promise<Outcome> {
  guardFresh(env, r.snapshot);
  const p = r.record.clickPoint;
  if (!p) throw new AxsnapError("ACTION_NOT_SUPPORTED", `element ${r.record.index} has no frame to click`);
  const point = clamp(r.live, p.x, p.y, notes);
  await hover(r.live, point, ctx, notes);
  r.node = await underPointer(r, point, ctx);
  if (event.kind === "click" && r.node.states?.enabled === false)
    throw new AxsnapError(
      "NOT_ENABLED",
      `element ${r.record.index} (${r.record.roleText}) is disabled now that the pointer is on it; ${AFTER_HOVER}`,
    );
  await ctx.step("input", () =>
    r.live.backend.pointer(r.live.window, { ...event, x: point.x, y: point.y }, ctx.remaining()),
  );
  return {
    action,
    snapshot: r.snapshot,
    record: r.record,
    channel: "synthetic",
    delivery: "delivered_unverified",
    notes,
  };
}

/**
 * Synthetic typing in chunks. Before each chunk the live focus is checked
 * (focus may move into a password field mid-way); each chunk is its own
 * native job, so a long text does not hold the backend's queue (a
 * concurrent snapshot runs between chunks). A cut run says how much went in.
 */
export async function typeChunks(
  env: ActEnv,
  snap: Snapshot,
  live: LiveObservation,
  text: string,
  notes: string[],
  ctx: CallContext,
  target?: Resolved,
): Promise<void> {
  const chars = Array.from(text);
  let typed = 0;
  try {
    for (let i = 0; i < chars.length; i += TYPE_CHUNK) {
      const chunk = chars.slice(i, i + TYPE_CHUNK).join("");
      await guardKeys(env, "typeText", snap, live, ctx, { text: chunk }, target);
      try {
        const out = await ctx.step("input", () => live.backend.typeText(live.window, chunk, ctx.remaining()));
        typed += out.typed;
      } catch (e) {
        typed += Number((e as { cause?: { typed?: unknown } }).cause?.typed ?? 0) || 0;
        throw e;
      }
    }
  } catch (e) {
    if (typed === 0 || !(e instanceof AxsnapError)) throw e;
    // A run the deadline cut is a timeout, whatever the native layer called it.
    const code = ctx.expired() && e.code === "ACTION_FAILED" ? "TIMEOUT" : e.code;
    throw new AxsnapError(code, `${e.message}; ${typed} of ${chars.length} characters were typed`, {
      delivery: "delivery_uncertain",
      hint: "take a new snapshot to see what was typed before typing the rest",
      cause: e,
    });
  }
  if (chars.length > TYPE_CHUNK)
    notes.push(`typed ${typed} characters in ${Math.ceil(chars.length / TYPE_CHUNK)} chunks`);
}
