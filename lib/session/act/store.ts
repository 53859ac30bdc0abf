/**
 * The snapshots a session holds: per app the recent ones (oldest released
 * first), by id for refs, the owner of every record, and which one is the
 * app's latest — the view a bare index refers to. Only snapshots handed to
 * the caller are kept here; re-observations made inside an action are
 * transient and never become latest (refs-and-actions.md).
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { collapsedInto } from "../../observe/collapsed.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { ElementRecord } from "../../render/records.js";
import { printLocator } from "../locator/grammar.js";
import type { Locator } from "../locator/types.js";

/**
 * A target: a bare index (latest snapshot of the app), a ref "@s…:e12", a
 * record of a held snapshot, or a locator (the Session locates it first,
 * waiting up to `timeoutMs`, default 5000, and then acts on the record found).
 */
export type Target = number | string | ElementRecord | LocatorTarget;

export interface LocatorTarget {
  locator: string | Locator;
  timeoutMs?: number;
}

/** Whether a target names its element by a locator (resolved by the Session, never by the store). */
export function isLocatorTarget(t: unknown): t is LocatorTarget {
  return (
    t !== null &&
    typeof t === "object" &&
    "locator" in t &&
    typeof (t as { index?: unknown }).index !== "number"
  );
}

/** A locator target as the locator's text. */
export function locatorTargetText(t: LocatorTarget): string {
  return typeof t.locator === "string" ? t.locator : printLocator(t.locator);
}

/** The snapshot and record a target names. */
export interface Addressed {
  snapshot: Snapshot;
  record: ElementRecord;
}

const REF = /^@(s[a-z0-9]{7}):e(\d{1,9})$/;

/**
 * How many ids of snapshots it let go a store remembers, so that a refusal
 * can say "let go" or "never took" truthfully (a ref from another session, or
 * from another MCP server: a client that starts one per call). Ids are a few
 * bytes; past this many the oldest are forgotten, and the refusal says it
 * cannot tell.
 */
const REMEMBERED_IDS = 4096;

/** The hint of a ref whose snapshot the session never took: refs do not cross sessions (doors/phrases.ts). */
const NEVER_TOOK_HINT =
  "refs live as long as the session that took the snapshot; take a new snapshot in this session and use its refs";

export class SnapshotStore {
  private readonly byApp = new Map<string, Snapshot[]>();
  private readonly byId = new Map<string, Snapshot>();
  private readonly owner = new WeakMap<ElementRecord, Snapshot>();
  private readonly lastObserved = new Map<string, number>();
  private readonly kind = new WeakMap<Snapshot, "agent" | "wait">();
  private readonly latestOfApp = new Map<string, Snapshot>();
  private latest: Snapshot | undefined;
  /** Ids of snapshots let go (evicted or closed), oldest first; bounded by REMEMBERED_IDS. */
  private readonly letGo = new Set<string>();
  /** Whether ids were forgotten from `letGo`: then an unknown id may be one let go long ago. */
  private forgot = false;

  constructor(private readonly keepPerApp: number) {}

  /**
   * Keeps a snapshot handed to the caller; the oldest beyond the limit is
   * released. `by: "wait"`: a wait's observation, held in a budget of its
   * own, so waits never push out the snapshots the agent took or its
   * actions returned. `latest: false` (a wait that timed out): held for
   * refs, but the app's latest, what a bare index means, stays as it was.
   */
  keep(snap: Snapshot, how: { by?: "agent" | "wait"; latest?: boolean } = {}): void {
    const key = appKey(snap);
    const list = this.byApp.get(key) ?? [];
    const kind = how.by ?? "agent";
    const at = list.indexOf(snap);
    if (at >= 0) list.splice(at, 1);
    this.kind.set(snap, kind);
    if (how.latest === false) {
      // Not latest: it goes before the app's latest, which stays last.
      const top = list.at(-1);
      list.splice(top && this.latestOfApp.get(key) === top ? list.length - 1 : list.length, 0, snap);
    } else {
      list.push(snap);
      this.latestOfApp.set(key, snap);
    }
    // The app's latest is never the one let go: a bare index must keep meaning what it printed.
    const evictable = (s: Snapshot) => this.kind.get(s) === kind && s !== this.latestOfApp.get(key);
    while (list.filter((s) => this.kind.get(s) === kind).length > this.keepPerApp && list.some(evictable)) {
      const old = list.splice(list.findIndex(evictable), 1)[0]!;
      this.forget(old);
      void old.release();
    }
    this.byApp.set(key, list);
    this.byId.set(snap.id, snap);
    for (const rec of snap.records) this.owner.set(rec, snap);
    if (how.latest !== false) {
      this.lastObserved.set(key, Date.now());
      this.latest = snap;
    }
  }

  /** When the app of `snap` was last observed (ms since the epoch). */
  observedAt(snap: Snapshot): number {
    return this.lastObserved.get(appKey(snap)) ?? snap.takenAt;
  }

  /**
   * The latest snapshot of an app. A name must name one app: when the
   * session holds snapshots of several running instances with that name, a
   * bare index could mean either, so it is refused (AMBIGUOUS_APP) with their pids.
   */
  latestOf(app: string | number | undefined): Snapshot {
    if (app === undefined) {
      if (!this.latest) throw new AxsnapError("SNAPSHOT_NOT_FOUND", "the session has no snapshot yet");
      return this.latest;
    }
    const matches: Snapshot[] = [];
    for (const [key, list] of this.byApp) {
      const snap = this.latestOfApp.get(key) ?? list.at(-1);
      if (snap && (snap.app.pid === app || snap.app.name.toLowerCase() === String(app).toLowerCase()))
        matches.push(snap);
    }
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_APP",
        `the session observed ${matches.length} apps named ${String(app)}: ${matches.map((s) => `${s.app.name} (pid ${s.app.pid})`).join(", ")}`,
        { hint: `pass the pid of the one you mean, e.g. { app: ${matches[0]!.app.pid} }` },
      );
    if (matches[0]) return matches[0];
    throw new AxsnapError("SNAPSHOT_NOT_FOUND", `the session has no snapshot of ${String(app)}`);
  }

  /** The snapshot and record a target names, without touching the app. */
  address(target: Target, app?: string | number): Addressed {
    let snap: Snapshot;
    let index: number;
    if (typeof target === "number") {
      if (!Number.isInteger(target) || target < 0 || target > 1e9)
        throw invalidArgument(
          `an index must be a whole number >= 0, got ${target}`,
          "use an index printed in the snapshot text",
        );
      snap = this.latestOf(app);
      index = target;
    } else if (typeof target === "string") {
      const t = target.trim();
      if (/^\d{1,9}$/.test(t)) return this.address(Number(t), app);
      if (/^@e\d+$/.test(t))
        throw invalidArgument(
          `the ref ${t} does not say which snapshot it came from`,
          'use the full ref "@<snapshot id>:e<index>" printed for the snapshot, or a bare index',
        );
      const m = REF.exec(t);
      if (!m)
        throw invalidArgument(
          `not a target: ${JSON.stringify(target)}`,
          'use an index (12) or a ref ("@s8f3k2p9:e12")',
        );
      const found = this.byId.get(m[1]!);
      if (!found) throw this.notHeld(m[1]!);
      snap = found;
      index = Number(m[2]);
    } else if (
      target !== null &&
      typeof target === "object" &&
      typeof (target as ElementRecord).index === "number"
    ) {
      const owner = this.owner.get(target as ElementRecord);
      if (!owner || !this.byId.has(owner.id))
        throw owner
          ? this.notHeld(owner.id)
          : new AxsnapError(
              "SNAPSHOT_NOT_FOUND",
              "that record belongs to a snapshot this session never took: records, like refs, live as long as the session that took their snapshot",
              { hint: NEVER_TOOK_HINT },
            );
      snap = owner;
      index = (target as ElementRecord).index;
    } else if (isLocatorTarget(target)) {
      throw invalidArgument(
        "a locator target must be located first",
        "pass it to a Session action or session.locate(), which find the element it names",
      );
    } else {
      throw invalidArgument(
        `not a target: ${String(target)}`,
        'use an index (12) or a ref ("@s8f3k2p9:e12")',
      );
    }
    if (snap.released) throw new AxsnapError("SNAPSHOT_NOT_FOUND", `snapshot ${snap.id} was released`);
    const record = snap.records[index];
    if (!record)
      throw new AxsnapError(
        "ELEMENT_NOT_FOUND",
        `snapshot ${snap.id} printed no element ${index} (0-${snap.records.length - 1})`,
      );
    const into = collapsedInto(snap, index);
    if (into !== undefined) {
      const holder = snap.records[into]!;
      const what =
        holder.title === undefined ? holder.roleText : `${holder.roleText} ${JSON.stringify(holder.title)}`;
      // An index is the address of a line the agent read; this one is inside a collapsed line.
      throw new AxsnapError(
        "ELEMENT_NOT_FOUND",
        `snapshot ${snap.id} did not print element ${index}: it is inside element ${into} (${what}), which it printed collapsed; nothing was sent`,
        {
          hint: `open it with root "@${snap.id}:e${into}" (get_app_state root, \`axsnap snapshot --root\`, snapshot({ root })) and act on what that prints`,
        },
      );
    }
    return { snapshot: snap, record };
  }

  /** The newest held snapshot of `snap`'s app, other than `snap`, that `test` accepts. */
  lastOf(snap: Snapshot, test: (s: Snapshot) => boolean): Snapshot | undefined {
    const list = this.byApp.get(appKey(snap)) ?? [];
    for (let i = list.length - 1; i >= 0; i--) {
      const s = list[i]!;
      if (s !== snap && !s.released && test(s)) return s;
    }
    return undefined;
  }

  /** Drops a snapshot from the ids refs resolve by, remembering that it was held. */
  private forget(snap: Snapshot): void {
    this.byId.delete(snap.id);
    this.letGo.add(snap.id);
    if (this.letGo.size > REMEMBERED_IDS) {
      this.letGo.delete(this.letGo.values().next().value!);
      this.forgot = true;
    }
  }

  /** The refusal of a ref whose snapshot is not held: let go, never taken, or (ids forgotten) either. */
  private notHeld(id: string): AxsnapError {
    const keeps = `it keeps the ${this.keepPerApp} latest snapshots of each app`;
    if (this.letGo.has(id))
      return new AxsnapError("SNAPSHOT_NOT_FOUND", `this session let snapshot ${id} go: ${keeps}`);
    if (this.forgot)
      return new AxsnapError(
        "SNAPSHOT_NOT_FOUND",
        `this session holds no snapshot ${id}: it never took it, or let it go long ago (${keeps})`,
        { hint: NEVER_TOOK_HINT },
      );
    return new AxsnapError(
      "SNAPSHOT_NOT_FOUND",
      `this session never took snapshot ${id}: a ref names a snapshot of the session that took it, and lives as long as that session`,
      { hint: NEVER_TOOK_HINT },
    );
  }

  /** Releases every snapshot held. */
  async close(): Promise<void> {
    for (const list of this.byApp.values()) for (const s of list) await s.release();
    for (const id of [...this.byId.keys()]) this.forget(this.byId.get(id)!);
    this.byApp.clear();
    this.byId.clear();
    this.latestOfApp.clear();
    this.latest = undefined;
  }
}

function appKey(snap: Snapshot): string {
  return String(snap.app.pid);
}
