/**
 * Where the agent's desktops are written down: one JSON file per desktop in
 * the user's runtime directory ($XDG_RUNTIME_DIR/axsnap/desktops, else
 * <tmpdir>/axsnap-<uid>/desktops), every directory 0700 and owned by this
 * user, checked with lstat before each use. The file names the X display and
 * the bus a process should use; anyone who could rewrite it could point the
 * agent's input at another desktop, so a directory that fails the check is
 * refused, never used.
 *
 * Only node's own modules, errors.js and test-hooks.js: the CLI's entry
 * reads a state file before it decides which warm process serves a command.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { stopHereForTest } from "../test-hooks.js";

/** A process the desktop runs, with its start time (field 22 of /proc/PID/stat) so a reused pid is not taken for it. */
export interface ProcessId {
  pid: number;
  start: string;
}

export interface DesktopState {
  /** The format of this file. */
  version: 1;
  name: string;
  /** Every process of the desktop carries AXSNAP_AGENT_DESKTOP=<id> in its environment: how stop finds them all. */
  id: string;
  display: string;
  busAddress: string;
  a11yBusAddress: string;
  width: number;
  height: number;
  windowManager: boolean;
  /** "api": lives while its owner runs; "cli": detached, until `axsnap desktop stop`. */
  mode: "api" | "cli";
  /** "starting" while startDesktop reserves the name; "running" once every part answered. */
  status: "starting" | "running";
  /**
   * "wayland": headless gnome-shell, no X server (display is ""). Absent in
   * files written before Wayland desktops existed: those are "x11".
   */
  session?: "x11" | "wayland";
  /** Wayland: the compositor's socket, an absolute path (a WAYLAND_DISPLAY any client accepts). */
  waylandDisplay?: string;
  /** Wayland: the desktop's own XDG_RUNTIME_DIR (its sockets: bus, PipeWire, Wayland, AT-SPI), removed at stop. */
  runtimeDir?: string;
  pids: {
    xvfb?: ProcessId;
    dbus?: ProcessId;
    windowManager?: ProcessId;
    watchdog?: ProcessId;
    /** Wayland: gnome-shell. */
    compositor?: ProcessId;
    /** Wayland: the bus gnome-shell takes for the system bus. */
    systemBus?: ProcessId;
    pipewire?: ProcessId;
    wireplumber?: ProcessId;
  };
  /** The process that started it (the API's owner); for "cli", the command that is gone by now. */
  owner: ProcessId;
  /** ISO time. */
  startedAt: string;
}

/** The roles of a desktop's processes, in the order listings print them. */
const PROCESS_ROLES = [
  "xvfb",
  "dbus",
  "windowManager",
  "watchdog",
  "compositor",
  "systemBus",
  "pipewire",
  "wireplumber",
] as const satisfies readonly (keyof DesktopState["pids"])[];

/** The pid of each of a desktop's recorded processes, by role. */
export function pidsOf(state: DesktopState): { [K in keyof DesktopState["pids"]]?: number } {
  const pids: { [K in keyof DesktopState["pids"]]?: number } = {};
  for (const k of PROCESS_ROLES) {
    const p = state.pids[k];
    if (p) pids[k] = p.pid;
  }
  return pids;
}

export const MARKER = "AXSNAP_AGENT_DESKTOP";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A desktop's name: it becomes a file name, so letters, digits, `_ . -`, at most 64, not starting with a dot. */
export function checkName(name: unknown): string {
  if (typeof name !== "string" || !NAME.test(name))
    throw invalidArgument(
      `a desktop's name must be 1-64 letters, digits, "_", "." or "-" (not starting with "." or "-"), got ${JSON.stringify(name)}`,
      'pick a name such as "agent"',
    );
  return name;
}

/** "WxH" → its numbers; 64-8192 each (Xvfb's own bounds are larger, an agent's screen is not). */
export function parseSize(size: unknown): { width: number; height: number } {
  const m = typeof size === "string" ? /^(\d{2,5})x(\d{2,5})$/.exec(size) : null;
  const width = m ? Number(m[1]) : Number.NaN;
  const height = m ? Number(m[2]) : Number.NaN;
  if (!(width >= 64 && width <= 8192 && height >= 64 && height <= 8192))
    throw invalidArgument(
      `a desktop's size must be WIDTHxHEIGHT in pixels, each 64-8192, got ${JSON.stringify(size)}`,
      'pass a size such as "1280x800"',
    );
  return { width, height };
}

function uid(): number {
  return process.getuid?.() ?? 0;
}

/** Creates `dir` 0700 if missing, then proves it is a real directory of ours that nobody else can enter. */
function privateDir(dir: string): string {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw unsafe(dir, (e as Error).message);
  }
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw unsafe(dir, "it is not a directory (a symlink or a file)");
  if (st.uid !== uid()) throw unsafe(dir, `it belongs to uid ${st.uid}`);
  if ((st.mode & 0o077) !== 0) {
    // Ours, only too open (an old umask): closing it is safe, nothing in it was trusted yet.
    chmodSync(dir, 0o700);
  }
  return dir;
}

function unsafe(dir: string, why: string): AxsnapError {
  return new AxsnapError(
    "DESKTOP_UNAVAILABLE",
    `the desktops' state directory ${dir} cannot be used: ${why}`,
    {
      hint: "remove it (or set XDG_RUNTIME_DIR to a directory only you can write) and start the desktop again",
    },
  );
}

/** The directory of desktop state files, created and checked. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR;
  const base = runtime?.startsWith("/")
    ? privateDir(join(runtime, "axsnap"))
    : privateDir(join(tmpdir(), `axsnap-${uid()}`));
  return privateDir(join(base, "desktops"));
}

export function statePath(dir: string, name: string): string {
  return join(dir, `${name}.json`);
}

/** The session bus's socket and the desktop's log (Xvfb, the bus, the window manager). */
export function sidePaths(dir: string, name: string): { bus: string; log: string } {
  return { bus: join(dir, `${name}.bus`), log: join(dir, `${name}.log`) };
}

/** A state file's contents; undefined when there is none. A file that is not ours in shape is unreadable, not trusted. */
export function readState(dir: string, name: string): DesktopState | undefined {
  return readStateFile(statePath(dir, name), name);
}

function readStateFile(path: string, name: string): DesktopState | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    const s = JSON.parse(text) as DesktopState;
    if (s.version === 1 && s.name === name && typeof s.id === "string" && typeof s.owner?.pid === "number")
      return s;
  } catch {}
  // Every writer here makes the file whole before it appears (claimState, writeState), so a
  // file not ours in shape is damaged, never a start still writing: the name's desktop is gone.
  return brokenState(name);
}

function brokenState(name: string): DesktopState {
  return {
    version: 1,
    name,
    id: "",
    display: "",
    busAddress: "",
    a11yBusAddress: "",
    width: 0,
    height: 0,
    windowManager: false,
    mode: "cli",
    status: "running",
    pids: {},
    owner: { pid: 0, start: "" },
    startedAt: "",
  };
}

/**
 * Claims the name: the state (its owner, "starting") is written whole to a file of this
 * process's own, then hard-linked to the name's path, which fails when a file is there. So the
 * name's file never exists empty or half written: a second start reads who is starting it,
 * never an empty file it would take for a damaged one. False when the name is taken.
 */
export function claimState(dir: string, state: DesktopState): boolean {
  const own = asidePath(dir, state.name, "claim");
  writeFileSync(own, `${JSON.stringify(state, null, 2)}\n`, { flag: "wx", mode: 0o600 });
  try {
    linkSync(own, statePath(dir, state.name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    rmSync(own, { force: true });
  }
  stopHereForTest("desktop-claimed");
  return true;
}

/** A file name of this process's own beside the state files (a dot file: not listed as a desktop). */
function asidePath(dir: string, name: string, what: string): string {
  return join(dir, `.${name}.${process.pid}.${randomBytes(6).toString("hex")}.${what}`);
}

/** Rewrites the file whole (a reader never sees half of it). */
export function writeState(dir: string, state: DesktopState): void {
  const tmp = join(dir, `.${state.name}.${process.pid}.tmp`);
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, statePath(dir, state.name));
}

/**
 * Removes the state file and the desktop's socket and log, if the file is still the desktop
 * `id`'s, or damaged, or gone. Checking, then removing, could remove another
 * start's claim made in between; so the file is first renamed aside (atomic), then read, and a
 * file that turns out to be another desktop's is linked back. True when the files were removed.
 */
export function removeState(dir: string, name: string, id: string): boolean {
  const path = statePath(dir, name);
  const aside = asidePath(dir, name, "gone");
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const moved = readStateFile(aside, name);
  if (moved !== undefined && moved.id !== id && moved.id !== "") {
    try {
      linkSync(aside, path);
    } catch (e) {
      // Claimed again in the instant the file was aside: that claim stands.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    rmSync(aside, { force: true });
    return false;
  }
  const side = sidePaths(dir, name);
  for (const f of [aside, side.bus, side.log]) rmSync(f, { force: true });
  return true;
}

/** The names of the desktops written down, sorted. */
export function stateNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json") && NAME.test(f.slice(0, -5)))
    .map((f) => f.slice(0, -5))
    .sort();
}
