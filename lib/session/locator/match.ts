/**
 * Which records of one observation a locator names (issue 34, design 2.2).
 * Pure over the snapshot: the live window listing is locate()'s business.
 * Values and states never take part: they change, and changing is what
 * actions do.
 */

import type { Snapshot } from "../../observe/snapshot-types.js";
import type { ElementRecord } from "../../render/records.js";
import { fold, matchLists, patternOf } from "../pattern.js";
import { isContext, nameOf } from "../record-names.js";
import { hasRole } from "../role-words.js";
import type { Locator, LocatorStep } from "./types.js";

export interface LocatorIndex {
  /** parent[i]: the record whose subtree holds record i, or -1 (line 0, or a menu bar root). */
  parent: Int32Array;
  /** contexts[i]: the ancestors that say something (find's isContext), nearest first. */
  contexts: number[][];
  /** The records by name (nameOf), in document order: a named step starts from these, not from every record. */
  byName: Map<string, ElementRecord[]>;
}

const indexes = new WeakMap<Snapshot, LocatorIndex>();

function isPrefix(a: readonly number[], b: readonly number[]): boolean {
  if (a.length > b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Built once per snapshot: records come in document order, so a stack per path root finds each parent. */
export function locatorIndex(snap: Snapshot): LocatorIndex {
  const cached = indexes.get(snap);
  if (cached) return cached;
  const n = snap.records.length;
  const parent = new Int32Array(n).fill(-1);
  const stacks = new Map<string, ElementRecord[]>();
  for (const r of snap.records) {
    const stack = stacks.get(r.pathRoot) ?? [];
    stacks.set(r.pathRoot, stack);
    const holds = (t: ElementRecord) =>
      // A summary's text line shares its container's path: its parent is that summary line.
      (r.synthetic === "summary-text" && t.synthetic === "text-summary" && isPrefix(t.path, r.path)) ||
      (t.path.length < r.path.length && isPrefix(t.path, r.path));
    while (stack.length > 0 && !holds(stack[stack.length - 1]!)) stack.pop();
    if (stack.length > 0) parent[r.index] = stack[stack.length - 1]!.index;
    stack.push(r);
  }
  const contexts: number[][] = [];
  for (let i = 0; i < n; i++) {
    const out: number[] = [];
    for (let p = parent[i]!; p > 0; p = parent[p]!) if (isContext(snap.records[p]!)) out.push(p);
    contexts.push(out);
  }
  const byName = new Map<string, ElementRecord[]>();
  for (const r of snap.records) {
    const name = nameOf(r);
    if (name === undefined) continue;
    const list = byName.get(name);
    if (list) list.push(r);
    else byName.set(name, [r]);
  }
  const index = { parent, contexts, byName };
  indexes.set(snap, index);
  return index;
}

function stepMatches(snap: Snapshot, step: LocatorStep, among: readonly ElementRecord[]): ElementRecord[] {
  const role = fold(step.role);
  let out = among.filter(
    (r) => hasRole(role, r, snap.style) && (step.id === undefined || r.identifier === step.id),
  );
  const name = step.name;
  if (typeof name === "string") out = out.filter((r) => nameOf(r) === name);
  else if (name instanceof RegExp) {
    // Through pattern.ts: a regular expression runs under its time budget, as find's do.
    const hits = matchLists(
      "name",
      patternOf("name", name),
      out.map((r) => {
        const n = nameOf(r);
        return n === undefined ? [] : [n];
      }),
    );
    out = out.filter((_, i) => hits[i]);
  }
  return out;
}

function windowMatches(snap: Snapshot, l: Locator): boolean {
  if (l.app !== undefined && fold(l.app) !== fold(snap.app.name)) return false;
  const w = l.window;
  if (w === undefined) return true;
  if (w.kind !== undefined && w.kind !== (snap.window.kind ?? "window")) return false;
  if (typeof w.title === "string") return w.title === snap.window.title;
  if (w.title instanceof RegExp)
    return matchLists("window title", patternOf("window title", w.title), [[snap.window.title]])[0]!;
  return true;
}

/** Steps without a regular expression, matched over the whole snapshot once: locatorOf asks the same steps many times. */
const stepCache = new WeakMap<Snapshot, Map<string, ElementRecord[]>>();

function matchesAnywhere(snap: Snapshot, step: LocatorStep): ElementRecord[] {
  if (step.name instanceof RegExp) return stepMatches(snap, step, snap.records);
  // A name matches exactly: only the records with that name can match.
  const among = step.name === undefined ? snap.records : (locatorIndex(snap).byName.get(step.name) ?? []);
  let cache = stepCache.get(snap);
  if (!cache) {
    cache = new Map();
    stepCache.set(snap, cache);
  }
  const key = JSON.stringify([fold(step.role), step.name ?? null, step.id ?? null]);
  let hit = cache.get(key);
  if (!hit) {
    hit = stepMatches(snap, step, among);
    cache.set(key, hit);
  }
  return hit;
}

/** The records `l` names in `snap`, in document order: exactly one when it is unique there. */
export function matchLocator(snap: Snapshot, l: Locator): ElementRecord[] {
  if (!windowMatches(snap, l)) return [];
  if (l.path.length === 0) return snap.records.length > 0 ? [snap.records[0]!] : [];
  const { parent } = locatorIndex(snap);
  let previous: Set<number> | undefined;
  let out: ElementRecord[] = [];
  for (const step of l.path) {
    const prev = previous;
    // Role and name first, over the whole snapshot (cached); the ancestor walk only for what they leave.
    out = matchesAnywhere(snap, step);
    if (prev)
      out = out.filter((r) => {
        for (let p = parent[r.index]!; p >= 0; p = parent[p]!) if (prev.has(p)) return true;
        return false;
      });
    if (step.nth !== undefined) out = out.length >= step.nth ? [out[step.nth - 1]!] : [];
    if (out.length === 0) return [];
    previous = new Set(out.map((r) => r.index));
  }
  // A copy: the cached list must not change under a caller.
  return [...out];
}
