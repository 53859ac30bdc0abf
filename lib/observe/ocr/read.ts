/**
 * The OCR step of an observation (issue 20): after the walk, the thin-tree
 * rule (plan.ts) says what to read; the backend captures and recognises it
 * (NativeBackend.recognizeText: Tesseract on Linux, Vision on macOS); the
 * lines go into the walked tree (merge.ts) before it is rendered, so they get
 * indices, records and refs like any line.
 *
 * What goes wrong while reading never costs the agent its tree: the
 * snapshot prints without the pixels' text and a note says why. Only an
 * explicit `ocr: true` where no engine is installed is an error of its own
 * (OCR_UNAVAILABLE): the caller asked for something this machine cannot do.
 */

import { AxsnapError } from "../../model/errors.js";
import type { RawSnapshot } from "../../model/model.js";
import type { NativeBackend, NativeWindow } from "../../native.js";
import type { SecureFields } from "../../render/secure.js";
import type { CallContext } from "../../session/call.js";
import { mergeOcrLines } from "./merge.js";
import { type OcrMode, planOcr } from "./plan.js";

/** What OCR did in one observation, for the snapshot's timings. */
export interface OcrTimings {
  /** Recognitions run: 0 where the tree was not thin (or ocr: false). */
  runs: number;
  /** Capture and recognition, ms. */
  ms: number;
  /** Lines added to the tree. */
  lines: number;
  engine?: string;
}

/** Less time than this left in the call: reading pixels would only run into the deadline. */
const MIN_OCR_BUDGET_MS = 100;

export async function readPixelText(
  b: NativeBackend,
  ctx: CallContext,
  raw: RawSnapshot,
  window: NativeWindow,
  mode: OcrMode,
  options: { secureNames: boolean; secure: SecureFields; languages?: string[] },
): Promise<OcrTimings> {
  const plan = planOcr(raw, mode, options.secureNames, options.secure);
  if (!plan) return { runs: 0, ms: 0, lines: 0 };
  const what = plan.why === "self-drawn" ? "the text its self-drawn elements show" : "the text in its pixels";
  const skip = (why: string): OcrTimings => {
    raw.walk.notes = [...(raw.walk.notes ?? []), `${what} was not read: ${why}`];
    return { runs: 0, ms: 0, lines: 0 };
  };
  // A walk cut by the deadline, or a call with too little left, keeps its tree: the pixels wait for the next look.
  if (raw.walk.ended === "deadline" || ctx.remaining() < MIN_OCR_BUDGET_MS)
    return skip("the call's deadline left no time for it");
  const started = performance.now();
  try {
    const read = await ctx.step("read", () =>
      b.recognizeText({
        window,
        regions: plan.regions,
        blanks: plan.blanks,
        ...(options.languages ? { languages: options.languages } : {}),
        deadlineMs: ctx.remaining(),
      }),
    );
    const lines = mergeOcrLines(raw, read.lines, plan.elements);
    return { runs: 1, ms: performance.now() - started, lines, engine: read.engine };
  } catch (e) {
    if (!(e instanceof AxsnapError)) throw e;
    if (e.code === "OCR_UNAVAILABLE" && mode === true) throw e;
    // An abort ends the observation; a deadline met while reading leaves the tree as it was walked.
    if (e.code === "ABORTED") throw e;
    // The hint is the backend's own (what to install on Linux; nothing on macOS, where Vision is the system's).
    const why =
      e.code === "OCR_UNAVAILABLE"
        ? `${e.message} (${e.hint})`
        : e.code === "TIMEOUT"
          ? "the call's deadline passed while reading"
          : e.message;
    skip(why);
    return { runs: 1, ms: performance.now() - started, lines: 0 };
  }
}
