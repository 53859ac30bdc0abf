/**
 * The process's backend for the real desktop, connected once, and the one
 * walk that may start before the library is loaded.
 *
 * The early walk: a command-line process spends about 40 ms loading the
 * renderer, the session and the store, and its first walk of an app about
 * as long again (the app's peer connection and bulk cache are cold). The
 * walk runs on the addon's thread, so the CLI starts it (`startEarlyWalk`)
 * as soon as it has parsed its arguments, and `snapshot()` takes it
 * (`takeEarlyWalk`) when it asks for exactly the same walk of the same
 * backend, within a second of its end. Any other walk, or a later one,
 * leaves it untaken: its handles are released when it ends, and nothing it
 * read is shown.
 */
import { AxsnapError } from "../model/errors.js";
import { callNative, loadNative, type NativeBackend, type NativeSnapshot } from "../native.js";
import type { WalkRequest } from "./observe-request.js";

let shared: { backend: NativeBackend; ready: Promise<void>; target: BackendTarget } | undefined;

/** The display and session bus a backend reads from the environment when it connects (and when it reconnects). */
export interface BackendTarget {
  display: string;
  busAddress: string;
}

function targetNow(): BackendTarget {
  return { display: process.env.DISPLAY ?? "", busAddress: process.env.DBUS_SESSION_BUS_ADDRESS ?? "" };
}

/**
 * Where the process's backend was created for, or undefined before its
 * first use: a process that moves to another desktop afterwards would have
 * its addon read the new DISPLAY at its next reconnect only, the old bus
 * still held (lib/observe/agent-desktop/use.ts refuses that).
 */
export function desktopBackendTarget(): BackendTarget | undefined {
  return shared?.target;
}

/**
 * The process's backend for the real desktop, connected once. Connecting is
 * bounded by `connectDeadlineMs`: a session bus that never answers fails it.
 */
export async function desktopBackend(connectDeadlineMs = 5000): Promise<NativeBackend> {
  if (!shared) {
    const native = loadNative();
    if (native.platformBackend === null)
      throw new AxsnapError(
        "PLATFORM_NOT_SUPPORTED",
        `axsnap has no desktop backend for ${process.platform} in this build`,
      );
    const backend = new native.NativeBackend(native.platformBackend);
    shared = { backend, ready: callNative(() => backend.connect(connectDeadlineMs)), target: targetNow() };
    // A failed connection is not cached: the next call tries again (the bus may have started since).
    shared.ready.catch(() => {
      shared = undefined;
    });
  }
  const { backend, ready } = shared;
  await ready;
  return backend;
}

interface EarlyWalk {
  key: string;
  /** Set once connected: a walk of another backend is never taken. */
  backend?: NativeBackend;
  result: Promise<NativeSnapshot>;
  /** When the walk ended (performance.now()): an older result is not what the app shows now. */
  endedAt?: number;
}

/** How long an ended early walk stays takeable: the CLI takes it some 50 ms after it starts. */
const EARLY_WALK_FRESH_MS = 1000;

let early: EarlyWalk | undefined;

const keyOf = (request: WalkRequest): string => JSON.stringify(request);

/** Lets a walk nobody takes go: what it holds is released once it ends. */
function abandon(walk: EarlyWalk): void {
  walk.result.then(
    (r) => walk.backend?.release(r.handles).catch(() => undefined),
    () => undefined,
  );
}

/** Starts `request` on the desktop backend now, to be taken by the `snapshot()` that asks for it. */
export function startEarlyWalk(request: WalkRequest, deadlineMs: number): void {
  if (early) abandon(early);
  const started = performance.now();
  const connected = desktopBackend(deadlineMs);
  const result = connected.then((backend) => {
    const left = Math.max(1, deadlineMs - (performance.now() - started));
    return callNative(() => backend.snapshot({ ...request, deadlineMs: left }));
  });
  const walk: EarlyWalk = { key: keyOf(request), result };
  connected.then(
    (backend) => {
      walk.backend = backend;
    },
    () => undefined,
  );
  const ended = () => {
    walk.endedAt = performance.now();
  };
  // Its failure is the taker's to report (the same walk would fail the same way); untaken, it is nobody's.
  result.then(ended, ended);
  early = walk;
}

/** The early walk, when it is `request` on `backend`; any other early walk is let go. Taken at most once. */
export function takeEarlyWalk(
  backend: NativeBackend,
  request: WalkRequest,
): Promise<NativeSnapshot> | undefined {
  const walk = early;
  if (!walk) return undefined;
  early = undefined;
  const fresh = walk.endedAt === undefined || performance.now() - walk.endedAt <= EARLY_WALK_FRESH_MS;
  if (fresh && walk.backend === backend && walk.key === keyOf(request)) return walk.result;
  abandon(walk);
  return undefined;
}
