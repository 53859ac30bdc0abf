/**
 * Names inferred from the layout, for fields the app leaves unnamed and ties
 * to no label (zenity's forms: no LABELLED_BY; AppKit forms without
 * AXTitleUIElement). Screen readers do the same (Orca's label inference): a
 * short static text just left of the field on its line, or just above it and
 * aligned with it, among the field's siblings, is what a sighted user reads
 * as the field's label.
 *
 * Guards, each a way a guess goes wrong:
 * - only static text labels: a heading (AXHeading, AT-SPI heading), a button
 *   or another field is not a label, and standing between them it blocks;
 * - the nearest thing on that side must be the label: nothing may lie between;
 * - bounded gaps: a label at the far end of a row, or far above, is not taken;
 * - a label that names an element by relation (a printed element's
 *   labelledBy) is that element's, and one label names one field: where two
 *   fields could take it, the closer does (left before above at equal gaps);
 * - sentences are not labels (longer than LABEL_MAX_CHARS);
 * - a greyed-out label beside a live field belongs to something else
 *   (gtk3-widget-factory's row of demo labels, enabled and disabled, then
 *   its spin buttons).
 *
 * Platform-neutral: it reads roles through roles.ts and frames from the raw
 * tree, so Linux and macOS trees go through the same rules. Cheap by design:
 * one pass over the tree (long lists not entered), and siblings are compared
 * only in containers that hold an unnamed field.
 */
import { HIDDEN_COORDINATE, type RawNode, type Rect } from "../model/model.js";
import { chooseName } from "./lines.js";
import { isGenericContainer, isHidden, isList, isStaticText, takesLabel } from "./roles.js";
import { present } from "./sanitize.js";
import { nodeText } from "./summary.js";

/** Longest text taken as a label; longer ones are instructions or sentences. */
const LABEL_MAX_CHARS = 64;
/** Widest gap between a label's right edge and its field (a grid's label column, with some slack). */
const LEFT_MAX_GAP = 120;
/** Widest gap between a label's bottom and the field under it. */
const ABOVE_MAX_GAP = 24;
/** How far a label above may start left of its field and still be aligned with it. */
const ABOVE_ALIGN = 16;
/** Rounding slack for edges that touch or overlap by a point. */
const EDGE_SLACK = 2;
/** At equal gaps the label on the line wins over the one above (as Orca prefers the left). */
const ABOVE_PENALTY = 16;
/** Containers with more children than this are lists or tables, not forms: not searched. */
const MAX_SIBLINGS = 256;

function usable(f: Rect | undefined): f is Rect {
  return f !== undefined && f.w > 0 && f.h > 0 && f.x !== HIDDEN_COORDINATE && f.y !== HIDDEN_COORDINATE;
}

/**
 * What a sibling stands for on screen: a nameless generic wrapper with one
 * child is that child (a GtkBox around an entry, an AXGroup around a text),
 * up to two levels.
 */
function unwrap(node: RawNode): RawNode {
  let cur = node;
  for (let level = 0; level < 2; level++) {
    const only = cur.children;
    if (only === undefined || only.length !== 1 || !isGenericContainer(cur) || present(cur.title)) break;
    cur = only[0]!;
  }
  return cur;
}

interface Item {
  node: RawNode;
  frame: Rect;
  /** The text it would give as a label; undefined when it cannot be one. */
  label: string | undefined;
}

interface Candidate {
  field: Item;
  label: Item;
  score: number;
}

function labelText(node: RawNode, relationLabels: ReadonlyMap<number, string>): string | undefined {
  if (!isStaticText(node)) return undefined;
  if (node.handle !== undefined && relationLabels.has(node.handle)) return undefined;
  const text = nodeText(node)?.trim();
  return text === undefined || text.length === 0 || text.length > LABEL_MAX_CHARS ? undefined : text;
}

function visible(node: RawNode): boolean {
  return node.states?.visible !== false;
}

function onOneLine(a: Rect, b: Rect): boolean {
  const ac = a.y + a.h / 2;
  const bc = b.y + b.h / 2;
  return (ac >= b.y && ac <= b.y + b.h) || (bc >= a.y && bc <= a.y + a.h);
}

function overlapsAcross(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.w && a.x + a.w > b.x;
}

/** A disabled label names no enabled field (a disabled field may keep an enabled label). */
function sameSensitivity(label: Item, field: Item): boolean {
  return label.node.states?.enabled !== false || field.node.states?.enabled === false;
}

/** The label beside a field: the nearest item on its left on its line, if that is a label near enough. */
function leftOf(field: Item, items: Item[]): Candidate | undefined {
  const f = field.frame;
  let best: Item | undefined;
  for (const it of items) {
    if (it === field) continue;
    const g = it.frame;
    if (g.x + g.w > f.x + EDGE_SLACK || !onOneLine(g, f)) continue;
    if (best === undefined || g.x + g.w > best.frame.x + best.frame.w) best = it;
  }
  if (best?.label === undefined || !sameSensitivity(best, field)) return undefined;
  const gap = Math.max(0, f.x - (best.frame.x + best.frame.w));
  return gap <= LEFT_MAX_GAP ? { field, label: best, score: gap } : undefined;
}

/** The label above a field: the nearest item above it across its width, if that is a label aligned with it. */
function above(field: Item, items: Item[]): Candidate | undefined {
  const f = field.frame;
  let best: Item | undefined;
  for (const it of items) {
    if (it === field) continue;
    const g = it.frame;
    if (g.y + g.h > f.y + EDGE_SLACK || !overlapsAcross(g, f)) continue;
    if (best === undefined || g.y + g.h > best.frame.y + best.frame.h) best = it;
  }
  if (best?.label === undefined || !sameSensitivity(best, field)) return undefined;
  const g = best.frame;
  if (g.x < f.x - ABOVE_ALIGN) return undefined;
  const gap = Math.max(0, f.y - (g.y + g.h));
  return gap <= ABOVE_MAX_GAP ? { field, label: best, score: gap + ABOVE_PENALTY } : undefined;
}

/**
 * No name of its own, and no description either: an AX description is what a
 * field is called (AppKit's save panel describes its name field "Save As:"),
 * and the compact style prints it as the name. A description that only
 * repeats the value (GTK's scale describes itself by its value) names nothing.
 */
export function unnamed(node: RawNode): boolean {
  if (chooseName(node) !== undefined) return false;
  const d = node.description;
  return !present(d) || (node.value !== undefined && d === String(node.value));
}

function inferAmong(
  children: RawNode[],
  relationLabels: ReadonlyMap<number, string>,
  out: Map<RawNode, string>,
): void {
  const items: Item[] = [];
  const fields: Item[] = [];
  for (const child of children) {
    if (!visible(child)) continue;
    const node = unwrap(child);
    if (!visible(node)) continue;
    const frame = usable(node.frame) ? node.frame : usable(child.frame) ? child.frame : undefined;
    if (frame === undefined) continue;
    const item: Item = { node, frame, label: labelText(node, relationLabels) };
    items.push(item);
    if (takesLabel(node) && unnamed(node)) fields.push(item);
  }
  if (fields.length === 0) return;
  const candidates: Candidate[] = [];
  for (const field of fields) {
    const l = leftOf(field, items);
    if (l !== undefined) candidates.push(l);
    const a = above(field, items);
    if (a !== undefined) candidates.push(a);
  }
  if (candidates.length === 0) return;
  // Closest pairs first; a label, like a field, is taken once.
  candidates.sort((x, y) => x.score - y.score);
  const taken = new Set<Item>();
  for (const c of candidates) {
    if (taken.has(c.label) || out.has(c.field.node)) continue;
    taken.add(c.label);
    out.set(c.field.node, c.label.label!);
  }
}

/** A nameless generic wrapper around one element, which stands for that element on screen. */
function isWrapper(node: RawNode): boolean {
  return node.children?.length === 1 && isGenericContainer(node) && !present(node.title);
}

/**
 * Inferred names of the tree's unnamed fields, by field node. `relationLabels`
 * holds the handles of labels that already name an element by relation.
 * Undefined when there is none, the common case.
 */
export function inferLabels(
  root: RawNode,
  relationLabels: ReadonlyMap<number, string>,
): Map<RawNode, string> | undefined {
  // Pass 1, over every node: the containers that hold an unnamed field (through at most two
  // wrappers). A path walk, so a field's ancestors are at hand without a parent map; per node
  // it costs one role lookup.
  let holders: Set<RawNode> | undefined;
  const path: RawNode[] = [root];
  const next: number[] = [0];
  while (path.length > 0) {
    const top = path[path.length - 1]!;
    const children = top.children;
    const i = next[next.length - 1]!;
    if (children === undefined || i >= children.length) {
      path.pop();
      next.pop();
      continue;
    }
    next[next.length - 1] = i + 1;
    const child = children[i]!;
    if (takesLabel(child) && !present(child.title)) {
      holders ??= new Set();
      holders.add(labelHolder(path)!);
    }
    // A long list's items are rows, not a form, and walking them would cost as much as the
    // render itself (the 10,000-row table): not entered.
    const grand = child.children;
    if (grand !== undefined && grand.length > 0 && !(grand.length > MAX_SIBLINGS && isList(child))) {
      path.push(child);
      next.push(0);
    }
  }
  if (holders === undefined) return undefined;
  // Pass 2, only where a field is: its siblings.
  const out = new Map<RawNode, string>();
  for (const holder of holders) {
    const children = holder.children!;
    if (children.length > 1 && children.length <= MAX_SIBLINGS && visible(holder))
      inferAmong(children, relationLabels, out);
  }
  return out.size === 0 ? undefined : out;
}

/**
 * The labels that name an element by relation (AT-SPI LABELLED_BY): label
 * handle → the name it gave. Inference leaves them to their elements.
 */
export function relationLabels(roots: readonly RawNode[]): Map<number, string> {
  const out = new Map<number, string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.labelledBy !== undefined && present(node.title) && !isHidden(node))
      for (const h of node.labelledBy) out.set(h, node.title);
    if (node.children) for (const c of node.children) stack.push(c);
  }
  return out;
}

/**
 * The container whose children a field's label is looked for among: its
 * parent, or above a nameless wrapper around it, up to two (the rule of
 * inferLabels' first pass). `path`: the field's ancestors, the root first.
 */
export function labelHolder(path: readonly RawNode[]): RawNode | undefined {
  let h = path.length - 1;
  for (let level = 0; level < 2 && h > 0 && isWrapper(path[h]!); level++) h--;
  return path[h];
}
