/**
 * The shapes of a snapshot, types only: the Snapshot the public API returns,
 * its screenshot and timings, what a diff and a view say about it. Kept apart
 * from the modules that build them (snapshot.ts, diff.ts, marks.ts, render/)
 * so that the modules a snapshot is built from, and errors.ts (TIMEOUT
 * carries the snapshot observed last), can name the type without importing
 * back the module that imports them: this file imports only the raw model
 * and the records.
 */
import type { RawApp, RawWindow, ReadStat, WalkEnd } from "../model/model.js";
import type { ElementRecord } from "../render/records.js";

export type Style = "tree" | "compact";

/** What a snapshot's view left out (Snapshot.view). */
export interface ViewSummary {
  /** "outline": depth or skeleton asked for; "budget": shortened to fit maxTokens. */
  kind: "outline" | "budget";
  /** The base depth printed (absent when a budget kept the whole tree). */
  depth?: number;
  /** Elements of this observation inside collapsed lines: they exist, but no line of this text shows them. */
  hidden: number;
  /** Lines that end with `(+N elements)`. */
  collapsed: number;
  /** maxTokens: the budget, and the estimated tokens of the text. */
  maxTokens?: number;
  tokens?: number;
}

/** A label drawn on a marked screenshot, in screenshot pixels. */
export interface ScreenshotMark {
  /** The printed index (records[index]). */
  index: number;
  /** The label's box: x, y of its top-left corner, w, h, in screenshot pixels. */
  label: { x: number; y: number; w: number; h: number };
  /** No place free of other labels was found; it was drawn under them and may be partly covered. */
  overlaps: boolean;
}

/** What differs on a changed element. `moved`/`resized`: its screen frame. `line`: any other printed text. */
export type ChangedField = "name" | "value" | "states" | "moved" | "resized" | "line";

export interface Change {
  /** The element's identity across the two snapshots: `h<handle>`, or `p<root>/<path>` without handles. */
  key: string;
  /** Index in the new snapshot (added, changed), or in the old one (removed). */
  index: number;
  role: string;
  name?: string;
  /** The printed line without indent and index: the new one, or the old one for a removed element. */
  line: string;
  /** Changed elements: which fields differ. */
  fields?: ChangedField[];
  /** Changed elements whose fields include "states": the states (and traits) gained and lost, sorted. */
  states?: { added: string[]; removed: string[] };
  /** Changed elements: the index and line in the old snapshot. */
  previousIndex?: number;
  previousLine?: string;
}

export interface SnapshotChanges {
  added: Change[];
  removed: Change[];
  changed: Change[];
  /** Elements in both snapshots that print the same. */
  unchanged: number;
  /** Of the unchanged: how many print under another index now. */
  renumbered: number;
  /** "3 changed, 1 added, 0 removed; 54 unchanged", or "no changes; 54 unchanged". */
  summary: string;
  /**
   * Changed and added lines with their ancestors, then "- <old index> <old line>" per removed (beyond ten,
   * one line of their old indices), then the summary.
   */
  text: string;
  /**
   * Set when the two could not be compared by live handle (one was released before the other was
   * taken): elements were matched by their path of child positions instead. Printed before the summary.
   */
  note?: string;
}

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
  /** The style printed: the one asked for (`maxTokens` shortens within it, never switches it). */
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
