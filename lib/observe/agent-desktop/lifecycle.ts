/**
 * Whether a written-down desktop still runs, and its ending: every process
 * carrying its marker (and every pid its file names) TERM then KILL, then its
 * files removed. Used by stop, by list (a dead desktop is cleaned as it is
 * shown), and by start (a dead desktop's name is free again).
 */
import { isAlive, killNow, markedProcesses, terminate } from "./processes.js";
import { type DesktopState, type ProcessId, removeState } from "./state.js";
import { removeRuntimeDir } from "./wayland.js";

/** gnome-shell sometimes took more than 5 s to act on SIGTERM: its grace before KILL. */
export const COMPOSITOR_GRACE_MS = 6000;

/** Why a desktop is not usable, or undefined while it runs. */
export function deathOf(state: DesktopState): string | undefined {
  if (state.id === "") return "its state file is damaged";
  if (state.status === "starting")
    return isAlive(state.owner)
      ? undefined
      : `the process that was starting it (pid ${state.owner.pid}) is gone`;
  if (state.session === "wayland") {
    if (!isAlive(state.pids.compositor))
      return `its compositor (gnome-shell, pid ${state.pids.compositor?.pid ?? "?"}) has ended`;
  } else if (!isAlive(state.pids.xvfb))
    return `its X server (Xvfb, pid ${state.pids.xvfb?.pid ?? "?"}) has ended`;
  if (!isAlive(state.pids.dbus))
    return `its session bus (dbus-daemon, pid ${state.pids.dbus?.pid ?? "?"}) has ended`;
  if (state.mode === "api" && !isAlive(state.owner)) return `its owner (pid ${state.owner.pid}) has ended`;
  return undefined;
}

/** The processes of a desktop: those with its marker, plus the ones its file names (in case /proc hid one's environment). */
export function processesOf(state: DesktopState): ProcessId[] {
  const all = new Map<number, ProcessId>();
  for (const p of markedProcesses(state.id)) all.set(p.pid, p);
  for (const p of corePids(state)) if (p && p.pid !== process.pid && isAlive(p)) all.set(p.pid, p);
  return [...all.values()];
}

function corePids(state: DesktopState): (ProcessId | undefined)[] {
  const p = state.pids;
  return [p.windowManager, p.compositor, p.wireplumber, p.pipewire, p.dbus, p.systemBus, p.xvfb, p.watchdog];
}

/**
 * Ends a desktop: its apps and the bus's services first, then the window
 * manager, the bus and the X server (so nothing loses its display while it
 * still writes). The watchdog last: it would do the same. Removes its files.
 * Resolves with the pids that survived KILL (none, normally).
 */
export async function endDesktop(dir: string, state: DesktopState): Promise<number[]> {
  if (state.session === "wayland") return endWayland(dir, state);
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

/**
 * A Wayland desktop's ending: its apps and what the buses started first (a
 * client that loses its compositor first may crash loudly or hang), then
 * gnome-shell (a longer grace: it is slow to act on TERM), then WirePlumber,
 * PipeWire and the two buses, the watchdog last. Its runtime directory (every
 * socket of the desktop) goes with its files.
 */
async function endWayland(dir: string, state: DesktopState): Promise<number[]> {
  const is = (p: ProcessId, q: ProcessId | undefined) => q !== undefined && p.pid === q.pid;
  const core = new Set(corePids(state).map((p) => p?.pid));
  const all = processesOf(state);
  const survivors = [
    ...(await terminate(all.filter((p) => !core.has(p.pid)))),
    ...(await terminate(
      all.filter((p) => is(p, state.pids.compositor)),
      COMPOSITOR_GRACE_MS,
    )),
    ...(await terminate(
      all.filter((p) => core.has(p.pid) && !is(p, state.pids.compositor) && !is(p, state.pids.watchdog)),
    )),
    ...(await terminate(all.filter((p) => is(p, state.pids.watchdog)))),
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

/**
 * Its files, unless the name has passed to another desktop since (stopped from elsewhere, then
 * started again); its runtime directory in any case (made for this desktop alone).
 */
function removeFiles(dir: string, state: DesktopState): void {
  removeState(dir, state.name, state.id);
  removeRuntimeDir(state.runtimeDir);
}
