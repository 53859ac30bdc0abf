/**
 * Which sessions observe which apps, per backend: an app is watched (its
 * change events counted, act/result.ts settles on them) once the first
 * session keeps a snapshot of it, and unwatched when the last such session
 * has closed, so a long-lived backend stops paying for apps nobody looks at
 * (second macOS review, N10; the same on Linux, where each watched app is a
 * set of AT-SPI match rules on the bus).
 *
 * An app nobody observes stays watched for `unwatchLinger.ms` first: a warm
 * CLI process (lib/doors/cli/daemon.ts) runs each command in a session of its own,
 * and the next command is usually about the same app; watching again costs
 * one registration per notification (macOS) or match rule (Linux).
 *
 * A wait in progress on the app (act/watcher.ts, its pump) keeps it watched:
 * unwatching restarts the backend's stamp from zero, which the pump, whose
 * stamps only grow, would not see.
 */
import type { NativeBackend } from "../../native.js";
import { pumpInUse } from "./watcher.js";

/** How long an app no session observes stays watched (0: unwatched as the last observer closes). @internal */
export const unwatchLinger = { ms: 30_000 };

interface Watch {
  readonly who: Set<object>;
  linger?: ReturnType<typeof setTimeout>;
}

const watches = new WeakMap<NativeBackend, Map<number, Watch>>();

/** `who` observes `pid` on `backend`: the first observer starts the watch (queued behind its snapshot). */
export function observeApp(backend: NativeBackend, pid: number, who: object): void {
  let byPid = watches.get(backend);
  if (!byPid) {
    byPid = new Map();
    watches.set(backend, byPid);
  }
  let watch = byPid.get(pid);
  if (!watch) {
    watch = { who: new Set() };
    byPid.set(pid, watch);
    // A platform without events answers ACTION_NOT_SUPPORTED; settling then reports "none".
    void backend.watch(pid).catch(() => undefined);
  }
  if (watch.linger !== undefined) {
    clearTimeout(watch.linger);
    delete watch.linger;
  }
  watch.who.add(who);
}

/** `who` observes none of its apps any more: those no one else observes (or waits on) are unwatched. */
export async function forgetObserver(who: object, backends: Iterable<NativeBackend>): Promise<void> {
  const now: Promise<void>[] = [];
  for (const backend of backends) {
    const byPid = watches.get(backend);
    if (!byPid) continue;
    for (const [pid, watch] of byPid) {
      if (!watch.who.delete(who) || watch.who.size > 0 || watch.linger !== undefined) continue;
      const end = () => {
        if (byPid.get(pid) !== watch || watch.who.size > 0) return Promise.resolve();
        byPid.delete(pid);
        if (pumpInUse(backend, pid)) return Promise.resolve();
        // A closed backend has no watch left to end.
        return backend.unwatch(pid).catch(() => undefined);
      };
      if (unwatchLinger.ms <= 0) {
        now.push(end());
        continue;
      }
      watch.linger = setTimeout(() => void end(), unwatchLinger.ms);
      // Lingering must not keep the process alive.
      watch.linger.unref?.();
    }
  }
  await Promise.all(now);
}
