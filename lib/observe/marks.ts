/**
 * Marks on the screenshot (`screenshot: { marks: true }`): each printed
 * element's index drawn on its frame in the PNG, for models that ground
 * better on pictures.
 *
 * The native snapshot keeps the captured pixels unencoded when marks are
 * asked; the renderer decides which elements print (and their indices); this
 * module maps each printed frame into the capture's pixels with the
 * coordinate contract (pixel = (screen point − window origin) × pixels per
 * point) and the addon's `encodeMarked` draws the marks after the size
 * budget's downscale and encodes once per budget step, as an unmarked
 * screenshot is (src-native/core/marks.h).
 */
import { invalidArgument } from "../model/errors.js";
import type { NativeAddon, NativePixels } from "../native.js";
import type { ElementRecord } from "../render/records.js";
import type { ScreenshotMark } from "./snapshot-types.js";

/** What a screenshot option may ask beyond taking one. */
export interface ScreenshotOptions {
  /**
   * Draw each printed element's index on its frame: a 1-px border in a colour of its own and a small
   * label with the index (white digits on that colour, white outline). Default false.
   */
  marks?: boolean;
}

export type { ScreenshotMark } from "./snapshot-types.js";

/** A screenshot option, checked: whether to capture, and whether to mark. */
export interface ScreenshotRequest {
  capture: boolean;
  marks: boolean;
}

/** `true`, `false`, or `{ marks?: boolean }`; anything else is INVALID_ARGUMENT. */
export function screenshotRequest(value: unknown, name = "screenshot"): ScreenshotRequest {
  if (value === undefined || value === true) return { capture: true, marks: false };
  if (value === false) return { capture: false, marks: false };
  const hint = `pass ${name}: true, false or { marks: true }`;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalidArgument(`${name} must be true, false or an object, got ${describe(value)}`, hint);
  const o = value as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (k !== "marks") throw invalidArgument(`${name}.${k} is not a screenshot option`, hint);
  if (o.marks !== undefined && typeof o.marks !== "boolean")
    throw invalidArgument(`${name}.marks must be true or false, got ${describe(o.marks)}`, hint);
  return { capture: true, marks: o.marks === true };
}

function describe(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  return Array.isArray(v) ? "an array" : String(v);
}

/**
 * The printed elements' frames in the capture's pixels, as `encodeMarked`
 * takes them: [index, x, y, w, h] per element with a screen frame of some
 * area. Frames outside the image are passed too; the native side leaves them
 * unmarked.
 */
export function markFrames(
  records: readonly ElementRecord[],
  pixels: Pick<NativePixels, "pixelsPerPoint" | "windowOrigin">,
): Float64Array {
  const out: number[] = [];
  const k = pixels.pixelsPerPoint;
  for (const r of records) {
    const f = r.screenFrame;
    if (!f || !(f.w > 0) || !(f.h > 0)) continue;
    out.push(r.index, (f.x - pixels.windowOrigin.x) * k, (f.y - pixels.windowOrigin.y) * k, f.w * k, f.h * k);
  }
  return Float64Array.from(out);
}

/** The budget of a marked encode; the defaults are those of every screenshot. Tests shrink it. */
export interface MarkBudget {
  maxSide?: number;
  maxBytes?: number;
  minScale?: number;
}

/** One marked encode: the PNG, its contract, and where each label went. */
export interface MarkedScreenshot {
  png: Buffer;
  pixelWidth: number;
  pixelHeight: number;
  scale: number;
  windowOrigin: { x: number; y: number };
  encodes: number;
  encodeMs: number;
  marks: ScreenshotMark[];
}

/** Draws the records' marks on kept pixels and encodes them within the budget (off the JS thread). */
export async function encodeMarked(
  native: NativeAddon,
  pixels: NativePixels,
  records: readonly ElementRecord[],
  budget?: MarkBudget,
): Promise<MarkedScreenshot> {
  const r = await native.encodeMarked(
    pixels.rgba,
    pixels.width,
    pixels.height,
    pixels.pixelsPerPoint,
    markFrames(records, pixels),
    budget,
  );
  return {
    png: r.png,
    pixelWidth: r.pixelWidth,
    pixelHeight: r.pixelHeight,
    scale: r.scale,
    windowOrigin: { x: pixels.windowOrigin.x, y: pixels.windowOrigin.y },
    encodes: r.encodes,
    encodeMs: r.encodeMs,
    marks: r.labels.map((l) => ({
      index: l.index,
      label: { x: l.x, y: l.y, w: l.w, h: l.h },
      overlaps: l.overlaps,
    })),
  };
}
