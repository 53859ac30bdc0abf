/**
 * Which view of a plan prints: the whole tree, an outline (`depth`,
 * `skeleton`), or the fullest rendering that fits a token budget
 * (`maxTokens`): the whole, then its long texts cut, then skeletons with the
 * focused branch and the rows of lists open, at decreasing depth, all in the
 * style asked for (one style per conversation: an agent finds and reads by
 * the role words it has seen). The plan is made
 * once; each try only filters its lines and formats them (outline.ts), so a
 * budget costs a few formatting passes, never a second walk of the tree.
 */
import { invalidArgument } from "../model/errors.js";
import type { ViewSummary } from "../observe/snapshot-types.js";
import type { Style } from "./format.js";
import type { Line } from "./lines.js";
import {
  collapsedLine,
  type LineTree,
  lineTree,
  type Openings,
  type OutlineView,
  openings,
  outline,
  SKELETON_TEXT,
  skeletonSpec,
  union,
  type ViewSpec,
} from "./outline.js";
import { estimateTokens } from "./tokens.js";

export interface ViewOptions {
  /**
   * Print the tree down to this depth (0: the window's own line). A container
   * cut there ends its line with what it holds, `(+37 elements)`, and keeps
   * its index: a snapshot with `root` set to it opens it.
   */
  depth?: number;
  /** Pick a depth that shows the window's regions, with the branch that holds focus open. */
  skeleton?: boolean;
  /**
   * The fullest rendering whose estimated o200k tokens fit (tokens.ts), in the
   * style asked for: the whole, then its texts cut at 80 characters, then
   * skeletons at decreasing depth; the last line says what was cut or collapsed.
   */
  maxTokens?: number;
}

/** Fewest tokens a budget may ask for: the header, the window's line and the closing line need about this. */
export const MIN_MAX_TOKENS = 60;
const MAX_VIEW_DEPTH = 512;

export function normaliseViewOptions(options: ViewOptions): ViewOptions {
  const out: ViewOptions = {};
  const { depth, skeleton, maxTokens } = options;
  if (depth !== undefined) {
    if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 0 || depth > MAX_VIEW_DEPTH)
      throw invalidArgument(
        `depth must be a whole number from 0 to ${MAX_VIEW_DEPTH}, got ${String(depth)}`,
        "depth 2 prints the window and two levels below it",
      );
    out.depth = depth;
  }
  if (skeleton !== undefined) {
    if (typeof skeleton !== "boolean")
      throw invalidArgument(`skeleton must be true or false, got ${String(skeleton)}`);
    if (skeleton) out.skeleton = true;
  }
  if (maxTokens !== undefined) {
    if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < MIN_MAX_TOKENS)
      throw invalidArgument(
        `maxTokens must be a whole number of at least ${MIN_MAX_TOKENS}, got ${String(maxTokens)}`,
        "maxTokens 500 keeps a snapshot to about 500 tokens",
      );
    out.maxTokens = maxTokens;
  }
  if (out.depth !== undefined && out.skeleton === true)
    throw invalidArgument("pass depth or skeleton, not both", "skeleton picks its own depth");
  return out;
}

export type { ViewSummary } from "../observe/snapshot-types.js";

export interface ChosenView {
  style: Style;
  lines: Line[];
  closing?: string;
  /** within[index]: the collapsed line a record is inside, or -1; absent when every record printed. */
  within?: Int32Array;
  summary?: ViewSummary;
}

/**
 * Formats a candidate into the whole text, header to closing line (index.ts).
 * `headerCut`: the most characters of each text the header prints (a budget's
 * skeletons cut a long window title as they cut the lines' texts).
 */
export type Compose = (
  style: Style,
  lines: Line[],
  closing: string | undefined,
  headerCut?: number,
) => string;

function outlined(
  tree: LineTree,
  spec: ViewSpec,
  style: Style,
  kind: ViewSummary["kind"],
  lead: string,
): ChosenView & { view: OutlineView } {
  const view = outline(tree, spec);
  const closing = collapsedLine(view, tree.records, lead);
  const chosen: ChosenView & { view: OutlineView } = {
    style,
    lines: view.lines,
    view,
    summary: { kind, depth: spec.depth, hidden: view.hidden, collapsed: view.collapsed },
  };
  if (closing !== undefined) chosen.closing = closing;
  if (view.hidden > 0) chosen.within = view.within;
  return chosen;
}

/**
 * The lines to print for these view options, in `style`, the one asked for
 * (a budget never prints the other).
 */
export function chooseView(
  lines: Line[],
  focusedIndex: number | undefined,
  style: Style,
  view: ViewOptions,
  compose: Compose,
): { chosen: ChosenView; text: string } {
  if (view.depth === undefined && view.skeleton !== true && view.maxTokens === undefined) {
    return { chosen: { style, lines }, text: compose(style, lines, undefined) };
  }
  const tree = lineTree(lines, focusedIndex);
  const open = openings(tree);
  const asked: ViewSpec | undefined =
    view.skeleton === true
      ? skeletonSpec(tree, open)
      : view.depth !== undefined
        ? { depth: view.depth, open: new Set() }
        : undefined;
  if (view.maxTokens === undefined) {
    const chosen = outlined(tree, asked!, style, "outline", "Outline: ");
    return { chosen, text: compose(style, chosen.lines, chosen.closing) };
  }
  return fitBudget(tree, open, style, asked, view.maxTokens, compose);
}

interface Try {
  chosen: ChosenView;
  text: string;
  tokens: number;
}

function fitBudget(
  tree: LineTree,
  open: Openings,
  style: Style,
  asked: ViewSpec | undefined,
  budget: number,
  compose: Compose,
): { chosen: ChosenView; text: string } {
  const attempt = (chosen: ChosenView, headerCut?: number): Try => {
    const text = compose(chosen.style, chosen.lines, chosen.closing, headerCut);
    return { chosen, text, tokens: estimateTokens(text) };
  };
  const lead = `Shortened to fit ${budget} tokens: `;
  const tryOutline = (spec: ViewSpec, s: Style, said = lead): Try =>
    attempt(outlined(tree, spec, s, "budget", said), SKELETON_TEXT);
  const done = (t: Try): { chosen: ChosenView; text: string } => {
    const summary: ViewSummary = t.chosen.summary ?? { kind: "budget", hidden: 0, collapsed: 0 };
    t.chosen.summary = {
      ...summary,
      kind: asked !== undefined ? summary.kind : "budget",
      maxTokens: budget,
      tokens: t.tokens,
    };
    return { chosen: t.chosen, text: t.text };
  };

  // Every try is in the asked style: a budget shortens by cutting texts and collapsing lines,
  // never by printing the other style, whose role words an agent did not read ("button" for
  // "push button") and could not find by (issue 33 §6).
  // 1. What was asked, whole: the tree (or the asked outline).
  const whole =
    asked === undefined
      ? attempt({ style, lines: tree.lines })
      : attempt(outlined(tree, asked, style, "outline", "Outline: "));
  if (whole.tokens <= budget) return done(whole);
  // 2. Every element, its long texts cut: a document's or a field's text is often most of a
  // window's tokens (a save sheet over a letter), and the controls around it are what an agent acts on.
  if (asked === undefined) {
    const cut = outline(tree, { depth: tree.maxDepth, open: new Set(), textCut: SKELETON_TEXT });
    if (cut.lines.some((line, i) => line !== tree.lines[i])) {
      const t = attempt(
        {
          style,
          lines: cut.lines,
          closing: `(${lead}texts longer than ${SKELETON_TEXT} characters are cut; every element printed.)`,
          summary: { kind: "budget", hidden: 0, collapsed: 0 },
        },
        SKELETON_TEXT,
      );
      if (t.tokens <= budget) return done(t);
    }
  }
  // 3. Skeletons at decreasing depth: the deepest that fits (a deeper view prints a superset of
  // lines), first with the focused branch, the paths to regions and the lists open, then with
  // less opened: no regions' paths, then no lists, then nothing but the depth; of these, the
  // one that prints the most.
  const top = Math.min(asked?.depth ?? tree.maxDepth, tree.maxDepth);
  const everything = union(open.focus, open.regions, open.lists);
  const families: { opened: Set<number>; keep?: Set<number> }[] = [
    { opened: everything },
    { opened: union(open.focus, open.lists) },
    { opened: open.focus },
    { opened: new Set<number>() },
    // Crowds thinned to their regions and the focused branch (a flat window's dozens of controls).
    { opened: everything, keep: open.keep },
    { opened: union(open.focus, open.regions), keep: open.keep },
  ];
  // The smallest outline tried, for when none fits.
  let smallest: { spec: ViewSpec; tokens: number } | undefined;
  let fullest: Try | undefined;
  for (const { opened, keep } of families) {
    let lo = 0;
    let hi = top;
    let best: Try | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const spec: ViewSpec = { depth: mid, open: opened, textCut: SKELETON_TEXT };
      if (keep !== undefined) spec.keep = keep;
      const t = tryOutline(spec, style);
      if (t.tokens <= budget) {
        best = t;
        lo = mid + 1;
      } else {
        hi = mid - 1;
        if (mid === 0 && (smallest === undefined || t.tokens < smallest.tokens))
          smallest = { spec, tokens: t.tokens };
      }
    }
    // The fullest that fits: the one that leaves the fewest elements inside collapsed lines.
    if (
      best !== undefined &&
      (fullest === undefined || best.chosen.summary!.hidden < fullest.chosen.summary!.hidden)
    )
      fullest = best;
  }
  if (fullest !== undefined) return done(fullest);
  // Nothing fits (a header or backend notes the budget cannot shorten): the smallest outline,
  // whose closing line says so and about how many tokens it takes, instead of claiming the
  // budget was met. The figure is part of the text it counts, so it is settled in a few rounds.
  const least = smallest!;
  let about = least.tokens;
  let t: Try | undefined;
  for (let round = 0; round < 3 && t?.tokens !== about; round++) {
    if (t !== undefined) about = t.tokens;
    const said = `Could not fit ${budget} tokens: the smallest outline is about ${about}`;
    t = tryOutline(least.spec, style, `${said}; `);
    // A window with nothing collapsed has no closing line of its own: this one says it alone.
    if (t.chosen.closing === undefined) t = attempt({ ...t.chosen, closing: `(${said}.)` }, SKELETON_TEXT);
  }
  return done(t!);
}
