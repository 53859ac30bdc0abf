/**
 * The Snapshot object the public API returns: one observation of one window,
 * its text in the chosen style, the records behind the numbers, and the
 * screenshot with the coordinate contract that maps its pixels to the screen.
 */
import { randomBytes } from "node:crypto";
import { rememberCollapsed } from "./collapsed.js";
import { diffSnapshots, rememberFacts, type SnapshotChanges } from "./diff.js";
import type { ScreenshotMark } from "./marks.js";
import type { RawApp, RawSnapshot, RawWindow, ReadStat, Rect, WalkEnd } from "./model.js";
import type { ElementRecord } from "./records.js";
import {
  normaliseRenderOptions,
  normaliseViewOptions,
  type RenderOptions,
  type RenderScope,
  renderValidated,
  type Style,
  type ViewOptions,
  type ViewSummary,
} from "./render/index.js";
import { rememberRerender } from "./rerender.js";
import { validateRawSnapshot } from "./validate.js";

/**
 * How screenshot pixels map to the screen: screen point = windowOrigin +
 * pixel / scale. One contract, written on every snapshot.
 */
export interface CoordinateContract {
  /** Screenshot size in pixels. */
  pixelWidth: number;
  pixelHeight: number;
  /** Screenshot pixels per window point (backing scale × any downscale for the size budget). */
  scale: number;
  /** The window's top-left corner on screen, in points. */
  windowOrigin: { x: number; y: number };
}

/** Where a snapshot's time went, in ms. */
export interface SnapshotTimings {
  /** Finding the app and choosing its window (native). */
  appMs?: number;
  windowMs?: number;
  /** The window's walk (native; before 0.2: the whole native observation). */
  walkMs?: number;
  menuBarMs?: number;
  captureMs?: number;
  encodeMs?: number;
  renderMs: number;
  totalMs: number;
  /** Reads by kind (Linux: the D-Bus method, or "Get <property>"), with the time attributed to them. */
  reads?: readonly ReadStat[];
  /** Text read off the pixels (ocr): recognitions run (0 where the tree was not thin), their time in ms. */
  ocrRuns: number;
  ocrMs: number;
}

export interface Screenshot extends CoordinateContract {
  format: "png";
  data: Uint8Array;
  /**
   * With `screenshot: { marks: true }`: the labels drawn, one per printed element whose frame shows in
   * the image (records[index]), in screenshot pixels. Absent on an unmarked screenshot.
   */
  marks?: readonly ScreenshotMark[];
}

export type SnapshotCut = WalkEnd | "render_node_limit" | "render_depth_limit";

export interface Snapshot {
  /** Short random token; refs are `@<id>:e<index>`. */
  readonly id: string;
  readonly app: RawApp;
  readonly window: RawWindow;
  /** The style printed: the one asked for, or compact where `maxTokens` needed it. */
  readonly style: Style;
  readonly text: string;
  /**
   * With `depth`, `skeleton` or `maxTokens`: what the text left out. Records
   * inside collapsed lines keep their indices (the whole window's) but did not print.
   */
  readonly view?: ViewSummary;
  /** records[i] is the element printed with index i. */
  readonly records: readonly ElementRecord[];
  readonly complete: boolean;
  /** What cut the observation, when it is not complete. */
  readonly cutBy: readonly SnapshotCut[];
  readonly nodesObserved: number;
  readonly focusedIndex?: number;
  readonly selectedText?: string;
  readonly screenshot?: Screenshot;
  readonly timings: SnapshotTimings;
  readonly takenAt: number;
  /** Frees the live element handles behind the records. Idempotent; also happens when the snapshot is collected. */
  release(): Promise<void>;
  readonly released: boolean;
  /**
   * What changed since an earlier snapshot of the same window: elements added,
   * removed and changed (keyed by their live handle), and a text of only those
   * lines with their ancestors (diff.ts).
   */
  changesSince(previous: Snapshot): SnapshotChanges;
}

const ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789";

/** `s` + 7 characters from an alphabet without look-alikes (no l/1/o/0). */
export function newSnapshotId(): string {
  const bytes = randomBytes(7);
  let id = "s";
  for (const b of bytes) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

export interface SnapshotInput {
  raw: unknown;
  options?: RenderOptions & ViewOptions;
  /** Only one element's subtree (a `root` snapshot). @internal */
  scope?: RenderScope;
  screenshot?: Screenshot;
  /** Time the observation started (ms, performance.now()); defaults to the render start. */
  startedAt?: number;
  /** The screenshot's capture and encode times (native). */
  captureMs?: number;
  encodeMs?: number;
  /** Frees the handles of a live observation; called once, by release() or after collection. */
  releaseHandles?: () => Promise<void>;
  /** What the observation's OCR step did (lib/ocr/read.ts); none for a tree rendered from a file. */
  ocr?: { runs: number; ms: number };
}

// Handles of collected snapshots are freed too: an agent loop that never calls release() must not leak.
const collector = new FinalizationRegistry<() => Promise<void>>((free) => {
  free().catch(() => undefined);
});

export function createSnapshot(input: SnapshotInput): Snapshot {
  const t0 = performance.now();
  const opts = normaliseRenderOptions(input.options);
  const view = normaliseViewOptions(input.options ?? {});
  const raw: RawSnapshot = validateRawSnapshot(input.raw);
  const result = renderValidated(raw, opts, view, input.scope);
  const t1 = performance.now();
  const cutBy: SnapshotCut[] = [];
  if (raw.walk.ended !== "complete") cutBy.push(raw.walk.ended);
  if (result.cut.nodeLimit) cutBy.push("render_node_limit");
  if (result.cut.depthLimit) cutBy.push("render_depth_limit");
  const timings: SnapshotTimings = {
    renderMs: t1 - t0,
    totalMs: t1 - (input.startedAt ?? t0),
    ocrRuns: input.ocr?.runs ?? 0,
    ocrMs: input.ocr?.ms ?? 0,
  };
  const native = raw.walk.timings;
  if (native !== undefined) {
    timings.appMs = native.appMs;
    timings.windowMs = native.windowMs;
    timings.walkMs = native.walkMs;
    if (native.menuBarMs !== undefined) timings.menuBarMs = native.menuBarMs;
  } else if (raw.walk.elapsedMs !== undefined) {
    timings.walkMs = raw.walk.elapsedMs;
  }
  if (raw.walk.reads !== undefined) timings.reads = raw.walk.reads;
  if (input.captureMs !== undefined) timings.captureMs = input.captureMs;
  if (input.encodeMs !== undefined) timings.encodeMs = input.encodeMs;
  const free = input.releaseHandles;
  let released = free === undefined;
  const snapshot: Snapshot = {
    id: newSnapshotId(),
    app: raw.app,
    window: raw.window,
    style: result.style,
    text: result.text,
    ...(result.view !== undefined ? { view: result.view } : {}),
    records: result.records,
    complete: result.complete,
    cutBy,
    nodesObserved: raw.walk.nodesObserved,
    ...(result.focusedIndex !== undefined ? { focusedIndex: result.focusedIndex } : {}),
    ...(result.selectedText !== undefined ? { selectedText: result.selectedText } : {}),
    ...(input.screenshot !== undefined ? { screenshot: input.screenshot } : {}),
    timings,
    takenAt: Date.now(),
    get released() {
      return released;
    },
    async release() {
      if (released || free === undefined) return;
      released = true;
      collector.unregister(snapshot);
      await free();
    },
    changesSince(previous: Snapshot): SnapshotChanges {
      return diffSnapshots(previous, snapshot);
    },
  };
  rememberFacts(snapshot, result.facts);
  rememberCollapsed(snapshot, result.within);
  rememberRerender(snapshot, (v) => {
    const again = renderValidated(raw, opts, normaliseViewOptions(v), input.scope);
    return again.view === undefined ? { text: again.text } : { text: again.text, view: again.view };
  });
  if (free !== undefined) collector.register(snapshot, free, snapshot);
  return snapshot;
}

/**
 * Gives a snapshot its screenshot after it was created: a marked screenshot
 * needs the records (which elements printed, at which index) first.
 * Internal (lib/desktop.ts).
 */
export function attachScreenshot(
  snapshot: Snapshot,
  screenshot: Screenshot,
  startedAt?: number,
  ms?: { captureMs: number; encodeMs: number },
): void {
  (snapshot as { screenshot?: Screenshot }).screenshot = screenshot;
  if (ms !== undefined) Object.assign(snapshot.timings, ms);
  if (startedAt !== undefined) snapshot.timings.totalMs = performance.now() - startedAt;
}

export type { Rect };
