/**
 * Keys and text. Key events go wherever keyboard focus is, so every key
 * combo and every typing chunk passes the live key guards first. Text into
 * an editable field is inserted semantically at the end of its content;
 * otherwise the field is focused, focus is verified on it, and the text is
 * typed in chunks.
 */

import { AxsnapError } from "../../model/errors.js";
import { textActivates } from "../../model/policy/keys.js";
import { liveObservation } from "../../observe/desktop.js";
import type { CallContext } from "../call.js";
import { semanticCall, typeChunks } from "./deliver.js";
import type { ActEnv } from "./env.js";
import {
  focusLanded,
  guardDestructive,
  guardEnabled,
  guardFresh,
  guardKeys,
  guardNotSecure,
  guardNotSecureNow,
  PASS_THROUGH,
  TEXT_ROLES,
} from "./guards.js";
import { refuseOcrTarget } from "./ocr.js";
import { confirmLanded, type Resolved, readBack, resolveIn } from "./resolve.js";
import {
  type ActionResult,
  type ActOptions,
  finish,
  noteWindows,
  refusedUndelivered,
  semanticOutcome,
} from "./result.js";
import type { Target } from "./store.js";

/** The latest live snapshot of the app keys go to: synthetic input needs one, and a recent one. */
function liveLatest(env: ActEnv, app: string | number | undefined) {
  const snap = env.store.latestOf(app);
  const live = liveObservation(snap);
  if (!live) throw new AxsnapError("STALE_REF", "that snapshot was not observed live");
  guardFresh(env, snap);
  return { snap, live };
}

/**
 * Presses a key combination in the app's window ("ctrl+shift+t"). A combo
 * that can insert text is refused in a secure field, and one that can press
 * a destructive control goes through confirm.
 */
export async function pressKey(
  env: ActEnv,
  ctx: CallContext,
  combo: string,
  options: ActOptions,
): Promise<ActionResult> {
  const { snap, live } = liveLatest(env, options.app);
  // Listed before the focus check, never between it and the keys.
  await noteWindows(env, snap, ctx);
  await guardKeys(env, "pressKey", snap, live, ctx, { combo });
  await ctx.step("input", () => live.backend.keys(live.window, combo, ctx.remaining()));
  return finish(env, ctx, options, {
    action: "pressKey",
    snapshot: snap,
    channel: "synthetic",
    delivery: "delivered_unverified",
    notes: [],
  });
}

/** Types text where focus is, or into a target (inserted at the end of an editable field's content). */
export async function typeText(
  env: ActEnv,
  ctx: CallContext,
  text: string,
  options: ActOptions & { target?: Target },
): Promise<ActionResult> {
  if (options.target === undefined) {
    const { snap, live } = liveLatest(env, options.app);
    const notes: string[] = [];
    await noteWindows(env, snap, ctx);
    await typeChunks(env, snap, live, text, notes, ctx);
    return finish(env, ctx, options, {
      action: "typeText",
      snapshot: snap,
      channel: "synthetic",
      delivery: "delivered_unverified",
      notes,
    });
  }
  const addressed = env.store.address(options.target, options.app);
  refuseOcrTarget(addressed.record, "typeText");
  guardNotSecure(addressed.record, "typing into");
  await noteWindows(env, addressed.snapshot, ctx);
  const r = await resolveIn(env, options.target, options.app, ctx);
  await confirmLanded(r, ctx);
  guardEnabled(r);
  await guardNotSecureNow(r, ctx);
  const notes = [...r.notes];
  if (r.record.settable && TEXT_ROLES.has(r.record.role)) {
    if (textActivates(text, true)) await guardDestructive(env, "typeText", r);
    try {
      const uncertain = await semanticCall(ctx, () =>
        r.live.backend.insertText(r.handle, text, ctx.remaining()),
      );
      const back = await readBack(r, ctx);
      const verified =
        uncertain === undefined && typeof back === "object" && String(back.value ?? "").endsWith(text);
      if (verified)
        return finish(env, ctx, options, {
          action: "typeText",
          snapshot: r.snapshot,
          record: r.record,
          channel: "semantic",
          delivery: "delivered_verified",
          notes,
        });
      return finish(env, ctx, options, semanticOutcome("typeText", r, notes, uncertain));
    } catch (e) {
      if (
        !refusedUndelivered(e) &&
        !(e instanceof AxsnapError && e.code === "NOT_SETTABLE" && e.delivery === "not_delivered")
      )
        throw e;
      notes.push(`the field cannot insert text (${(e as Error).message}); typed with key events instead`);
    }
  }
  await focusForKeys(
    env,
    ctx,
    r,
    "nothing was typed",
    "click the field you mean first, take a new snapshot, then type",
  );
  // Typing continues the field's text, as the semantic path does: the cursor goes to the end first
  // (cmd+Down on macOS, where End only scrolls). Only in a focused text element: elsewhere the
  // same keys mean something else (cmd+Down opens the selection in Finder).
  if (TEXT_ROLES.has(r.record.role)) {
    const toEnd = r.live.raw.platform === "macos" ? "cmd+down" : "ctrl+End";
    try {
      await ctx.step("input", () => r.live.backend.keys(r.live.window, toEnd, ctx.remaining()));
    } catch (e) {
      // Only a refusal that sent nothing lets typing go on (at the caret, wherever it is).
      if (!(e instanceof AxsnapError) || e.delivery !== "not_delivered" || PASS_THROUGH.has(e.code)) throw e;
      notes.push(`could not move the caret to the end (${e.message}); typed at the caret`);
    }
  }
  await typeChunks(env, r.snapshot, r.live, text, notes, ctx, r);
  return finish(env, ctx, options, {
    action: "typeText",
    snapshot: r.snapshot,
    record: r.record,
    channel: "synthetic",
    delivery: "delivered_unverified",
    notes,
  });
}

/**
 * Gives the element keyboard focus before keys are sent to it, and refuses (nothing sent) when the
 * focus did not land there: keys would go to whatever has it.
 */
export async function focusForKeys(
  env: ActEnv,
  ctx: CallContext,
  r: Resolved,
  consequence: string,
  hint: string,
): Promise<void> {
  guardFresh(env, r.snapshot);
  try {
    await ctx.step("semantic", () => r.live.backend.focus(r.handle, ctx.remaining()));
  } catch (e) {
    if (!refusedUndelivered(e)) throw e;
  }
  if (!(await focusLanded(r, ctx)))
    throw new AxsnapError(
      "ACTION_FAILED",
      `element ${r.record.index} (${r.record.roleText}) did not take keyboard focus; ${consequence}`,
      { hint, delivery: "not_delivered" },
    );
}
