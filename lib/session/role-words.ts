/**
 * Whether an element has a role, given in either style's words: the tree's
 * ("push button", "text entry area"), the compact style's ("button",
 * "textarea") or the platform's raw role ("AXButton"), whole, in any case
 * and spacing, whatever the style of the snapshot it is in. One place for
 * find and wait_for: an agent names a role by the words it has read, and a
 * conversation (or a doc, or habit) may have shown it either style.
 *
 * The one word the two styles print for different elements, Linux's "text"
 * (tree: AT-SPI's text field; compact: a label), is read in the snapshot's
 * own style; "textbox" and "label" name each in both.
 */

import type { Style } from "../render/format.js";
import type { ElementRecord } from "../render/records.js";
import { compactRole } from "../render/roles.js";
import { fold } from "./pattern.js";

/** Role words each style prints for a different element: read only in the snapshot's own style. */
const OWN_STYLE_ONLY = new Set(["text"]);

/**
 * `role`: already folded (pattern.ts fold). `printedCompact`: the word a
 * compact line printed for the record (a line printed as another role, a
 * summary as text); without it, its platform role's word.
 */
export function hasRole(role: string, r: ElementRecord, style: Style, printedCompact?: string): boolean {
  const compact = () =>
    fold(printedCompact ?? compactRole(r.subrole === undefined ? r : { role: r.role, subrole: r.subrole }));
  if (OWN_STYLE_ONLY.has(role)) return (style === "compact" ? compact() : fold(r.roleText)) === role;
  return fold(r.roleText) === role || fold(r.role) === role || compact() === role;
}
