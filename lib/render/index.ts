/**
 * render(): a raw tree (any backend's, or a fixture's) to the numbered text an
 * agent reads and the record behind each number. Pure and synchronous: no
 * native call, no clock, so the same input always gives the same output.
 */

import type { RawSnapshot } from "../model/model.js";
import { validateRawSnapshot } from "../model/validate.js";
import { type ChosenView, chooseView, normaliseViewOptions, type ViewOptions } from "./budget.js";
import { closingLine, compactLines, footer, header, type Style, treeLine } from "./format.js";
import { compactStates, type Line } from "./lines.js";
import { normaliseRenderOptions, type RenderOptions } from "./options.js";
import { type Plan, type PlanStart, plan, type RenderCut } from "./plan.js";
import type { ElementRecord } from "./records.js";
import { present, sanitize } from "./sanitize.js";

export type { ViewOptions, ViewSummary } from "./budget.js";
export { MIN_MAX_TOKENS, normaliseViewOptions } from "./budget.js";
export type { Style } from "./format.js";
export {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_NODES,
  DEFAULT_TEXT_LIMIT,
  normaliseRenderOptions,
  type RenderOptions,
} from "./options.js";
export type { PlanStart, RenderCut } from "./plan.js";
export { secureByName } from "./roles.js";
export type { TextLimit } from "./sanitize.js";
export { estimateTokens, TOKEN_ESTIMATE_ERROR } from "./tokens.js";

export interface RenderResult {
  text: string;
  /** records[i].index === i: exactly the printed indices. */
  records: ElementRecord[];
  /** False when the walk or the rendering was cut by a limit or deadline. */
  complete: boolean;
  cut: RenderCut & { walk: RawSnapshot["walk"]["ended"] };
  /** Index of the focused element, when it printed. */
  focusedIndex?: number;
  /** The focused element's selected text, when it has one. */
  selectedText?: string;
  /** facts[i]: what the line of record i prints as value and states; a diff compares them. */
  facts: LineFacts[];
  /** The style printed: the one asked for (a token budget shortens within it). */
  style: Style;
  /** What an outline or a budget left out; absent when the whole tree printed. */
  view?: ChosenView["summary"];
  /** within[index]: the collapsed line whose element holds record `index`, or -1 (printed). */
  within?: Int32Array;
}

/** A subtree rendering (a `root` snapshot): where it starts, and the header line that says so. */
export interface RenderScope {
  start: PlanStart;
  /** `Subtree of element 12 (list "Files") of snapshot s…, window "Doc".` */
  headerLine: string;
}

/** The printed value and states of one numbered line (diff.ts compares them across snapshots). */
export interface LineFacts {
  /** The value as printed (secure values masked), or a nameless static text's text. */
  value?: string;
  /** Traits and states as printed, sorted: `checked`, `disabled`, `expanded`, `settable`... */
  states: string[];
}

function factsByIndex(lines: Line[], count: number): LineFacts[] {
  // Filled by the lines first: an empty fact is made only for an index no line printed.
  const out = new Array<LineFacts | undefined>(count);
  for (const line of lines) if (line.index >= 0 && line.index < count) out[line.index] = factsOf(line);
  for (let i = 0; i < count; i++) if (out[i] === undefined) out[i] = { states: [] };
  return out as LineFacts[];
}

/** Adds the strings of `from` that `to` lacks (a line has a handful: cheaper than a Set). */
function addUnique(to: string[], from: string[]): void {
  for (const s of from) if (!to.includes(s)) to.push(s);
}

function factsOf(line: Line): LineFacts {
  const value = line.valueSegment ?? line.value ?? (line.title === undefined ? line.name : undefined);
  const states: string[] = [];
  addUnique(states, line.traits);
  if (line.node) addUnique(states, compactStates(line.node, line.checked));
  states.sort();
  return value === undefined ? { states } : { value, states };
}

export function render(input: unknown, options?: RenderOptions & ViewOptions): RenderResult {
  const opts = normaliseRenderOptions(options);
  const view = normaliseViewOptions(options ?? {});
  const snap = validateRawSnapshot(input);
  return renderValidated(snap, opts, view);
}

function composeText(
  snap: RawSnapshot,
  p: Plan,
  opts: Required<RenderOptions>,
  style: Style,
  lines: Line[],
  viewClosing: string | undefined,
  scope: RenderScope | undefined,
  headerCut?: number,
): string {
  const limit = opts.textLimit;
  const cut = headerCut === undefined || (limit !== "max" && limit <= headerCut) ? limit : headerCut;
  const out = header(snap, style, cut);
  if (scope !== undefined) out.splice(style === "compact" ? 1 : 2, 0, scope.headerLine);
  if (style === "tree") {
    for (const line of lines) out.push(treeLine(line));
  } else {
    out.push(...compactLines(lines, opts.textLimit));
  }
  if (style === "tree") {
    const foot = footer(p, opts.textLimit);
    if (foot !== undefined) out.push("", foot);
  }
  for (const note of snap.walk.notes ?? []) out.push(`(${sanitize(note, opts.textLimit)})`);
  const closing = closingLine(snap, p, opts.maxNodes, opts.maxDepth);
  if (closing !== undefined) out.push(closing);
  if (viewClosing !== undefined) out.push(viewClosing);
  return out.join("\n");
}

/**
 * For callers that already hold a validated snapshot (the native layer validates once).
 * `view`: an outline or a budget (budget.ts); `scope`: only one element's subtree.
 */
export function renderValidated(
  snap: RawSnapshot,
  opts: Required<RenderOptions>,
  view: ViewOptions = {},
  scope?: RenderScope,
): RenderResult {
  const p = plan(snap, opts, scope?.start);
  const { chosen, text } = chooseView(
    p.lines,
    p.focusedIndex,
    opts.style,
    view,
    (style, lines, closing, headerCut) => composeText(snap, p, opts, style, lines, closing, scope, headerCut),
  );

  const complete = snap.walk.ended === "complete" && !p.cut.nodeLimit && !p.cut.depthLimit;
  const result: RenderResult = {
    text,
    records: p.records,
    facts: factsByIndex(p.lines, p.records.length),
    complete,
    cut: { ...p.cut, walk: snap.walk.ended },
    style: chosen.style,
  };
  if (chosen.summary !== undefined) result.view = chosen.summary;
  if (chosen.within !== undefined) result.within = chosen.within;
  if (p.focusedIndex !== undefined) result.focusedIndex = p.focusedIndex;
  const focused = p.focusedNode;
  if (focused !== undefined && present(focused.selectedText) && !p.secure.has(focused))
    result.selectedText = focused.selectedText;
  return result;
}
