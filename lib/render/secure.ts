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
 *   that forget the secure role;
 * - being part of a secure field (a combo box's entry holds its text).
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
import type { RawNode, RawSnapshot } from "../model/model.js";
import { inferLabels, relationLabels } from "./labels.js";
import { isTextEntry, namesSecret, secureInItself } from "./roles.js";

export interface SecureFields {
  /** Whether this node of the tree is a secure field, or part of one. */
  has(node: RawNode): boolean;
  /** Names inferred for the tree's unnamed fields from the labels beside them (labels.ts), by field. */
  readonly labels: ReadonlyMap<RawNode, string> | undefined;
  /**
   * The nodes secure by the tree around them, not by what they say of
   * themselves: a field a label makes secure, and whatever lies inside a
   * secure field (a combo box's entry, where the platform puts its text).
   */
  readonly derived: ReadonlySet<RawNode>;
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
  const derived = new Set<RawNode>();
  if (byName && labels !== undefined)
    for (const [node, label] of labels) if (labelSecures(node, label)) derived.add(node);
  // A secure field with children keeps its text in them (a GTK combo box's entry): they are the field.
  const stack: RawNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const children = node.children;
    if (children === undefined || children.length === 0) continue;
    if (isTextEntry(node) && (derived.has(node) || secureInItself(node, byName))) {
      for (const c of children) addSubtree(c, derived);
      continue;
    }
    for (const c of children) stack.push(c);
  }
  return { labels, derived, has: (node) => derived.has(node) || secureInItself(node, byName) };
}

function addSubtree(top: RawNode, into: Set<RawNode>): void {
  const stack = [top];
  while (stack.length > 0) {
    const node = stack.pop()!;
    into.add(node);
    if (node.children) for (const c of node.children) stack.push(c);
  }
}

/** secureFields() of a whole observation (its relation labels read from it). */
export function secureFieldsOf(snap: RawSnapshot, byName: boolean): SecureFields {
  const roots = snap.menuBar ? [snap.root, snap.menuBar] : [snap.root];
  return secureFields(snap.root, relationLabels(roots), byName);
}

/**
 * Writes the decision into a live observation's tree, in place (the tree is
 * that observation's own), for the nodes secure by the tree around them:
 * backends read no text of a field that says itself it is secure, but they
 * cannot see a label beside one, nor the secure field an entry is part of.
 * Each such node gets the secure state, its length (all a secure field
 * shows: empty or not), and neither its value nor its selected text.
 */
export function withoutSecrets(fields: SecureFields): void {
  for (const node of fields.derived) {
    const value = node.value;
    if (node.charCount === undefined && value !== undefined) node.charCount = String(value).length;
    delete node.value;
    delete node.selectedText;
    node.states = { ...node.states, secure: true };
  }
}
