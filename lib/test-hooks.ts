/**
 * Points where a test stops this process to force a race deterministically:
 * with AXSNAP_TEST_STOP_AT=<point> in its environment, the process sends
 * itself SIGSTOP when it reaches that point; the test sees it stopped
 * (state T in /proc/PID/stat), does what the race needs, then sends SIGCONT
 * (or SIGKILL, for a process that dies there). Only tests set the variable;
 * without it, nothing happens.
 */

/** The points, each named after what has just happened when the process stops there. */
export type StopPoint =
  /** startDesktop has claimed the desktop's name; nothing of the desktop runs yet. */
  "desktop-claimed";

export function stopHereForTest(point: StopPoint): void {
  if (process.env.AXSNAP_TEST_STOP_AT === point) process.kill(process.pid, "SIGSTOP");
}
