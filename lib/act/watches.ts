/**
 * Which sessions observe which apps, per backend: an app is watched (its
 * change events counted, act/result.ts settles on them) once the first
 * session keeps a snapshot of it, and unwatched when the last such session
 * closes, so a long-lived backend stops paying for apps nobody looks at
 * (second macOS review, N10; the same on Linux, where each watched app is a
 * set of AT-SPI match rules on the bus).
 *
 * A wait in progress on the app (act/watcher.ts, its pump) keeps it watched:
 * unwatching restarts the backend's stamp from zero, which the pump, whose
 * stamps only grow, would not see.
 */
import type { NativeBackend } from "../native.js";
import { pumpInUse } from "./watcher.js";

const observers = new WeakMap<NativeBackend, Map<number, Set<object>>>();

/** `who` observes `pid` on `backend`: the first observer starts the watch (queued behind its snapshot). */
export function observeApp(backend: NativeBackend, pid: number, who: object): void {
  let byPid = observers.get(backend);
  if (!byPid) {
    byPid = new Map();
    observers.set(backend, byPid);
  }
  let who_ = byPid.get(pid);
  if (!who_) {
    who_ = new Set();
    byPid.set(pid, who_);
    // A platform without events answers ACTION_NOT_SUPPORTED; settling then reports "none".
    void backend.watch(pid).catch(() => undefined);
  }
  who_.add(who);
}

/** `who` observes none of its apps any more: those no one else observes (or waits on) are unwatched. */
export async function forgetObserver(who: object, backends: Iterable<NativeBackend>): Promise<void> {
  const done: Promise<void>[] = [];
  for (const backend of backends) {
    const byPid = observers.get(backend);
    if (!byPid) continue;
    for (const [pid, set] of byPid) {
      if (!set.delete(who) || set.size > 0) continue;
      byPid.delete(pid);
      if (pumpInUse(backend, pid)) continue;
      // A closed backend has no watch left to end.
      done.push(backend.unwatch(pid).catch(() => undefined));
    }
  }
  await Promise.all(done);
}
