/**
 * What every wait on one app shares, so that waits cost the backend's single
 * worker about as much as one wait does, and a call that reads or acts is
 * never queued behind them (issue 18, item 4: 20 waits pending made a click
 * miss its deadline).
 *
 * - One event pump per app: a single native waitEvents at a time, in short
 *   slices that return early when any other job is queued on the worker
 *   (src-native/napi/events_js.cc), so an action's job waits at most one short turn. Every wait
 *   on the app subscribes to the pump's stamp.
 * - One poll clock per app: the safety net (an observation at least every
 *   POLL_MS) ticks for all its waits at once.
 * - One observation per wake: waits woken by the same event or tick, asking
 *   for the same walk, share the walk (ObservationShare).
 */
import { callNative, type NativeBackend } from "../../native.js";
import type { Snapshot } from "../../observe/snapshot.js";

/** The longest one native wait is asked for (it returns sooner when another job is queued). */
const SLICE_MS = 250;

interface Waiter {
  since: number;
  wake: (at: number) => void;
  fail: (e: unknown) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** The change events of one app, heard by one native wait at a time for all its waits. */
export class EventPump {
  /** The app's event stamp as last heard (only grows). */
  stamp = 0;
  private heard = false;
  private readonly waiters = new Set<Waiter>();
  private running = false;
  private readonly born = performance.now();
  /** Waits using this pump (pumpOf / letPumpGo); at none it leaves its backend's map. */
  users = 0;

  constructor(
    private readonly backend: NativeBackend,
    private readonly pid: number,
    private readonly pollMs: number,
  ) {}

  /**
   * The stamp now: what the running pump last heard (it returns as soon as an
   * event is counted), or, when it is not running, asked of the backend.
   */
  async current(): Promise<number> {
    if (this.running && this.heard) return this.stamp;
    return (await this.fresh()).stamp;
  }

  /**
   * Asks the backend now (what is pending is dispatched first): the stamp, when the latest event
   * came, and the app's quiet floor (a silence shorter than it proves nothing: Chromium batches).
   */
  async fresh(): Promise<{ stamp: number; lastEventAt: number | undefined; quietFloorMs: number }> {
    const st = await callNative(() => this.backend.waitEvents(this.pid, Number.MAX_SAFE_INTEGER, 0));
    this.note(st.stamp);
    return {
      stamp: st.stamp,
      lastEventAt: st.msSinceLast < 0 ? undefined : performance.now() - st.msSinceLast,
      quietFloorMs: st.quietFloorMs ?? 0,
    };
  }

  /** When this app's safety-net poll next ticks (the same instant for all its waits). */
  nextTick(): number {
    const now = performance.now();
    return this.born + (Math.floor((now - this.born) / this.pollMs) + 1) * this.pollMs;
  }

  /**
   * Resolves with when the wake happened (an event past `since`, this app's
   * poll tick, or `maxMs` passed); rejects when the backend fails.
   */
  next(since: number, maxMs: number): Promise<number> {
    if (this.stamp > since) return Promise.resolve(performance.now());
    const tick = this.nextTick();
    const until = Math.min(performance.now() + maxMs, tick);
    return new Promise<number>((resolve, reject) => {
      const w: Waiter = {
        since,
        wake: (at) => {
          clearTimeout(w.timer);
          this.waiters.delete(w);
          resolve(at);
        },
        fail: (e) => {
          clearTimeout(w.timer);
          this.waiters.delete(w);
          reject(e);
        },
        // Waits of one tick wake with one timestamp, so they can share what they observe next.
        timer: setTimeout(() => w.wake(until === tick ? tick : performance.now()), until - performance.now()),
      };
      this.waiters.add(w);
      if (!this.running) void this.run();
    });
  }

  private note(stamp: number): void {
    this.heard = true;
    if (stamp > this.stamp) this.stamp = stamp;
  }

  private async run(): Promise<void> {
    this.running = true;
    this.heard = false;
    try {
      while (this.waiters.size > 0) {
        const st = await callNative(() => this.backend.waitEvents(this.pid, this.stamp, SLICE_MS));
        const before = this.stamp;
        this.note(st.stamp);
        if (this.stamp > before) {
          const at = performance.now();
          for (const w of [...this.waiters]) if (this.stamp > w.since) w.wake(at);
        }
      }
    } catch (e) {
      for (const w of [...this.waiters]) w.fail(e);
    } finally {
      this.running = false;
    }
  }
}

const pumps = new WeakMap<NativeBackend, Map<number, EventPump>>();

/** The app's pump on this backend, made on first use. */
export function pumpOf(backend: NativeBackend, pid: number, pollMs: number): EventPump {
  let byPid = pumps.get(backend);
  if (!byPid) {
    byPid = new Map();
    pumps.set(backend, byPid);
  }
  let pump = byPid.get(pid);
  if (!pump) {
    pump = new EventPump(backend, pid, pollMs);
    byPid.set(pid, pump);
  }
  pump.users++;
  return pump;
}

/** A wait is done with the app's pump: the last one out takes it off the map (an app that quit leaves nothing). */
export function letPumpGo(backend: NativeBackend, pid: number, pump: EventPump): void {
  pump.users--;
  const byPid = pumps.get(backend);
  if (pump.users <= 0 && byPid?.get(pid) === pump) byPid.delete(pid);
}

/** Whether some wait on the app is using its pump now. */
export function pumpInUse(backend: NativeBackend, pid: number): boolean {
  return (pumps.get(backend)?.get(pid)?.users ?? 0) > 0;
}

/** How many pumps and shares this backend's waits keep (they go when no wait uses them). */
export function watcherSizes(backend: NativeBackend | object): { pumps: number; shares: number } {
  return { pumps: pumps.get(backend as NativeBackend)?.size ?? 0, shares: shares.get(backend)?.size ?? 0 };
}

/** One observation held by the waits that share it. */
export interface Shared {
  readonly snap: Promise<Snapshot>;
  /** Started after this wake (performance.now()), when the app's stamp was this. */
  readonly startedAt: number;
  readonly stamp: number;
  /** When the walk's own deadline passes (the starting wait's); a wait with more time left may walk again. */
  readonly endsAt: number;
  holders: number;
  /** Given to the caller (kept in the store): the store owns its release now. */
  handed: boolean;
  failed: boolean;
  /** The walk ended (with a snapshot or a failure). */
  done: boolean;
}

/**
 * Observations shared by the waits on one app that ask for the same walk.
 * A wait may take one that started no earlier than its wake and saw at
 * least the stamp it last read: it shows everything that wait would have
 * seen with a walk of its own.
 */
export class ObservationShare {
  private latest: Shared | undefined;

  /** `empty` runs when it holds no walk any more (its map entry goes). */
  constructor(private readonly empty: (share: ObservationShare) => void = () => undefined) {}

  /**
   * An observation for a wait woken at `wokeAt` that last read `stamp`:
   * joined, or started by `start`. A wait's first look (`first`) may also
   * join a walk still under way that started before it, at the same stamp:
   * a change since would have moved the stamp, and one no event announces is
   * the poll's to catch, as for every look (20 waits started together would
   * otherwise queue 20 walks).
   */
  acquire(
    wokeAt: number,
    stamp: number,
    endsAt: number,
    start: () => Promise<Snapshot>,
    first = false,
  ): Shared {
    const l = this.latest;
    if (
      l &&
      !l.failed &&
      l.holders > 0 &&
      (l.startedAt >= wokeAt || (first && !l.done)) &&
      l.stamp >= stamp
    ) {
      l.holders++;
      return l;
    }
    const shared: Shared = {
      snap: start(),
      startedAt: performance.now(),
      stamp,
      endsAt,
      holders: 1,
      handed: false,
      failed: false,
      done: false,
    };
    shared.snap.then(
      () => {
        shared.done = true;
      },
      () => {
        shared.done = true;
        shared.failed = true;
      },
    );
    this.latest = shared;
    return shared;
  }

  /** A wait is done with it: the last holder releases it, unless it was handed to the caller. */
  drop(shared: Shared): void {
    shared.holders--;
    if (shared.holders > 0) return;
    // Nobody may join it now: a handed walk is the store's, and must not stay reachable from here.
    if (this.latest === shared) {
      this.latest = undefined;
      this.empty(this);
    }
    if (!shared.handed) void shared.snap.then((s) => s.release()).catch(() => undefined);
  }
}

const shares = new WeakMap<NativeBackend | object, Map<string, ObservationShare>>();

/** The share for this app and walk (its options as a key) on this backend. */
export function shareOf(backend: NativeBackend | object, pid: number, walk: string): ObservationShare {
  let byKey = shares.get(backend);
  if (!byKey) {
    byKey = new Map();
    shares.set(backend, byKey);
  }
  const key = `${pid} ${walk}`;
  let share = byKey.get(key);
  if (!share) {
    const map = byKey;
    share = new ObservationShare((s) => {
      if (map.get(key) === s) map.delete(key);
    });
    byKey.set(key, share);
  }
  return share;
}
