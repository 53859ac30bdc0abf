/**
 * Where a snapshot reads text off the pixels (issue 20): the `ocr` option,
 * checked, and the thin-tree rule of `ocr: "auto"`.
 *
 * The rule, from measurement (the research of issue 20, on this machine's
 * test apps): the area named elements cover says nothing on its own (named
 * leaves cover 13% of gtk3-widget-factory, a window whose tree is complete),
 * so auto reads pixels in two cases only:
 *   - the window: its tree names fewer than MIN_NAMED elements besides the
 *     window itself and its own controls (an X11 client with no tree, an Electron window whose
 *     web content is off, a self-drawn player);
 *   - a region: an element of a role that draws its own content (a canvas,
 *     a drawing area, a terminal, an embedded or unknown surface, a large
 *     image) covering at least SELF_DRAWN_SHARE of the window; only its
 *     frame is read (measured: a GTK drawing area 91% of its window, a
 *     Chromium canvas 16%).
 * A normal GTK or Chromium window meets neither and reads nothing.
 * Wherever pixels are read, the frames of named elements inside the region
 * are painted out first (their text is already on their lines; on
 * gtk3-widget-factory that halves the time), and so is every secure field
 * of the window, whatever the region: a visible password never reaches the
 * recogniser.
 */
import { invalidArgument } from "../../model/errors.js";
import type { RawNode, RawSnapshot, Rect } from "../../model/model.js";
import { isImage } from "../../render/roles.js";
import { type SecureFields, secureFieldsOf } from "../../render/secure.js";

export type OcrMode = "auto" | boolean;

/** What OCR reads of one snapshot; rects in window-relative points. */
export interface OcrPlan {
  /** "asked": ocr: true; "thin": auto, the tree names almost nothing; "self-drawn": auto, those elements. */
  why: "asked" | "thin" | "self-drawn";
  /** The rects to read; empty: the whole window. */
  regions: Rect[];
  /** Painted out before reading: named elements' frames inside the regions, every secure field. */
  blanks: Rect[];
  /** The self-drawn elements read ("self-drawn" only): their lines nest under them. */
  elements: RawNode[];
}

/** Fewer named elements than this (the window not counted) make a window thin. */
export const MIN_NAMED = 3;
/** The share of the window a self-drawn element covers before auto reads it. */
export const SELF_DRAWN_SHARE = 0.05;
/** Smaller than this (points, either side) is not worth reading: no UI text fits. */
export const MIN_READABLE = 8;

const SELF_DRAWN_ROLES = new Set(["canvas", "drawing area", "terminal", "embedded", "unknown", "AXUnknown"]);

export function ocrModeOf(value: unknown): OcrMode {
  if (value === undefined) return "auto";
  if (value === "auto" || value === true || value === false) return value;
  throw invalidArgument(
    `ocr must be "auto", true or false, got ${typeof value === "string" ? JSON.stringify(value) : String(value)}`,
    'pass ocr: "auto" (read pixels only where the tree is thin), true (always) or false (never)',
  );
}

/** Tesseract's language names ("eng", "chi_sim"); the macOS backend maps them to Vision's. */
export function ocrLanguagesOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  const hint = 'pass ocrLanguages: ["eng"], ["chi_sim"] or ["eng", "chi_sim"]';
  if (!Array.isArray(value) || value.length === 0 || value.length > 8)
    throw invalidArgument("ocrLanguages must be a list of 1 to 8 language names", hint);
  for (const l of value)
    if (typeof l !== "string" || !/^[a-z]{3}(_[a-z]{2,8})?$/.test(l))
      throw invalidArgument(`ocrLanguages: ${JSON.stringify(l)} is not a Tesseract language name`, hint);
  return [...new Set(value as string[])];
}

const said = (t: unknown): boolean => typeof t === "string" && t.trim().length > 0;
// Called on every element until three are found: no array built per element.
const named = (n: RawNode): boolean => said(n.title) || said(n.description) || said(n.value);

/** The window's own controls, which every window has: they say nothing about its content. */
const WINDOW_CONTROL_SUBROLES = new Set([
  "AXCloseButton",
  "AXMinimizeButton",
  "AXZoomButton",
  "AXFullScreenButton",
]);
const WINDOW_CONTROL_NAMES = new Set(["minimize", "maximize", "restore", "close"]);
const isWindowControl = (n: RawNode): boolean =>
  (n.subrole !== undefined && WINDOW_CONTROL_SUBROLES.has(n.subrole)) ||
  (n.role === "push button" && WINDOW_CONTROL_NAMES.has((n.title ?? "").trim().toLowerCase()));

const area = (r: Rect): number => Math.max(0, r.w) * Math.max(0, r.h);

function intersect(a: Rect, b: Rect): Rect | undefined {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const w = Math.min(a.x + a.w, b.x + b.w) - x;
  const h = Math.min(a.y + a.h, b.y + b.h) - y;
  return w > 0 && h > 0 ? { x, y, w, h } : undefined;
}

function* nodes(root: RawNode): Generator<RawNode> {
  const stack: RawNode[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    yield n;
    if (n.children) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
}

const isSelfDrawn = (n: RawNode): boolean => SELF_DRAWN_ROLES.has(n.role) || isImage(n);

/** Window-relative, clipped to the window: what the capture holds. */
function localTo(win: Rect, r: Rect | undefined): Rect | undefined {
  return r === undefined
    ? undefined
    : intersect({ x: r.x - win.x, y: r.y - win.y, w: r.w, h: r.h }, { x: 0, y: 0, w: win.w, h: win.h });
}

/**
 * A self-drawn element auto reads: its frame, clipped to the window, covers
 * SELF_DRAWN_SHARE of it and is readable both ways. localTo's arithmetic,
 * step for step, without the rect it builds.
 */
function readsSelfDrawn(win: Rect, n: RawNode): boolean {
  const r = n.frame;
  if (r === undefined) return false;
  const rx = r.x - win.x;
  const ry = r.y - win.y;
  const x = Math.max(rx, 0);
  const y = Math.max(ry, 0);
  const w = Math.min(rx + r.w, win.w) - x;
  const h = Math.min(ry + r.h, win.h) - y;
  return w > 0 && h > 0 && w * h >= SELF_DRAWN_SHARE * area(win) && w >= MIN_READABLE && h >= MIN_READABLE;
}

/**
 * Whether `ocr: "auto"` reads anything of this window: the decision of
 * fullOcrPlan without building the plan. It runs on every snapshot, so it
 * collects nothing, stops counting names at MIN_NAMED, from then on looks
 * at an element's role only, and returns at the first self-drawn element
 * auto would read (issue 20: "0 ms added to snapshots of named windows").
 */
export function autoReadsPixels(
  raw: RawSnapshot,
  secureNames = true,
  secure: SecureFields = secureFieldsOf(raw, secureNames),
): boolean {
  const win = raw.window.frame;
  if (win.w < MIN_READABLE || win.h < MIN_READABLE) return false;
  let namedCount = 0;
  // The order elements are seen in decides nothing: children go on the stack as they come.
  const stack: RawNode[] = [];
  if (raw.root.children) for (const c of raw.root.children) stack.push(c);
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.children) for (const c of n.children) stack.push(c);
    if (isSelfDrawn(n)) {
      // The frame first: most self-drawn elements (icons) are too small, and it is the cheaper test.
      if (readsSelfDrawn(win, n) && !secure.has(n)) return true;
    } else if (namedCount < MIN_NAMED && named(n) && !isWindowControl(n) && !secure.has(n)) namedCount++;
  }
  return namedCount < MIN_NAMED;
}

/**
 * What a snapshot reads; undefined: nothing. In auto, a window that reads
 * nothing (nearly every window of a named app) is told by autoReadsPixels
 * alone; the plan is built only where pixels are read.
 */
/**
 * `secure`: the tree's secure fields (render/secure.ts), when the caller has
 * them already; else judged here with `secureNames`.
 */
export function planOcr(
  raw: RawSnapshot,
  mode: OcrMode,
  secureNames = true,
  secure: SecureFields = secureFieldsOf(raw, secureNames),
): OcrPlan | undefined {
  if (mode === "auto" && !autoReadsPixels(raw, secureNames, secure)) return undefined;
  return fullOcrPlan(raw, mode, secureNames, secure);
}

/** The plan, from one walk over the whole tree (planOcr skips it where auto reads nothing). */
export function fullOcrPlan(
  raw: RawSnapshot,
  mode: OcrMode,
  secureNames = true,
  secure: SecureFields = secureFieldsOf(raw, secureNames),
): OcrPlan | undefined {
  if (mode === false) return undefined;
  const win = raw.window.frame;
  if (win.w < MIN_READABLE || win.h < MIN_READABLE) return undefined;
  const local = (r: Rect | undefined): Rect | undefined => localTo(win, r);
  const secureFrames: Rect[] = [];
  const namedFrames: Rect[] = [];
  const selfDrawn: RawNode[] = [];
  let namedCount = 0;
  const windowArea = area(win);
  for (const n of nodes(raw.root)) {
    if (secure.has(n)) {
      const r = local(n.frame);
      if (r) secureFrames.push(r);
      continue;
    }
    // Lines read off the pixels already (a tree an observation merged them into, read again by an
    // action: act/ocr-line.ts) are the text to read, not an element whose text is printed.
    if (n === raw.root || n.ocr !== undefined) continue;
    if (isSelfDrawn(n)) {
      const r = local(n.frame);
      if (r && area(r) >= SELF_DRAWN_SHARE * windowArea) selfDrawn.push(n);
    } else if (named(n) && !isWindowControl(n)) {
      namedCount++;
      // Leaves only: a named container (a web document, a panel) holds the very text to read.
      const r = n.children?.length ? undefined : local(n.frame);
      if (r) namedFrames.push(r);
    }
  }
  const inside = (regions: Rect[]) =>
    regions.length === 0 ? namedFrames : namedFrames.filter((f) => regions.some((r) => intersect(f, r)));
  if (mode === true || namedCount < MIN_NAMED) {
    return {
      why: mode === true ? "asked" : "thin",
      regions: [],
      blanks: [...inside([]), ...secureFrames],
      elements: [],
    };
  }
  const regions = selfDrawn
    .map((n) => local(n.frame)!)
    .filter((r) => r.w >= MIN_READABLE && r.h >= MIN_READABLE);
  if (regions.length === 0) return undefined;
  return { why: "self-drawn", regions, blanks: [...inside(regions), ...secureFrames], elements: selfDrawn };
}
