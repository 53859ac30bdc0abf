/**
 * The two styles. Both format the same planned lines; only the text differs.
 *   tree:    `<tabs><index> <role>[ (<traits>)][ <title>][, <segment>]...`
 *   compact: `<2 spaces per depth><index>: <role> "<name>"[ value="<v>"][ <states>]`
 */
import type { RawSnapshot } from "../model.js";
import type { Line } from "./lines.js";
import type { Plan } from "./plan.js";
import { isSecure } from "./roles.js";
import { cut, sanitize, type TextLimit } from "./sanitize.js";

export type Style = "tree" | "compact";

const COMPACT_NAME_LIMIT = 80;
const COMPACT_VALUE_LIMIT = 50;

/**
 * Segments after the role are joined with ", ". The spec asks for a comma only
 * before Value, Placeholder and Secondary Actions; the recorded official
 * outputs also put one before Help and ID ("Description: Categories, Help:
 * ...", "switch Value: on, ID: ..."), which is what is followed here.
 */
export function treeLine(line: Line): string {
  const tabs = "\t".repeat(line.depth);
  if (line.index < 0) return tabs + (line.text ?? "");
  let out = `${tabs}${line.index}`;
  if (line.role.length > 0) out += ` ${line.role}`;
  if (line.traits.length > 0) out += ` (${line.traits.join(", ")})`;
  const parts = line.title === undefined ? line.segments : [line.title, ...line.segments];
  if (parts.length > 0) out += ` ${parts.join(", ")}`;
  if (line.suffix !== undefined) out += ` ${line.suffix}`;
  return out;
}

function quote(text: string, limit: number): string {
  return `"${cut(text, limit).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

export function compactLine(line: Line): string | undefined {
  // Unnumbered text lines belong to the tree style only; compact keeps one line per element.
  if (line.index < 0) return undefined;
  let out = `${"  ".repeat(line.depth)}${line.index}:`;
  if (line.role.length > 0) out += ` ${line.role}`;
  if (line.name !== undefined) out += ` ${quote(line.name, COMPACT_NAME_LIMIT)}`;
  if (line.value !== undefined && line.value !== line.name)
    out += ` value=${quote(line.value, COMPACT_VALUE_LIMIT)}`;
  if (line.states.length > 0) out += ` ${line.states.join(" ")}`;
  if (line.suffix !== undefined) out += ` ${line.suffix}`;
  return out;
}

export function header(snap: RawSnapshot, style: Style, limit: TextLimit): string[] {
  const appName = sanitize(snap.app.name, limit);
  const title = sanitize(snap.window.title.length > 0 ? snap.window.title : snap.app.name, limit);
  if (style === "compact") return [`App: "${appName}" Window: "${title}"`, ""];
  const id =
    snap.app.bundleId !== undefined && snap.app.bundleId.length > 0
      ? sanitize(snap.app.bundleId, limit)
      : appName;
  return [`App=${id} (pid ${snap.app.pid})`, `Window: "${title}", App: ${appName}.`];
}

/**
 * The footer follows the recorded official outputs: "The focused UI element is
 * 38 search text field." names the index and role only, where the spec's
 * example repeats the whole line.
 */
export function footer(plan: Plan, limit: TextLimit): string | undefined {
  const focused = plan.focusedNode;
  const selected = focused?.selectedText;
  if (focused !== undefined && selected !== undefined && selected.length > 0 && !isSecure(focused))
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
  const notShown = plan.cut.notShown;
  if (plan.cut.nodeLimit)
    reasons.push(`the node limit of ${maxNodes} was reached and ${notShown} more elements were not printed`);
  else if (plan.cut.depthLimit)
    reasons.push(`elements deeper than ${maxDepth} levels were not printed (${notShown} elements)`);
  if (reasons.length === 0) return undefined;
  return `(Snapshot incomplete: ${reasons.join("; ")}. Raise maxNodes or maxDepth, or act on what is shown.)`;
}
