/**
 * Actions on text read off the pixels (issue 20). An OCR line is no element
 * of the app: it has no handle to act on and no identity the app keeps. So a
 * click on it is pointer input at its centre, through the checks every pixel
 * action gets (lib/act/pixels.ts `atPoint`: the element that drew it is still
 * there, the guards, the observed window), and its identity is its text in
 * its place: right before the input leaves, that place is captured and read
 * again, and unless the same text is there within a few pixels the action is
 * refused with STALE_REF and nothing is sent. Values, typing targets and
 * named actions have nothing to reach, and are refused with a hint.
 */
import type { CallContext } from "../call.js";
import { liveObservation } from "../desktop.js";
import { AxsnapError } from "../errors.js";
import type { Rect } from "../model.js";
import type { ElementRecord } from "../records.js";
import { cut } from "../render/sanitize.js";
import type { ActEnv } from "./env.js";
import { guardDestructive, guardFresh } from "./guards.js";
import { atPoint } from "./pixels.js";
import type { ActionResult, ClickOptions } from "./result.js";
import type { Addressed } from "./store.js";

/** How far (points) the line read again may sit from where it was read: capture and recognition jitter. */
const PLACE_TOLERANCE = 4;

export const isOcrRecord = (r: ElementRecord): boolean => r.ocr !== undefined;

/**
 * Text as compared: the recogniser's noise (case, spacing, look-alike forms,
 * a box edge read as a bracket or a bar) is not a change of the UI.
 */
export function ocrTextKey(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^[[(|{<"'`]+|[\])|}>"'`]+$/g, "")
    .replace(
      /(?<=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]) (?=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])/gu,
      "",
    )
    .trim();
}

function near(a: Rect, b: Rect): boolean {
  const dx = Math.abs(a.x + a.w / 2 - (b.x + b.w / 2));
  const dy = Math.abs(a.y + a.h / 2 - (b.y + b.h / 2));
  return dx <= Math.max(PLACE_TOLERANCE, b.w / 4) && dy <= Math.max(PLACE_TOLERANCE, b.h / 2);
}

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

/** Clicks an OCR line: at its centre, once its text is read there again. */
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
  // The recognised text is the name the destructive words are matched on.
  await guardDestructive(env, "click", addressed);
  const button = options.button ?? "left";
  const count = options.count ?? 1;
  const action = count === 2 ? "doubleClick" : button === "right" ? "rightClick" : "click";
  const notes = [`element ${record.index} is text read off the pixels: clicked at its centre`];
  const frame = record.frame;
  const readAgain = async () => {
    const w = live.window.frame;
    const pad = PLACE_TOLERANCE;
    const x = Math.max(0, frame.x - pad);
    const y = Math.max(0, frame.y - pad);
    const region = {
      x,
      y,
      w: Math.min(w.w, frame.x + frame.w + pad) - x,
      h: Math.min(w.h, frame.y + frame.h + pad) - y,
    };
    let read: Awaited<ReturnType<typeof live.backend.recognizeText>>;
    try {
      read = await ctx.step("read", () =>
        live.backend.recognizeText({
          window: live.window,
          regions: [region],
          blanks: [],
          singleLine: true,
          ...(live.options.ocrLanguages ? { languages: live.options.ocrLanguages } : {}),
          deadlineMs: ctx.remaining(),
        }),
      );
    } catch (e) {
      if (e instanceof AxsnapError && (e.code === "TIMEOUT" || e.code === "ABORTED")) throw e;
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${record.index}'s text could not be read again (${(e as Error).message}); nothing was sent`,
        { hint: "take a new snapshot and try again", cause: e },
      );
    }
    const now = read.lines.filter((l) => near(l.frame, frame));
    const text = now.map((l) => l.text).join(" ");
    if (ocrTextKey(text) !== ocrTextKey(record.title ?? ""))
      throw new AxsnapError(
        "STALE_REF",
        `element ${record.index} read "${cut(record.title ?? "", 60)}" in snapshot ${snap.id}; its place reads ${text ? `"${cut(text, 60)}"` : "nothing"} now; nothing was sent`,
        { hint: "the window redrew since that snapshot: take a new snapshot and pick the line again" },
      );
  };
  return atPoint(
    env,
    ctx,
    action,
    { snap, live, x: record.clickPoint.x, y: record.clickPoint.y },
    { kind: "click", button: button === "left" ? 1 : 3, count },
    options,
    notes,
    undefined,
    readAgain,
  );
}
