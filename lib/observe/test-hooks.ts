/**
 * Points where a test stops this process to force a race deterministically:
 * with AXSNAP_TEST_STOP_AT=<point> in its environment, the process sends
 * itself SIGSTOP when it reaches that point; the test sees it stopped
 * (state T in /proc/PID/stat), does what the race needs, then sends SIGCONT
 * (or SIGKILL, for a process that dies there). Only tests set the variable;
 * without it, nothing happens.
 *
 * And a listener for every snapshot created (the locator audit of
 * test/support/locator-audit.ts): unset outside tests, one check per snapshot.
 */
import type { Snapshot } from "./snapshot-types.js";

/** The points, each named after what has just happened when the process stops there. */
export type StopPoint =
  /** startDesktop has claimed the desktop's name; nothing of the desktop runs yet. */
  | "desktop-claimed"
  /** launchApp has listed the launched app's first window; it has not yet asked whether the app has a tree. */
  | "launch-window-listed";

export function stopHereForTest(point: StopPoint): void {
  if (process.env.AXSNAP_TEST_STOP_AT === point) process.kill(process.pid, "SIGSTOP");
}

let created: ((snap: Snapshot) => void) | undefined;

/** Calls `fn` with every snapshot created from now on (undefined stops it). Tests only. */
export function onSnapshotCreated(fn: ((snap: Snapshot) => void) | undefined): void {
  created = fn;
}

/** createSnapshot tells the listener, when a test set one. */
export function snapshotCreated(snap: Snapshot): void {
  created?.(snap);
}
