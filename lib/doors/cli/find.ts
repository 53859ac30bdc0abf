/**
 * `axsnap find`: the library's find (lib/session/find.ts) from the command line. The
 * observation is stored like a snapshot's (Runner.hand), so a ref it prints
 * is acted on from a later process exactly as a ref `axsnap snapshot`
 * printed: found again in that window by its stored identity.
 */

import type { Snapshot } from "../../observe/snapshot.js";
import { findText, matchData, queryFromDoor } from "../../session/find.js";
import type { Session } from "../../session/session.js";
import type { Step } from "./grammar.js";
import type { Outcome, SnapshotData } from "./output.js";

/** What find needs of the command runner (commands.ts's Runner, which calls runFind). */
export interface FindHost {
  readonly session: Session;
  /** Stores the observation like a printed snapshot's, so later processes resolve its refs. */
  hand(snap: Snapshot, step: Step): Promise<SnapshotData>;
}

export interface FindData {
  snapshotId: string;
  app: { name: string; pid: number };
  window: { title: string };
  /** The query as the text says it. */
  query: string;
  complete: boolean;
  total: number;
  more: number;
  matches: { index: number; ref: string; role: string; name?: string; line: string; ancestors: string[] }[];
  /** The stored snapshot's file (what later processes resolve refs against). */
  stored: string;
}

export async function runFind(runner: FindHost, step: Step): Promise<Outcome> {
  const query = queryFromDoor({
    role: step.role,
    name: step.name,
    exact: step.exact,
    text: step.text,
    states: step.states,
  });
  const r = await runner.session.find(step.app!, query, {
    ...(step.window === undefined ? {} : { window: { title: step.window } }),
    ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
    ...(step.limit === undefined ? {} : { limit: step.limit }),
  });
  const held = await runner.hand(r.snapshot, step);
  const snap = r.snapshot;
  const data: FindData = {
    snapshotId: snap.id,
    app: { name: snap.app.name, pid: snap.app.pid },
    window: { title: snap.window.title },
    query: r.query,
    complete: snap.complete,
    total: r.total,
    more: r.more,
    matches: r.matches.map(matchData),
    stored: held.stored,
  };
  const app = /^[\w.-]+$/.test(snap.app.name) ? snap.app.name : JSON.stringify(snap.app.name);
  const text = findText(r, {
    snapshot: `\`axsnap snapshot --app ${app}\``,
    limit: "--limit",
    act: "act on one with `axsnap click REF` (or any command that takes a TARGET), from this or a later process",
  });
  return { data, text: `${text}\n` };
}
