import type { Snapshot } from "../../lib/index.js";

/** The index of the first printed line whose text after its index matches `re`. */
export function indexOf(snap: Snapshot, re: RegExp): number {
  for (const raw of snap.text.split("\n")) {
    const m = /^(\d+) (.*)$/.exec(raw.trim());
    if (m && re.test(m[2]!)) return Number(m[1]);
  }
  throw new Error(`no line matches ${re} in snapshot ${snap.id}:\n${snap.text}`);
}
