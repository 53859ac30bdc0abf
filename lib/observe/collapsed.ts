/**
 * Which records of a snapshot its text does not show: an outline or a
 * budget (lib/render/budget.ts) prints some lines collapsed, `(+37
 * elements)`, and the records inside them exist (indices are the full
 * plan's) but no line of this snapshot shows them.
 *
 * Acting on one is refused (act/store.ts): an index is the address of a
 * line the agent read (refs-and-actions.md: "an index that the snapshot
 * never printed fails with ELEMENT_NOT_FOUND"), and these were not read;
 * the refusal names the collapsed line to open with `root`. A diff lists
 * their changes under that line, not one by one (diff.ts).
 */
import type { Snapshot } from "./snapshot-types.js";

const within = new WeakMap<Snapshot, Int32Array>();

export function rememberCollapsed(snapshot: Snapshot, into: Int32Array | undefined): void {
  if (into !== undefined) within.set(snapshot, into);
}

/** The index of the collapsed line holding record `index`, or undefined when that record printed. */
export function collapsedInto(snapshot: Snapshot, index: number): number | undefined {
  const into = within.get(snapshot)?.[index];
  return into === undefined || into < 0 ? undefined : into;
}
