/**
 * What changed between two snapshots of a window: elements added, removed and
 * changed, and a text that prints only those lines (with their ancestors for
 * context) in the new snapshot's own style.
 *
 * Identity is the record's handle: the native handle ledger gives one id to
 * one live element across snapshots of a window, so an element that moved to
 * another index (rows reordered, a row inserted above it) is still the same
 * element. Never the index, never the text. Trees without live handles
 * (fixture trees rendered by createSnapshot({ raw })) fall back to the
 * record's path of child positions from its root.
 *
 * That id lives only while some snapshot holds it: once every snapshot holding
 * an element is released the backend forgets it, and the next walk gives the
 * element a new id. So a live snapshot released before the other one was
 * taken cannot be compared element by element (every element would read as
 * removed and added again): such a pair is compared by path, as fixture trees
 * are, and the diff says so (`note`, a line before the summary). One released
 * after the other was taken is still compared by handle (that one's walk held
 * the ids first), as when a session drops the snapshot an action acted on.
 */

import type { LineFacts } from "../render/index.js";
import type { ElementRecord } from "../render/records.js";
import { collapsedInto } from "./collapsed.js";
import type { Change, ChangedField, Snapshot, SnapshotChanges } from "./snapshot-types.js";

export type { Change, ChangedField, SnapshotChanges } from "./snapshot-types.js";

const facts = new WeakMap<Snapshot, readonly LineFacts[]>();

/** Creation order of the live snapshots (those born unreleased: they hold handles). */
let born = 0;
const birth = new WeakMap<Snapshot, number>();
/** Live snapshots not yet seen released. */
const watched = new Set<WeakRef<Snapshot>>();
/** A live snapshot seen released: the birth number of the first live snapshot made after its release. */
const releasedBefore = new WeakMap<Snapshot, number>();

/** snapshot.ts: what each line printed as value and states; and when each live snapshot was made. */
export function rememberFacts(snapshot: Snapshot, lineFacts: readonly LineFacts[]): void {
  facts.set(snapshot, lineFacts);
  if (snapshot.released) return; // no handles to release (a fixture tree)
  born++;
  // Whatever was released since the last live snapshot was released before this one was made.
  // (Conservative: a release during this one's walk counts as before it.)
  for (const ref of watched) {
    const s = ref.deref();
    if (s === undefined) watched.delete(ref);
    else if (s.released) {
      releasedBefore.set(s, born);
      watched.delete(ref);
    }
  }
  birth.set(snapshot, born);
  watched.add(new WeakRef(snapshot));
}

/** Why two snapshots' handles do not name the same elements (one was released before the other was made), or undefined. */
function incomparable(a: Snapshot, b: Snapshot): string | undefined {
  for (const [gone, other] of [
    [a, b],
    [b, a],
  ] as const) {
    if (!gone.released) continue;
    const otherBorn = birth.get(other);
    // Not seen released yet: no live snapshot was made since its release, so `other` is older.
    const releasedAt = releasedBefore.get(gone);
    if (otherBorn === undefined || releasedAt === undefined || otherBorn < releasedAt) continue;
    return `compared by position, not by element: snapshot ${gone.id} was released before snapshot ${other.id} was taken, so its element handles were forgotten`;
  }
  return undefined;
}

/** What line `index` of a snapshot printed as value and states (waits compare them). */
export function factsOf(snapshot: Snapshot, index: number): LineFacts | undefined {
  return facts.get(snapshot)?.[index];
}

interface Entry {
  record: ElementRecord;
  key: string;
  /** Printed line without indent and index; undefined where the style does not print the record. */
  line: string | undefined;
  /** Full printed line (indent and index included). */
  raw: string | undefined;
  /** Indent level of the printed line. */
  depth: number;
  facts: LineFacts | undefined;
}

/**
 * Whether two snapshots print an element's line alike: one style, and the same
 * view (none, or an outline or budget at the same depth: a budget's skeletons
 * cut texts and collapse lines the whole tree prints).
 */
function printedAlike(a: Snapshot, b: Snapshot): boolean {
  return a.style === b.style && a.view?.kind === b.view?.kind && a.view?.depth === b.view?.depth;
}

function baseKey(r: ElementRecord, byPath = false): string {
  const id = r.handle !== undefined && !byPath ? `h${r.handle}` : `p${r.pathRoot}/${r.path.join(".")}`;
  // A merged summary and its text child line describe the same element: two lines, two keys.
  return r.synthetic === false ? id : `${id}#${r.synthetic}`;
}

/** The numbered lines of a snapshot's text, by index: `\t3 button OK` (tree) or `  3: button "OK"` (compact). */
function printedLines(snap: Snapshot): Map<number, { raw: string; line: string; depth: number }> {
  const out = new Map<number, { raw: string; line: string; depth: number }>();
  const pattern = snap.style === "compact" ? /^( *)(\d+): (.*)$/ : /^(\t*)(\d+)(?: (.*))?$/;
  for (const raw of snap.text.split("\n")) {
    const m = pattern.exec(raw);
    if (!m) continue;
    const index = Number(m[2]);
    // Only a line whose number is a record index, first seen: a footer or note cannot pose as one.
    if (index >= snap.records.length || out.has(index)) continue;
    const depth = snap.style === "compact" ? m[1]!.length / 2 : m[1]!.length;
    out.set(index, { raw, line: m[3] ?? "", depth });
  }
  return out;
}

function entries(snap: Snapshot, byPath = false): Map<string, Entry> {
  const lines = printedLines(snap);
  const lineFacts = facts.get(snap);
  const out = new Map<string, Entry>();
  for (const record of snap.records) {
    let key = baseKey(record, byPath);
    // The same element printed twice (rare: a node reached on two paths) keeps apart by its occurrence.
    for (let n = 2; out.has(key); n++) key = `${baseKey(record, byPath)}~${n}`;
    const printed = lines.get(record.index);
    out.set(key, {
      record,
      key,
      line: printed?.line,
      raw: printed?.raw,
      depth: printed?.depth ?? 0,
      facts: lineFacts?.[record.index],
    });
  }
  return out;
}

/** Every record's key, in index order: what a diff matches elements by. */
export function keysOf(snap: Snapshot): string[] {
  return [...entries(snap).values()].map((e) => e.key);
}

function fallbackLine(r: ElementRecord): string {
  return r.title !== undefined ? `${r.roleText} ${r.title}` : r.roleText;
}

function describe(e: Entry): Change {
  const c: Change = {
    key: e.key,
    index: e.record.index,
    role: e.record.roleText,
    line: e.line ?? fallbackLine(e.record),
  };
  if (e.record.title !== undefined) c.name = e.record.title;
  return c;
}

/**
 * `samePrint`: both snapshots printed alike (printedAlike). Only then do their
 * lines compare as text: a budget may print one as a tree and the next as
 * compact, or at another depth, and every line would differ though nothing
 * changed. The facts (name, value, states, frame, role) are the plan's,
 * whatever the style, and always compare.
 */
function fieldsChanged(a: Entry, b: Entry, samePrint: boolean): ChangedField[] {
  const out: ChangedField[] = [];
  const ra = a.record;
  const rb = b.record;
  if (ra.title !== rb.title || ra.description !== rb.description) out.push("name");
  if (a.facts?.value !== b.facts?.value) out.push("value");
  if ((a.facts?.states ?? []).join(",") !== (b.facts?.states ?? []).join(",")) out.push("states");
  const fa = ra.screenFrame;
  const fb = rb.screenFrame;
  if ((fa === undefined) !== (fb === undefined)) out.push("moved");
  else if (fa !== undefined && fb !== undefined) {
    if (fa.x !== fb.x || fa.y !== fb.y) out.push("moved");
    if (fa.w !== fb.w || fa.h !== fb.h) out.push("resized");
  }
  // Anything else the line prints (role, help, actions): the same element, printed differently.
  const lineDiffers = samePrint && a.line !== undefined && b.line !== undefined && a.line !== b.line;
  if (out.length === 0 && (lineDiffers || ra.roleText !== rb.roleText)) out.push("line");
  return out;
}

/** The states (and traits) an element gained and lost, as the lines print them. */
function statesChanged(a: Entry, b: Entry): { added: string[]; removed: string[] } {
  const was = a.facts?.states ?? [];
  const now = b.facts?.states ?? [];
  return { added: now.filter((s) => !was.includes(s)), removed: was.filter((s) => !now.includes(s)) };
}

/**
 * `[changed: value, states +checked -focused]`: which states, not only that some did, so an
 * agent reads what a toggle or a focus move did without the old line.
 */
export function changedMark(fields: readonly ChangedField[], states?: Change["states"]): string {
  return `[changed: ${changedFields(fields, states)}]`;
}

/** The fields of a changed mark, states named: `value, states +checked -focused`. */
export function changedFields(fields: readonly ChangedField[], states?: Change["states"]): string {
  return fields
    .map((f) =>
      f === "states" && states
        ? ["states", ...states.added.map((s) => `+${s}`), ...states.removed.map((s) => `-${s}`)].join(" ")
        : f,
    )
    .join(", ");
}

export /**
 * Beyond this many, removed elements are named by their old indices only: when
 * a window's content was replaced (a page switch, a mode change), printing
 * every old line again would make the diff longer than the new window, and
 * the agent then reads the whole snapshot instead.
 */
const REMOVED_LINES = 10;

/** "5-20, 22, 30-108": sorted indices as runs. */
function indexRanges(indices: number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < indices.length; ) {
    let j = i;
    while (j + 1 < indices.length && indices[j + 1] === indices[j]! + 1) j++;
    runs.push(j === i ? `${indices[i]}` : `${indices[i]}-${indices[j]}`);
    i = j + 1;
  }
  return runs.join(", ");
}

function summaryOf(
  changed: number,
  added: number,
  removed: number,
  unchanged: number,
  renumbered = 0,
): string {
  const tail = renumbered > 0 ? ` (${renumbered} renumbered)` : "";
  if (changed + added + removed === 0) return `no changes; ${unchanged} unchanged${tail}`;
  return `${changed} changed, ${added} added, ${removed} removed; ${unchanged} unchanged${tail}`;
}

/**
 * The changes from `previous` to `next`. Both should be snapshots of the same
 * window; across windows every element reads as removed and added. When one
 * of two live snapshots was released before the other was taken, elements are
 * matched by path and `note` says so.
 */
export function diffSnapshots(previous: Snapshot, next: Snapshot): SnapshotChanges {
  const note = incomparable(previous, next);
  const before = entries(previous, note !== undefined);
  const after = entries(next, note !== undefined);
  const added: Change[] = [];
  const changed: Change[] = [];
  const removed: Change[] = [];
  let unchanged = 0;
  let renumbered = 0;
  const samePrint = printedAlike(previous, next);
  // What each new line gets on the diff text: a marker for added and changed lines.
  const marks = new Map<number, string>();
  for (const [key, e] of after) {
    const old = before.get(key);
    if (old === undefined) {
      added.push(describe(e));
      marks.set(e.record.index, "[added]");
      continue;
    }
    const fields = fieldsChanged(old, e, samePrint);
    if (fields.length === 0) {
      unchanged++;
      if (old.record.index !== e.record.index) renumbered++;
      continue;
    }
    const states = fields.includes("states") ? statesChanged(old, e) : undefined;
    changed.push({
      ...describe(e),
      fields,
      ...(states ? { states } : {}),
      previousIndex: old.record.index,
      previousLine: old.line ?? fallbackLine(old.record),
    });
    marks.set(e.record.index, changedMark(fields, states));
  }
  for (const [key, e] of before) if (!after.has(key)) removed.push(describe(e));
  added.sort((a, b) => a.index - b.index);
  changed.sort((a, b) => a.index - b.index);
  removed.sort((a, b) => a.index - b.index);
  const summary = summaryOf(changed.length, added.length, removed.length, unchanged, renumbered);
  const out = marks.size > 0 ? contextLines(next, after, marks) : [];
  // Removed elements the previous snapshot showed only collapsed: their indices, not their lines.
  const removedHidden = removed.filter((r) => collapsedInto(previous, r.index) !== undefined);
  const removedShown =
    removedHidden.length === 0
      ? removed
      : removed.filter((r) => collapsedInto(previous, r.index) === undefined);
  if (removedShown.length <= REMOVED_LINES) for (const r of removedShown) out.push(`- ${r.index} ${r.line}`);
  else
    out.push(
      `- ${removedShown.length} elements of the previous snapshot: ${indexRanges(removedShown.map((r) => r.index))}`,
    );
  if (removedHidden.length > 0)
    out.push(
      `- ${removedHidden.length} elements inside collapsed lines of the previous snapshot: ${indexRanges(removedHidden.map((r) => r.index))}`,
    );
  if (note !== undefined) out.push(`(${note})`);
  out.push(summary);
  const changes: SnapshotChanges = {
    added,
    removed,
    changed,
    unchanged,
    renumbered,
    summary,
    text: out.join("\n"),
  };
  if (note !== undefined) changes.note = note;
  return changes;
}

/**
 * Marks of records inside collapsed lines (an outline or a budget printed them
 * as `(+N elements)`) move to the collapsed line: `[inside: 2 changed, 1 added]`.
 */
function foldCollapsed(
  next: Snapshot,
  byIndex: (Entry | undefined)[],
  marks: Map<number, string>,
): Map<number, string> {
  const inside = new Map<number, { changed: number; added: number }>();
  const out = new Map<number, string>();
  for (const [i, mark] of marks) {
    const into = byIndex[i]?.raw === undefined ? collapsedInto(next, i) : undefined;
    if (into === undefined) {
      out.set(i, mark);
      continue;
    }
    const n = inside.get(into) ?? { changed: 0, added: 0 };
    if (mark === "[added]") n.added++;
    else n.changed++;
    inside.set(into, n);
  }
  for (const [into, n] of inside) {
    const parts = [n.changed > 0 ? `${n.changed} changed` : "", n.added > 0 ? `${n.added} added` : ""].filter(
      Boolean,
    );
    const own = out.get(into);
    out.set(into, `${own === undefined ? "" : `${own} `}[inside: ${parts.join(", ")}]`);
  }
  return out;
}

/** The marked lines of the new snapshot, each under its printed ancestors, in output order. */
function contextLines(next: Snapshot, after: Map<string, Entry>, allMarks: Map<number, string>): string[] {
  const byIndex: (Entry | undefined)[] = [];
  for (const e of after.values()) byIndex[e.record.index] = e;
  const marks = foldCollapsed(next, byIndex, allMarks);
  const keep = new Set<number>();
  // Ancestors: the nearest earlier printed line at each smaller depth.
  const stack: Entry[] = [];
  for (let i = 0; i < next.records.length; i++) {
    const e = byIndex[i];
    if (e === undefined || e.raw === undefined) continue;
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= e.depth) stack.pop();
    if (marks.has(i)) {
      keep.add(i);
      for (const a of stack) keep.add(a.record.index);
    }
    stack.push(e);
  }
  const out: string[] = [];
  for (const i of [...keep].sort((a, b) => a - b)) {
    const e = byIndex[i]!;
    const mark = marks.get(i);
    out.push(mark === undefined ? e.raw! : `${e.raw} ${mark}`);
  }
  // Marked records the style does not print (compact hides plain text): listed on their own.
  for (const [i, mark] of marks) {
    const e = byIndex[i];
    if (e !== undefined && e.raw === undefined) out.push(`${i} ${fallbackLine(e.record)} ${mark}`);
  }
  return out;
}
