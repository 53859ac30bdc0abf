/**
 * Text summaries: a generic container that only holds a few short texts (a
 * chat bubble, a list cell) prints as one line instead of one line per text.
 * The guards keep apart what an agent must tell apart: a message stamp with
 * both a date and a time, a counter like 3/5, a time range like 09:00-10:00.
 */
import type { RawNode } from "../model/model.js";
import { isGenericContainer, isImage, isLink, isStaticText } from "./roles.js";
import { present } from "./sanitize.js";

const MAX_DEPTH = 8;
const MAX_CONTAINER_NESTING = 3;
const MIN_TEXTS = 2;
const MAX_TEXTS = 8;
const MAX_CHARS = 220;
const MAX_IMAGES = 4;
const MAX_IMAGE_DEPTH = 4;

export interface Summary {
  text: string;
  /** Image descendants, printed as children of the summary line. */
  images: { node: RawNode; path: number[] }[];
}

/** The text a static text or a link shows. */
export function nodeText(node: RawNode): string | undefined {
  if (present(node.title)) return node.title;
  if (typeof node.value === "string" && present(node.value)) return node.value;
  if (present(node.description)) return node.description;
  return undefined;
}

/** A link's visible text: its own, else the texts of its descendants, else its image's description. */
export function linkText(node: RawNode): string | undefined {
  const own = nodeText(node);
  if (own !== undefined) return own;
  const parts: string[] = [];
  collectTexts(node, parts, 0);
  if (parts.length > 0) return parts.join(" ");
  return imageDescription(node, 0);
}

function imageDescription(node: RawNode, depth: number): string | undefined {
  if (depth > 4 || !node.children) return undefined;
  for (const child of node.children) {
    if (isImage(child) && present(child.description)) return child.description;
    const inner = imageDescription(child, depth + 1);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

function collectTexts(node: RawNode, out: string[], depth: number): void {
  if (depth > MAX_DEPTH || !node.children) return;
  for (const child of node.children) {
    const t = isStaticText(child) ? nodeText(child) : undefined;
    if (t !== undefined) out.push(t.trim());
    else collectTexts(child, out, depth + 1);
  }
}

interface Scan {
  texts: string[];
  chars: number;
  images: { node: RawNode; path: number[] }[];
}

/** Returns the summary of `node`, or undefined when it must print as a tree. */
export function textSummary(node: RawNode): Summary | undefined {
  // A container with a name of its own prints as itself: merging would drop the name.
  if (!isGenericContainer(node) || present(node.title) || !node.children || node.children.length === 0)
    return undefined;
  const scan: Scan = { texts: [], chars: 0, images: [] };
  if (!scanChildren(node, scan, 1, 0, [])) return undefined;
  if (scan.texts.length < MIN_TEXTS) return undefined;
  const text = scan.texts.join(" ");
  if (hasDateAndTime(text) || COUNTER.test(text) || TIME_RANGE.test(text)) return undefined;
  return { text, images: scan.images };
}

function scanChildren(node: RawNode, scan: Scan, depth: number, nesting: number, path: number[]): boolean {
  if (depth > MAX_DEPTH) return false;
  const children = node.children ?? [];
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    // A text that holds controls (an HTML <label> around its <select>) is no text leaf: merging would hide them.
    if (isStaticText(child) && child.children?.some((c) => !isStaticText(c) && !isImage(c))) return false;
    if (isStaticText(child) || (isLink(child) && present(child.url))) {
      const t = isLink(child) ? linkText(child) : nodeText(child);
      if (t === undefined) continue;
      const trimmed = t.trim();
      scan.texts.push(trimmed);
      scan.chars += trimmed.length + (scan.texts.length > 1 ? 1 : 0);
      if (scan.texts.length > MAX_TEXTS || scan.chars > MAX_CHARS) return false;
    } else if (isImage(child)) {
      if (depth > MAX_IMAGE_DEPTH || scan.images.length >= MAX_IMAGES) return false;
      scan.images.push({ node: child, path: [...path, i] });
    } else if (isGenericContainer(child)) {
      if (nesting + 1 >= MAX_CONTAINER_NESTING) return false;
      if (!scanChildren(child, scan, depth + 1, nesting + 1, [...path, i])) return false;
    } else {
      return false;
    }
  }
  return true;
}

// Dates: ISO and numeric (2026-11-28, 28/11/2026, 11.28.26), month names
// (Nov 28, 28 November), relative days, weekdays, and CJK 年/月/日 forms.
const DATE =
  /\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.? \d{1,2}\b|\b\d{1,2} (?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b|\b(?:today|yesterday|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\d{1,4}\s*年|\d{1,2}\s*月\s*\d{1,2}\s*日|昨天|今天|前天|星期[一二三四五六日天]|周[一二三四五六日]/i;
const TIME =
  /\b\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?\b|\b\d{1,2}\s?[ap]\.?m\.?(?![a-z])|(?:上午|下午|晚上)\s*\d{1,2}[:点]/i;
const COUNTER = /(?<![\d/.:-])\d{1,5}\s?\/\s?\d{1,5}(?![\d/.:-])/;
const CLOCK = "\\d{1,2}(?::\\d{2})?\\s?(?:[ap]\\.?m\\.?)?";
const TIME_RANGE = new RegExp(
  `\\b\\d{1,2}:\\d{2}\\s*(?:-|–|—|~|to)\\s*\\d{1,2}:\\d{2}\\b|\\b${CLOCK}\\s*(?:-|–|—|~|to)\\s*${CLOCK}(?<=[apm.])`,
  "i",
);

export function hasDateAndTime(text: string): boolean {
  return DATE.test(text) && TIME.test(text);
}
export function hasCounter(text: string): boolean {
  return COUNTER.test(text);
}
export function hasTimeRange(text: string): boolean {
  return TIME_RANGE.test(text);
}
