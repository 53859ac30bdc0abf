/**
 * Issue 20: the fake backend's recognizeText, which answers from the world's `ocr` lines so that the
 * layers above the OCR seam can be tested without an engine: regions and blanks by line centre,
 * reading order, the noise floor, OCR_UNAVAILABLE, and one log entry per run.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadNative, type NativeBackend } from "../../lib/native.js";

const native = loadNative();
const open: NativeBackend[] = [];

function fake(script: object): NativeBackend {
  const b = new native.NativeBackend("fake", script);
  open.push(b);
  return b;
}

afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

const frame = { x: 100, y: 100, w: 400, h: 300 };
const ocr = [
  { text: "Next", frame: { x: 200, y: 20, w: 40, h: 14 } },
  { text: "Play", frame: { x: 20, y: 20, w: 40, h: 14 }, confidence: 0.9 },
  { text: "noise", frame: { x: 20, y: 200, w: 40, h: 14 }, confidence: 0.1 },
  { text: "Volume", frame: { x: 20, y: 80, w: 60, h: 14 } },
];
const world = (extra: object = {}) => ({
  apps: [
    { name: "Player", pid: 42, focused: true, windows: [{ title: "Player", frame, focused: true, ocr }] },
  ],
  ...extra,
});

async function windowOf(b: NativeBackend) {
  const snap = await b.snapshot({
    app: "Player",
    maxNodes: 10,
    maxDepth: 5,
    deadlineMs: 1000,
    screenshot: false,
  });
  await b.release(snap.handles);
  return snap.window;
}

describe("fake recognizeText", () => {
  it("returns the window's lines in reading order, above the noise floor, and logs the run", async () => {
    const b = fake(world());
    const window = await windowOf(b);
    const result = await b.recognizeText({ window, regions: [], blanks: [], deadlineMs: 1000 });
    expect(result.engine).toBe("fake");
    expect(result.lines.map((l) => l.text)).toEqual(["Play", "Next", "Volume"]);
    expect(result.lines[0]).toEqual({ text: "Play", frame: { x: 20, y: 20, w: 40, h: 14 }, confidence: 0.9 });
    expect(b.fakeLog().filter((e) => e.startsWith("ocr "))).toEqual(["ocr 42 regions=0 blanks=0"]);
  });

  it("keeps the lines whose centre is in a region and in no blank", async () => {
    const b = fake(world());
    const window = await windowOf(b);
    const result = await b.recognizeText({
      window,
      regions: [{ x: 0, y: 0, w: 300, h: 50 }],
      blanks: [{ x: 190, y: 10, w: 60, h: 30 }],
      singleLine: true,
      deadlineMs: 1000,
    });
    expect(result.lines.map((l) => l.text)).toEqual(["Play"]);
    expect(b.fakeLog().filter((e) => e.startsWith("ocr "))).toEqual(["ocr 42 regions=1 blanks=1 singleLine"]);
  });

  it("answers OCR_UNAVAILABLE in a world without an engine", async () => {
    const b = fake(world({ ocrUnavailable: true }));
    const window = await windowOf(b);
    const err = await b.recognizeText({ window, regions: [], blanks: [], deadlineMs: 1000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as { nativeCode?: string }).nativeCode).toBe("OCR_UNAVAILABLE");
  });
});
