/**
 * A click on a row or a cell of a list, table or tree: the row the printed
 * line names is selected, and read back as selected, or the click refuses.
 * The list's selection interface first (it reaches rows off screen), else a
 * pointer click on the row when it is on screen and uncovered (judged as
 * every pointer click is). Never a row's press action for a single click: in
 * a GTK3 tree view a cell's "activate" activates the row with whatever
 * selection there was (the file chooser then accepts another file). A
 * double-click selects the row and then activates it, the clicked row, as a
 * double-click does; where the list takes no selection, it is a pointer
 * double-click.
 */

import { AxsnapError } from "../../model/errors.js";
import { findAction } from "../../render/actions.js";
import type { CallContext } from "../call.js";
import { pointerAt, semanticCall } from "./deliver.js";
import type { ActEnv } from "./env.js";
import { type Resolved, readBack } from "./resolve.js";
import { type Outcome, refusedUndelivered, semanticOutcome } from "./result.js";

/** Roles whose click is a selection in their list. */
const ROW_ROLES = new Set(["AXRow", "table row", "list item", "tree item", "table cell"]);

/**
 * A row or cell that is a choice in its list: it says it can be selected (GTK3 says so of every
 * tree-view cell), or it is a macOS row (whose table takes the selection even where the row does not).
 */
export function isSelectableRow(r: Resolved): boolean {
  if (!ROW_ROLES.has(r.record.role)) return false;
  const states = r.node.states;
  return r.record.role === "AXRow" || states?.selectable === true || states?.selected === true;
}

/** A row's own activation, for a double-click once the row is selected. */
const ACTIVATE_ACTIONS = ["activate", "AXOpen", "AXPress", "click", "press", "doDefault"];

/**
 * Selects the row through its list. The backend reads the row back as
 * selected before it answers, so an answer is verified; a doubtful one
 * (selected something, but the row does not read as selected) is uncertain,
 * with why. Undefined when the list takes no selection (nothing was sent),
 * with why in `refused`.
 */
async function selectRow(
  r: Resolved,
  ctx: CallContext,
  refused: string[],
): Promise<{ uncertain: string | undefined } | undefined> {
  try {
    return { uncertain: await semanticCall(ctx, () => r.live.backend.select(r.handle, ctx.remaining())) };
  } catch (e) {
    if (!refusedUndelivered(e)) throw e;
    refused.push(e.message);
    return undefined;
  }
}

/** A left click (`count` 1 or 2) on a row or cell, by selection or by pointer. */
export async function clickRow(
  env: ActEnv,
  ctx: CallContext,
  r: Resolved,
  notes: string[],
  count: 1 | 2,
): Promise<Outcome> {
  const refused: string[] = [];
  const selected = await selectRow(r, ctx, refused);
  if (selected !== undefined && selected.uncertain !== undefined)
    return semanticOutcome("click", r, notes, selected.uncertain);
  if (selected !== undefined && count === 1)
    return {
      action: "click",
      snapshot: r.snapshot,
      record: r.record,
      channel: "semantic",
      delivery: "delivered_verified",
      notes,
    };
  const activate = findAction(r.record.actions, ACTIVATE_ACTIONS);
  if (selected !== undefined && activate !== undefined) {
    notes.push(`selected the row, then ran its "${activate}" action (what a double-click does)`);
    const uncertain = await semanticCall(ctx, () =>
      r.live.backend.doAction(r.handle, activate, ctx.remaining()),
    );
    return semanticOutcome("click", r, notes, uncertain);
  }
  const why =
    selected !== undefined
      ? "the row was selected, but it has no action to open it"
      : `the row could not be selected through its list (${refused.join("; ")})`;
  if (!r.record.clickPoint)
    throw new AxsnapError(
      "ACTION_NOT_SUPPORTED",
      `element ${r.record.index} (${r.record.roleText}): ${why}, and it has no point on screen to click`,
      { hint: "scroll the list until the row shows, take a new snapshot, and click the row's new line" },
    );
  notes.push(`${why}; clicked it with the pointer`);
  const o = await pointerAt(env, r, { kind: "click", button: 1, count }, notes, "click", ctx);
  if (count === 2) return o;
  const back = await readBack(r, ctx);
  if (typeof back === "string") notes.push(`whether the row is selected now could not be read: ${back}`);
  else if (back.states?.selected === true) return { ...o, delivery: "delivered_verified" };
  else notes.push("the row does not read as selected after the click");
  return o;
}
