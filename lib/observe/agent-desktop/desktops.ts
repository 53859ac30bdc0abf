/**
 * The desktops written down, by name: listing them (a dead one is shown
 * gone and its leftovers ended), stopping one, and the variables that put a
 * process on one (`axsnap desktop env`, `--desktop NAME`).
 */
import { AxsnapError } from "../../model/errors.js";
import { deathOf, endDesktop, endDesktopNow } from "./lifecycle.js";
import { checkName, type DesktopState, pidsOf, readState, stateDir, stateNames, statePath } from "./state.js";

export interface DesktopListing {
  name: string;
  /** "running", or "gone" (its file is removed as it is listed). */
  state: "running" | "gone";
  /** Why it is gone. */
  reason?: string;
  /** "x11" (Xvfb) or "wayland" (headless gnome-shell). */
  session: "x11" | "wayland";
  /** "" on a Wayland desktop. */
  display: string;
  /** Wayland: the compositor's socket (WAYLAND_DISPLAY), an absolute path. */
  waylandDisplay?: string;
  busAddress: string;
  width: number;
  height: number;
  windowManager: boolean;
  /** "api": ends with the process that started it (owner); "cli": until `axsnap desktop stop`. */
  mode: "api" | "cli";
  owner: number;
  pids: {
    xvfb?: number;
    dbus?: number;
    windowManager?: number;
    watchdog?: number;
    compositor?: number;
    systemBus?: number;
    pipewire?: number;
    wireplumber?: number;
  };
  startedAt: string;
}

function listingOf(s: DesktopState, reason: string | undefined): DesktopListing {
  const pids = pidsOf(s);
  return {
    name: s.name,
    state: reason === undefined ? "running" : "gone",
    ...(reason === undefined ? {} : { reason }),
    session: s.session ?? "x11",
    display: s.display,
    ...(s.waylandDisplay === undefined ? {} : { waylandDisplay: s.waylandDisplay }),
    busAddress: s.busAddress,
    width: s.width,
    height: s.height,
    windowManager: s.windowManager,
    mode: s.mode,
    owner: s.owner.pid,
    pids,
    startedAt: s.startedAt,
  };
}

/** Every desktop written down; a gone one is listed once, and its remains ended and removed. */
export async function listDesktops(): Promise<DesktopListing[]> {
  const dir = stateDir();
  const out: DesktopListing[] = [];
  for (const name of stateNames(dir)) {
    const s = readState(dir, name);
    if (!s) continue;
    // Starting: not listed until it runs (or is found dead).
    if (s.status === "starting" && deathOf(s) === undefined) continue;
    const reason = deathOf(s);
    if (reason !== undefined) await endDesktop(dir, s);
    out.push(listingOf(s, reason));
  }
  return out;
}

/**
 * The running desktop of that name: DESKTOP_NOT_FOUND when none was
 * started, DESKTOP_GONE (its remains KILLed: nothing there is worth a grace period) when it died.
 */
export function runningDesktop(name: string, clean = true): DesktopState {
  checkName(name);
  const dir = stateDir();
  const s = readState(dir, name);
  if (!s || (s.status === "starting" && deathOf(s) === undefined))
    throw new AxsnapError(
      "DESKTOP_NOT_FOUND",
      `no desktop named ${name} (${statePath(dir, name)} does not exist)`,
    );
  const reason = deathOf(s);
  if (reason !== undefined) {
    if (clean) endDesktopNow(dir, s);
    throw new AxsnapError("DESKTOP_GONE", `the desktop ${name} is gone: ${reason}`, {
      hint: `its apps went with it; start it again (\`axsnap desktop start ${name}\`) and launch the apps there again`,
    });
  }
  return s;
}

/** Ends the desktop of that name, whoever started it. DESKTOP_NOT_FOUND when there is none. */
export async function stopDesktop(
  name: string,
): Promise<{ name: string; wasRunning: boolean; reason?: string }> {
  checkName(name);
  const dir = stateDir();
  const s = readState(dir, name);
  if (!s) throw new AxsnapError("DESKTOP_NOT_FOUND", `no desktop named ${name}`);
  const reason = deathOf(s);
  const survivors = await endDesktop(dir, s);
  if (survivors.length > 0)
    throw new AxsnapError(
      "DESKTOP_UNAVAILABLE",
      `desktop ${name}: pids ${survivors.join(", ")} survived SIGKILL`,
      {
        hint: "they may be stuck in the kernel (a hung mount or device); check them with ps",
      },
    );
  return { name, wasRunning: reason === undefined, ...(reason === undefined ? {} : { reason }) };
}

/** What of a desktop's state says where its processes go. */
export type DesktopPlace = Pick<
  DesktopState,
  "display" | "busAddress" | "session" | "waylandDisplay" | "runtimeDir"
>;

/**
 * What a process sets to be on the desktop (and unsets: AT_SPI_BUS_ADDRESS and the like would lead elsewhere).
 * Wayland: WAYLAND_DISPLAY as an absolute path and PipeWire's runtime directory, not XDG_RUNTIME_DIR, which
 * would move this user's desktop state files (and a shell's) into the desktop's directory.
 */
export function variablesOf(s: DesktopPlace): {
  set: Record<string, string>;
  unset: string[];
} {
  if (s.session === "wayland")
    return {
      set: {
        WAYLAND_DISPLAY: s.waylandDisplay ?? "",
        DBUS_SESSION_BUS_ADDRESS: s.busAddress,
        PIPEWIRE_RUNTIME_DIR: s.runtimeDir ?? "",
        XDG_SESSION_TYPE: "wayland",
        GDK_BACKEND: "wayland",
      },
      unset: ["AT_SPI_BUS_ADDRESS", "DISPLAY", "XAUTHORITY", "NO_AT_BRIDGE"],
    };
  return {
    set: { DISPLAY: s.display, DBUS_SESSION_BUS_ADDRESS: s.busAddress },
    unset: ["AT_SPI_BUS_ADDRESS", "WAYLAND_DISPLAY", "XAUTHORITY", "NO_AT_BRIDGE"],
  };
}

export function shellQuote(value: string): string {
  return /^[A-Za-z0-9_./:,=@+%-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `export VAR=...` lines (and one `unset`) for a POSIX shell's eval. */
export function exportLines(s: DesktopPlace): string {
  const { set, unset } = variablesOf(s);
  return `${[...Object.entries(set).map(([k, v]) => `export ${k}=${shellQuote(v)}`), `unset ${unset.join(" ")}`].join("\n")}\n`;
}
