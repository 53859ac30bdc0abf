/**
 * The parts of a Wayland agent desktop (startDesktop({ wayland: true })):
 * a private runtime directory, a private "system" bus, PipeWire and
 * WirePlumber, and headless gnome-shell with a virtual monitor, in unsafe
 * mode. Each is started here and waited for on a condition, bounded.
 *
 * Why these: bare mutter has no API for windows (no list, no frames, no
 * stacking), gnome-shell does (org.gnome.Shell.Eval, in unsafe mode, which
 * the window list and capture use). gnome-shell dies at start without a
 * system bus (its login manager code connects to one), and root has none
 * here: a bus of the desktop's own stands in. Mutter's ScreenCast streams
 * through PipeWire, and a stream is never linked without WirePlumber.
 * /work/notes/wayland-research.md (issue 36) has the measurements.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, lstatSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { killNow, unexecutedChildren } from "./processes.js";
import { run } from "./programs.js";

/** The Wayland socket's name inside the desktop's runtime directory (private: no other compositor uses it). */
export const WAYLAND_SOCKET = "wayland-0";
/** The bus names gnome-shell owns once it serves windows (Introspect) and streams (ScreenCast). */
export const SHELL_NAMES = ["org.gnome.Shell.Introspect", "org.gnome.Mutter.ScreenCast"] as const;
/** gnome-shell took 4-9 s to its names on a loaded 2-core machine; 60 s bounds a stalled one. */
export const SHELL_READY_MS = 60_000;
const PART_READY_MS = 10_000;
/**
 * The Overview is hidden within a second of the names, normally. A shell
 * hung in its ibus spawn is freed long before (stuckSpawnGuard); one that
 * still is not there after 20 s is started again rather than waited for.
 */
const OVERVIEW_READY_MS = 20_000;
/** A fork normally runs its exec within milliseconds; one that has not after a second hangs (see stuckSpawnGuard). */
const STUCK_SPAWN_MS = 1000;
const RUNTIME_PREFIX = "axsnap-wl-";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The desktop's XDG_RUNTIME_DIR, 0700, short (a unix socket's path has at
 * most 107 bytes, and the state directory's may already be long).
 */
export function makeRuntimeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), RUNTIME_PREFIX));
  chmodSync(dir, 0o700);
  return dir;
}

/**
 * Removes a runtime directory a desktop made, and only such a one: a path a
 * state file names is checked to be one of ours (its name, its owner, a
 * directory, not a symlink) before anything under it is removed.
 */
export function removeRuntimeDir(dir: string | undefined): void {
  if (!dir || !basename(dir).startsWith(RUNTIME_PREFIX) || dirname(dir) !== tmpdir()) return;
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== (process.getuid?.() ?? 0)) return;
  } catch {
    return;
  }
  // A FUSE mount under it (gvfsd-fuse, xdg-document-portal) would be entered by a recursive remove.
  if (mountsUnder(dir)) return;
  rmSync(dir, { recursive: true, force: true });
}

function mountsUnder(dir: string): boolean {
  try {
    return readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .some((line) => line.split(" ")[1]?.startsWith(`${dir}/`));
  } catch {
    return false;
  }
}

/** Makes the error for a part that failed (DESKTOP_UNAVAILABLE with the desktop's log). */
export type Unavailable = (message: string) => Error;

/** A program started in the background, its output to the desktop's log. */
export function spawnPart(file: string, args: string[], env: NodeJS.ProcessEnv, logFd: number): ChildProcess {
  const child = spawn(file, args, { env, detached: true, stdio: ["ignore", logFd, logFd] });
  child.on("error", () => undefined);
  child.unref();
  return child;
}

function ended(child: ChildProcess): string | undefined {
  if (child.exitCode !== null) return `exit ${child.exitCode}`;
  if (child.signalCode !== null) return child.signalCode;
  return undefined;
}

/** Waits until `ready()` holds while `child` runs; `what` names it in the error. */
async function waitFor(
  child: ChildProcess,
  what: string,
  ready: () => boolean | Promise<boolean>,
  ms: number,
  fail: Unavailable,
): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const end = ended(child);
    if (end !== undefined) throw fail(`${what} ended (${end}) as it started`);
    if (await ready()) return;
    if (Date.now() > until) throw fail(`${what} was not ready within ${ms} ms`);
    await sleep(50);
  }
}

/** PipeWire; ready once its socket is in the runtime directory. */
export async function startPipewire(
  file: string,
  env: NodeJS.ProcessEnv,
  logFd: number,
  runtimeDir: string,
  fail: Unavailable,
): Promise<ChildProcess> {
  const child = spawnPart(file, [], env, logFd);
  await waitFor(child, "pipewire", () => existsSync(join(runtimeDir, "pipewire-0")), PART_READY_MS, fail);
  return child;
}

/** WirePlumber; ready once PipeWire lists it as a client (a stream is never linked before). */
export async function startWireplumber(
  file: string,
  pwCli: string,
  env: NodeJS.ProcessEnv,
  logFd: number,
  fail: Unavailable,
): Promise<ChildProcess> {
  const child = spawnPart(file, [], env, logFd);
  await waitFor(
    child,
    "wireplumber",
    async () => {
      const r = await run(pwCli, ["ls", "Client"], env, 3000);
      return /application\.name = "WirePlumber"/.test(r.stdout);
    },
    PART_READY_MS,
    fail,
  );
  return child;
}

/** gnome-shell's arguments: headless, one virtual monitor, no XWayland, on our socket, Eval allowed. */
export function shellArgs(width: number, height: number): string[] {
  return [
    "--wayland",
    "--headless",
    "--virtual-monitor",
    `${width}x${height}`,
    "--no-x11",
    "--wayland-display",
    WAYLAND_SOCKET,
    "--unsafe-mode",
  ];
}

/** Whether every name has an owner on the bus of `env`. */
async function namesOwned(
  dbusSend: string,
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): Promise<boolean> {
  for (const name of names) {
    const r = await run(
      dbusSend,
      [
        "--session",
        "--print-reply",
        "--reply-timeout=2000",
        "--dest=org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.NameHasOwner",
        `string:${name}`,
      ],
      env,
      3000,
    );
    if (!/boolean true/.test(r.stdout)) return false;
  }
  return true;
}

/**
 * The Overview is shown at the end of gnome-shell's startup animation, after
 * its names are on the bus: a hide before that is undone. So: wait for the
 * startup to complete (layoutManager._startingUp, GNOME 40-46), hide, and
 * see it hidden.
 */
export const HIDE_OVERVIEW =
  "(() => { const o = Main.overview; if (Main.layoutManager._startingUp) return 'starting'; if (o.visible) o.hide(); return o.visible ? 'shown (' + o._shownState + (o.animationInProgress ? ', animating' : '') + ')' : 'hidden'; })()";

/** gnome-shell on the desktop's monitor size; `waitForShell` says when it serves. */
export function spawnShell(
  file: string,
  env: NodeJS.ProcessEnv,
  logFd: number,
  size: { width: number; height: number },
): ChildProcess {
  return spawnPart(file, shellArgs(size.width, size.height), env, logFd);
}

/**
 * Ready once gnome-shell owns SHELL_NAMES and its Wayland socket is there;
 * then its Overview (shown at start, when no window has focus) is hidden
 * and seen hidden (HIDE_OVERVIEW). Resolves with what Eval last answered
 * when the Overview was not seen hidden within OVERVIEW_READY_MS (the caller
 * starts the shell again), undefined when it was. Meanwhile, a spawn of
 * the shell's that hangs before its exec is ended (stuckSpawnGuard), and
 * `note` says so in the desktop's log.
 */
export async function waitForShell(
  child: ChildProcess,
  dbusSend: string,
  env: NodeJS.ProcessEnv,
  runtimeDir: string,
  fail: Unavailable,
  note: (line: string) => void,
): Promise<string | undefined> {
  const unstick = stuckSpawnGuard(child.pid, note);
  await waitFor(
    child,
    "gnome-shell",
    async () => {
      unstick();
      return existsSync(join(runtimeDir, WAYLAND_SOCKET)) && namesOwned(dbusSend, env, SHELL_NAMES);
    },
    SHELL_READY_MS,
    fail,
  );
  let seen: string | undefined;
  const until = Date.now() + OVERVIEW_READY_MS;
  for (;;) {
    const end = ended(child);
    if (end !== undefined) throw fail(`gnome-shell ended (${end}) as it started`);
    seen = await shellEval(dbusSend, env, HIDE_OVERVIEW);
    if (seen === '"hidden"') return undefined;
    unstick();
    if (Date.now() > until) return seen ?? "no answer";
    await sleep(50);
  }
}

/**
 * gnome-shell 43 starts ibus-daemon as it starts (misc/ibusManager.js) with
 * a child_setup written in JavaScript, which runs in the forked child before
 * its exec. Now and then that child hangs there (a lock some other thread
 * held at the fork, we think: the child's own stack was never caught), and
 * the shell's main thread, reading the child's exec
 * report in g_spawn_async, hangs with it: Eval answers nothing, and the
 * child keeps the shell's bus connection open after the shell is killed.
 * Seen about once a CI run; gdb showed the main thread in that read. Killing
 * the child ends the read (GLib takes the closed pipe for an exec), and the
 * shell goes on. The guard looks for such a child while the start is waited
 * for.
 */
function stuckSpawnGuard(shellPid: number | undefined, note: (line: string) => void): () => void {
  let last = 0;
  return () => {
    // A scan reads every process's stat: once a second is enough for a hang that is looked for after a second.
    if (shellPid === undefined || Date.now() - last < STUCK_SPAWN_MS) return;
    last = Date.now();
    const stuck = unexecutedChildren(shellPid, STUCK_SPAWN_MS);
    if (stuck.length === 0) return;
    killNow(stuck);
    note(
      `gnome-shell's spawn of a helper hung before its exec (pid ${stuck.map((p) => p.pid).join(", ")}): ended it`,
    );
  };
}

/**
 * org.gnome.Shell.Eval through dbus-send on the bus of `env`: the result's
 * string (JSON of the value), or undefined when it failed (not unsafe mode,
 * a JS error, no answer within `timeoutMs`).
 */
export async function shellEval(
  dbusSend: string,
  env: NodeJS.ProcessEnv,
  script: string,
  timeoutMs = 3000,
): Promise<string | undefined> {
  const r = await run(
    dbusSend,
    [
      "--session",
      "--print-reply",
      `--reply-timeout=${timeoutMs}`,
      "--dest=org.gnome.Shell",
      "/org/gnome/Shell",
      "org.gnome.Shell.Eval",
      `string:${script}`,
    ],
    env,
    timeoutMs + 1000,
  );
  if (r.code !== 0 || !/^\s*boolean true\s*$/m.test(r.stdout)) return undefined;
  // dbus-send prints the string between quotes, unescaped: from the first quote to the last.
  const start = r.stdout.indexOf('string "');
  const end = r.stdout.lastIndexOf('"');
  return start >= 0 && end > start + 7 ? r.stdout.slice(start + 8, end) : undefined;
}
