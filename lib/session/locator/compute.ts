/**
 * The shortest locator that names one record alone in its window (issue 34,
 * design 2.3), searched as Playwright's generator does: role and name, then
 * the identifier, then named ancestors, and an ordinal only as a last resort.
 */

import type { Snapshot } from "../../observe/snapshot-types.js";
import type { ElementRecord } from "../../render/records.js";
import { compactRole } from "../../render/roles.js";
import { nameOf } from "../record-names.js";
import { isPrintableRole } from "./grammar.js";
import { locatorIndex, matchLocator } from "./match.js";
import type { Locator, LocatorStep, WindowKind } from "./types.js";

/** Ancestors tried in combinations: the nearest ones and the outermost. */
const ANCESTORS_TRIED = 8;
/** At most this many ancestors before the record itself. */
const MAX_ANCESTORS = 3;

/** A record's step: its printed role (the raw role when the printed one cannot be written), its name. */
function stepOf(snap: Snapshot, r: ElementRecord): LocatorStep | undefined {
  const name = nameOf(r);
  const named = (role: string): LocatorStep => (name === undefined ? { role } : { role, name });
  // Linux's "text" reads as a label in a compact snapshot (role-words.ts): the compact word names the field there.
  const compact = compactRole(r.subrole === undefined ? r : { role: r.role, subrole: r.subrole });
  for (const role of [r.roleText, r.role, compact]) {
    if (role === "" || !isPrintableRole(role)) continue;
    const step = named(role);
    // The step must find its own record: "text" reads in the snapshot's style, a printed word may not.
    if (matchLocator(snap, { path: [step] }).includes(r)) return step;
  }
  return undefined;
}

/** Combinations of k indices of `n`, nearest first (lexicographic over nearest-first indices). */
function* combinations(n: number, k: number, from = 0): Generator<number[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = from; i <= n - k; i++) for (const rest of combinations(n, k - 1, i + 1)) yield [i, ...rest];
}

/**
 * The shortest locator unique to `record` in `snap`, or undefined where
 * uniqueness cannot be shown: a subtree snapshot (line 0 is not the window),
 * or a record whose role cannot be written.
 */
export function locatorOf(snap: Snapshot, record: ElementRecord): Locator | undefined {
  const root = snap.records[0];
  if (root === undefined || root.pathRoot !== "window" || root.path.length !== 0) return undefined;
  if (snap.records[record.index] !== record) return undefined;
  const window: NonNullable<Locator["window"]> = { title: snap.window.title };
  if (snap.window.kind !== undefined && snap.window.kind !== "window")
    window.kind = snap.window.kind as WindowKind;
  const base = { app: snap.app.name, window };
  if (record.index === 0) return { ...base, path: [] };
  const self = stepOf(snap, record);
  if (self === undefined) return undefined;
  const unique = (path: LocatorStep[]) => {
    const m = matchLocator(snap, { ...base, path });
    return m.length === 1 && m[0] === record;
  };
  if (unique([self])) return { ...base, path: [self] };
  const withId: LocatorStep | undefined =
    record.identifier === undefined ? undefined : { ...self, id: record.identifier };
  if (withId && unique([withId])) return { ...base, path: [withId] };
  const { contexts } = locatorIndex(snap);
  const all = contexts[record.index]!; // nearest first
  const kept =
    all.length <= ANCESTORS_TRIED ? all : [...all.slice(0, ANCESTORS_TRIED - 1), all[all.length - 1]!];
  const steps = new Map<number, LocatorStep | undefined>();
  const ancestorStep = (i: number) => {
    if (!steps.has(i)) steps.set(i, stepOf(snap, snap.records[i]!));
    return steps.get(i);
  };
  const last = withId ?? self;
  // The record matches [..ancestors, self] by construction (each ancestor's step finds that ancestor), so a
  // combination is unique when no other record that `self` matches lies under matches of its steps in order:
  // told over the others' ancestor chains, not by matching the whole path again for each combination.
  const { parent } = locatorIndex(snap);
  const others = matchLocator(snap, { ...base, path: [self] })
    .filter((c) => c !== record)
    .map((c) => {
      const chain: number[] = [];
      for (let p = parent[c.index]!; p >= 0; p = parent[p]!) chain.push(p);
      return chain; // nearest first
    });
  const usable = kept.filter((i) => ancestorStep(i) !== undefined);
  const sets = new Map<number, Set<number>>();
  const setOf = (i: number) => {
    let set = sets.get(i);
    if (!set) {
      set = new Set(matchLocator(snap, { path: [ancestorStep(i)!] }).map((r) => r.index));
      sets.set(i, set);
    }
    return set;
  };
  /** Whether a chain (nearest first) holds matches of the steps (nearest first) in order: greedy, innermost first. */
  const under = (chain: number[], steps: number[]) => {
    let j = 0;
    for (const p of chain) if (j < steps.length && setOf(steps[j]!).has(p)) j++;
    return j === steps.length;
  };
  // When another record lies under all of them in order, it lies under every combination: none can tell.
  if (!others.some((chain) => under(chain, usable)))
    for (let k = 1; k <= Math.min(MAX_ANCESTORS, usable.length); k++) {
      for (const combo of combinations(usable.length, k)) {
        const steps = combo.map((c) => usable[c]!);
        if (others.some((chain) => under(chain, steps))) continue;
        // Printed outer to inner: the combination is nearest first.
        const path = [...steps.map((i) => ancestorStep(i)!).reverse(), self];
        if (unique(path)) return { ...base, path };
      }
    }
  // The last resort: an ordinal. Only the ancestors that narrow the matches stay in front of it (nearest
  // first), so the ordinal counts within the nearest telling container, and the locator stays short.
  let chain: LocatorStep[] = [];
  let matches = matchLocator(snap, { ...base, path: [last] });
  for (const a of all) {
    const step = ancestorStep(a);
    if (step === undefined) continue;
    const narrower = matchLocator(snap, { ...base, path: [step, ...chain, last] });
    if (narrower.length < matches.length && narrower.includes(record)) {
      chain = [step, ...chain];
      matches = narrower;
      if (matches.length === 1) return { ...base, path: [...chain, last] };
    }
  }
  const at = matches.indexOf(record);
  if (at === -1) return undefined;
  return { ...base, path: [...chain, { ...last, nth: at + 1 }] };
}
