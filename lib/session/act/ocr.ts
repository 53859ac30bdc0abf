/**
 * Actions on text read off the pixels (issue 20). An OCR line is no element
 * of the app: it has no handle to act on and no identity the app keeps. So a
 * click on it is pointer input at its centre, through the checks every pixel
 * action gets (lib/session/act/pixels.ts `atPoint`: the element that drew it is still
 * there, the guards, the observed window), and its identity is its text in
 * its place: once the pointer is there, that place is captured and read
 * again (lib/session/act/ocr-line.ts), and unless the same text is there within a
 * few pixels the action is refused with STALE_REF and nothing is pressed.
 * Values, typing targets and named actions have nothing to reach, and are
 * refused with a hint.
 */

import { AxsnapError } from "../../model/errors.js";
import { liveObservation } from "../../observe/desktop.js";
import type { ElementRecord } from "../../render/records.js";
import { cut } from "../../render/sanitize.js";
import type { CallContext } from "../call.js";
import type { ActEnv } from "./env.js";
import { guardFresh } from "./guards.js";
import { isOcrRecord } from "./ocr-line.js";
import { atPoint } from "./pixels.js";
import type { ActionResult, ClickOptions } from "./result.js";
import type { Addressed } from "./store.js";

export { isOcrRecord };

/** Refuses an action an OCR line cannot take (anything but a click), saying what to do instead. */
export function refuseOcrTarget(r: ElementRecord, action: string): void {
  if (!isOcrRecord(r)) return;
  throw new AxsnapError(
    "ACTION_NOT_SUPPORTED",
    `element ${r.index} is text read off the pixels ("${cut(r.title ?? "", 60)}"), not an element of the app: it cannot take ${action}; nothing was sent`,
    {
      hint:
        action === "setValue" || action === "typeText"
          ? "click it to put the caret there, then type without a target"
          : "click it, or act at its pixels",
    },
  );
}

/**
 * Clicks an OCR line: at its centre, once its text is read there again with the pointer there. Its
 * recognised text is the name the destructive words are matched on (atPoint guards the line).
 */
export async function clickOcrLine(
  env: ActEnv,
  ctx: CallContext,
  addressed: Addressed,
  options: ClickOptions,
): Promise<ActionResult> {
  const { snapshot: snap, record } = addressed;
  const live = liveObservation(snap);
  if (!live || !record.clickPoint || !record.frame)
    throw new AxsnapError(
      "STALE_REF",
      "that snapshot has no live window (it was rendered from a tree, not observed); nothing was sent",
    );
  guardFresh(env, snap);
  const button = options.button ?? "left";
  const count = options.count ?? 1;
  const action = count === 2 ? "doubleClick" : button === "right" ? "rightClick" : "click";
  const notes = [`element ${record.index} is text read off the pixels: clicked at its centre`];
  return atPoint(
    env,
    ctx,
    action,
    { snap, live, x: record.clickPoint.x, y: record.clickPoint.y },
    { kind: "click", button: button === "left" ? 1 : 3, count },
    options,
    notes,
    undefined,
    record,
  );
}
