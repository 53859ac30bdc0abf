/**
 * Whether a written-down desktop still runs, and its ending: every process
 * carrying its marker (and every pid its file names) TERM then KILL, then its
 * files removed. Used by stop, by list (a dead desktop is cleaned as it is
 * shown), and by start (a dead desktop's name is free again).
 */
import { isAlive, killNow, markedProcesses, terminate } from "./processes.js";
import { type DesktopState, type ProcessId, removeState } from "./state.js";

/** Why a desktop is not usable, or undefined while it runs. */
export function deathOf(state: DesktopState): string | undefined {
  if (state.id === "") return "its state file is damaged";
  if (state.status === "starting")
    return isAlive(state.owner)
      ? undefined
      : `the process that was starting it (pid ${state.owner.pid}) is gone`;
  if (!isAlive(state.pids.xvfb)) return `its X server (Xvfb, pid ${state.pids.xvfb?.pid ?? "?"}) has ended`;
  if (!isAlive(state.pids.dbus))
    return `its session bus (dbus-daemon, pid ${state.pids.dbus?.pid ?? "?"}) has ended`;
  if (state.mode === "api" && !isAlive(state.owner)) return `its owner (pid ${state.owner.pid}) has ended`;
  return undefined;
}

/** The processes of a desktop: those with its marker, plus the ones its file names (in case /proc hid one's environment). */
export function processesOf(state: DesktopState): ProcessId[] {
  const all = new Map<number, ProcessId>();
  for (const p of markedProcesses(state.id)) all.set(p.pid, p);
  for (const p of [state.pids.windowManager, state.pids.dbus, state.pids.xvfb, state.pids.watchdog])
    if (p && p.pid !== process.pid && isAlive(p)) all.set(p.pid, p);
  return [...all.values()];
}

/**
 * Ends a desktop: its apps and the bus's services first, then the window
 * manager, the bus and the X server (so nothing loses its display while it
 * still writes). The watchdog last: it would do the same. Removes its files.
 * Resolves with the pids that survived KILL (none, normally).
 */
export async function endDesktop(dir: string, state: DesktopState): Promise<number[]> {
  const core = new Set(
    [state.pids.xvfb, state.pids.dbus, state.pids.windowManager, state.pids.watchdog].map((p) => p?.pid),
  );
  const all = processesOf(state);
  const survivors = [
    ...(await terminate(all.filter((p) => !core.has(p.pid)))),
    ...(await terminate(
      all.filter(
        (p) => core.has(p.pid) && p.pid !== state.pids.xvfb?.pid && p.pid !== state.pids.watchdog?.pid,
      ),
    )),
    ...(await terminate(
      all.filter((p) => p.pid === state.pids.xvfb?.pid || p.pid === state.pids.watchdog?.pid),
    )),
    // Whatever the bus started while the rest ended.
    ...(await terminate(processesOf(state))),
  ];
  removeFiles(dir, state);
  return [...new Set(survivors.filter(isAlive).map((p) => p.pid))];
}

/** The same at process exit: KILL, no waiting. */
export function endDesktopNow(dir: string, state: DesktopState): void {
  killNow(processesOf(state));
  try {
    removeFiles(dir, state);
  } catch {}
}

/** Its files, unless the name has passed to another desktop since (stopped from elsewhere, then started again). */
function removeFiles(dir: string, state: DesktopState): void {
  removeState(dir, state.name, state.id);
}
