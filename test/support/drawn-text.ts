/**
 * The OCR tests' and benchmark's drawn-text app (test/apps/drawn-text.py): a GTK DrawingArea with
 * known text and no accessible text, and the word-level accuracy measure they report (recall and
 * precision of the known words among the recognised ones).
 */
import type { NativeBackend, NativeSnapshot } from "../../lib/native.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";

export interface DrawnLine {
  text: string;
  /** Baseline start, drawing-area pixels. */
  x: number;
  y: number;
  size?: number;
  font?: string;
  box?: boolean;
  /** A boxed line shows this text instead while the pointer is in its box. */
  hover?: string;
}

export interface DrawnSpec {
  title: string;
  width: number;
  height: number;
  /** Where the window goes on the screen (no window manager places it): apart from the others. */
  x?: number;
  y?: number;
  lines: DrawnLine[];
}

/** A media-player-like window: buttons, labels, a status line, in two columns, at UI sizes (12–16 px). */
export const PLAYER: DrawnSpec = {
  title: "axsnap drawn player",
  width: 560,
  height: 420,
  lines: [
    { text: "Play", x: 32, y: 44, box: true },
    { text: "Pause", x: 120, y: 44, box: true },
    { text: "Next track", x: 220, y: 44, box: true },
    { text: "Volume 75%", x: 370, y: 44 },
    { text: "Now playing: Blue Monday by New Order", x: 32, y: 104, size: 16 },
    { text: "Shuffle all songs", x: 32, y: 150 },
    { text: "Repeat one", x: 300, y: 150 },
    { text: "Library", x: 32, y: 196 },
    { text: "Settings and preferences", x: 300, y: 196 },
    { text: "Download 12 files", x: 32, y: 242 },
    { text: "Search the archive", x: 300, y: 242 },
    { text: "Sign out", x: 32, y: 288, box: true },
    { text: "Elapsed 03:14 of 05:29", x: 300, y: 288, size: 12 },
    { text: "Connected to the kitchen speaker", x: 32, y: 350, size: 13 },
  ],
};

/** Chinese labels drawn in a CJK font (fonts-wqy-zenhei); "设置" (settings) is a button. */
export const CHINESE: DrawnSpec = {
  title: "axsnap drawn chinese",
  x: 700,
  y: 20,
  width: 360,
  height: 200,
  lines: [
    { text: "你好", x: 40, y: 70, size: 24, font: "WenQuanYi Zen Hei" },
    { text: "设置", x: 40, y: 150, size: 24, font: "WenQuanYi Zen Hei", box: true },
  ],
};

export async function startDrawnText(desktop: Desktop, spec: DrawnSpec): Promise<App> {
  return startApp(desktop, "/usr/bin/python3", ["test/apps/drawn-text.py", JSON.stringify(spec)], {
    name: "axsnap-drawn-text",
    windowName: spec.title,
    timeoutMs: 20_000,
  });
}

/** A snapshot of the app's window through the raw backend, its handles released at once (only `window` is used). */
export async function windowOf(
  backend: NativeBackend,
  pid: number,
  keepPixels = false,
): Promise<NativeSnapshot> {
  const snap = await backend.snapshot({
    app: pid,
    maxNodes: 2000,
    maxDepth: 40,
    deadlineMs: 10_000,
    screenshot: keepPixels,
    keepPixels,
  });
  await backend.release(snap.handles);
  return snap;
}

/** Words as compared: lower case, without the punctuation around them. */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/\s+/)
    .map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}%]+$/gu, ""))
    .filter(Boolean);
}

/** Recall: known words found; precision: recognised words that are known (multisets). */
export function accuracy(expected: string[], got: string[]): { recall: number; precision: number } {
  const left = new Map<string, number>();
  for (const w of expected) left.set(w, (left.get(w) ?? 0) + 1);
  let hits = 0;
  for (const w of got) {
    const n = left.get(w) ?? 0;
    if (n > 0) {
      hits++;
      left.set(w, n - 1);
    }
  }
  return {
    recall: expected.length ? hits / expected.length : 1,
    precision: got.length ? hits / got.length : 1,
  };
}
