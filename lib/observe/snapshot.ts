/**
 * The Snapshot object the public API returns: one observation of one window,
 * its text in the chosen style, the records behind the numbers, and the
 * screenshot with the coordinate contract that maps its pixels to the screen.
 */
import { randomBytes } from "node:crypto";
import type { RawSnapshot, Rect } from "../model/model.js";
import { validateRawSnapshot } from "../model/validate.js";
import { windowTitle } from "../render/format.js";
import {
  normaliseRenderOptions,
  normaliseViewOptions,
  type RenderOptions,
  type RenderScope,
  renderValidated,
  type ViewOptions,
} from "../render/index.js";
import { defineLocators } from "../session/locator/define.js";
import { rememberCollapsed } from "./collapsed.js";
import { diffSnapshots, rememberFacts } from "./diff.js";
import { rememberRerender } from "./rerender.js";
import type {
  Screenshot,
  Snapshot,
  SnapshotChanges,
  SnapshotCut,
  SnapshotTimings,
} from "./snapshot-types.js";
import { snapshotCreated } from "./test-hooks.js";

export type {
  CoordinateContract,
  Screenshot,
  Snapshot,
  SnapshotCut,
  SnapshotTimings,
} from "./snapshot-types.js";

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
  /** What the observation's OCR step did (lib/observe/ocr/read.ts); none for a tree rendered from a file. */
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
    // Titled as its header and line 0 are: the walk's read of the window's name (render/format.ts).
    window: windowTitle(raw) === raw.window.title ? raw.window : { ...raw.window, title: windowTitle(raw) },
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
  defineLocators(snapshot);
  snapshotCreated(snapshot);
  return snapshot;
}

/**
 * Gives a snapshot its screenshot after it was created: a marked screenshot
 * needs the records (which elements printed, at which index) first.
 * Internal (lib/observe/desktop.ts).
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

/**
 * Takes a snapshot's screenshot off again: a trace asked the action's fresh
 * snapshot for one its caller did not ask for (lib/session/trace/recorder.ts), and
 * the caller gets exactly what it asked for. Internal.
 */
export function detachScreenshot(snapshot: Snapshot): void {
  delete (snapshot as { screenshot?: Screenshot }).screenshot;
  delete snapshot.timings.captureMs;
  delete snapshot.timings.encodeMs;
}

export type { Rect };
