/**
 * An OCR line's identity is its text in its place (lib/act/ocr.ts): these
 * find the line a snapshot printed under a point, and read its place again
 * right before the press, once the pointer is there (an app may redraw a
 * label when the pointer arrives). Apart from ocr.ts, which acts through
 * lib/act/pixels.ts: pixel input reads a line under its point again too.
 */
import type { CallContext } from "../call.js";
import type { LiveObservation } from "../desktop.js";
import { AxsnapError } from "../errors.js";
import { holdsPoint, type Rect } from "../model.js";
import { AFTER_HOVER } from "./hover.js";

/** How far (points) the line read again may sit from where it was read: capture and recognition jitter. */
export const PLACE_TOLERANCE = 4;

export const isOcrRecord = (r: { ocr?: unknown }): boolean => r.ocr !== undefined;

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

/** Of a snapshot's (or a stored snapshot's) OCR lines, the smallest whose screen frame holds the point. */
export function ocrLineAt<R extends { screenFrame?: Rect; ocr?: unknown }>(
  records: readonly R[],
  x: number,
  y: number,
): R | undefined {
  let best: R | undefined;
  for (const r of records) {
    const f = r.screenFrame;
    if (!isOcrRecord(r) || !f || !holdsPoint(f, x, y)) continue;
    if (!best || f.w * f.h < best.screenFrame!.w * best.screenFrame!.h) best = r;
  }
  return best;
}

function near(a: Rect, b: Rect): boolean {
  const dx = Math.abs(a.x + a.w / 2 - (b.x + b.w / 2));
  const dy = Math.abs(a.y + a.h / 2 - (b.y + b.h / 2));
  return dx <= Math.max(PLACE_TOLERANCE, b.w / 4) && dy <= Math.max(PLACE_TOLERANCE, b.h / 2);
}

/** What an OCR line's place reads now. */
export interface LineNow {
  /** The same text (as ocrTextKey compares) in the same place. */
  same: boolean;
  /** What the line's own frame reads now (its identity check). */
  text: string;
  /**
   * What is at the point now, when that differs: the line's row read across the window, the lines holding
   * the point. A label that grew when the pointer arrived ("Shuffle" → "Delete everything") is cut at the
   * old frame's edges, so the row names it whole, for the message and for the destructive guard.
   */
  there: string;
}

/**
 * Reads an OCR line's place again, once the pointer is on it: its frame (window-relative points), padded,
 * as one line. `point` is the screen point the press goes to. A failed read is IDENTITY_UNPROVEN (the text
 * cannot be vouched for).
 */
export async function readLineNow(
  live: LiveObservation,
  ctx: CallContext,
  line: { index: number; title?: string; frame: Rect },
  point: { x: number; y: number },
): Promise<LineNow> {
  const frame = line.frame;
  const w = live.window.frame;
  const pad = PLACE_TOLERANCE;
  const x = Math.max(0, frame.x - pad);
  const y = Math.max(0, frame.y - pad);
  const band = { y, h: Math.min(w.h, frame.y + frame.h + pad) - y };
  const own = await recognize(
    live,
    ctx,
    line.index,
    { x, ...band, w: Math.min(w.w, frame.x + frame.w + pad) - x },
    true,
  );
  const text = own
    .filter((l) => near(l.frame, frame))
    .map((l) => l.text)
    .join(" ");
  if (ocrTextKey(text) === ocrTextKey(line.title ?? "")) return { same: true, text, there: text };
  const px = point.x - w.x;
  const py = point.y - w.y;
  // The row finds where the text at the point is now; that frame read as one line reads it best.
  const row = await recognize(live, ctx, line.index, { x: 0, ...band, w: w.w }, false);
  const at = row.find((l) => holdsPoint(grow(l.frame, pad), px, py));
  if (!at) return { same: false, text, there: unboxed(text) };
  const f = grow(at.frame, pad);
  const fx = Math.max(0, f.x);
  const fy = Math.max(0, f.y);
  const region = { x: fx, y: fy, w: Math.min(w.w, f.x + f.w) - fx, h: Math.min(w.h, f.y + f.h) - fy };
  const whole = (await recognize(live, ctx, line.index, region, true)).map((l) => l.text).join(" ");
  return { same: false, text, there: unboxed(whole || at.text) };
}

/** A line's text without the box edges read around it ("| Delete everything |"), as ocrTextKey drops them. */
function unboxed(text: string): string {
  return text
    .trim()
    .replace(/^[[(|{<"'`]+|[\])|}>"'`]+$/g, "")
    .trim();
}

function grow(r: Rect, by: number): Rect {
  return { x: r.x - by, y: r.y - by, w: r.w + 2 * by, h: r.h + 2 * by };
}

async function recognize(
  live: LiveObservation,
  ctx: CallContext,
  index: number,
  region: Rect,
  singleLine: boolean,
): Promise<{ text: string; frame: Rect }[]> {
  try {
    const read = await ctx.step("read", () =>
      live.backend.recognizeText({
        window: live.window,
        regions: [region],
        blanks: [],
        singleLine,
        ...(live.options.ocrLanguages ? { languages: live.options.ocrLanguages } : {}),
        deadlineMs: ctx.remaining(),
      }),
    );
    return read.lines;
  } catch (e) {
    if (e instanceof AxsnapError && (e.code === "TIMEOUT" || e.code === "ABORTED")) throw e;
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${index}'s text could not be read again (${(e as Error).message}); ${AFTER_HOVER}`,
      { hint: "take a new snapshot and try again", cause: e },
    );
  }
}
