/**
 * Outlines: the same planned lines, printed only down to a depth, with a
 * container cut there ending its line with what it holds (`(+37 elements)`).
 *
 * The plan is made once, for the whole window, and an outline only chooses
 * which of its lines print: records, and so indices, stay those of the full
 * plan, so an index means the same element at every depth and every budget
 * of one observation, and a collapsed line is addressable as any other (a
 * `root` snapshot opens it). This is the compact style's precedent (it hides
 * plain-text lines whose records exist) taken further: here the hidden
 * records are not printed by any style of this snapshot, so acting on one is
 * refused (lib/observe/collapsed.ts) and a diff reports them under their collapsed
 * line (lib/observe/diff.ts).
 */
import type { Line } from "./lines.js";
import { isList, isScrollArea, isWebArea } from "./roles.js";
import { cut } from "./sanitize.js";

/** The tree structure of planned lines, computed once per plan. */
export interface LineTree {
  lines: Line[];
  /** Position of the numbered line each line hangs under; -1 for the roots (window, menu bar). */
  parent: Int32Array;
  /** Numbered lines below each line, at any depth. */
  held: Int32Array;
  /** Numbered lines right below each line. */
  kids: Int32Array;
  /** Position of the focused element's line, or -1. */
  focus: number;
  /** Deepest printed depth. */
  maxDepth: number;
  /** Numbered lines in all: the observation's records. */
  records: number;
}

export function lineTree(lines: Line[], focusedIndex: number | undefined): LineTree {
  const n = lines.length;
  const parent = new Int32Array(n).fill(-1);
  const held = new Int32Array(n);
  const kids = new Int32Array(n);
  const stack: number[] = [];
  let focus = -1;
  let maxDepth = 0;
  let records = 0;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    while (stack.length > 0 && lines[stack[stack.length - 1]!]!.depth >= line.depth) stack.pop();
    parent[i] = stack.length > 0 ? stack[stack.length - 1]! : -1;
    if (line.depth > maxDepth) maxDepth = line.depth;
    if (line.index < 0) continue;
    records++;
    if (line.index === focusedIndex) focus = i;
    for (const a of stack) held[a]!++;
    if (stack.length > 0) kids[stack[stack.length - 1]!]!++;
    stack.push(i);
  }
  return { lines, parent, held, kids, focus, maxDepth, records };
}

/**
 * Which lines print: those down to `depth`, and the children of every line in
 * `open`. `keep`: in a crowd (a line with more than CROWD children, as a flat
 * GTK window's dozens of controls right under the window), only the children
 * in `keep` and those that hold elements print; the other leaves stay inside
 * their parent, which then says how many it holds that did not print.
 */
export interface ViewSpec {
  depth: number;
  open: ReadonlySet<number>;
  keep?: ReadonlySet<number>;
  /** Cut each printed text segment at this many characters (a skeleton is for finding, not reading). */
  textCut?: number;
}

/** More children than this under one line make a crowd (ViewSpec.keep). */
const CROWD = 8;

export interface OutlineView {
  /** The lines to format; a collapsed line is a copy whose suffix says what it holds. */
  lines: Line[];
  /** Lines that print `(+N elements)`. */
  collapsed: number;
  /** Records that did not print: inside a collapsed line. */
  hidden: number;
  /** within[index]: the index of the collapsed line a hidden record is inside, else -1. */
  within: Int32Array;
  /** The collapsed line holding the most, to name in the closing line. */
  largest?: number;
}

/** `(+37 elements)` on a collapsed line; `(+37 more elements)` on one that printed some of its children. */
export function holdsText(n: number, more = false): string {
  const m = more ? " more" : "";
  return n === 1 ? `(+1${m} element)` : `(+${n}${m} elements)`;
}

/** The lines a view prints, in plan order. */
export function outline(tree: LineTree, spec: ViewSpec): OutlineView {
  const { lines, parent, held, kids } = tree;
  const n = lines.length;
  const shown = new Uint8Array(n);
  const isOpen = (i: number) => spec.open.has(i) || lines[i]!.depth < spec.depth;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const p = parent[i]!;
    if (p < 0) {
      shown[i] = 1;
      continue;
    }
    if (shown[p] !== 1) continue;
    // A row's unnumbered `| b | c` line is part of the row: it prints when the row does.
    if (line.index < 0) {
      shown[i] = 1;
      continue;
    }
    if (!isOpen(p)) continue;
    const crowded = spec.keep !== undefined && kids[p]! > CROWD;
    if (crowded && held[i] === 0 && !spec.keep!.has(i)) continue;
    shown[i] = 1;
  }
  // Each hidden record is inside its nearest printed ancestor.
  const within = new Int32Array(tree.records).fill(-1);
  const inside = new Int32Array(n);
  const holder = new Int32Array(n).fill(-1);
  let hidden = 0;
  for (let i = 0; i < n; i++) {
    if (shown[i] === 1) continue;
    const p = parent[i]!;
    holder[i] = shown[p] === 1 ? p : holder[p]!;
    if (lines[i]!.index < 0) continue;
    hidden++;
    within[lines[i]!.index] = lines[holder[i]!]!.index;
    inside[holder[i]!]!++;
  }
  const out: Line[] = [];
  let collapsed = 0;
  let largest: number | undefined;
  let largestHeld = 0;
  for (let i = 0; i < n; i++) {
    if (shown[i] !== 1) continue;
    const line = spec.textCut === undefined ? lines[i]! : shortened(lines[i]!, spec.textCut);
    const count = inside[i]!;
    if (count === 0) {
      out.push(line);
      continue;
    }
    collapsed++;
    if (count > largestHeld) {
      largestHeld = count;
      largest = line.index;
    }
    const mark = holdsText(count, count < held[i]!);
    out.push({ ...line, suffix: line.suffix === undefined ? mark : `${line.suffix} ${mark}` });
  }
  const view: OutlineView = { lines: out, collapsed, hidden, within };
  if (largest !== undefined) view.largest = largest;
  return view;
}

/** A line with its long texts cut (a copy; the plan's lines are shared by every view). */
function shortened(line: Line, limit: number): Line {
  const long = (t: string | undefined) => t !== undefined && t.length > limit + 3;
  if (!long(line.title) && !line.segments.some(long) && !long(line.text)) return line;
  const copy: Line = { ...line, segments: line.segments.map((seg) => cut(seg, limit)) };
  if (line.title !== undefined) copy.title = cut(line.title, limit);
  if (line.text !== undefined) copy.text = cut(line.text, limit);
  return copy;
}

/** The positions of the ancestors of line `pos` (not itself). */
function ancestors(tree: LineTree, pos: number, into: Set<number>): void {
  for (let p = tree.parent[pos]!; p >= 0; p = tree.parent[p]!) into.add(p);
}

const REGION_ROLES = new Set([
  "AXToolbar",
  "AXMenuBar",
  "AXTabGroup",
  "AXSheet",
  "tool bar",
  "tool-bar",
  "menu bar",
  "menu-bar",
  "page tab list",
  "page-tab-list",
  "status bar",
  "status-bar",
  "document text",
  "document-text",
  "dialog",
]);

/**
 * A region of a window: what an agent orients by before it reads lines —
 * toolbars, menu bars, tab lists, lists and tables (sidebars are lists or
 * outlines), the document or web area. A split view is not one: it holds
 * regions (a sidebar beside a document), and a region's inside stays shut.
 */
export function isRegion(line: Line): boolean {
  const node = line.node;
  if (node === undefined) return false;
  return REGION_ROLES.has(node.role) || isList(node) || (isWebArea(node) && !isScrollArea(node));
}

/** Lines whose children a skeleton opens: the path to focus, and to each outermost region. */
export interface Openings {
  /** The focused line and its ancestors. */
  focus: Set<number>;
  /** Ancestors of every region that is not inside another region. */
  regions: Set<number>;
  /** Every list and table: their rows are what is on screen (a budget opens them). */
  lists: Set<number>;
  /** What a crowd keeps (ViewSpec.keep): the outermost regions, and the focused line and its ancestors. */
  keep: Set<number>;
}

export function openings(tree: LineTree): Openings {
  const focus = new Set<number>();
  // The focused element's own children too (a field's parts), except a list's rows: a budget
  // opens those where it can, a skeleton leaves them to `root`.
  if (tree.focus >= 0) {
    ancestors(tree, tree.focus, focus);
    const node = tree.lines[tree.focus]!.node;
    if (node === undefined || !isList(node)) focus.add(tree.focus);
  }
  const regions = new Set<number>();
  const lists = new Set<number>();
  const keep = new Set<number>();
  const inRegion = new Uint8Array(tree.lines.length);
  for (let i = 0; i < tree.lines.length; i++) {
    const line = tree.lines[i]!;
    const p = tree.parent[i]!;
    const parentIn = p >= 0 && (inRegion[p] === 1 || isRegion(tree.lines[p]!));
    inRegion[i] = parentIn ? 1 : 0;
    if (line.index < 0) continue;
    if (line.node !== undefined && isList(line.node)) lists.add(i);
    if (!parentIn && isRegion(line)) {
      ancestors(tree, i, regions);
      keep.add(i);
    }
  }
  for (const f of focus) keep.add(f);
  return { focus, regions, lists, keep };
}

/** Most lines a skeleton prints at its base depth, before the paths to regions and focus are opened. */
const SKELETON_BASE_LINES = 30;

/**
 * The skeleton's base depth: the deepest level at which the window down to
 * it is still a glance (at most SKELETON_BASE_LINES lines), at least 1.
 */
export function skeletonDepth(tree: LineTree): number {
  const perDepth = new Int32Array(tree.maxDepth + 2);
  for (const line of tree.lines) if (line.index >= 0) perDepth[line.depth]!++;
  let total = 0;
  let depth = 0;
  for (let d = 0; d <= tree.maxDepth; d++) {
    total += perDepth[d]!;
    if (total > SKELETON_BASE_LINES) break;
    depth = d;
  }
  return Math.max(1, depth);
}

export function union(...sets: ReadonlySet<number>[]): Set<number> {
  const out = new Set<number>();
  for (const s of sets) for (const v of s) out.add(v);
  return out;
}

/** A branch this small prints whole in a skeleton (a region's inside excepted): opening it later would cost a call for a line or two. */
const SMALL_BRANCH = 3;
/** Longest text segment a skeleton prints: enough to know a field or a document by. */
export const SKELETON_TEXT = 80;

/** The skeleton: its base depth, with the paths to the regions and to focus, and small branches, opened. */
export function skeletonSpec(tree: LineTree, open: Openings): ViewSpec {
  const small = new Set<number>();
  for (let i = 0; i < tree.held.length; i++)
    if (tree.held[i]! <= SMALL_BRANCH && !isRegion(tree.lines[i]!)) small.add(i);
  // No deeper than the shallowest region: a region's inside stays shut (the paths to the others open).
  let regionDepth = Number.POSITIVE_INFINITY;
  for (const line of tree.lines) if (line.depth < regionDepth && isRegion(line)) regionDepth = line.depth;
  return {
    depth: Math.max(1, Math.min(skeletonDepth(tree), regionDepth)),
    open: union(open.regions, open.focus, small),
    keep: open.keep,
    textCut: SKELETON_TEXT,
  };
}

/** The closing line of an outline: what is collapsed, and how to open it. */
export function collapsedLine(view: OutlineView, records: number, lead: string): string | undefined {
  if (view.collapsed === 0) return undefined;
  const lines = view.collapsed === 1 ? "the line marked" : `the ${view.collapsed} lines marked`;
  // (+N elements) or (+N more elements): both say how many of its elements a line holds unprinted.
  const example = view.largest === undefined ? "" : ` (e.g. root ${view.largest})`;
  return `(${lead}${view.hidden} of ${records} elements are inside ${lines} (+N elements); open one with root and its index${example}.)`;
}
