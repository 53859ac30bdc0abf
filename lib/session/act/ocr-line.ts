/**
 * An OCR line's identity is what is drawn in its place (lib/session/act/ocr.ts):
 * these find the line a snapshot printed under a point, and look at its place
 * again right before the press, once the pointer is there (an app may redraw
 * a label when the pointer arrives). Its ink (lib/observe/ocr/ink.ts: the shape of
 * its pixels, colours aside) is compared first: OCR may read unchanged pixels
 * as other text each time, so a fresh reading alone could never prove them
 * the same. Only when the shape differs is the place read as text again, and
 * the same text there still proves it. Apart from ocr.ts, which acts through
 * lib/session/act/pixels.ts: pixel input reads a line under its point again too.
 */

import { AxsnapError } from "../../model/errors.js";
import { holdsPoint, type Rect } from "../../model/model.js";
import type { LiveObservation } from "../../observe/desktop.js";
import { sameInk } from "../../observe/ocr/ink.js";
import { fullOcrPlan } from "../../observe/ocr/plan.js";
import type { CallContext } from "../call.js";
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

/** Whether a line's frame `a` sits where `b` was, within capture and recognition jitter. */
export function nearPlace(a: Rect, b: Rect): boolean {
  const dx = Math.abs(a.x + a.w / 2 - (b.x + b.w / 2));
  const dy = Math.abs(a.y + a.h / 2 - (b.y + b.h / 2));
  return dx <= Math.max(PLACE_TOLERANCE, b.w / 4) && dy <= Math.max(PLACE_TOLERANCE, b.h / 2);
}

/** What an OCR line's place reads now. */
export interface LineNow {
  /** The same drawing (its ink), or the same text (as ocrTextKey compares), in the same place. */
  same: boolean;
  /** How it was proven the same: its pixels' shape, or the text read again. */
  by?: "ink" | "text";
  /** What the line's own frame reads now (its identity check). */
  text: string;
  /**
   * What is at the point now, when that differs: a label that grew when the pointer arrived ("Shuffle" →
   * "Delete everything") is cut at the old frame's edges, so the line holding the point is found in the
   * window and read whole, for the message and for the destructive guard.
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
  line: { index: number; title?: string; frame: Rect; ink?: string },
  point: { x: number; y: number },
): Promise<LineNow> {
  const w = live.window.frame;
  const pad = PLACE_TOLERANCE;
  // Secure fields and named elements painted out, as the snapshot read the window.
  const blanks = fullOcrPlan(live.raw, true, live.options.secureNames !== false)?.blanks ?? [];
  if (line.ink) {
    const [now] = await look(live, ctx, line.index, [exact(within(w, line.frame))], blanks, {
      inkOnly: true,
    });
    if (sameInk(line.ink, now?.ink))
      return { same: true, by: "ink", text: line.title ?? "", there: line.title ?? "" };
  }
  const own = await recognize(live, ctx, line.index, [within(w, grow(line.frame, pad))], [], true);
  const text = own
    .filter((l) => nearPlace(l.frame, line.frame))
    .map((l) => l.text)
    .join(" ");
  if (ocrTextKey(text) === ocrTextKey(line.title ?? "")) return { same: true, by: "text", text, there: text };
  // Only on a change: the window read as a snapshot reads it (a thin band alone loses lines to Tesseract's
  // layout analysis), then the line at the point as one.
  const all = await recognize(live, ctx, line.index, [], blanks, false);
  const at = all.find((l) => holdsPoint(grow(l.frame, pad), point.x - w.x, point.y - w.y));
  // Text that stays inside the old place was read whole already.
  if (!at || holds(grow(line.frame, pad), at.frame)) return { same: false, text, there: unboxed(text) };
  const whole = await recognize(live, ctx, line.index, [within(w, grow(at.frame, pad))], blanks, true);
  return { same: false, text, there: unboxed(whole.map((l) => l.text).join(" ") || at.text) };
}

/** A line's text without the box edges read around it ("| Delete everything |"), as ocrTextKey drops them. */
function unboxed(text: string): string {
  return text
    .trim()
    .replace(/^[[(|{<"'`]+|[\])|}>"'`]+$/g, "")
    .trim();
}

/** A window-relative rect cut to the window. */
function within(w: Rect, r: Rect): Rect {
  const x = Math.max(0, r.x);
  const y = Math.max(0, r.y);
  return { x, y, w: Math.min(w.w, r.x + r.w) - x, h: Math.min(w.h, r.y + r.h) - y };
}

function holds(outer: Rect, inner: Rect): boolean {
  return (
    inner.x >= outer.x &&
    inner.y >= outer.y &&
    inner.x + inner.w <= outer.x + outer.w &&
    inner.y + inner.h <= outer.y + outer.h
  );
}

function grow(r: Rect, by: number): Rect {
  return { x: r.x - by, y: r.y - by, w: r.w + 2 * by, h: r.h + 2 * by };
}

/**
 * A frame as the snapshot's line had it: its numbers went through window-relative arithmetic, and a hair
 * below a whole pixel would move the captured box by one.
 */
function exact(r: Rect): Rect {
  const k = (v: number) => Math.round(v * 1000) / 1000;
  return { x: k(r.x), y: k(r.y), w: k(r.w), h: k(r.h) };
}

const recognize = (
  live: LiveObservation,
  ctx: CallContext,
  index: number,
  regions: Rect[],
  blanks: Rect[],
  singleLine: boolean,
) => look(live, ctx, index, regions, blanks, { singleLine });

async function look(
  live: LiveObservation,
  ctx: CallContext,
  index: number,
  regions: Rect[],
  blanks: Rect[],
  how: { singleLine?: boolean; inkOnly?: boolean },
): Promise<{ text: string; frame: Rect; ink?: string }[]> {
  try {
    const read = await ctx.step("read", () =>
      live.backend.recognizeText({
        window: live.window,
        regions,
        blanks,
        ...how,
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
