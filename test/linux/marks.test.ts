/**
 * Marks on a real screenshot: gtk3-widget-factory on Xvfb. A marked
 * snapshot's PNG differs from the unmarked one exactly near printed frames
 * and their labels, every label reads as its index, and the contract and the
 * encode count are those of the unmarked screenshot.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../lib/index.js";
import { loadNative } from "../../lib/native.js";
import { desktopBackend, snapshot } from "../../lib/observe/desktop.js";
import { encodeMarked } from "../../lib/observe/marks.js";
import { createSnapshot } from "../../lib/observe/snapshot.js";
import type { ElementRecord } from "../../lib/render/records.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { readLabel } from "../support/marks.js";
import { decodePng, type Image } from "../support/png.js";

let desktop: Desktop;
let gtk: App;

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
});

type Shot = { scale: number; windowOrigin: { x: number; y: number } };
type Label = { x: number; y: number; w: number; h: number };

/** Pixels of `b` that differ from `a` and lie neither within 3 px of a printed frame's edge nor in a label. */
function strayChanges(a: Image, b: Image, records: readonly ElementRecord[], shot: Shot, labels: Label[]) {
  const frames = records.flatMap((r) => {
    const f = r.screenFrame;
    if (!f || !(f.w > 0) || !(f.h > 0)) return [];
    const x0 = (f.x - shot.windowOrigin.x) * shot.scale;
    const y0 = (f.y - shot.windowOrigin.y) * shot.scale;
    return [{ x0, y0, x1: x0 + f.w * shot.scale, y1: y0 + f.h * shot.scale }];
  });
  let changed = 0;
  let stray = 0;
  for (let y = 0; y < a.height; y++)
    for (let x = 0; x < a.width; x++) {
      const i = (y * a.width + x) * 4;
      if (a.data[i] === b.data[i] && a.data[i + 1] === b.data[i + 1] && a.data[i + 2] === b.data[i + 2])
        continue;
      changed++;
      if (labels.some((l) => x >= l.x && x < l.x + l.w && y >= l.y && y < l.y + l.h)) continue;
      const near = frames.some(
        (f) =>
          (y >= f.y0 - 3 && y <= f.y1 + 3 && (Math.abs(x - f.x0) <= 3 || Math.abs(x - f.x1) <= 3)) ||
          (x >= f.x0 - 3 && x <= f.x1 + 3 && (Math.abs(y - f.y0) <= 3 || Math.abs(y - f.y1) <= 3)),
      );
      if (!near) stray++;
    }
  return { changed, stray };
}

describe("marks on gtk3-widget-factory", () => {
  it("changes the captured pixels only near printed frames, in the same encodes", async () => {
    const backend = await desktopBackend();
    const kept = await backend.snapshot({
      app: gtk.pid,
      maxNodes: 4800,
      maxDepth: 64,
      deadlineMs: 10_000,
      screenshot: true,
      keepPixels: true,
    });
    try {
      const pixels = kept.pixels;
      if (!pixels) throw new Error(`no pixels: ${kept.raw.walk.notes?.join("; ")}`);
      const snap = createSnapshot({ raw: kept.raw });
      const native = loadNative();
      const plain = await encodeMarked(native, pixels, []);
      const marked = await encodeMarked(native, pixels, snap.records);
      expect(marked.encodes).toBe(plain.encodes);
      expect(marked.png.length).toBeLessThanOrEqual(900 * 1024);
      expect([marked.pixelWidth, marked.pixelHeight, marked.scale]).toEqual([
        plain.pixelWidth,
        plain.pixelHeight,
        plain.scale,
      ]);
      const a = decodePng(plain.png);
      const b = decodePng(marked.png);
      const { changed, stray } = strayChanges(
        a,
        b,
        snap.records,
        marked,
        marked.marks.map((m) => m.label),
      );
      expect(changed).toBeGreaterThan(1000);
      expect(stray).toBe(0);
      const clean = marked.marks.filter((m) => !m.overlaps);
      expect(clean.length).toBeGreaterThan(marked.marks.length * 0.6);
      for (const m of clean) expect(readLabel(b, m.label), `label of ${m.index}`).toBe(String(m.index));
      // Every printed element with a frame inside the window is labelled.
      const w = kept.raw.window.frame;
      const inside = snap.records.filter(
        (r) =>
          r.screenFrame &&
          r.screenFrame.w > 0 &&
          r.screenFrame.h > 0 &&
          r.screenFrame.x >= w.x &&
          r.screenFrame.y >= w.y &&
          r.screenFrame.x + r.screenFrame.w <= w.x + w.w &&
          r.screenFrame.y + r.screenFrame.h <= w.y + w.h,
      );
      expect(inside.length).toBeGreaterThan(20);
      const labelled = new Set(marked.marks.map((m) => m.index));
      for (const r of inside) expect(labelled.has(r.index), `index ${r.index}`).toBe(true);
    } finally {
      await backend.release(kept.handles);
    }
  }, 30_000);

  it("returns a marked snapshot with the unmarked contract and a label per visible element", async () => {
    let plain: Snapshot | undefined;
    let marked: Snapshot | undefined;
    try {
      plain = await snapshot({ app: "gtk3-widget-factory" });
      marked = await snapshot({ app: "gtk3-widget-factory", screenshot: { marks: true } });
      const ps = plain.screenshot;
      const ms = marked.screenshot;
      if (!ps || !ms) throw new Error("no screenshot");
      expect([ms.pixelWidth, ms.pixelHeight, ms.scale, ms.windowOrigin]).toEqual([
        ps.pixelWidth,
        ps.pixelHeight,
        ps.scale,
        ps.windowOrigin,
      ]);
      expect(ps.marks).toBeUndefined();
      expect(ms.marks?.length).toBeGreaterThan(20);
      expect(ms.data.length).toBeLessThanOrEqual(900 * 1024);
      // The two are separate captures of a live app: anything that moved between them (a spinner) may
      // differ too; the rest differs only near frames and labels.
      const { stray } = strayChanges(
        decodePng(ps.data),
        decodePng(ms.data),
        marked.records,
        ms,
        (ms.marks ?? []).map((m) => m.label),
      );
      expect(stray).toBeLessThan(ps.pixelWidth * ps.pixelHeight * 0.01);
    } finally {
      await plain?.release();
      await marked?.release();
    }
  }, 30_000);
});
