/**
 * Actions on an element by index or ref: each resolves the target, passes
 * the guards, sends by the most faithful channel the element offers
 * (select a row, focus an entry, its press action, else a synthetic click)
 * and falls back only after a refusal that delivered nothing, never from a
 * row to its press action (rows.ts).
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { findAction, prettyActionName } from "../../render/actions.js";
import type { CallContext } from "../call.js";
import { pointerAt, semanticCall } from "./deliver.js";
import type { ActEnv } from "./env.js";
import { clamp, focusLanded, guardDestructive, guardEnabled, guardFresh } from "./guards.js";
import { hover } from "./hover.js";
import { mayOpenDialog, pointerFirst, runsInCall } from "./modal.js";
import { clickOcrLine, isOcrRecord, refuseOcrTarget } from "./ocr.js";
import { underPointer } from "./pixels.js";
import { confirmLanded, flushWebTree, type Resolved, releaseLater, resolveIn } from "./resolve.js";
import {
  type ActionResult,
  type ActOptions,
  type ClickOptions,
  finish,
  noteWindows,
  refusedUndelivered,
  semanticOutcome,
} from "./result.js";
import { clickRow, isSelectableRow } from "./rows.js";
import type { Target } from "./store.js";

const PRESS_ACTIONS = [
  "AXPress",
  "AXConfirm",
  "AXOpen",
  "click",
  "press",
  "activate",
  "toggle",
  "jump",
  "doDefault",
];
const MENU_ACTIONS = ["AXShowMenu", "showContextMenu", "show menu", "popup"];
/** Text entries: a click puts the caret in them (focus), never their "activate" action, which submits. */
export const ENTRY_ROLES = new Set([
  "AXTextField",
  "AXTextArea",
  "text",
  "entry",
  "password text",
  "spin button",
  "terminal",
]);

export type { ClickOptions } from "./result.js";

/** Clicks an element: its press action where it has one, else a synthetic click at its click point. */
export async function click(
  env: ActEnv,
  ctx: CallContext,
  target: Target,
  options: ClickOptions,
): Promise<ActionResult> {
  const button = options.button ?? "left";
  const count = options.count ?? 1;
  const addressed = env.store.address(target, options.app);
  if (isOcrRecord(addressed.record)) return clickOcrLine(env, ctx, addressed, options);
  await guardDestructive(env, "click", addressed);
  // Listed before the checks, never between the last identity read and the action.
  await noteWindows(env, addressed.snapshot, ctx);
  const r = await resolveIn(env, target, options.app, ctx);
  const notes = [...r.notes];
  await confirmLanded(r, ctx, await flushWebTree(r, ctx, notes));
  guardEnabled(r);
  const done = (o: Parameters<typeof finish>[3]) => finish(env, ctx, options, o);
  // A text field is clicked to put the caret in it: its only action ("activate") would submit its form.
  // An editable cell (a spreadsheet's) likewise: selecting it in its sheet leaves the cursor, where
  // typing goes, where it was (LibreOffice Calc).
  const editableCell = r.record.role === "table cell" && r.node.states?.editable === true;
  if (button === "left" && count === 1 && (ENTRY_ROLES.has(r.record.role) || editableCell)) {
    try {
      await ctx.step("semantic", () => r.live.backend.focus(r.handle, ctx.remaining()));
      if ((await focusLanded(r, ctx)) || (editableCell && (await saysFocused(r, ctx))))
        return done({
          action: "click",
          snapshot: r.snapshot,
          record: r.record,
          channel: "semantic",
          delivery: "delivered_verified",
          notes,
        });
      notes.push("the field did not take focus; clicked at its point instead");
    } catch (e) {
      if (!refusedUndelivered(e)) throw e;
      notes.push(`the field could not be focused (${e.message}); clicked at its point instead`);
    }
    return done(await pointerAt(env, r, { kind: "click", button: 1, count: 1 }, notes, "click", ctx));
  }
  // A row or a cell of a list that takes a selection is clicked by selecting exactly that row (rows.ts),
  // never by its press action; a list item that is no choice (a web page's <li>) is pressed as anything else.
  if (button === "left" && isSelectableRow(r)) return done(await clickRow(env, ctx, r, notes, count));
  const semantic =
    count === 1 ? findAction(r.record.actions, button === "left" ? PRESS_ACTIONS : MENU_ACTIONS) : undefined;
  // A press that may open a dialog, in a toolkit that runs the action inside the accessibility call, goes by
  // pointer where the pointer can reach the element (act/modal.ts).
  if (
    semantic !== undefined &&
    button === "left" &&
    count === 1 &&
    mayOpenDialog(r) &&
    (await runsInCall(r, ctx))
  ) {
    const clicked = await pointerFirst(env, r, notes, ctx);
    if (clicked) return done(clicked);
  }
  if (semantic !== undefined) {
    try {
      const uncertain = await semanticCall(ctx, () =>
        r.live.backend.doAction(r.handle, semantic, ctx.remaining()),
      );
      return done(semanticOutcome("click", r, notes, uncertain));
    } catch (e) {
      if (!refusedUndelivered(e)) throw e;
      notes.push(`the element refused ${semantic} (${e.message}); clicked by coordinates instead`);
    }
  } else if (count === 1) {
    notes.push("the element has no press action; clicked by coordinates");
  }
  return done(
    await pointerAt(env, r, { kind: "click", button: button === "left" ? 1 : 3, count }, notes, "click", ctx),
  );
}

/**
 * Whether the element itself says it has the focus, read live. A cell of a sheet that makes its
 * cells on demand (Calc: 2^31 of them) is never reached by the focus search, which stops at the
 * sheet (where keys go); the cell's own state says the cursor is on it.
 */
async function saysFocused(r: Resolved, ctx: CallContext): Promise<boolean> {
  const read = await ctx.step(
    "read",
    () => r.live.backend.readElement(r.handle, 0, ctx.remaining()),
    (late) => releaseLater(r.live, late.handles),
  );
  releaseLater(r.live, read.handles);
  return read.node.states?.focused === true;
}

/** Runs an element's named action, by raw ("AXScrollDownByPage") or pretty ("Scroll Down") name. */
export async function performAction(
  env: ActEnv,
  ctx: CallContext,
  target: Target,
  name: string,
  options: ActOptions,
): Promise<ActionResult> {
  const addressed = env.store.address(target, options.app);
  refuseOcrTarget(addressed.record, `the action ${JSON.stringify(name)}`);
  const wanted = name.trim().toLowerCase();
  const raw = addressed.record.actions.find(
    (a) => a.toLowerCase() === wanted || prettyActionName(a).toLowerCase() === wanted,
  );
  if (raw === undefined)
    throw new AxsnapError(
      "ACTION_NOT_SUPPORTED",
      `element ${addressed.record.index} has no action "${name}"`,
      {
        hint: `its actions: ${addressed.record.actions.map(prettyActionName).join(", ") || "none"}`,
      },
    );
  await guardDestructive(env, "performAction", addressed);
  // The action's own name can be the destructive part ("Remove" on a row named "Inbox").
  await guardDestructive(env, "performAction", {
    snapshot: addressed.snapshot,
    record: { ...addressed.record, title: prettyActionName(raw), description: raw },
  });
  await noteWindows(env, addressed.snapshot, ctx);
  const r = await resolveIn(env, target, options.app, ctx);
  await confirmLanded(r, ctx, await flushWebTree(r, ctx, r.notes));
  guardEnabled(r);
  const uncertain = await semanticCall(ctx, () => r.live.backend.doAction(r.handle, raw, ctx.remaining()));
  return finish(env, ctx, options, semanticOutcome("performAction", r, [...r.notes], uncertain));
}

/** Scrolls an element by pages: its scroll-by-page action where it has one, else wheel events over it. */
export async function scroll(
  env: ActEnv,
  ctx: CallContext,
  target: Target,
  direction: "up" | "down" | "left" | "right",
  pages: number,
  options: ActOptions,
): Promise<ActionResult> {
  const addressed = env.store.address(target, options.app);
  refuseOcrTarget(addressed.record, "a scroll");
  await noteWindows(env, addressed.snapshot, ctx);
  const r = await resolveIn(env, target, options.app, ctx);
  await confirmLanded(r, ctx);
  const name = `AXScroll${direction[0]!.toUpperCase()}${direction.slice(1)}ByPage`;
  const semantic = findAction(r.record.actions, [name, `scroll ${direction}`]);
  if (semantic !== undefined) {
    for (let i = 0; i < pages; i++) {
      const uncertain = await semanticCall(ctx, () =>
        r.live.backend.doAction(r.handle, semantic, ctx.remaining()),
      );
      // One page in doubt ends the scroll: repeating it could overshoot.
      if (uncertain !== undefined)
        return finish(
          env,
          ctx,
          options,
          semanticOutcome("scroll", r, [...r.notes, `stopped at page ${i + 1} of ${pages}`], uncertain),
        );
    }
    return finish(env, ctx, options, semanticOutcome("scroll", r, [...r.notes], undefined));
  }
  const steps = pages * 5;
  const dx = direction === "left" ? -steps : direction === "right" ? steps : 0;
  const dy = direction === "up" ? -steps : direction === "down" ? steps : 0;
  const notes = [...r.notes, `no scroll action; sent ${steps} wheel steps`];
  return finish(env, ctx, options, await pointerAt(env, r, { kind: "wheel", dx, dy }, notes, "scroll", ctx));
}

/** Drags from one element to another with synthetic mouse events. */
export async function drag(
  env: ActEnv,
  ctx: CallContext,
  from: Target,
  to: Target,
  options: ActOptions,
): Promise<ActionResult> {
  const from0 = env.store.address(from, options.app);
  const to0 = env.store.address(to, options.app);
  refuseOcrTarget(from0.record, "a drag");
  refuseOcrTarget(to0.record, "a drag");
  // One drag, one app: the end point is clamped into the start's window, so another app's element cannot be meant.
  if (from0.snapshot.app.pid !== to0.snapshot.app.pid)
    throw invalidArgument(
      `a drag stays in one app: element ${from0.record.index} is in pid ${from0.snapshot.app.pid}, element ${to0.record.index} in pid ${to0.snapshot.app.pid}`,
    );
  await guardDestructive(env, "drag", from0);
  await guardDestructive(env, "drag", to0);
  await noteWindows(env, from0.snapshot, ctx);
  const a = await resolveIn(env, from, options.app, ctx);
  const b = await resolveIn(env, to, options.app, ctx);
  guardFresh(env, a.snapshot);
  const p = a.record.clickPoint;
  const q = b.record.clickPoint;
  if (!p || !q) throw new AxsnapError("ACTION_NOT_SUPPORTED", "both elements need a frame to drag between");
  await confirmLanded(a, ctx);
  await confirmLanded(b, ctx);
  const notes = [...a.notes, ...b.notes];
  const start = clamp(a.live, p.x, p.y, notes);
  const end = clamp(a.live, q.x, q.y, notes);
  // Each end with the pointer on it, the end first so that the drag starts where the pointer is.
  await hover(a.live, end, ctx, notes);
  await underPointer(b, end, ctx);
  await hover(a.live, start, ctx, notes);
  a.node = await underPointer(a, start, ctx);
  await ctx.step("input", () =>
    a.live.backend.pointer(
      a.live.window,
      { kind: "drag", x: start.x, y: start.y, toX: end.x, toY: end.y, button: 1 },
      ctx.remaining(),
    ),
  );
  return finish(env, ctx, options, {
    action: "drag",
    snapshot: a.snapshot,
    record: a.record,
    channel: "synthetic",
    delivery: "delivered_unverified",
    notes,
  });
}
