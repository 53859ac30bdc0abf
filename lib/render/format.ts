/**
 * The two styles. Both format the same planned lines; only the text differs.
 *   tree:    `<tabs><index> <role>[ (<traits>)][ <title>][, <segment>]...`
 *   compact: `<2 spaces per depth><index>: <role> "<name>"[ value="<v>"][ <states>]`
 */
import type { RawSnapshot } from "../model/model.js";
import type { Style } from "../observe/snapshot-types.js";
import { compactStates, type Line } from "./lines.js";
import type { Plan } from "./plan.js";
import { compactRole } from "./roles.js";
import { cutEscaped, present, quoted, sanitize, sanitizeLabel, type TextLimit } from "./sanitize.js";

export type { Style } from "../observe/snapshot-types.js";

const COMPACT_NAME_LIMIT = 80;
const COMPACT_VALUE_LIMIT = 50;

/**
 * Segments after the role are joined with ", ". The spec asks for a comma only
 * before Value, Placeholder and Secondary Actions; the recorded official
 * outputs also put one before Help and ID ("Description: Categories, Help:
 * ...", "switch Value: on, ID: ..."), which is what is followed here.
 */
export function treeLine(line: Line): string {
  const tabs = indent(TABS, "\t", line.depth);
  if (line.index < 0) return tabs + (line.text ?? "");
  let out = `${tabs}${line.index}`;
  if (line.role.length > 0) out += ` ${line.role}`;
  if (line.traits.length > 0) out += ` (${line.traits.join(", ")})`;
  // The title, then the segments, after one space and between commas.
  let sep = " ";
  if (line.title !== undefined) {
    out += sep + line.title;
    sep = ", ";
  }
  for (const seg of line.segments) {
    out += sep + seg;
    sep = ", ";
  }
  if (line.suffix !== undefined) out += ` ${line.suffix}`;
  return out;
}

const TABS: string[] = [];
const SPACES: string[] = [];
/** Indents repeat on every line; the first 64 depths are made once. */
function indent(cache: string[], unit: string, depth: number): string {
  let s = cache[depth];
  if (s === undefined) {
    s = unit.repeat(depth);
    if (depth < 64) cache[depth] = s;
  }
  return s;
}

/** Text is already sanitised (a newline reads `\n`); only the quote itself needs escaping. */
function quote(text: string, limit: number): string {
  // Already sanitized: its escapes are whole after the cut.
  const shown = cutEscaped(text, limit);
  return shown.includes('"') ? `"${shown.replace(/"/g, '\\"')}"` : `"${shown}"`;
}

interface CompactView {
  line: Line;
  role: string;
  /** The line's name, else its description: the label a field or icon button is known by. */
  name: string | undefined;
  states: string[];
}

function compactView(line: Line, limit: TextLimit): CompactView {
  const node = line.node!;
  const description =
    line.name === undefined && present(node.description) ? sanitizeLabel(node.description, limit) : undefined;
  return {
    line,
    role: line.compactRole ?? sanitize(compactRole(node), limit),
    name: line.name ?? description,
    states: compactStates(node, line.checked),
  };
}

function compactLine({ line, role, states, name }: CompactView, depth: number): string {
  let out = `${indent(SPACES, "  ", depth)}${line.index}:`;
  if (role.length > 0) out += ` ${role}`;
  if (name !== undefined) out += ` ${quote(name, COMPACT_NAME_LIMIT)}`;
  if (line.label !== undefined) out += ` label=${quote(line.label, COMPACT_NAME_LIMIT)}`;
  if (line.value !== undefined && line.value !== line.name)
    out += ` value=${quote(line.value, COMPACT_VALUE_LIMIT)}`;
  if (states.length > 0) out += ` ${states.join(" ")}`;
  if (line.suffix !== undefined) out += ` ${line.suffix}`;
  return out;
}

/** Static text that nothing acts on: the tree style is where text is read. */
function isPlainText({ line, role, states }: CompactView): boolean {
  return (
    role === "text" &&
    !line.synthetic &&
    line.suffix === undefined &&
    states.length === 0 &&
    !line.segments.some((seg) => seg.startsWith("Secondary Actions:"))
  );
}

/** A plain group that says nothing: no name, value, state, trait or segment. */
function isSilentGroup({ line, role, states, name }: CompactView): boolean {
  return (
    role === "group" &&
    name === undefined &&
    line.suffix === undefined &&
    line.value === undefined &&
    states.length === 0 &&
    line.traits.length === 0 &&
    line.segments.length === 0
  );
}

/**
 * The compact style is the action view of the same observation: every element
 * an agent can act on, every state and value, and the named structure
 * (window, lists and rows, headings, merged text lines), under the same
 * indices as the tree style. It leaves out plain static text, groups that say
 * nothing (their children move up a level) and the unnumbered row texts, so
 * its indices can skip numbers; an index means the same element in both
 * styles. Text is read in the tree style.
 */
export function compactLines(lines: Line[], limit: TextLimit): string[] {
  const out: string[] = [];
  // Tree depths of the current line's ancestors, and whether compact printed each.
  const stack: { depth: number; shown: boolean }[] = [];
  let shownAncestors = 0;
  for (const line of lines) {
    if (line.index < 0) continue;
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= line.depth) {
      if (stack.pop()!.shown) shownAncestors--;
    }
    const view = compactView(line, limit);
    const shown = !isSilentGroup(view) && !isPlainText(view);
    if (shown) out.push(compactLine(view, shownAncestors));
    stack.push({ depth: line.depth, shown });
    if (shown) shownAncestors++;
  }
  return out;
}

// Names that print bare on the header: letters, marks, digits, spaces and . _ - + & '.
// Anything else (quotes, parentheses, commas, colons, `\n`) could read as header
// text ("com.apple.finder (pid 1)"), so such a name prints quoted and escaped.
const BARE_NAME = /^[\p{L}\p{N}][\p{L}\p{M}\p{N} ._+&'-]*$/u;

function headerName(text: string, limit: TextLimit): string {
  const bare = sanitize(text, limit);
  return BARE_NAME.test(bare) ? bare : quoted(text, limit);
}

const SURFACES = new Set(["dialog", "menu", "popup", "sheet"]);

/**
 * Which surface the snapshot shows when it is not a plain window: " (menu)",
 * " (popup)", " (modal dialog)", " (sheet)". Fixture trees without a kind,
 * and plain windows, print nothing.
 */
function surfaceOf(snap: RawSnapshot): string {
  const kind = snap.window.kind;
  if (kind === undefined || !SURFACES.has(kind)) return "";
  return ` (${kind === "dialog" && snap.window.modal === true ? "modal dialog" : kind})`;
}

/**
 * The window's title as this observation read it: the name of the window
 * element the walk read (line 0 prints it), else the title the window list
 * gave. Two reads of one title can disagree when the app retitles its window
 * between them (mousepad marks a saved file right after a save), and a
 * header naming one moment over lines of another reads as a contradiction:
 * the walk's read wins, so the header and every line are of one observation.
 */
export function windowTitle(snap: RawSnapshot): string {
  const own = snap.root.title;
  return own !== undefined && present(own) ? own : snap.window.title;
}

export function header(snap: RawSnapshot, style: Style, limit: TextLimit): string[] {
  // A title of invisible characters only is no title: the app name stands in, as for an empty one.
  const shown = windowTitle(snap);
  const title = quoted(present(shown) ? shown : snap.app.name, limit) + surfaceOf(snap);
  if (style === "compact") return [`App: ${quoted(snap.app.name, limit)} Window: ${title}`, ""];
  const appName = headerName(snap.app.name, limit);
  const id =
    snap.app.bundleId !== undefined && snap.app.bundleId.length > 0
      ? headerName(snap.app.bundleId, limit)
      : appName;
  return [`App=${id} (pid ${snap.app.pid})`, `Window: ${title}, App: ${appName}.`];
}

/**
 * The footer follows the recorded official outputs: "The focused UI element is
 * 38 search text field." names the index and role only, where the spec's
 * example repeats the whole line.
 */
export function footer(plan: Plan, limit: TextLimit): string | undefined {
  const focused = plan.focusedNode;
  const selected = focused?.selectedText;
  if (focused !== undefined && present(selected) && !plan.secure.has(focused))
    return `Selected text: [${sanitize(selected, limit)}]`;
  if (plan.focusedIndex === undefined) return undefined;
  const rec = plan.records[plan.focusedIndex];
  if (rec === undefined) return undefined;
  return rec.roleText.length > 0
    ? `The focused UI element is ${rec.index} ${rec.roleText}.`
    : `The focused UI element is ${rec.index}.`;
}

/** The closing line of an incomplete snapshot: what was cut, and what to do about it. */
export function closingLine(
  snap: RawSnapshot,
  plan: Plan,
  maxNodes: number,
  maxDepth: number,
): string | undefined {
  const reasons: string[] = [];
  const walk = snap.walk;
  if (walk.ended === "node_limit")
    reasons.push(`the walk stopped at its node limit after reading ${walk.nodesObserved} elements`);
  else if (walk.ended === "depth_limit")
    reasons.push("the walk stopped at its depth limit; deeper elements were not read");
  else if (walk.ended === "deadline")
    reasons.push(`the walk stopped at its deadline after reading ${walk.nodesObserved} elements`);
  else if (walk.ended === "content_pending")
    reasons.push("the app had not finished exposing its web content to accessibility");
  else if (walk.ended === "unresponsive")
    reasons.push(`the app stopped answering after ${walk.nodesObserved} elements were read`);
  else if (walk.ended === "errors")
    reasons.push("some elements or their children could not be read and are missing");
  const cut = plan.cut;
  if (cut.nodeLimit) reasons.push(`the node limit of ${maxNodes} was reached`);
  if (cut.depthLimit) reasons.push(`elements deeper than ${maxDepth} levels were not printed`);
  if (cut.nodeLimit || cut.depthLimit) reasons.push(`${cut.notShown} elements were not printed`);
  if (reasons.length === 0) return undefined;
  const advice =
    walk.ended !== "complete" &&
    walk.ended !== "node_limit" &&
    walk.ended !== "depth_limit" &&
    !cut.nodeLimit &&
    !cut.depthLimit
      ? "Take a new snapshot (with a longer deadlineMs if the app is slow), or act on what is shown."
      : "Raise maxNodes or maxDepth, or act on what is shown.";
  return `(Snapshot incomplete: ${reasons.join("; ")}. ${advice})`;
}
