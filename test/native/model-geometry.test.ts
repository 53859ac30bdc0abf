/**
 * holdsPoint (lib/model/model.ts), the one point-in-frame test of the pointer
 * channel's hit test (act/pixels.ts) and of where a recognised line nests
 * (ocr/merge.ts): half-open, so abutting frames never both hold a point,
 * and a frame without area holds nothing.
 */
import { describe, expect, it } from "vitest";
import { holdsPoint } from "../../lib/model/model.js";

describe("holdsPoint", () => {
  const r = { x: 10, y: 20, w: 30, h: 40 };

  it("holds its left and top edges, not its right and bottom ones", () => {
    expect([holdsPoint(r, 10, 20), holdsPoint(r, 39.9, 59.9)]).toEqual([true, true]);
    expect([
      holdsPoint(r, 40, 30),
      holdsPoint(r, 20, 60),
      holdsPoint(r, 9.9, 30),
      holdsPoint(r, 20, 19.9),
    ]).toEqual([false, false, false, false]);
    // The line between two abutting frames belongs to the right-hand one only.
    const right = { x: 40, y: 20, w: 30, h: 40 };
    expect([holdsPoint(r, 40, 30), holdsPoint(right, 40, 30)]).toEqual([false, true]);
  });

  it("a frame without width or height, a negative one or none holds nothing", () => {
    for (const f of [
      { x: 10, y: 20, w: 0, h: 40 },
      { x: 10, y: 20, w: 30, h: 0 },
      { x: 10, y: 20, w: -5, h: 40 },
      { x: 10, y: 20, w: 30, h: Number.NaN },
      undefined,
    ])
      expect(holdsPoint(f, 10, 20)).toBe(false);
  });
});
