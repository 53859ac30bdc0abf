/**
 * Locators on the command line (issue 34): `axsnap locate LOCATOR` prints the
 * one element a locator names (its line, its ref, its locator), and an
 * action on a locator TARGET prints the ref the session located. Either way
 * the observation it was found in is stored like a printed snapshot's, so
 * that ref acts from a later process too.
 */

import type { Snapshot } from "../../observe/snapshot.js";
import type { Located } from "../../session/locator/locate.js";
import type { Session } from "../../session/session.js";
import type { Step } from "./grammar.js";
import { type Outcome, refOf, type TargetData } from "./output.js";

/** What locate needs of the command runner (commands.ts's Runner). */
export interface LocateHost {
  readonly session: Session;
  app: string | number | undefined;
  /** Stores a located observation so its refs resolve from later processes. */
  storeLocated(snap: Snapshot): void;
}

export interface LocateData {
  ref: string;
  snapshotId: string;
  index: number;
  /** The element's printed line, without its index. */
  line: string;
  /** The locator as asked, printed in full. */
  locator: string;
  app: { name: string; pid: number };
  window: { title: string };
  ms: number;
  rounds: number;
  notes: string[];
}

/** The printed line of element `index` in a snapshot's text, without its indent and index. */
export function printedLine(snap: Snapshot, index: number): string {
  const numbered = snap.style === "compact" ? /^ *(\d+): (.*)$/ : /^\t*(\d+)(?: (.*))?$/;
  for (const raw of snap.text.split("\n")) {
    const m = numbered.exec(raw);
    if (m && Number(m[1]) === index) return m[2] ?? "";
  }
  return snap.records[index]?.roleText ?? "";
}

export async function runLocate(host: LocateHost, step: Step): Promise<Outcome> {
  const found: Located = await host.session.locate(step.locator!, {
    ...(step.app === undefined ? {} : { app: step.app }),
    ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
  });
  const snap = found.snapshot;
  host.storeLocated(snap);
  host.app = snap.app.name;
  const data: LocateData = {
    ref: found.ref,
    snapshotId: snap.id,
    index: found.record.index,
    line: printedLine(snap, found.record.index),
    locator: found.locator,
    app: { name: snap.app.name, pid: snap.app.pid },
    window: { title: snap.window.title },
    ms: Math.round(found.ms),
    rounds: found.rounds,
    notes: [...found.notes],
  };
  const lines = [
    `${data.ref} ${data.line}`,
    `locator: ${data.locator}`,
    `found in ${data.ms} ms (${data.rounds} observation${data.rounds === 1 ? "" : "s"}) in snapshot ${snap.id} of ${snap.app.name} (pid ${snap.app.pid}), window ${JSON.stringify(snap.window.title)}; act on it with \`axsnap click ${data.ref}\` (or any command that takes a TARGET)`,
    ...data.notes.map((n) => `note: ${n}`),
  ];
  return { data, text: `${lines.join("\n")}\n` };
}

/**
 * The target an action on a locator reached (the session located it): its
 * ref in the observation it was located in, which is stored for later
 * processes.
 */
export function locatedTarget(
  host: LocateHost,
  at: { snapshotId: string; index: number },
  locator: string,
): TargetData & { locator: string } {
  const ref = refOf(at.snapshotId, at.index);
  const { snapshot } = host.session.address(ref);
  host.storeLocated(snapshot);
  host.app = snapshot.app.name;
  return { ref, snapshotId: at.snapshotId, index: at.index, locator };
}
