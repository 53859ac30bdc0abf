/**
 * Marks on the screenshot (screenshot: { marks: true }), without a desktop:
 * a fixture's printed frames drawn on uniform and noisy images by the real
 * addon, the PNG decoded and checked pixel by pixel: every printed element
 * whose frame shows has a label at the contract's coordinates whose digits
 * read as its index, frames off the image get none, nothing else changes,
 * the encode count and the size budget are those of the unmarked image.
 * Then the fake backend end to end: bad options, the unmarked bytes.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import { loadNative, type NativeBackend, type NativePixels } from "../../lib/native.js";
import { snapshot } from "../../lib/observe/desktop.js";
import { encodeMarked, type MarkBudget, markFrames, screenshotRequest } from "../../lib/observe/marks.js";
import { createSnapshot } from "../../lib/observe/snapshot.js";
import type { ElementRecord } from "../../lib/render/records.js";
import { createSession } from "../../lib/session/session.js";
import { readLabel } from "../support/marks.js";
import { decodePng } from "../support/png.js";

const native = loadNative();

type Fill = "uniform" | "noise" | "checker" | "soft";

function image(width: number, height: number, fill: Fill): Buffer {
  const px = Buffer.alloc(width * height * 4);
  let seed = 12345;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      if (fill === "uniform") px.fill(200, i, i + 3);
      else if (fill === "checker") px.fill((x >> 3) % 2 === (y >> 3) % 2 ? 250 : 10, i, i + 3);
      else if (fill === "soft")
        // Light noise over a checkerboard: compresses like a busy screenshot, so budgets bind.
        for (let k = 0; k < 3; k++) {
          seed = (seed * 1103515245 + 12345) >>> 0;
          px[i + k] = ((x >> 4) % 2 === (y >> 4) % 2 ? 200 : 40) + (seed >>> 29);
        }
      else
        for (let k = 0; k < 3; k++) {
          seed = (seed * 1103515245 + 12345) >>> 0;
          px[i + k] = seed >>> 24;
        }
      px[i + 3] = 255;
    }
  return px;
}

const fixture = JSON.parse(readFileSync("test/fixtures/gtk-widget-factory.json", "utf8"));
const fixtureSnap = createSnapshot({ raw: fixture });
const win = fixture.window.frame as { x: number; y: number; w: number; h: number };

/** Records beyond the fixture's: frames partly or wholly off the window, and one with no area. */
function offWindow(first: number): ElementRecord[] {
  const base = fixtureSnap.records[1] as ElementRecord;
  const at = (i: number, x: number, y: number, w: number, h: number): ElementRecord => ({
    ...base,
    index: first + i,
    screenFrame: { x, y, w, h },
  });
  return [
    at(0, win.x - 500, win.y + 10, 100, 30), // left of the window
    at(1, win.x + 10, win.y + win.h + 40, 100, 30), // below it
    at(2, win.x + win.w - 30, win.y + 200, 100, 30), // partly off the right edge: shows
    at(3, win.x + 100, win.y + 100, 0, 30), // no area
  ];
}
const records = [...fixtureSnap.records, ...offWindow(fixtureSnap.records.length)];

const made = new Map<string, NativePixels>();
function pixelsOf(ppp: number, fill: Fill): NativePixels {
  const key = `${ppp} ${fill}`;
  const cached = made.get(key);
  if (cached) return cached;
  const width = Math.round(win.w * ppp);
  const height = Math.round(win.h * ppp);
  const px = {
    rgba: image(width, height, fill),
    width,
    height,
    pixelsPerPoint: ppp,
    windowOrigin: { x: win.x, y: win.y },
    captureMs: 0,
  };
  made.set(key, px);
  return px;
}

/** A record's frame in output pixels, by the contract alone: (screen − origin) × scale. */
function frameInImage(r: ElementRecord, shot: { scale: number; windowOrigin: { x: number; y: number } }) {
  const f = r.screenFrame;
  if (!f) return undefined;
  return {
    x0: (f.x - shot.windowOrigin.x) * shot.scale,
    y0: (f.y - shot.windowOrigin.y) * shot.scale,
    x1: (f.x + f.w - shot.windowOrigin.x) * shot.scale,
    y1: (f.y + f.h - shot.windowOrigin.y) * shot.scale,
  };
}

async function check(ppp: number, fill: Fill, budget?: MarkBudget) {
  const px = pixelsOf(ppp, fill);
  const plain = await encodeMarked(native, px, [], budget);
  const marked = await encodeMarked(native, px, records, budget);
  const a = decodePng(plain.png);
  const b = decodePng(marked.png);
  return { px, plain, marked, a, b };
}

describe("screenshot option", () => {
  it("takes true, false and { marks }; anything else is INVALID_ARGUMENT", () => {
    expect(screenshotRequest(undefined)).toEqual({ capture: true, marks: false });
    expect(screenshotRequest(false)).toEqual({ capture: false, marks: false });
    expect(screenshotRequest({})).toEqual({ capture: true, marks: false });
    expect(screenshotRequest({ marks: true })).toEqual({ capture: true, marks: true });
    for (const bad of ["yes", 1, null, [], { marks: "yes" }, { marks: 1 }, { mark: true }]) {
      const err = (() => {
        try {
          screenshotRequest(bad);
        } catch (e) {
          return e;
        }
      })();
      expect(err, JSON.stringify(bad)).toBeInstanceOf(AxsnapError);
      expect((err as AxsnapError).code).toBe("INVALID_ARGUMENT");
    }
  });

  it("maps frames with the contract and leaves out frames without area", () => {
    const flat = markFrames(records, { pixelsPerPoint: 2, windowOrigin: { x: win.x, y: win.y } });
    expect(flat.length % 5).toBe(0);
    expect(Array.from(flat.slice(5, 10))).toEqual([1, (825 - 360) * 2, (148 - 140) * 2, 180, 60]);
    expect(flat.length / 5).toBe(records.length - 1);
  });
});

describe.each([
  { ppp: 1, fill: "uniform" as const },
  { ppp: 2, fill: "uniform" as const },
  { ppp: 1, fill: "noise" as const },
  { ppp: 2, fill: "checker" as const },
])("marks on a $fill image at $ppp px per point", ({ ppp, fill }) => {
  it("labels every printed frame that shows, where the contract puts it, with digits that read as its index", async () => {
    const { plain, marked, b } = await check(ppp, fill);
    expect(marked.pixelWidth).toBe(plain.pixelWidth);
    expect(marked.scale).toBe(plain.scale);
    const byIndex = new Map(marked.marks.map((m) => [m.index, m]));
    for (const r of records) {
      const f = frameInImage(r, marked);
      const shows =
        f && f.x1 > f.x0 && f.y1 > f.y0 && f.x1 > 0 && f.y1 > 0 && f.x0 < b.width && f.y0 < b.height;
      const m = byIndex.get(r.index);
      if (!shows) {
        expect(m, `index ${r.index} is off the image`).toBeUndefined();
        continue;
      }
      expect(m, `index ${r.index}`).toBeDefined();
      if (!m || !f) continue;
      const l = m.label;
      // Inside the image, and touching its frame (inside a corner or just outside an edge).
      expect(l.x).toBeGreaterThanOrEqual(0);
      expect(l.y).toBeGreaterThanOrEqual(0);
      expect(l.x + l.w).toBeLessThanOrEqual(b.width);
      expect(l.y + l.h).toBeLessThanOrEqual(b.height);
      expect(l.x + l.w).toBeGreaterThanOrEqual(Math.floor(f.x0) - 1);
      expect(l.x).toBeLessThanOrEqual(Math.ceil(f.x1) + 1);
      expect(l.y + l.h).toBeGreaterThanOrEqual(Math.floor(f.y0) - 1);
      expect(l.y).toBeLessThanOrEqual(Math.ceil(f.y1) + 1);
      if (!m.overlaps) expect(readLabel(b, l), `label of ${r.index}`).toBe(String(r.index));
    }
    // Most labels found a free place on this window.
    expect(marked.marks.filter((m) => !m.overlaps).length).toBeGreaterThan(marked.marks.length * 0.8);
  });

  it("changes pixels only on printed frames' edges and labels", async () => {
    const { marked, a, b } = await check(ppp, fill);
    expect([b.width, b.height]).toEqual([a.width, a.height]);
    const frames = records
      .map((r) => frameInImage(r, marked))
      .filter((f): f is NonNullable<typeof f> => f !== undefined && f.x1 > f.x0 && f.y1 > f.y0);
    const nearEdge = (x: number, y: number) =>
      frames.some((f) => {
        const inX = x >= f.x0 - 2 && x <= f.x1 + 2;
        const inY = y >= f.y0 - 2 && y <= f.y1 + 2;
        const onV = Math.abs(x - f.x0) <= 2.5 || Math.abs(x - (f.x1 - 1)) <= 2.5;
        const onH = Math.abs(y - f.y0) <= 2.5 || Math.abs(y - (f.y1 - 1)) <= 2.5;
        return (inY && onV) || (inX && onH);
      });
    const inLabel = (x: number, y: number) =>
      marked.marks.some(
        (m) => x >= m.label.x && x < m.label.x + m.label.w && y >= m.label.y && y < m.label.y + m.label.h,
      );
    let changed = 0;
    for (let y = 0; y < a.height; y++)
      for (let x = 0; x < a.width; x++) {
        const i = (y * a.width + x) * 4;
        if (a.data[i] === b.data[i] && a.data[i + 1] === b.data[i + 1] && a.data[i + 2] === b.data[i + 2])
          continue;
        changed++;
        if (!nearEdge(x, y) && !inLabel(x, y))
          throw new Error(`pixel ${x},${y} changed away from every frame and label`);
      }
    expect(changed).toBeGreaterThan(1000);
    // Every frame that shows has its edge drawn somewhere (its top-left corner, or where it enters the image).
    for (const m of marked.marks) {
      const f = frameInImage(records.find((r) => r.index === m.index) as ElementRecord, marked);
      if (!f) continue;
      const x = Math.max(0, Math.floor(f.x0));
      const y = Math.max(0, Math.floor(f.y0));
      let drawn = false;
      for (let dx = 0; dx < 3 && !drawn; dx++)
        for (let dy = 0; dy < 3 && !drawn; dy++) {
          const i = ((y + dy) * a.width + (x + dx)) * 4;
          drawn =
            a.data[i] !== b.data[i] || a.data[i + 1] !== b.data[i + 1] || a.data[i + 2] !== b.data[i + 2];
        }
      expect(drawn, `frame of ${m.index}`).toBe(true);
    }
  });
});

describe("the size budget", () => {
  it("takes as many encodes as the unmarked image and stays within the budget", async () => {
    const encodes: number[] = [];
    for (const budget of [undefined, { maxBytes: 1_000_000 }, { maxBytes: 500_000 }, { maxSide: 600 }]) {
      const { plain, marked } = await check(2, "soft", budget);
      const what = `${JSON.stringify(budget)}: ${plain.png.length} B in ${plain.encodes} encodes unmarked, ${marked.png.length} B marked`;
      expect(marked.encodes, what).toBe(plain.encodes);
      encodes.push(plain.encodes);
      const max = budget?.maxBytes ?? 900 * 1024;
      expect(plain.png.length, what).toBeLessThanOrEqual(max);
      expect(marked.png.length, what).toBeLessThanOrEqual(max);
      expect(Math.max(marked.pixelWidth, marked.pixelHeight)).toBeLessThanOrEqual(budget?.maxSide ?? 1280);
    }
    // The budget bound at least once: a second encode at a predicted smaller size.
    expect(Math.max(...encodes)).toBeGreaterThan(1);
  });

  it("draws labels at a fixed pixel size after the downscale", async () => {
    const small = await encodeMarked(native, pixelsOf(1, "uniform"), records, { maxSide: 600 });
    const big = await encodeMarked(native, pixelsOf(1, "uniform"), records);
    const h = (r: typeof small) => r.marks[0]?.label.h;
    expect(h(small)).toBe(2 + 2 + 7); // glyph scale 1 under 800 px
    expect(h(big)).toBe(2 + 4 + 14); // glyph scale 2
    const b = decodePng(small.png);
    for (const m of small.marks) if (!m.overlaps) expect(readLabel(b, m.label)).toBe(String(m.index));
  });
});

describe("native argument checks", () => {
  it("rejects pixels of the wrong size and malformed marks", async () => {
    const px = Buffer.alloc(4 * 4 * 4);
    await expect(native.encodeMarked(px, 4, 5, 1, new Float64Array(0))).rejects.toThrow(/width\*height\*4/);
    await expect(native.encodeMarked(px, 4, 4, 1, new Float64Array(3))).rejects.toThrow(/groups/);
    await expect(native.encodeMarked(px, 0, 4, 1, new Float64Array(0))).rejects.toThrow(/integers/);
    const ok = await native.encodeMarked(px, 4, 4, 1, new Float64Array([7, 0, 0, 4, 4]));
    expect(ok.labels).toEqual([]); // a 4x4 image is smaller than any label
  });
});

describe("with the fake backend", () => {
  const open: NativeBackend[] = [];
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
  });
  const frame = { x: 100, y: 100, w: 800, h: 600 };
  const fake = () => {
    const b = new native.NativeBackend("fake", {
      apps: [
        {
          name: "Editor",
          pid: 4006,
          focused: true,
          windows: [
            {
              title: "Doc",
              frame,
              focused: true,
              root: {
                role: "frame",
                title: "Doc",
                frame,
                children: [
                  {
                    role: "push button",
                    title: "OK",
                    actions: ["click"],
                    frame: { x: 120, y: 120, w: 80, h: 30 },
                  },
                  {
                    role: "push button",
                    title: "Far",
                    actions: ["click"],
                    frame: { x: 2000, y: 120, w: 80, h: 30 },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    open.push(b);
    return b;
  };

  it('refuses marks: "yes" before anything native runs', async () => {
    const b = fake();
    for (const screenshot of ["yes", { marks: "yes" }, { marks: true, size: 3 }]) {
      const err = await snapshot({ app: "Editor", screenshot } as never, b).catch((e) => e);
      expect(err).toBeInstanceOf(AxsnapError);
      expect(err.code).toBe("INVALID_ARGUMENT");
    }
    expect(b.fakeLog()).toEqual([]);
  });

  it("marks the printed elements that show, in the same contract as the unmarked screenshot", async () => {
    const b = fake();
    const plain = await snapshot({ app: "Editor" }, b);
    const marked = await snapshot({ app: "Editor", screenshot: { marks: true } }, b);
    expect(plain.screenshot?.marks).toBeUndefined();
    const ps = plain.screenshot;
    const ms = marked.screenshot;
    if (!ps || !ms) throw new Error("no screenshot");
    expect([ms.pixelWidth, ms.pixelHeight, ms.scale, ms.windowOrigin]).toEqual([
      ps.pixelWidth,
      ps.pixelHeight,
      ps.scale,
      ps.windowOrigin,
    ]);
    expect(marked.text).toBe(plain.text);
    const far = marked.records.find((r) => r.title === "Far");
    expect(far).toBeDefined();
    expect(ms.marks?.map((m) => m.index)).toEqual(
      marked.records.filter((r) => r !== far).map((r) => r.index),
    );
    const img = decodePng(ms.data);
    for (const m of ms.marks ?? []) expect(readLabel(img, m.label)).toBe(String(m.index));
    expect(Buffer.compare(Buffer.from(ms.data), Buffer.from(ps.data))).not.toBe(0);
    await plain.release();
    await marked.release();
  });

  it("keeps the marks on an action's fresh snapshot", async () => {
    const b = fake();
    const session = createSession({ backend: b, deadlineMs: 2000 });
    try {
      const snap = await session.snapshot({ app: "Editor", screenshot: { marks: true } });
      const ok = snap.records.find((r) => r.title === "OK");
      if (!ok) throw new Error("no OK button");
      const result = await session.click(ok.index);
      const fresh = result.snapshot?.screenshot;
      expect(fresh?.marks?.map((m) => m.index)).toEqual(snap.screenshot?.marks?.map((m) => m.index));
      const unmarked = await session.click(ok.index, { snapshot: { screenshot: true } });
      expect(unmarked.snapshot?.screenshot?.marks).toBeUndefined();
    } finally {
      await session.close();
    }
  });

  it("leaves the unmarked screenshot byte for byte what an encode without marks of the same pixels gives", async () => {
    const b = fake();
    const plain = await snapshot({ app: "Editor" }, b);
    const kept = await b.snapshot({
      app: "Editor",
      maxNodes: 4800,
      maxDepth: 64,
      deadlineMs: 5000,
      screenshot: true,
      keepPixels: true,
    });
    expect(kept.screenshot).toBeUndefined();
    if (!kept.pixels) throw new Error("no pixels");
    const again = await encodeMarked(native, kept.pixels, []);
    expect(Buffer.compare(again.png, Buffer.from(plain.screenshot?.data ?? []))).toBe(0);
    await b.release(kept.handles);
    await plain.release();
  });
});
