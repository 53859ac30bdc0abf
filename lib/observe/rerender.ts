/**
 * Another view of a snapshot already taken, without observing again: the
 * snapshot keeps a way to render its validated tree anew with other view
 * options (a token budget, an outline). The plan is the same, so every index
 * and record is the snapshot's own: a line of the new text can be acted on by
 * the snapshot's refs.
 *
 * Why: an action's reply that must print a whole window larger than the reply
 * budget prints it through the budget view (doors/reply.ts), and the fresh
 * snapshot was taken whole (the agent's own view options apply to it).
 */
import type { ViewOptions, ViewSummary } from "../render/index.js";
import type { Snapshot } from "./snapshot-types.js";

export interface Rerendered {
  text: string;
  view?: ViewSummary;
}

type Rerender = (view: ViewOptions) => Rerendered;

// Weak: the tree it keeps goes with the snapshot.
const rerenders = new WeakMap<Snapshot, Rerender>();

/** @internal lib/observe/snapshot.ts */
export function rememberRerender(snapshot: Snapshot, rerender: Rerender): void {
  rerenders.set(snapshot, rerender);
}

/** The snapshot's text with these view options; undefined for a snapshot not made by createSnapshot. */
export function rerenderView(snapshot: Snapshot, view: ViewOptions): Rerendered | undefined {
  return rerenders.get(snapshot)?.(view);
}
