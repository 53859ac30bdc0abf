/**
 * The planner walks a validated raw tree once and decides, for every node,
 * whether it prints, under which index, at which depth, and with which
 * record. Its output (lines + records) is what both styles format, so the
 * indices and records of the tree and compact styles are the same by
 * construction.
 */

import type { RawNode, RawSnapshot, Rect } from "../model/model.js";
import { copyOcrMark, HIDDEN_COORDINATE } from "../model/model.js";
import { hasMeaningfulAction, hasPressAction, secondaryActions } from "./actions.js";
import { type Identity, IdentityCounter, identify } from "./identity.js";
import {
  buildLine,
  type Line,
  type LineInput,
  type LineName,
  relativeFrame,
  rowTexts,
  textLine,
  traitsOf,
  visibleIdentifier,
} from "./lines.js";
import type { CaptureProof, ElementRecord, IdentityPredicate, PathRoot, Synthetic } from "./records.js";
import {
  isCell,
  isColumn,
  isGenericContainer,
  isHidden,
  isInteractive,
  isItemList,
  isLink,
  isList,
  isRow,
  isScrollArea,
  isStaticText,
  isWebArea,
  roleText,
} from "./roles.js";
import { present, sanitize, type TextLimit } from "./sanitize.js";
import { type SecureFields, secureFields } from "./secure.js";
import { nodeText, textSummary } from "./summary.js";

export interface PlanOptions {
  textLimit: TextLimit;
  maxNodes: number;
  maxDepth: number;
  /** A text-entry field named like a password is secure (roles.ts secureByName). */
  secureNames: boolean;
}

export interface RenderCut {
  nodeLimit: boolean;
  depthLimit: boolean;
  /** Elements of the observation that were not printed because of a limit. */
  notShown: number;
}

/** Where a subtree's plan starts (a `root` snapshot): the element, and its path from its root. */
export interface PlanStart {
  node: RawNode;
  root: PathRoot;
  path: number[];
}

export interface Plan {
  lines: Line[];
  records: ElementRecord[];
  cut: RenderCut;
  /** Index of the focused element's line, when it printed. */
  focusedIndex?: number;
  focusedNode?: RawNode;
  /** The tree's secure fields (secure.ts): whatever reads a node's text asks it. */
  secure: SecureFields;
}

const MAX_ROWS = 20;
const MAX_CELLS = 100;
const ANON_MAX_W = 240;
const ANON_MAX_H = 120;

/** How a node prints when the planner decides for it; every field set, so emit reads one shape. */
interface EmitOptions {
  role: string | undefined;
  compactRole: string | undefined;
  withFrame: boolean;
  linkUrl: string | undefined;
  synthetic: Synthetic;
  nameText: string | undefined;
}

const PLAIN: EmitOptions = {
  role: undefined,
  compactRole: undefined,
  withFrame: false,
  linkUrl: undefined,
  synthetic: false,
  nameText: undefined,
};

const AS_GROUP = printAs({ role: "container", compactRole: "group" });
const AS_BUTTON = printAs({ role: "button", compactRole: "button", withFrame: true });

function printAs(parts: Partial<EmitOptions>): EmitOptions {
  return {
    role: parts.role,
    compactRole: parts.compactRole,
    withFrame: parts.withFrame === true,
    linkUrl: parts.linkUrl,
    synthetic: parts.synthetic ?? false,
    nameText: parts.nameText,
  };
}

interface Ctx {
  root: PathRoot;
  inWeb: boolean;
  /** What of the window is visible at this point: the window clipped by scroll areas and lists. */
  clip: Rect | undefined;
}

function intersect(a: Rect | undefined, b: Rect | undefined): Rect | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const r = Math.min(a.x + a.w, b.x + b.w);
  const btm = Math.min(a.y + a.h, b.y + b.h);
  return { x, y, w: Math.max(0, r - x), h: Math.max(0, btm - y) };
}

function overlaps(frame: Rect, clip: Rect): boolean {
  return (
    frame.x < clip.x + clip.w &&
    frame.x + frame.w > clip.x &&
    frame.y < clip.y + clip.h &&
    frame.y + frame.h > clip.y
  );
}

/**
 * A list's items: its rows (a table's, an outline's, an item list's), a
 * row-less table's cells, and every child of an item list that has no rows
 * (macOS lists of groups). A header or caption beside rows is no item: the
 * list counts its rows, not its children.
 */
function isItemOf(child: RawNode, rowless: boolean /* an item list without rows */): boolean {
  return rowless || isRow(child) || isCell(child);
}

function hasRows(list: RawNode): boolean {
  return (list.children ?? []).some((c) => isRow(c));
}

function listItems(list: RawNode): RawNode[] {
  const rowless = isItemList(list) && !hasRows(list);
  return (list.children ?? []).filter((c) => isItemOf(c, rowless) && !isHidden(c));
}

/**
 * A table without row objects (GTK3 tree views list their cells directly):
 * consecutive cells on one line (same top and height) make one row. Undefined
 * when the list has other items, a cell has no frame to group by, or a cell
 * holds elements of its own: a GTK 4 grid view's cells are items side by side
 * (Files' icons, each a file), each printed on its own line.
 */
function cellRows(items: RawNode[]): RawNode[][] | undefined {
  if (
    items.length === 0 ||
    !items.every((c) => isCell(c) && c.frame !== undefined && (c.children?.length ?? 0) === 0)
  )
    return undefined;
  const rows: RawNode[][] = [];
  let cur: RawNode[] | undefined;
  for (const c of items) {
    const head = cur?.[0]?.frame;
    if (cur !== undefined && head !== undefined && head.y === c.frame!.y && head.h === c.frame!.h)
      cur.push(c);
    else {
      cur = [c];
      rows.push(cur);
    }
  }
  return rows;
}

/**
 * A cell's text in its row's line: its name or value, else on/off for a check-box column. A
 * spreadsheet cell is named by its address and shows its text as its value: both, and an empty
 * one not at all.
 */
function cellText(cell: RawNode): string | undefined {
  if (typeof cell.value === "string" && present(cell.title)) {
    if (!present(cell.value)) return undefined;
    if (cell.value !== cell.title) return `${cell.title} ${cell.value}`;
  }
  const t = nodeText(cell);
  if (t !== undefined) return t;
  const checked = cell.states?.checked;
  return checked === undefined ? undefined : checked === true ? "on" : "off";
}

/** Platforms repeat action names (a slider's AXIncrement twice); a record lists each once. */
function uniqueActions(actions: string[]): string[] {
  // A handful of names: a scan for a repeat is cheaper than a Set per element.
  for (let i = 1; i < actions.length; i++) if (actions.indexOf(actions[i]!) < i) return [...new Set(actions)];
  return actions.slice();
}

/**
 * A wrapper's frame when the backend did not read it (the Linux walk skips the
 * extents of nameless wrappers with nothing to act on, which print only as a
 * text summary or a web section): the union of its visible descendants'
 * frames, the nearest ones with a frame on each branch.
 */
function unionFrame(node: RawNode): Rect | undefined {
  let box: { x0: number; y0: number; x1: number; y1: number } | undefined;
  const stack: { n: RawNode; depth: number }[] = (node.children ?? []).map((n) => ({ n, depth: 1 }));
  while (stack.length > 0) {
    const { n, depth } = stack.pop()!;
    if (isHidden(n)) continue;
    const f = n.frame;
    if (f === undefined) {
      if (depth < 4) for (const c of n.children ?? []) stack.push({ n: c, depth: depth + 1 });
      continue;
    }
    box =
      box === undefined
        ? { x0: f.x, y0: f.y, x1: f.x + f.w, y1: f.y + f.h }
        : {
            x0: Math.min(box.x0, f.x),
            y0: Math.min(box.y0, f.y),
            x1: Math.max(box.x1, f.x + f.w),
            y1: Math.max(box.y1, f.y + f.h),
          };
  }
  return box === undefined ? undefined : { x: box.x0, y: box.y0, w: box.x1 - box.x0, h: box.y1 - box.y0 };
}

function subtreeSize(node: RawNode): number {
  let n = 0;
  const stack: RawNode[] = [node];
  while (stack.length > 0) {
    const cur = stack.pop()!;
    n++;
    if (cur.children) for (const c of cur.children) stack.push(c);
  }
  return n;
}

class Planner {
  readonly lines: Line[] = [];
  readonly records: ElementRecord[] = [];
  readonly cut: RenderCut = { nodeLimit: false, depthLimit: false, notShown: 0 };
  focusedIndex: number | undefined;
  private readonly counts = new IdentityCounter();
  /** Child positions from the path root to the node being visited; records copy it. */
  private readonly path: number[] = [];
  private readonly shownRows = new Map<RawNode, Set<RawNode>>();
  /** Row-less tables' cells grouped into rows (cellRows). */
  private readonly cellRowsOf = new Map<RawNode, RawNode[][]>();
  /** A shown cell row's first cell → its other cells, which print as `| b | c` on the first cell's line. */
  private readonly rowRest = new Map<RawNode, RawNode[]>();
  private readonly complete: boolean;
  /** Label handles (AT-SPI LABELLED_BY) to the name they gave the element they label. */
  private readonly labelFor = new Map<number, string>();
  /** The secure fields, and unnamed fields' names inferred from the labels beside them (labels.ts). */
  secure: SecureFields | undefined;

  constructor(
    private readonly snap: RawSnapshot,
    private readonly opts: PlanOptions,
    readonly focusedNode: RawNode | undefined,
  ) {
    this.complete = snap.walk.ended === "complete";
  }

  /** Counts every node's identity so a record can say whether it is proven unique. */
  countIdentities(root: RawNode): void {
    const stack: RawNode[] = [root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      this.counts.add(node);
      if (node.labelledBy !== undefined && present(node.title) && !isHidden(node))
        for (const h of node.labelledBy) this.labelFor.set(h, node.title);
      if (node.children) for (const c of node.children) stack.push(c);
    }
  }

  /** After countIdentities: the relation labels are known, so inference leaves them to their fields. */
  judgeFields(root: RawNode): SecureFields {
    this.secure = secureFields(root, this.labelFor, this.opts.secureNames);
    return this.secure;
  }

  private proof(id: IdentityPredicate): CaptureProof {
    const matches = this.counts.count(id);
    if (!this.complete) return { unique: false, reason: "incomplete", matches };
    return matches === 1 ? { unique: true } : { unique: false, reason: "duplicates", matches };
  }

  /** A limit that cut the rendering leaves part of the window unseen: no record is proven unique then. */
  finishProofs(): void {
    if (!this.cut.nodeLimit && !this.cut.depthLimit) return;
    for (const rec of this.records) {
      const proof = rec.proof;
      const matches = proof.unique === true ? 1 : proof.matches;
      rec.proof = { unique: false, reason: "incomplete", matches };
    }
  }

  private readonly roleTexts = new Map<string, Map<string | undefined, string>>();

  /** Role text by role and role description; few distinct pairs per window, so it is cached. */
  private roleOf(node: RawNode): string {
    let byDescription = this.roleTexts.get(node.role);
    if (byDescription === undefined) {
      byDescription = new Map();
      this.roleTexts.set(node.role, byDescription);
    }
    let text = byDescription.get(node.roleDescription);
    if (text === undefined) {
      text = sanitize(roleText(node), this.opts.textLimit);
      byDescription.set(node.roleDescription, text);
    }
    return text;
  }

  private get nextIndex(): number {
    return this.records.length;
  }

  /** False when a limit stops this node; the node's subtree is then counted as not shown. */
  private admit(node: RawNode, depth: number): boolean {
    if (this.records.length >= this.opts.maxNodes) {
      this.cut.nodeLimit = true;
      this.cut.notShown += subtreeSize(node);
      return false;
    }
    if (depth > this.opts.maxDepth) {
      this.cut.depthLimit = true;
      this.cut.notShown += subtreeSize(node);
      return false;
    }
    return true;
  }

  private addRecord(
    node: RawNode,
    role: string,
    ctx: Ctx,
    synthetic: Synthetic,
    name: string | undefined,
    ident: Identity,
    secondary: { raw: string[]; pretty: string[] },
  ): ElementRecord {
    const window = this.snap.window.frame;
    const identity = ident.id;
    const secure = this.secure!.has(node);
    const rec: ElementRecord = {
      index: this.nextIndex,
      role: node.role,
      roleText: role,
      actions: node.actions ? uniqueActions(node.actions) : [],
      secondaryActions: secondary,
      settable: node.settable === true,
      synthetic,
      secure,
      pathRoot: ctx.root,
      path: this.path.slice(),
      identity,
      proof: this.proof(identity),
    };
    if (node.handle !== undefined) rec.handle = node.handle;
    if (node.subrole !== undefined) rec.subrole = node.subrole;
    if (name !== undefined) rec.title = name;
    if (node.description !== undefined) rec.description = node.description;
    if (node.identifier !== undefined) rec.identifier = node.identifier;
    if (node.ocr !== undefined) rec.ocr = copyOcrMark(node.ocr);
    const f = node.frame ?? (isGenericContainer(node) ? unionFrame(node) : undefined);
    if (f !== undefined && f.x !== HIDDEN_COORDINATE && f.y !== HIDDEN_COORDINATE) {
      rec.screenFrame = { ...f };
      rec.frame = relativeFrame(f, window);
      rec.clickPoint = synthetic
        ? // Merged text: the leading point, so the click lands on the first text, not between texts.
          { x: f.x + Math.min(Math.max(0.3 * f.w, 20), Math.max(f.w - 4, 0)), y: f.y + f.h / 2 }
        : { x: f.x + f.w / 2, y: f.y + f.h / 2 };
    }
    if (node === this.focusedNode && this.focusedIndex === undefined) this.focusedIndex = rec.index;
    this.records.push(rec);
    return rec;
  }

  private emit(node: RawNode, depth: number, ctx: Ctx, opts: EmitOptions = PLAIN): Line {
    const role = opts.role ?? this.roleOf(node);
    const ident = identify(node);
    const label = ident.name === undefined ? this.secure!.labels?.get(node) : undefined;
    const name: LineName | undefined =
      opts.nameText !== undefined
        ? { text: opts.nameText, from: "title" }
        : label !== undefined
          ? { text: label, from: "inferred" }
          : ident.name;
    const secondary = secondaryActions(node);
    const rec = this.addRecord(node, role, ctx, opts.synthetic, name?.text, ident, secondary);
    if (label !== undefined) rec.nameSource = "inferred";
    // One shape for every line, links included: a spread copy of this object for a link
    // made buildLine's property reads megamorphic, and cost a tenth of the render.
    const input: LineInput = {
      node,
      depth,
      index: rec.index,
      role,
      compactRole: opts.compactRole,
      synthetic: opts.synthetic !== false,
      name,
      limit: this.opts.textLimit,
      window: this.snap.window.frame,
      withFrame: opts.withFrame,
      secondary: secondary.pretty,
      secure: rec.secure,
      linkUrl: opts.linkUrl,
    };
    const line = buildLine(input);
    this.lines.push(line);
    return line;
  }

  /**
   * An unselected row's other texts, on one unnumbered line that starts with
   * "| " so it can never read as a numbered element line.
   */
  private rowTextLine(texts: string[], depth: number): void {
    const t = texts.map((x) => sanitize(x, this.opts.textLimit)).join(" | ");
    this.lines.push(textLine(depth, `| ${t}`));
  }

  visitRoot(node: RawNode, root: PathRoot): void {
    const ctx: Ctx = {
      root,
      inWeb: isWebArea(node),
      clip: root === "window" ? this.snap.window.frame : undefined,
    };
    if (!this.admit(node, 0)) return;
    this.path.length = 0;
    // A window with no accessible name is known by its window title (on Linux, the X title).
    const winTitle = this.snap.window.title;
    const untitledWindow = root === "window" && !present(node.title) && present(winTitle);
    this.emit(node, 0, ctx, untitledWindow ? printAs({ nameText: winTitle }) : PLAIN);
    this.visitChildren(node, 1, ctx, root === "menuBar");
  }

  /**
   * One element's subtree at depth 0, printed as the whole plan would print
   * it there: the context (web content, the visible part) is its ancestors'.
   */
  visitSubtree(start: PlanStart): void {
    let node: RawNode | undefined = start.root === "window" ? this.snap.root : this.snap.menuBar;
    if (node === undefined) return;
    let ctx: Ctx = {
      root: start.root,
      inWeb: isWebArea(node),
      clip: start.root === "window" ? this.snap.window.frame : undefined,
    };
    for (let i = 0; i < start.path.length; i++) {
      if (i > 0) {
        const clips = isScrollArea(node) || isList(node);
        ctx = {
          root: ctx.root,
          inWeb: ctx.inWeb || isWebArea(node),
          clip: clips ? intersect(ctx.clip, node.frame) : ctx.clip,
        };
      }
      node = node.children?.[start.path[i]!];
      if (node === undefined) return;
    }
    this.path.length = 0;
    this.path.push(...start.path);
    this.visit(start.node, 0, ctx);
  }

  private visitChildren(node: RawNode, depth: number, ctx: Ctx, skipApple = false): void {
    const children = node.children;
    if (!children) return;
    // In a list only the visible rows print; its other children (headers, columns) print as usual.
    const shown = isList(node) ? this.visibleRows(node, ctx.clip) : undefined;
    const rowless = shown !== undefined && isItemList(node) && !hasRows(node);
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (skipApple && child.title === "Apple") continue;
      if (shown !== undefined && isItemOf(child, rowless) && !shown.has(child)) continue;
      // A cell row prints once, as its first cell's line.
      if (shown !== undefined && this.cellRowsOf.has(node) && isCell(child) && !this.rowRest.has(child))
        continue;
      this.path.push(i);
      this.visit(child, depth, ctx);
      this.path.pop();
    }
  }

  /** Rows that intersect the visible part of their list, at most 20; the first 20 when none has a frame. */
  private visibleRows(list: RawNode, clip: Rect | undefined): Set<RawNode> {
    const cached = this.shownRows.get(list);
    if (cached !== undefined) return cached;
    const rows = listItems(list);
    const grouped = cellRows(rows);
    if (grouped !== undefined) {
      // A row-less table (GTK3): whole rows of cells, a row shown when one of its cells is.
      const visibleGroups =
        clip === undefined ? grouped : grouped.filter((g) => g.some((c) => overlaps(c.frame!, clip)));
      const shown = new Set<RawNode>();
      for (const g of visibleGroups.slice(0, MAX_ROWS)) {
        for (const c of g) shown.add(c);
        this.rowRest.set(g[0]!, g.slice(1));
      }
      this.cellRowsOf.set(list, grouped);
      this.shownRows.set(list, shown);
      return shown;
    }
    const measurable = clip !== undefined && rows.some((r) => r.frame !== undefined);
    const visible = measurable ? rows.filter((r) => r.frame !== undefined && overlaps(r.frame, clip!)) : rows;
    // A table without rows (GTK) lists cells: the cap then counts cells, a few per row.
    const cap = rows.length > 0 && rows.every((r) => isCell(r)) ? MAX_CELLS : MAX_ROWS;
    const shown = new Set(visible.slice(0, cap));
    this.shownRows.set(list, shown);
    return shown;
  }

  private listSuffix(list: RawNode, clip: Rect | undefined): string | undefined {
    const shown = this.visibleRows(list, clip);
    const grouped = this.cellRowsOf.get(list);
    // Rows of cells: each row counts once, by its first cell. A backend that read only some
    // rows (GTK3 tree views: the rows on screen) gives the list's rowCount and each cell's rowIndex.
    const rows = grouped !== undefined ? grouped.map((g) => g[0]!) : listItems(list);
    const total = list.rowCount ?? rows.length;
    if (total === 0) return undefined;
    const shownCount = rows.filter((r) => shown.has(r)).length;
    if (shownCount >= total) return undefined;
    if (shownCount === 0) return `(showing none of ${total} items)`;
    // Positions are 0-based, as in the recorded official output "(showing 0-19 of 161 items)".
    const positions = rows.map((r, i) => (shown.has(r) ? (r.rowIndex ?? i) : -1)).filter((p) => p >= 0);
    return `(showing ${Math.min(...positions)}-${Math.max(...positions)} of ${total} items)`;
  }

  /**
   * A label that only names another element: its text is that element's
   * name, and it has nothing of its own to act on or to hold.
   */
  private onlyNamesAnother(node: RawNode): boolean {
    if (this.labelFor.size === 0 || node.handle === undefined) return false;
    const named = this.labelFor.get(node.handle);
    if (named === undefined || !isStaticText(node)) return false;
    if ((node.actions?.length ?? 0) > 0 || (node.children?.length ?? 0) > 0) return false;
    const text = nodeText(node);
    // Several labels name one element with their texts joined by spaces.
    return text !== undefined && ` ${named.trim()} `.includes(` ${text.trim()} `);
  }

  private visit(node: RawNode, depth: number, parentCtx: Ctx): void {
    if (isHidden(node) || isColumn(node) || this.onlyNamesAnother(node)) return;
    const entersWeb = !parentCtx.inWeb && isWebArea(node);
    const clips = isScrollArea(node) || isList(node);
    const ctx: Ctx =
      entersWeb || clips
        ? {
            root: parentCtx.root,
            inWeb: parentCtx.inWeb || entersWeb,
            clip: clips ? intersect(parentCtx.clip, node.frame) : parentCtx.clip,
          }
        : parentCtx;

    if (isLink(node) && present(node.url)) {
      if (!this.admit(node, depth)) return;
      // A link prints as [text](url) and stands for its children.
      this.emit(node, depth, ctx, printAs({ linkUrl: node.url }));
      return;
    }

    if (isGenericContainer(node)) {
      const summary = textSummary(node);
      if (summary !== undefined) {
        if (!this.admit(node, depth)) return;
        if (summary.images.length === 0) {
          this.emit(
            node,
            depth,
            ctx,
            printAs({ role: "container", nameText: summary.text, synthetic: "text-summary" }),
          );
        } else {
          this.emit(node, depth, ctx, AS_GROUP);
          if (!this.admit(node, depth + 1)) return;
          this.emit(
            node,
            depth + 1,
            ctx,
            printAs({ role: "text", compactRole: "text", nameText: summary.text, synthetic: "summary-text" }),
          );
          for (const img of summary.images) {
            const base = this.path.length;
            this.path.push(...img.path);
            this.visit(img.node, depth + 1, ctx);
            this.path.length = base;
          }
        }
        return;
      }
      if (this.isAnonymousTarget(node)) {
        if (!this.admit(node, depth)) return;
        this.emit(node, depth, ctx, AS_BUTTON);
        this.visitChildren(node, depth + 1, ctx);
        return;
      }
      if (this.isElidable(node, ctx)) {
        this.visitChildren(node, depth, ctx);
        return;
      }
    }

    if (!this.admit(node, depth)) return;
    const line = this.emit(node, depth, ctx);
    const rest = this.rowRest.get(node);
    if (rest !== undefined) {
      // A row of a row-less table: the first cell's line, then the other cells'
      // texts on one unnumbered `| b | c` line, as an unselected row's texts print.
      const texts = rest.map(cellText).filter((t): t is string => t !== undefined && present(t));
      if (texts.length > 0) this.rowTextLine(texts, depth + 1);
    }
    if (isList(node)) {
      const suffix = this.listSuffix(node, ctx.clip);
      if (suffix !== undefined) line.suffix = suffix;
    }
    if (ctx.inWeb && isCell(node) && present(node.title)) {
      // A web table's cell is named by its text: the texts inside say it again, only its controls print.
      this.visitInteractive(node, depth + 1, ctx, 0);
      return;
    }
    if (isRow(node) && node.states?.selected !== true && !(ctx.inWeb && holdsCells(node))) {
      // An unselected row is one line: its other texts follow unnumbered, its children hide.
      // Not a web table's row: a page acts on its cells (a click handler, a link inside), so
      // each cell keeps a number of its own under the row's line.
      const texts: string[] = [];
      rowTexts(node, texts, 64, this.secure!.has);
      const extra = texts.slice(1).filter(present);
      if (extra.length > 0) this.rowTextLine(extra, depth + 1);
      this.visitInteractive(node, depth + 1, ctx, 0);
      return;
    }
    this.visitChildren(node, depth + 1, ctx);
  }

  /**
   * An unselected row's controls: texts fold into the row line, but a switch,
   * field or disclosure triangle keeps its number, as the recorded official
   * output shows ("63 row (selectable) ..." then "64 switch Value: on").
   */
  private visitInteractive(node: RawNode, depth: number, ctx: Ctx, level: number): void {
    const children = node.children;
    if (!children || level > 8) return;
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (isHidden(child)) continue;
      this.path.push(i);
      if (isInteractive(child)) this.visit(child, depth, ctx);
      else this.visitInteractive(child, depth, ctx, level + 1);
      this.path.pop();
    }
  }

  private isAnonymousTarget(node: RawNode): boolean {
    const f = node.frame;
    return (
      f !== undefined &&
      f.w <= ANON_MAX_W &&
      f.h <= ANON_MAX_H &&
      hasPressAction(node) &&
      !present(node.title) &&
      !present(node.description) &&
      !(typeof node.value === "string" ? present(node.value) : node.value !== undefined)
    );
  }

  private isElidable(node: RawNode, ctx: Ctx): boolean {
    const childCount = node.children?.length ?? 0;
    if (ctx.inWeb && childCount > 1) return false;
    const hasText =
      present(node.title) ||
      present(node.description) ||
      present(node.help) ||
      (node.value !== undefined && String(node.value).length > 0);
    if (hasText || visibleIdentifier(node) !== undefined) return false;
    const traits = traitsOf(node);
    if (traits.length === 0 && !hasMeaningfulAction(node)) return true;
    return (
      childCount === 1 &&
      (traits.length === 0 || (traits.length === 2 && traits[0] === "settable" && traits[1] === "string"))
    );
  }
}

/** A row whose children include table cells (a web table's row, not a list item). */
function holdsCells(row: RawNode): boolean {
  return (row.children ?? []).some((c) => isCell(c));
}

/**
 * Finds the focused element: the last node in reading order that says it has
 * focus, so a focused field wins over the focused window that holds it.
 */
function findFocused(roots: RawNode[]): RawNode | undefined {
  let found: RawNode | undefined;
  for (const root of roots) {
    const stack: RawNode[] = [root];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.states?.focused === true) found = node;
      const ch = node.children;
      if (ch) for (let i = ch.length - 1; i >= 0; i--) stack.push(ch[i]!);
    }
  }
  return found;
}

/** `start`: plan only that element's subtree (identities are still counted over the whole window). */
export function plan(snap: RawSnapshot, opts: PlanOptions, start?: PlanStart): Plan {
  const roots = snap.menuBar ? [snap.root, snap.menuBar] : [snap.root];
  const planner = new Planner(snap, opts, findFocused(roots));
  for (const r of roots) planner.countIdentities(r);
  const secure = planner.judgeFields(snap.root);
  if (start !== undefined) planner.visitSubtree(start);
  else {
    planner.visitRoot(snap.root, "window");
    if (snap.menuBar) planner.visitRoot(snap.menuBar, "menuBar");
  }
  planner.finishProofs();
  const result: Plan = { lines: planner.lines, records: planner.records, cut: planner.cut, secure };
  if (planner.focusedIndex !== undefined) result.focusedIndex = planner.focusedIndex;
  if (planner.focusedNode !== undefined) result.focusedNode = planner.focusedNode;
  return result;
}
