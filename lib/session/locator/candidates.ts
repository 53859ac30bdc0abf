/**
 * What a locator that found nothing offers instead (issue 34, design 2.4):
 * the elements of the last observation closest to what it asked for, so an
 * agent (or replay's drift report) sees "push button "Store", same role and
 * place, name differs" rather than a bare refusal. Pure over one snapshot.
 */

import type { LocatorCandidate } from "../../model/errors.js";
import type { Snapshot } from "../../observe/snapshot-types.js";
import type { ElementRecord } from "../../render/records.js";
import { isContext, nameOf, printedLineOf } from "../find.js";
import { fold } from "../pattern.js";
import { hasRole } from "../role-words.js";
import { locatorOf } from "./compute.js";
import { isPrintableRole, printLocator } from "./grammar.js";
import { locatorIndex } from "./match.js";
import type { Locator, LocatorStep } from "./types.js";

/** Where the element was when recorded (replay): its window-relative frame and its ancestors as steps print. */
export interface NearHint {
  frame?: { x: number; y: number; w: number; h: number };
  ancestors?: string[];
}

/** Candidates scoring below this say too little to be offered. */
const MIN_SCORE = 3;
const MAX_CANDIDATES = 3;
/** A place this far (points) from the recorded one counts nothing. */
const PLACE_RANGE = 200;

/** Levenshtein distance, two rows. */
function editDistance(a: string, b: string): number {
  if (a === b) return 0;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let cur = new Array<number>(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** 1 for the same name (folded), falling with the edit distance; a regular expression counts by its source. */
export function nameSimilarity(wanted: string | RegExp | undefined, name: string | undefined): number {
  if (wanted === undefined) return 0;
  const n = fold(name ?? "");
  if (wanted instanceof RegExp) {
    if (name !== undefined && wanted.test(name)) return 1;
    wanted = wanted.source.replace(/[\\^$.*+?()[\]{}|]/g, "");
  }
  const w = fold(wanted);
  const len = Math.max(w.length, n.length);
  return len === 0 ? 1 : 1 - editDistance(w, n) / len;
}

/** A step as candidates print ancestors: `panel "Actions"` (the role alone when it has no name). */
export function stepLabel(r: ElementRecord): string {
  const role = r.roleText !== "" && isPrintableRole(r.roleText) ? r.roleText : r.role;
  const name = nameOf(r);
  return name === undefined || name.trim() === "" ? role : `${role} ${JSON.stringify(name)}`;
}

function jaccard(a: readonly string[], b: readonly string[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  const sa = new Set(a);
  const sb = new Set(b);
  let both = 0;
  for (const x of sa) if (sb.has(x)) both++;
  return both / (sa.size + sb.size - both);
}

function printedStep(s: LocatorStep): string {
  return printLocator({ path: [{ role: s.role, ...(s.name === undefined ? {} : { name: s.name }) }] });
}

/** The named ancestors of a record, outermost first, as steps print them. */
export function ancestorLabels(snap: Snapshot, r: ElementRecord): string[] {
  const { contexts } = locatorIndex(snap);
  return (contexts[r.index] ?? [])
    .map((i) => snap.records[i]!)
    .filter(isContext)
    .map(stepLabel)
    .reverse();
}

/** A candidate as refusals carry it: its ref, its own unique locator, its line, its ancestors. */
export function candidateOf(snap: Snapshot, r: ElementRecord, why?: string): LocatorCandidate {
  const l = locatorOf(snap, r);
  return {
    ref: `@${snap.id}:e${r.index}`,
    locator: l === undefined ? "" : printLocator(l),
    line: printedLineOf(snap, r.index),
    ancestors: ancestorLabels(snap, r),
    ...(why === undefined ? {} : { why }),
  };
}

/**
 * The records of `snap` closest to what `l` asks for, best first: 4 for the
 * same role, 3 × the name's similarity, 2 × the overlap of named ancestors,
 * 2 × nearness to the recorded place when `near` gives one. At most 3, each
 * scoring at least 3.
 */
export function candidatesFor(snap: Snapshot, l: Locator, near?: NearHint): LocatorCandidate[] {
  const last = l.path.at(-1);
  if (last === undefined) return [];
  const role = fold(last.role);
  const wantedAncestors = near?.ancestors ?? l.path.slice(0, -1).map(printedStep);
  const scored: { r: ElementRecord; score: number; why: string }[] = [];
  for (const r of snap.records) {
    if (r.index === 0) continue;
    const sameRole = hasRole(role, r, snap.style);
    const name = nameSimilarity(last.name, nameOf(r));
    const ancestors = jaccard(wantedAncestors, ancestorLabels(snap, r));
    let place = 0;
    // Both window-relative: a window moved keeps its elements' places.
    if (near?.frame && r.frame) {
      const dx = r.frame.x - near.frame.x;
      const dy = r.frame.y - near.frame.y;
      place = 1 - Math.min(1, Math.hypot(dx, dy) / PLACE_RANGE);
    }
    const score = 4 * (sameRole ? 1 : 0) + 3 * name + 2 * ancestors + 2 * place;
    if (score < MIN_SCORE) continue;
    scored.push({
      r,
      score,
      why: whyOf(sameRole, last.name === undefined ? undefined : name, ancestors, place),
    });
  }
  scored.sort((a, b) => b.score - a.score || a.r.index - b.r.index);
  return scored.slice(0, MAX_CANDIDATES).map((s) => candidateOf(snap, s.r, s.why));
}

/** "same role and place, name differs", in words. */
function whyOf(sameRole: boolean, name: number | undefined, ancestors: number, place: number): string {
  const same: string[] = [];
  if (sameRole) same.push("role");
  if (name === 1) same.push("name");
  if (ancestors === 1) same.push("ancestors");
  else if (ancestors > 0) same.push("some ancestors");
  if (place >= 0.9) same.push("place");
  const differs: string[] = [];
  if (!sameRole) differs.push("role differs");
  if (name !== undefined && name < 1) differs.push(name >= 0.5 ? "name similar" : "name differs");
  const head =
    same.length === 0
      ? ""
      : `same ${same.length === 1 ? same[0] : `${same.slice(0, -1).join(", ")} and ${same.at(-1)}`}`;
  return [head, ...differs].filter((s) => s !== "").join(", ");
}
