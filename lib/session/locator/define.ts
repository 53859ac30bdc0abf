/**
 * `record.locator` (issue 34, design 2.3): every record of a window snapshot
 * answers with its shortest unique locator, printed. A non-enumerable lazy
 * getter: nothing is computed until it is read, and JSON.stringify, the CLI
 * store's records and `{ ...spread }` leave it out (a copy of a record is no
 * longer in the snapshot where it was unique).
 */

import type { Snapshot } from "../../observe/snapshot-types.js";
import type { ElementRecord } from "../../render/records.js";
import { locatorOf } from "./compute.js";
import { printLocator } from "./grammar.js";

const owners = new WeakMap<ElementRecord, Snapshot>();
const printed = new WeakMap<ElementRecord, string | undefined>();

/** One getter for every record: the snapshot it belongs to is looked up, the answer cached. */
function locatorGetter(this: ElementRecord): string | undefined {
  if (printed.has(this)) return printed.get(this);
  const snap = owners.get(this);
  let out: string | undefined;
  if (snap !== undefined) {
    const l = locatorOf(snap, this);
    out = l === undefined ? undefined : printLocator(l);
  }
  printed.set(this, out);
  return out;
}

/** Gives each record of `snap` its `locator` getter (undefined in a subtree snapshot, where uniqueness cannot be shown). */
export function defineLocators(snap: Snapshot): void {
  for (const r of snap.records) {
    owners.set(r, snap);
    Object.defineProperty(r, "locator", { get: locatorGetter, enumerable: false, configurable: true });
  }
}
