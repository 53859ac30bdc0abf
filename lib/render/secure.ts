/**
 * Secure fields: one decision per tree, which every reader and every guard
 * takes from here. A field is secure when any of these says so:
 * - the platform: a password role, the secure subrole, the secure state the
 *   backends set (roles.ts secureInItself);
 * - its own name, description or placeholder (roles.ts secureByName; off
 *   with the render option `secureNames: false`);
 * - the label the layout gives it when it has no name of its own
 *   (labels.ts), when that label names a secret by the same words: apps that
 *   draw their own password fields and tie no label to them are the ones
 *   that forget the secure role.
 * (A window with no accessibility tree has no fields to judge: the key
 * guards read its pixels instead, act/secrets.ts.)
 *
 * A secure field's value and selected text are never printed, in any door.
 * The renderer asks secureFields() of every line, the selected-text footer,
 * row texts and OCR's blanks; a live observation goes through
 * withoutSecrets() the moment its walk returns, so the text of a field that
 * only its label makes secure is gone before anything else (OCR, the
 * renderer, a reply, a diff, the tree an action re-reads) could hold it.
 */
import type { RawNode, RawSnapshot } from "../model.js";
import { inferLabels, relationLabels } from "./labels.js";
import { isTextEntry, namesSecret, secureInItself } from "./roles.js";

export interface SecureFields {
  /** Whether this node of the tree is a secure field. */
  has(node: RawNode): boolean;
  /** Names inferred for the tree's unnamed fields from the labels beside them (labels.ts), by field. */
  readonly labels: ReadonlyMap<RawNode, string> | undefined;
}

/** A label beside a text entry that names a secret makes it secure, as its own name would. */
export function labelSecures(node: RawNode, label: string | undefined): boolean {
  return label !== undefined && isTextEntry(node) && namesSecret(label);
}

/**
 * The secure fields of the tree under `root`. `relation`: the labels that
 * name an element by relation (labels.ts relationLabels), which inference
 * leaves alone; `byName`: the render option `secureNames`.
 */
export function secureFields(
  root: RawNode,
  relation: ReadonlyMap<number, string>,
  byName: boolean,
): SecureFields {
  const labels = inferLabels(root, relation);
  return {
    labels,
    has: (node) =>
      secureInItself(node, byName) ||
      (byName && labels !== undefined && labelSecures(node, labels.get(node))),
  };
}

/** secureFields() of a whole observation (its relation labels read from it). */
export function secureFieldsOf(snap: RawSnapshot, byName: boolean): SecureFields {
  const roots = snap.menuBar ? [snap.root, snap.menuBar] : [snap.root];
  return secureFields(snap.root, relationLabels(roots), byName);
}

/**
 * Writes the decision into a live observation's tree, in place (the tree is
 * that observation's own), for the fields that only the tree around them
 * makes secure: backends read no text of a field that says itself it is
 * secure, but they cannot see a label beside one. Each such field gets the
 * secure state, its length (all a secure field shows: empty or not), and
 * neither its value nor its selected text.
 */
export function withoutSecrets(fields: SecureFields): void {
  if (fields.labels === undefined) return;
  for (const node of fields.labels.keys()) {
    if (!fields.has(node)) continue;
    const value = node.value;
    if (node.charCount === undefined && value !== undefined) node.charCount = String(value).length;
    delete node.value;
    delete node.selectedText;
    node.states = { ...node.states, secure: true };
  }
}
