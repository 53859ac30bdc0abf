/**
 * Setting a value by its type (issue 32 §5): a number for an element that
 * holds one, even when given as a string ("75"); text through the element's
 * text interface, or, where the app offers none (Chromium's fields), by
 * focusing the field, selecting all of it and typing, said in the channel and
 * a note. The value is read back and reported as what it became: an app that
 * rounds to its step or clamps to its range answers `applied: false` with the
 * value it holds and a note saying so.
 */

import { AxsnapError, type Delivery, invalidArgument } from "../../model/errors.js";
import type { RawNode } from "../../model/model.js";
import type { CallContext } from "../call.js";
import { semanticCall, typeChunks } from "./deliver.js";
import type { ActEnv } from "./env.js";
import { guardEnabled, guardKeys, guardNotSecure, guardNotSecureNow, TEXT_ROLES } from "./guards.js";
import { refuseOcrTarget } from "./ocr.js";
import { confirmLanded, type Resolved, readBack, resolveIn } from "./resolve.js";
import { type ActionResult, type ActOptions, finish, noteWindows } from "./result.js";
import type { Target } from "./store.js";
import { focusForKeys } from "./typing.js";

/**
 * The value to write: a number for an element that holds one, whichever way it was given, and
 * text for one that holds text (an agent's 42 for a text field means the characters "42").
 */
function valueFor(r: Resolved, value: string | number): string | number {
  if (r.node.valueType !== "number") return typeof value === "number" ? String(value) : value;
  if (typeof value === "number") return value;
  const n = value.trim() === "" ? Number.NaN : Number(value.trim());
  if (!Number.isFinite(n))
    throw invalidArgument(
      `element ${r.record.index} (${r.record.roleText}) holds a number; ${JSON.stringify(value)} is not one`,
      "give a number, such as 42 or 0.5",
    );
  return n;
}

/** Whether what was read back is what was asked: numbers by value, text as written. */
function holds(back: RawNode, asked: string | number): boolean {
  if (typeof asked === "number") return typeof back.value === "number" && Math.abs(back.value - asked) < 1e-9;
  return String(back.value ?? "") === asked;
}

/** How long a read-back waits for the app to show a write (Chromium applies it a moment later). */
const SHOW_MS = 2000;
const POLL_MS = 50;

/**
 * The element read back once it shows the write: holding what was asked, or anything other
 * than what it held before (an app that rounds or clamps), or, at SHOW_MS, as it is then.
 * Web content applies a write in its renderer and tells the accessibility tree after, so a
 * read at once can still see the old value.
 */
async function readShown(
  r: Resolved,
  ctx: CallContext,
  asked: string | number,
  before: RawNode["value"],
): Promise<RawNode | string> {
  const until = Date.now() + Math.min(SHOW_MS, ctx.remaining() / 2);
  for (;;) {
    const back = await readBack(r, ctx);
    // Typed text shows a character at a time: only numbers end early on another value.
    const changed = typeof asked === "number" && typeof back === "object" && back.value !== before;
    if (typeof back !== "object" || holds(back, asked) || changed || Date.now() >= until) return back;
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

/**
 * Text into a field the app gives no text interface: focus on it (checked), select all of it
 * (ctrl+a) and type the text over it; Delete empties it. Every key passes the live key guards.
 */
async function replaceByKeys(env: ActEnv, ctx: CallContext, r: Resolved, text: string, notes: string[]) {
  await focusForKeys(
    env,
    ctx,
    r,
    "its text was not set",
    "click the field first, take a new snapshot, then set its value again",
  );
  for (const combo of text === "" ? ["ctrl+a", "Delete"] : ["ctrl+a"]) {
    await guardKeys(env, "setValue", r.snapshot, r.live, ctx, { combo }, r);
    await ctx.step("input", () => r.live.backend.keys(r.live.window, combo, ctx.remaining()));
  }
  if (text !== "") await typeChunks(env, r.snapshot, r.live, text, notes, ctx, r);
}

/** Sets an element's value; refuses secure fields and elements whose value cannot be set. */
export async function setValue(
  env: ActEnv,
  ctx: CallContext,
  target: Target,
  value: string | number,
  options: ActOptions,
): Promise<ActionResult> {
  const addressed = env.store.address(target, options.app);
  refuseOcrTarget(addressed.record, "setValue");
  guardNotSecure(addressed.record, "setting");
  if (!addressed.record.settable)
    throw new AxsnapError(
      "NOT_SETTABLE",
      `element ${addressed.record.index} (${addressed.record.roleText}) cannot be set`,
    );
  await noteWindows(env, addressed.snapshot, ctx);
  const r = await resolveIn(env, target, options.app, ctx);
  await confirmLanded(r, ctx);
  guardEnabled(r);
  await guardNotSecureNow(r, ctx);
  const asked = valueFor(r, value);
  const before = r.node.value;
  const notes = [...r.notes];
  let channel: "semantic" | "synthetic" = "semantic";
  let uncertain: string | undefined;
  try {
    uncertain = await semanticCall(ctx, () =>
      typeof asked === "number"
        ? r.live.backend.setNumber(r.handle, asked, ctx.remaining())
        : r.live.backend.setText(r.handle, asked, ctx.remaining()),
    );
  } catch (e) {
    // A text field without a text interface (Chromium exposes none) still takes keys.
    const noInterface =
      e instanceof AxsnapError && e.code === "NOT_SETTABLE" && e.delivery === "not_delivered";
    if (!noInterface || typeof asked !== "string" || !TEXT_ROLES.has(r.record.role)) throw e;
    notes.push("the field has no text interface: set by focusing it, selecting all (ctrl+a) and typing");
    await replaceByKeys(env, ctx, r, asked, notes);
    channel = "synthetic";
  }
  // An uncertain answer is settled by the read-back below, when it can be.
  if (uncertain !== undefined) notes.push(uncertain);
  let delivery: Delivery = uncertain === undefined ? "delivered_unverified" : "delivery_uncertain";
  const back = await readShown(r, ctx, asked, before);
  let applied: boolean | undefined;
  let now: string | number | boolean | undefined;
  if (typeof back === "object") {
    applied = holds(back, asked);
    now = back.value;
    if (applied) {
      delivery = "delivered_verified";
      // The value is there: the app's error answer did not matter.
      if (uncertain !== undefined) notes.splice(notes.indexOf(uncertain), 1);
    } else if (typeof asked === "number" && typeof back.value === "number")
      notes.push(`asked for ${asked}; it became ${back.value} (the app keeps its values to a step or range)`);
    else notes.push(`asked for ${JSON.stringify(asked)}; it became ${JSON.stringify(back.value ?? null)}`);
  } else notes.push(`the value could not be read back: ${back}`);
  return finish(env, ctx, options, {
    action: "setValue",
    snapshot: r.snapshot,
    record: r.record,
    channel,
    delivery,
    notes,
    ...(applied === undefined ? {} : { applied }),
    ...(now === undefined ? {} : { value: now }),
  });
}
