/**
 * Issue 20, the native OCR seam on a real desktop: recognizeText over Tesseract 5 (loaded at run time)
 * on a GTK DrawingArea that draws known text and exposes none of it (test/apps/drawn-text.py), reached
 * through a normal snapshot's window. Accuracy is measured on words; regions, blanks, Chinese, the
 * single-line re-read and a missing library are checked on the same app.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import {
  loadNative,
  mapNativeError,
  type NativeBackend,
  type NativeOcrLine,
  type NativeWindow,
} from "../../lib/native.js";
import type { App, Desktop } from "../../scripts/desktop.mjs";
import { accuracy, CHINESE, PLAYER, startDrawnText, windowOf, wordsOf } from "../support/drawn-text.js";
import { useDesktop } from "../support/linux.js";

let desktop: Desktop;
let player: App;
let chinese: App;
let backend: NativeBackend;
let window: NativeWindow;
let lines: NativeOcrLine[];

const expected = PLAYER.lines.flatMap((l) => wordsOf(l.text));

/** The whole window, no blanks: the lines every other case starts from. */
async function readAll(extra: { blanks?: { x: number; y: number; w: number; h: number }[] } = {}) {
  return backend.recognizeText({ window, regions: [], blanks: extra.blanks ?? [], deadlineMs: 20_000 });
}

function lineWith(text: string): NativeOcrLine {
  const line = lines.find((l) => l.text === text);
  if (!line) throw new Error(`no line "${text}" among ${JSON.stringify(lines.map((l) => l.text))}`);
  return line;
}

/** A frame grown by `m` points on each side. */
const grown = (r: { x: number; y: number; w: number; h: number }, m: number) => ({
  x: r.x - m,
  y: r.y - m,
  w: r.w + 2 * m,
  h: r.h + 2 * m,
});

beforeAll(async () => {
  desktop = await useDesktop();
  player = await startDrawnText(desktop, PLAYER);
  chinese = await startDrawnText(desktop, CHINESE);
  backend = new (loadNative().NativeBackend)("linux");
  await backend.connect(5000);
  window = (await windowOf(backend, player.pid)).window;
  lines = (await readAll()).lines;
}, 90_000);

afterAll(async () => {
  await backend?.close();
  await player?.stop();
  await chinese?.stop();
  await desktop?.stop();
});

describe("recognizeText (Tesseract)", () => {
  it("reads the drawn words with recall and precision of at least 95%, one line per drawn line", async () => {
    const result = await readAll();
    expect(result.engine).toMatch(/^tesseract 5\./);
    const got = result.lines.flatMap((l) => wordsOf(l.text));
    const { recall, precision } = accuracy(expected, got);
    console.log(
      `drawn player: recall ${recall.toFixed(3)}, precision ${precision.toFixed(3)}, ${result.lines.length} lines, ocr ${result.ocrMs.toFixed(0)} ms`,
    );
    expect(recall, JSON.stringify(result.lines)).toBeGreaterThanOrEqual(0.95);
    expect(precision, JSON.stringify(result.lines)).toBeGreaterThanOrEqual(0.95);
    // Sparse text: the buttons of one row stay separate lines.
    expect(result.lines.map((l) => l.text)).toEqual(expect.arrayContaining(["Play", "Pause", "Next track"]));
  });

  it("gives frames in window points, where the text was drawn", () => {
    // The app draws "Settings and preferences" with its baseline at (300, 196) of the drawing area, which
    // fills the window: the line's box sits just above the baseline, starting at x 300.
    const line = lineWith("Settings and preferences");
    expect(Math.abs(line.frame.x - 300)).toBeLessThanOrEqual(3);
    expect(line.frame.y).toBeLessThan(196);
    expect(line.frame.y + line.frame.h).toBeGreaterThanOrEqual(194);
    expect(line.frame.y + line.frame.h).toBeLessThanOrEqual(200);
    for (const l of lines) expect(l.confidence).toBeGreaterThanOrEqual(0.3);
  });

  it("never reads a blanked line, and reads the rest as before", async () => {
    const pause = lineWith("Pause");
    const result = await readAll({ blanks: [grown(pause.frame, 3)] });
    const texts = result.lines.map((l) => l.text);
    expect(texts.join("\n")).not.toMatch(/pause/i);
    expect(texts).toEqual(lines.map((l) => l.text).filter((t) => t !== "Pause"));
  });

  it("reads only the lines inside the regions asked for", async () => {
    const library = lineWith("Library");
    const sign = lineWith("Sign out");
    const result = await backend.recognizeText({
      window,
      regions: [grown(library.frame, 6), grown(sign.frame, 6)],
      blanks: [],
      deadlineMs: 20_000,
    });
    expect(result.lines.map((l) => l.text)).toEqual(["Library", "Sign out"]);
  });

  it("a single-line re-read of each line's frame gives the same text", async () => {
    const differ: string[] = [];
    for (const line of lines) {
      const again = await backend.recognizeText({
        window,
        regions: [line.frame],
        blanks: [],
        singleLine: true,
        deadlineMs: 20_000,
      });
      const text = again.lines.map((l) => l.text).join(" ");
      if (text !== line.text) differ.push(`"${line.text}" read again as "${text}"`);
    }
    expect(differ).toEqual([]);
  });

  it("reads Chinese labels with languages chi_sim", async () => {
    const zh = (await windowOf(backend, chinese.pid)).window;
    const result = await backend.recognizeText({
      window: zh,
      regions: [],
      blanks: [],
      languages: ["chi_sim"],
      deadlineMs: 30_000,
    });
    expect(result.lines.map((l) => l.text.replace(/\s+/g, ""))).toEqual(["你好", "设置"]);
  });

  it("answers OCR_UNAVAILABLE, with the apt packages, for a language without data", async () => {
    const err = await backend
      .recognizeText({ window, regions: [], blanks: [], languages: ["xx_none"], deadlineMs: 20_000 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as { nativeCode?: string }).nativeCode).toBe("OCR_UNAVAILABLE");
    // The message names the package; the hint, Linux's own, says how to install it.
    expect((err as Error).message).toBe(
      'Tesseract has no data for "xx_none" (packages: tesseract-ocr-xx-none)',
    );
    expect(mapNativeError(err, undefined).hint).toBe("install it: apt-get install tesseract-ocr-xx-none");
  });

  it("answers OCR_UNAVAILABLE, naming the apt packages, when the library cannot be loaded", async () => {
    // The test-only override of the library's name (ocr_tesseract.cc), read when a backend's engine first loads.
    process.env.AXSNAP_TESSERACT_LIB = "/nonexistent/libtesseract.so.5";
    const bare = new (loadNative().NativeBackend)("linux");
    try {
      await bare.connect(5000);
      const err = await bare.recognizeText({ window, regions: [], blanks: [], deadlineMs: 20_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as { nativeCode?: string }).nativeCode).toBe("OCR_UNAVAILABLE");
      const mapped = mapNativeError(err, undefined);
      expect(mapped).toBeInstanceOf(AxsnapError);
      expect(mapped.code).toBe("OCR_UNAVAILABLE");
      expect(mapped.message).toMatch(/^Tesseract is not installed \(.*libtesseract\.so\.5/);
      expect(mapped.hint).toBe(
        "install Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng (tesseract-ocr-chi-sim for Chinese)",
      );
    } finally {
      delete process.env.AXSNAP_TESSERACT_LIB;
      await bare.close();
    }
    // The backend that loaded Tesseract still reads.
    expect((await readAll()).lines.length).toBe(lines.length);
  });
});
