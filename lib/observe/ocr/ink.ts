/**
 * An OCR line's ink: the shape of what is drawn in its box, colours aside
 * (src-native/core/ocr.cc InkOf: "COLSxROWS:" and one bit per cell, as hex).
 * OCR can read unchanged pixels as other text each time ("& Hue-Saturatio!",
 * "GS Hue-Saturatior"), so a line's identity is not a fresh reading: it is
 * this shape in its place, which unchanged pixels keep and a hover that only
 * repaints a background or a text colour keeps too.
 */

interface Ink {
  cols: number;
  rows: number;
  bits: Uint8Array;
}

/** Most cells an ink may hold: the native side cuts a box into at most 256 × 32. */
const MAX_CELLS = 256 * 32;

function parse(ink: string): Ink | undefined {
  const m = /^(\d+)x(\d+):([0-9a-f]*)$/.exec(ink);
  if (!m) return undefined;
  const cols = Number(m[1]);
  const rows = Number(m[2]);
  if (cols < 1 || rows < 1 || cols * rows > MAX_CELLS || m[3]!.length !== Math.ceil((cols * rows) / 8) * 2)
    return undefined;
  const bits = new Uint8Array(m[3]!.length / 2);
  for (let i = 0; i < bits.length; i++) bits[i] = Number.parseInt(m[3]!.slice(2 * i, 2 * i + 2), 16);
  return { cols, rows, bits };
}

const at = (ink: Ink, x: number, y: number): boolean => {
  if (x < 0 || y < 0 || x >= ink.cols || y >= ink.rows) return false;
  const cell = y * ink.cols + x;
  return (ink.bits[cell >> 3]! & (1 << (cell & 7))) !== 0;
};

function count(ink: Ink): number {
  let n = 0;
  for (let y = 0; y < ink.rows; y++) for (let x = 0; x < ink.cols; x++) if (at(ink, x, y)) n++;
  return n;
}

/** Cells of one shape that may differ from the other's, shifted by up to this many cells: capture and box jitter. */
const SHIFT = 1;
/** The most of their inked cells two shapes may not share and still be the same drawing. */
export const INK_TOLERANCE = 0.2;

/**
 * How far apart two inks are: 0 the same shape, 1 nothing in common (and 1 when either is missing, unreadable
 * or blank). The best alignment within a cell of jitter, as the share of inked cells the two do not share.
 */
export function inkDistance(a: string | undefined, b: string | undefined): number {
  const x = a ? parse(a) : undefined;
  const y = b ? parse(b) : undefined;
  if (!x || !y || Math.abs(x.cols - y.cols) > 2 * SHIFT || Math.abs(x.rows - y.rows) > 2 * SHIFT) return 1;
  const nx = count(x);
  const ny = count(y);
  if (nx === 0 || ny === 0) return 1;
  let best = 1;
  for (let dy = -SHIFT; dy <= SHIFT; dy++)
    for (let dx = -SHIFT; dx <= SHIFT; dx++) {
      let shared = 0;
      for (let r = 0; r < x.rows; r++)
        for (let c = 0; c < x.cols; c++) if (at(x, c, r) && at(y, c + dx, r + dy)) shared++;
      best = Math.min(best, 1 - shared / (nx + ny - shared));
    }
  return best;
}

/** The same drawing: both inks readable and their shapes within INK_TOLERANCE. */
export const sameInk = (a: string | undefined, b: string | undefined): boolean =>
  inkDistance(a, b) <= INK_TOLERANCE;
