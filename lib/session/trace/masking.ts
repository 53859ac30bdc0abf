/**
 * Masked fields in a snapshot (masks.ts): the records a mask's locator names
 * there, their printed value, and their line with that value printed as
 * «secret». Runs in the recorder's queue, never on the caller's path.
 */

import { factsOf } from "../../observe/diff.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { parseLocator } from "../locator/grammar.js";
import { matchLocator } from "../locator/match.js";
import type { Locator } from "../locator/types.js";
import { maskedValue, type SecretMask } from "./masks.js";
import { SECRET_MARK } from "./scrub.js";

export interface MaskedField {
  index: number;
  /** The value as the line printed it (factsOf), and as the trace prints it. */
  value: string;
  masked: string;
  /** The line without indent and index, before and after. */
  line: string;
  maskedLine: string;
}

const parsed = new Map<string, Locator | null>();

function locatorOfMask(m: SecretMask): Locator | undefined {
  if (!parsed.has(m.locator)) {
    let l: Locator | null = null;
    try {
      l = parseLocator(m.locator);
    } catch {
      // Written by another axsnap, or by hand: a mask that names nothing.
    }
    parsed.set(m.locator, l);
  }
  return parsed.get(m.locator) ?? undefined;
}

/** The records a mask names in `snap`: by its locator; where the window's title changed since, in any window of its kind. */
function recordsOf(snap: Snapshot, m: SecretMask): number[] {
  const l = locatorOfMask(m);
  if (l === undefined || m.app.toLowerCase() !== snap.app.name.toLowerCase()) return [];
  try {
    let hit = matchLocator(snap, l);
    // A title that echoes what was typed changes with it: the field is still the field (masking more is the safe side).
    if (hit.length === 0 && l.window?.title !== undefined && m.window.kind === (snap.window.kind ?? "window"))
      hit = matchLocator(snap, { ...l, window: l.window.kind === undefined ? {} : { kind: l.window.kind } });
    return hit.map((r) => r.index);
  } catch {
    return [];
  }
}

const cache = new WeakMap<Snapshot, { masks: readonly SecretMask[]; fields: MaskedField[] }>();

/** The fields `masks` name in `snap` that print a value (an empty field shows nothing to hide). */
export function maskedFields(snap: Snapshot, masks: readonly SecretMask[]): MaskedField[] {
  if (masks.length === 0) return [];
  const hit = cache.get(snap);
  if (hit && hit.masks === masks) return hit.fields;
  const lines = printedLines(snap);
  const fields: MaskedField[] = [];
  const seen = new Set<number>();
  for (const m of masks)
    for (const index of recordsOf(snap, m)) {
      if (seen.has(index)) continue;
      seen.add(index);
      const value = factsOf(snap, index)?.value;
      const line = lines.get(index);
      if (value === undefined || value === "" || line === undefined) continue;
      const roleText = snap.records[index]?.roleText ?? "";
      fields.push({
        index,
        value,
        masked: maskedValue(value),
        line,
        maskedLine: maskLine(line, value, snap.style === "compact", roleText),
      });
    }
  cache.set(snap, { masks, fields });
  return fields;
}

/** A line with its value printed as «secret»; where the value cannot be found in it, the role alone and «secret». */
function maskLine(line: string, value: string, compact: boolean, roleText: string): string {
  if (compact) {
    const m = / value="(?:[^"\\]|\\.)*"/.exec(line);
    if (m) return `${line.slice(0, m.index)} value="${SECRET_MARK}"${line.slice(m.index + m[0].length)}`;
  } else {
    for (const sep of [", ", " "]) {
      const at = line.indexOf(sep + value);
      if (at >= 0) {
        const from = at + sep.length;
        return line.slice(0, from) + maskedValue(value) + line.slice(from + value.length);
      }
    }
  }
  return `${roleText} ${SECRET_MARK}`;
}

/** The snapshot's text with each masked field's line masked (indent and index kept). */
export function maskSnapshotText(snap: Snapshot, text: string, fields: readonly MaskedField[]): string {
  if (fields.length === 0) return text;
  const byIndex = new Map(fields.map((f) => [f.index, f]));
  const pattern = snap.style === "compact" ? /^( *\d+: )(.*)$/ : /^(\t*\d+ ?)(.*)$/;
  const done = new Set<number>();
  return text
    .split("\n")
    .map((raw) => {
      const m = pattern.exec(raw);
      if (!m) return raw;
      const index = Number(/\d+/.exec(m[1]!)![0]);
      const f = byIndex.get(index);
      // The first line of an index is the record's (as printedLine reads them): a footer cannot pose as one.
      if (!f || done.has(index)) return raw;
      done.add(index);
      return m[2] === f.line ? m[1]! + f.maskedLine : raw;
    })
    .join("\n");
}

/** A string (a diff or reply text, a change's line) with each masked field's printed line masked wherever it appears. */
export function maskLines(s: string, fields: readonly MaskedField[]): string {
  let out = s;
  for (const f of fields) if (out.includes(f.line)) out = out.split(f.line).join(f.maskedLine);
  return out;
}

/** Numbered lines of a snapshot's text by index, without indent and index: the first of each index. */
function printedLines(snap: Snapshot): Map<number, string> {
  const out = new Map<number, string>();
  const pattern = snap.style === "compact" ? /^ *(\d+): (.*)$/ : /^\t*(\d+)(?: (.*))?$/;
  for (const raw of snap.text.split("\n")) {
    const m = pattern.exec(raw);
    if (!m) continue;
    const i = Number(m[1]);
    if (i < snap.records.length && !out.has(i)) out.set(i, m[2] ?? "");
  }
  return out;
}

/** A JSON-shaped value with every string passed through `f` (a copy). */
export function mapStrings<T>(value: T, f: (s: string) => string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return f(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === "object" && !(v instanceof Uint8Array)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = walk(x);
      return out;
    }
    return v;
  };
  return walk(value) as T;
}
