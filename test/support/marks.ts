/**
 * Reading screenshot marks back in tests: the label font written out
 * independently of src-native/core/marks.cc (a label must read as these), and
 * a reader that decodes a label's digits from its pixels.
 */
import { type Image, pixel } from "./png.js";

/** The label font, written out independently of src-native/core/marks.cc: a label must read as these. */
const GLYPHS = [
  [".###.", "#...#", "#..##", "#.#.#", "##..#", "#...#", ".###."],
  ["..#..", ".##..", "..#..", "..#..", "..#..", "..#..", ".###."],
  [".###.", "#...#", "....#", "...#.", "..#..", ".#...", "#####"],
  ["####.", "....#", "....#", ".###.", "....#", "....#", "####."],
  ["...#.", "..##.", ".#.#.", "#..#.", "#####", "...#.", "...#."],
  ["#####", "#....", "####.", "....#", "....#", "#...#", ".###."],
  ["..##.", ".#...", "#....", "####.", "#...#", "#...#", ".###."],
  ["#####", "....#", "...#.", "..#..", ".#...", ".#...", ".#..."],
  [".###.", "#...#", "#...#", ".###.", "#...#", "#...#", ".###."],
  [".###.", "#...#", "#...#", ".####", "....#", "...#.", ".##.."],
];

export const glyphScale = (img: Image) => (Math.max(img.width, img.height) >= 800 ? 2 : 1);

/** The digits a label shows, read cell by cell (white = ink), or null when a cell matches no glyph. */
export function readLabel(img: Image, box: { x: number; y: number; w: number; h: number }): string | null {
  const s = glyphScale(img);
  const digits = Math.round((box.w - 2 - 2 * s + s) / (6 * s));
  let out = "";
  for (let d = 0; d < digits; d++) {
    const gx = box.x + 1 + s + d * 6 * s;
    const gy = box.y + 1 + s;
    const rows: string[] = [];
    for (let r = 0; r < 7; r++) {
      let row = "";
      for (let c = 0; c < 5; c++) {
        const [R, G, B] = pixel(img, gx + c * s + (s >> 1), gy + r * s + (s >> 1));
        row += R === 255 && G === 255 && B === 255 ? "#" : ".";
      }
      rows.push(row);
    }
    const digit = GLYPHS.findIndex((g) => g.every((row, i) => row === rows[i]));
    if (digit < 0) return null;
    out += String(digit);
  }
  return out;
}
