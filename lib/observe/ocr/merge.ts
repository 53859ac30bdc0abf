/**
 * Text read off the pixels, put into the walked tree as nodes of their own
 * (issue 20), so the renderer numbers them like any line and the session
 * keeps a record of each: one node per recognised line, a static text of
 * the platform, marked `ocr`, nested under the deepest element whose frame
 * holds the line's centre (the self-drawn element read, or the window), after
 * that element's own children, in reading order.
 */
import { holdsPoint, type RawNode, type RawSnapshot, type Rect } from "../../model/model.js";
import { isUnsure } from "./unsure.js";

/** One recognised line: window-relative points, as the native recogniser returns it. */
export interface OcrLine {
  text: string;
  frame: Rect;
  confidence: number;
  ink?: string;
  words?: { text: string; confidence: number }[];
}

/**
 * Rows top to bottom, each left to right: lines whose vertical centres lie
 * within half a line's height of a row's first line are that row (a button's
 * label sits a pixel or two off its neighbour's).
 */
function readingOrder(lines: OcrLine[]): OcrLine[] {
  const cy = (l: OcrLine) => l.frame.y + l.frame.h / 2;
  const rows: OcrLine[][] = [];
  for (const line of [...lines].sort((a, b) => cy(a) - cy(b))) {
    const row = rows.at(-1);
    const first = row?.[0];
    if (row && first && Math.abs(cy(line) - cy(first)) <= Math.min(line.frame.h, first.frame.h) / 2)
      row.push(line);
    else rows.push([line]);
  }
  return rows.flatMap((row) => row.sort((a, b) => a.frame.x - b.frame.x));
}

/** The deepest node under `from` whose frame holds the point; `from` when none does. */
function holder(from: RawNode, x: number, y: number): RawNode {
  let at = from;
  for (;;) {
    const next = at.children?.find((c) => c.ocr === undefined && holdsPoint(c.frame, x, y));
    if (!next) return at;
    at = next;
  }
}

/**
 * Adds `lines` to `raw` (in place: the tree is this snapshot's own), under
 * `under` (the read elements; the root when empty), and returns how many.
 */
export function mergeOcrLines(
  raw: RawSnapshot,
  lines: readonly OcrLine[],
  under: readonly RawNode[] = [],
): number {
  const win = raw.window.frame;
  const staticRole = raw.platform === "macos" ? "AXStaticText" : "static";
  const ordered = readingOrder(lines.filter((l) => l.text.trim().length > 0));
  for (const line of ordered) {
    const frame = { x: win.x + line.frame.x, y: win.y + line.frame.y, w: line.frame.w, h: line.frame.h };
    const cx = frame.x + frame.w / 2;
    const cy = frame.y + frame.h / 2;
    const top = under.find((n) => holdsPoint(n.frame, cx, cy)) ?? raw.root;
    const parent = holder(top, cx, cy);
    const node: RawNode = {
      role: staticRole,
      // "text" on both platforms, whatever the platform calls its static text.
      roleDescription: "text",
      ...(raw.platform === "macos" ? { value: line.text.trim() } : { title: line.text.trim() }),
      frame,
      states: { visible: true },
      ocr: {
        confidence: line.confidence,
        ...(line.ink ? { ink: line.ink } : {}),
        ...(isUnsure(line) ? { unsure: true } : {}),
      },
    };
    if (parent.children) parent.children.push(node);
    else parent.children = [node];
  }
  return ordered.length;
}
