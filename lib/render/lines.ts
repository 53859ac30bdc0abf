/**
 * The parts of one printed element, computed once and formatted by either
 * style. Keeping the decision (what a node says) apart from the formatting
 * (how a style prints it) is what gives both styles the same indices.
 */
import type { RawNode, Rect } from "../model/model.js";
import type { NameSource } from "./records.js";
import {
  isCheckbox,
  isMenu,
  isRadio,
  isRow,
  isSearchField,
  isStaticText,
  isTab,
  isTextField,
  isWebArea,
  printsBareValue,
  secureInItself,
  usesDescriptionAsTitle,
} from "./roles.js";
import { present, sanitize, sanitizeLabel, sanitizeValue, type TextLimit } from "./sanitize.js";
import { nodeText } from "./summary.js";

/**
 * Every field is set on every line, undefined when absent: one object shape,
 * so the formatters' reads of a line stay monomorphic.
 */
export interface Line {
  depth: number;
  /** -1 for an unnumbered text line. */
  index: number;
  role: string;
  /** The element the line describes; absent on unnumbered lines. */
  node?: RawNode | undefined;
  /** The compact style's role where the renderer chose it (anonymous targets, summaries). */
  compactRole?: string | undefined;
  /** A checkbox, switch, radio or tab that is on: the compact style's `checked`. */
  checked: boolean;
  /** A line the renderer made up (a merged text summary). */
  synthetic: boolean;
  traits: string[];
  /** The title segment as the tree style prints it (a link prints `[text](url)`). */
  title?: string | undefined;
  /** The plain name the compact style prints. */
  name?: string | undefined;
  /** Segments after the title, already labelled: `Description: x`, `Value: 3`. */
  segments: string[];
  /** Compact style's value. */
  value?: string | undefined;
  /** The tree style's value segment (`Value: on`, or a bare value), when the line prints one. */
  valueSegment?: string | undefined;
  /** `(showing A-B of M items)` on a cut list. */
  suffix?: string | undefined;
  /** An unnumbered line's text. */
  text?: string | undefined;
  /** A name inferred from a label beside the element: the compact style's `label="..."`. */
  label?: string | undefined;
}

export interface Name {
  text: string;
  from: NameSource | "value";
}

/** What a line prints as its name: the element's own, or a label's text beside it (labels.ts), printed as `Label: x`. */
export type LineName = Name | { text: string; from: "inferred" };

const MACHINE_ID = /^_NS:/;
const LIST_MARKER = /^\s*(?:[•◦▪▫‣⁃·*-]|\d{1,3}[.)]|[a-z][.)])\s*$/i;

/** The first static text of a row: its printed title and its identity name. */
export function rowFirstText(row: RawNode): string | undefined {
  const texts: string[] = [];
  rowTexts(row, texts, 1);
  return texts[0];
}

/**
 * Every text a row shows, in reading order (bounded like the summary scan):
 * static texts and the values of text fields, as Finder shows a file's name
 * in an editable text field. Secure fields never contribute: `secure` is the
 * tree's decision (secure.ts); a row's first text is part of its identity,
 * where only what a field says of itself is at hand (a live tree's other
 * secure fields have no text left: secure.ts withoutSecrets).
 */
export function rowTexts(
  node: RawNode,
  out: string[],
  limit: number,
  secure: (node: RawNode) => boolean = secureInItself,
  depth = 0,
): void {
  if (depth > 8 || !node.children) return;
  for (const child of node.children) {
    if (out.length >= limit) return;
    if (isStaticText(child) || (isTextField(child) && !secure(child))) {
      const t = nodeText(child);
      // A list marker ("•", "1.") is not the row's text.
      if (t !== undefined && !LIST_MARKER.test(t)) out.push(t.trim());
    } else {
      rowTexts(child, out, limit, secure, depth + 1);
    }
  }
}

/** The line's title, by the preference order of the spec. */
export function chooseName(node: RawNode): Name | undefined {
  if (present(node.title)) return { text: node.title, from: "title" };
  if (isRow(node)) {
    const t = rowFirstText(node);
    if (t !== undefined) return { text: t, from: "rowText" };
  }
  if (usesDescriptionAsTitle(node) && present(node.description))
    return { text: node.description, from: "description" };
  if (isSearchField(node) && !secureInItself(node) && typeof node.value === "string" && present(node.value))
    return { text: node.value, from: "value" };
  return undefined;
}

export function visibleIdentifier(node: RawNode): string | undefined {
  const id = node.identifier;
  return present(id) && !MACHINE_ID.test(id) ? id : undefined;
}

function valueTypeTrait(node: RawNode): string {
  const type =
    node.valueType ??
    (typeof node.value === "number" ? "number" : typeof node.value === "boolean" ? "boolean" : "string");
  return type === "number" ? "float" : type;
}

/**
 * The value type prints only beside `settable`: the recorded official outputs
 * show `(settable, string)` and `(settable, float)` but a bare `static text`
 * or `radio button ... Value: 1` without a type.
 */
export function traitsOf(node: RawNode): string[] {
  const s = node.states;
  const t: string[] = [];
  // Text read off the pixels says so first: an agent must know it is no element of the app.
  if (node.ocr) t.push("ocr");
  // Read with low confidence: the text is as read, and may be wrong (lib/observe/ocr/unsure.ts).
  if (node.ocr?.unsure) t.push("unsure");
  if (s?.selected) t.push("selected");
  else if (s?.selectable) t.push("selectable");
  if (s?.expanded === true) t.push("expanded");
  else if (s?.expanded === false) t.push("collapsed");
  if (s?.enabled === false) t.push("disabled");
  // What a form says of a field before it is sent: as the compact style prints it.
  if (s?.required) t.push("required");
  if (s?.invalid) t.push("invalid");
  if (node.settable) t.push("settable", valueTypeTrait(node));
  return t;
}

function onOff(node: RawNode): string | undefined {
  const v = node.value;
  if (v === 1 || v === true || v === "1") return "on";
  if (v === 0 || v === false || v === "0") return "off";
  if (v === 2 || v === "2") return "mixed";
  const c = node.states?.checked;
  if (c === true) return "on";
  if (c === false) return "off";
  if (c === "mixed") return "mixed";
  return undefined;
}

function hasSecureContent(node: RawNode): boolean {
  return (node.charCount ?? 0) > 0 || (node.value !== undefined && node.value !== "");
}

/** The value of a secure field: never printed, only whether it is empty. */
function secretValue(node: RawNode): ValueParts {
  return hasSecureContent(node) ? { segment: "Value: •••", compact: "•••" } : {};
}

export interface ValueParts {
  /** Tree style segment: `Value: x`, or the bare value for the roles that print it bare. */
  segment?: string;
  /** Compact style value. */
  compact?: string;
  checked?: boolean;
}

/** The value, by role: on/off toggles, recorded 0/1 radios, bullets for secrets, bare values. */
export function displayValue(
  node: RawNode,
  name: Name | undefined,
  limit: TextLimit,
  /** The tree's decision (secure.ts). */
  secure: boolean,
): ValueParts {
  // The value of a secure field is never read or printed, only whether it is empty.
  if (secure) return secretValue(node);
  if (name?.from === "value") return {};
  if (isCheckbox(node) || (isTab(node) && node.value !== undefined)) {
    const v = onOff(node);
    return v === undefined ? {} : { segment: `Value: ${v}`, checked: v === "on" };
  }
  if (node.states?.checked !== undefined && !isRadio(node)) {
    // Any checkable element (a GTK check-box column's cell, a tree item with aria-checked,
    // a toggle button): the state it carries is its value.
    const v = onOff(node);
    return v === undefined ? {} : { segment: `Value: ${v}`, checked: v === "on" };
  }
  if (isRadio(node)) {
    if (node.value !== undefined) {
      const v = sanitizeValue(String(node.value), limit);
      return { segment: `Value: ${v}`, checked: v === "1" || v === "true" };
    }
    const v = onOff(node);
    return v === undefined ? {} : { segment: `Value: ${v}`, checked: v === "on" };
  }
  if (node.value === undefined && node.valueText === undefined) return {};
  // What the app shows for its number (aria-valuetext), where it says more than the number.
  const raw = present(node.valueText) ? node.valueText : String(node.value);
  if (!present(raw) || (name !== undefined && raw === name.text)) return {};
  const v = sanitizeValue(raw, limit);
  return printsBareValue(node) ? { segment: v, compact: v } : { segment: `Value: ${v}`, compact: v };
}

export function relativeFrame(frame: Rect, window: Rect): Rect {
  return { x: frame.x - window.x, y: frame.y - window.y, w: frame.w, h: frame.h };
}

export function frameSegment(frame: Rect, window: Rect): string {
  const r = relativeFrame(frame, window);
  return `Frame: x=${Math.round(r.x)}, y=${Math.round(r.y)}, w=${Math.round(r.w)}, h=${Math.round(r.h)}`;
}

export interface LineInput {
  node: RawNode;
  depth: number;
  index: number;
  role: string;
  compactRole: string | undefined;
  synthetic: boolean;
  name: LineName | undefined;
  limit: TextLimit;
  window: Rect;
  /** Anonymous action targets print their frame. */
  withFrame: boolean;
  /** A link's url: the title prints as `[text](url)`. */
  linkUrl?: string | undefined;
  /** Pretty names of the secondary actions. */
  secondary: string[];
  /** A secure field (secure.ts: the tree's decision, computed once for the record). */
  secure: boolean;
}

/** A menu described as "<name> menu" says nothing its role and name do not. */
function namesItsMenu(node: RawNode, name: Name | undefined): boolean {
  if (name === undefined || !isMenu(node) || node.description === undefined) return false;
  return node.description.trim().toLowerCase() === `${name.text.trim()} menu`.toLowerCase();
}

export function buildLine(input: LineInput): Line {
  const { node, limit } = input;
  // An inferred name is no name of the element's own: it prints as a `Label:` segment.
  const given = input.name;
  const inferred = given?.from === "inferred" ? sanitizeLabel(given.text, limit) : undefined;
  const name = given?.from === "inferred" ? undefined : given;
  const traits = traitsOf(node);
  const segments: string[] = [];
  if (inferred !== undefined) segments.push(`Label: ${inferred}`);
  const shownName = name === undefined ? undefined : sanitizeLabel(name.text, limit);
  let title = shownName;
  // A link with no text still prints its URL: `[](url)` is the only way an agent learns where it goes.
  if (input.linkUrl !== undefined) title = `[${shownName ?? ""}](${sanitize(input.linkUrl, limit)})`;
  if (
    present(node.description) &&
    name?.from !== "description" &&
    node.description !== name?.text &&
    !namesItsMenu(node, name)
  )
    segments.push(`Description: ${sanitizeLabel(node.description, limit)}`);
  if (present(node.help) && node.help !== node.title && node.help !== node.description)
    segments.push(`Help: ${sanitize(node.help, limit)}`);
  if (present(node.url) && input.linkUrl === undefined && (isWebArea(node) || node.role === "AXWindow"))
    segments.push(`URL: ${sanitize(node.url, limit)}`);
  const value = displayValue(node, name, limit, input.secure);
  if (value.segment !== undefined) segments.push(value.segment);
  if (present(node.placeholder) && node.placeholder !== name?.text)
    segments.push(`Placeholder: ${sanitize(node.placeholder, limit)}`);
  const id = visibleIdentifier(node);
  if (id !== undefined) segments.push(`ID: ${sanitize(id, limit)}`);
  if (input.withFrame && node.frame) segments.push(frameSegment(node.frame, input.window));
  const secondary = input.secondary;
  if (secondary.length > 0)
    segments.push(`Secondary Actions: ${secondary.map((a) => sanitize(a, limit)).join(", ")}`);

  // Static text is named by what it says; compact prints that as its name, not as a value.
  const compactIsName = value.compact !== undefined && shownName === undefined && isStaticText(node);
  return {
    depth: input.depth,
    index: input.index,
    role: input.role,
    node,
    compactRole: input.compactRole,
    checked: value.checked === true,
    synthetic: input.synthetic,
    traits,
    title,
    name: compactIsName ? value.compact : shownName,
    segments,
    value: compactIsName ? undefined : value.compact,
    valueSegment: value.segment,
    suffix: undefined,
    text: undefined,
    label: inferred,
  };
}

/** An unnumbered line: `text` alone, in the shape of every line. */
export function textLine(depth: number, text: string): Line {
  return {
    depth,
    index: -1,
    role: "",
    node: undefined,
    compactRole: undefined,
    checked: false,
    synthetic: false,
    traits: [],
    title: undefined,
    name: undefined,
    segments: [],
    value: undefined,
    valueSegment: undefined,
    suffix: undefined,
    text,
    label: undefined,
  };
}

/** The compact style's states, in the order the format lists them. */
export function compactStates(node: RawNode, checked: boolean): string[] {
  const s = node.states;
  const out: string[] = [];
  if (s?.focused) out.push("focused");
  if (s?.enabled === false) out.push("disabled");
  if (checked) out.push("checked");
  else if (s?.checked === "mixed") out.push("mixed");
  if (s?.expanded === true) out.push("expanded");
  else if (s?.expanded === false) out.push("collapsed");
  if (s?.selected) out.push("selected");
  if (s?.required) out.push("required");
  if (s?.invalid) out.push("invalid");
  if (s?.readonly) out.push("readonly");
  if (s?.multiline) out.push("multiline");
  return out;
}
