/**
 * Which lines read off the pixels an agent should not take at their word
 * (issue 33): a line is marked `unsure` when any of its words was read with
 * low confidence, and a word holding a digit is held to a higher bar, since
 * one wrong digit or separator ("1,234.50" as "1,234,50") changes what a
 * number says while a misread letter mostly leaves a word readable. The text
 * stays as it was read: marked, never corrected.
 *
 * The bars come from Tesseract's word confidences on the test windows: the
 * drawn-text window's words (Sans 12-16, all read right) are 0.93-0.97, Tk's
 * 0.96; xmessage's 6x13 "fixed" text, read at 3x, gives "some" 0.57,
 * "Discard" 0.84, and "1,234.50" 0.73 (right, but a guess at that size), and
 * the same number drawn at 11 px 0.89.
 */
import type { NativeOcrLine } from "../../native.js";

/** A word below this confidence marks its line unsure. */
export const WORD_SURE = 0.8;
/** A word holding a digit below this confidence marks its line unsure. */
export const NUMBER_SURE = 0.9;

/** Whether `line` holds a word read with too little confidence (the line itself where the engine gave no words). */
export function isUnsure(line: Pick<NativeOcrLine, "text" | "confidence" | "words">): boolean {
  const words = line.words?.length ? line.words : [{ text: line.text, confidence: line.confidence }];
  return words.some((w) => w.confidence < (/\p{N}/u.test(w.text) ? NUMBER_SURE : WORD_SURE));
}
