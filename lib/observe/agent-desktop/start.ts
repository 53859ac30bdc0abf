/**
 * startDesktop: a private headless desktop of the agent's own, X11 (Xvfb) or
 * Wayland (headless gnome-shell: `wayland: true`, see wayland.ts). Xvfb on a
 * display it picks itself (-displayfd: no race with another server for a
 * number), a session bus of its own that starts the AT-SPI bus and registry
 * on demand, optionally openbox; written down in the state directory under
 * its name. Input sent there (XTest pointer and keys, raising a window)
 * reaches that X server only: the user's pointer, focus and stacking stay as
 * they were.
 *
 * Lifetime: from the API, until stop() or the owner's exit, however it ends
 * (a watchdog that waits for EOF on a pipe from the owner kills what is left,
 * even after SIGKILL); from the CLI (`detached`), until `axsnap desktop stop`.
 *
 * On Wayland, the desktop gets its own XDG_RUNTIME_DIR (its session bus,
 * Wayland, PipeWire and AT-SPI sockets), a private "system" bus, PipeWire,
 * WirePlumber and gnome-shell in place of Xvfb and openbox; its apps are
 * native Wayland clients (WAYLAND_DISPLAY, no DISPLAY).
 * Every process of the desktop carries AXSNAP_AGENT_DESKTOP=<its id> in its
 * environment, and whatever the bus starts inherits it: that is how stop and
 * the watchdog find them all.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { unixPathAddress } from "./bus-address.js";
import { COMPOSITOR_GRACE_MS, deathOf, endDesktop, endDesktopNow } from "./lifecycle.js";
import { isAlive, processId, terminate, unexecutedChildren } from "./processes.js";
import { replyString, requireAtSpiService, requirePrograms, run } from "./programs.js";
import {
  checkName,
  claimState,
  type DesktopState,
  MARKER,
  parseSize,
  pidsOf,
  readState,
  sidePaths,
  stateDir,
  statePath,
  writeState,
} from "./state.js";
import {
  makeRuntimeDir,
  removeRuntimeDir,
  spawnShell,
  startPipewire,
  startWireplumber,
  WAYLAND_SOCKET,
  waitForShell,
} from "./wayland.js";

export interface StartDesktopOptions {
  /** Default "agent". Letters, digits, `_ . -`, at most 64. */
  name?: string;
  /** WIDTHxHEIGHT in pixels. Default "1280x800". */
  size?: string;
  /** Run openbox on it (Debian's openbox): windows get frames, focus and stacking as on a user's desktop. Default false. */
  windowManager?: boolean;
  /**
   * A Wayland desktop: headless gnome-shell (in unsafe mode: its Eval serves
   * window lists) with a virtual monitor of `size`, PipeWire and WirePlumber,
   * in place of Xvfb. Apps there are native Wayland clients. gnome-shell is
   * the window manager: `windowManager` does not go with it. Default false.
   */
  wayland?: boolean;
  /**
   * Leave it running after this process ends, until `axsnap desktop stop NAME`
   * (what `axsnap desktop start` does). Default false: it ends with its owner.
   */
  detached?: boolean;
}

export interface AgentDesktop {
  name: string;
  /** "x11" (Xvfb) or "wayland" (gnome-shell). */
  session: "x11" | "wayland";
  /** The X display, ":N"; "" on a Wayland desktop. */
  display: string;
  /** Wayland: the compositor's socket, an absolute path (WAYLAND_DISPLAY). */
  waylandDisplay?: string;
  /** Wayland: the desktop's own XDG_RUNTIME_DIR. */
  runtimeDir?: string;
  /** Its session bus. */
  busAddress: string;
  /** Its AT-SPI bus (org.a11y.Bus.GetAddress). */
  a11yBusAddress: string;
  width: number;
  height: number;
  /**
   * An environment for a process on this desktop: this process's, with
   * DISPLAY and DBUS_SESSION_BUS_ADDRESS its own and the variables that
   * would lead elsewhere (AT_SPI_BUS_ADDRESS, WAYLAND_DISPLAY, XAUTHORITY)
   * removed. On Wayland: WAYLAND_DISPLAY, XDG_RUNTIME_DIR and
   * GDK_BACKEND=wayland, no DISPLAY. It carries the desktop's marker: a
   * process started with it is the desktop's, and stop() ends it too.
   */
  env: Record<string, string>;
  pids: {
    /** X11 only. */
    xvfb?: number;
    dbus: number;
    windowManager?: number;
    watchdog?: number;
    /** Wayland: gnome-shell, the private system bus, PipeWire, WirePlumber. */
    compositor?: number;
    systemBus?: number;
    pipewire?: number;
    wireplumber?: number;
  };
  /** The JSON file that names it (mode 0600 in a 0700 directory). */
  stateFile: string;
  /** Ends every process of the desktop and removes its files. Idempotent. */
  stop(): Promise<void>;
}

/** Variables that would point a process at another desktop than the one named. */
export const FOREIGN_VARIABLES = [
  "DISPLAY",
  "WAYLAND_DISPLAY",
  "XAUTHORITY",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_STARTER_ADDRESS",
  "DBUS_STARTER_BUS_TYPE",
  "AT_SPI_BUS_ADDRESS",
  "AT_SPI_BUS",
  "NO_AT_BRIDGE",
  // A Wayland desktop's (variablesOf): another desktop's PipeWire, session type or system bus.
  "PIPEWIRE_RUNTIME_DIR",
  "PIPEWIRE_REMOTE",
  "XDG_SESSION_TYPE",
  "DBUS_SYSTEM_BUS_ADDRESS",
  MARKER,
];

const READY_MS = 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The desktops of this process not stopped yet: ended at its exit. */
const owned = new Map<string, DesktopState>();
let exitHook = false;

function hookExit(dir: string): void {
  if (exitHook) return;
  exitHook = true;
  process.on("exit", () => {
    for (const state of owned.values()) endDesktopNow(dir, state);
  });
}

/**
 * A shell that blocks reading a pipe from this process, and, at EOF (this
 * process ended, however), KILLs every process with the marker and removes
 * the desktop's files if they are still this desktop's. Its own environment
 * is PATH alone, so it does not carry the marker it looks for.
 */
function startWatchdog(id: string, dir: string, name: string, runtimeDir = ""): ChildProcess {
  const side = sidePaths(dir, name);
  const script = `
    read -r _ || true
    for e in /proc/[0-9]*/environ; do
      p=\${e#/proc/}; p=\${p%/environ}
      [ "$p" = "$$" ] && continue
      if tr '\\0' '\\n' < "$e" 2>/dev/null | grep -qxF "${MARKER}=$1"; then kill -KILL "$p" 2>/dev/null; fi
    done
    if grep -qF "\\"id\\": \\"$1\\"" "$2" 2>/dev/null; then rm -f -- "$2" "$3" "$4"; fi
    if [ -n "$5" ] && [ -d "$5" ] && ! grep -qF " $5/" /proc/self/mounts; then rm -rf -- "$5"; fi
  `;
  const child = spawn(
    "/bin/sh",
    ["-c", script, "axsnap-desktop-watchdog", id, statePath(dir, name), side.bus, side.log, runtimeDir],
    {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    },
  );
  child.on("error", () => undefined);
  child.stdin?.on("error", () => undefined);
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return child;
}

function logTail(file: string): string {
  try {
    const text = readFileSync(file, "utf8");
    return text.slice(-2000).trim();
  } catch {
    return "";
  }
}

function unavailable(message: string, log: string, wayland = false): AxsnapError {
  const tail = logTail(log);
  return new AxsnapError("DESKTOP_UNAVAILABLE", `${message}${tail ? `:\n${tail}` : ""}`, {
    hint: wayland
      ? "see the message for what the program said; a Wayland desktop needs the Debian packages gnome-shell, pipewire, wireplumber, dbus and at-spi2-core"
      : "see the message for what the program said; a desktop needs the Debian packages xvfb, dbus and at-spi2-core",
  });
}

/** Xvfb with -displayfd: it writes its display number on fd 3 once it accepts clients. */
async function startXvfb(
  file: string,
  width: number,
  height: number,
  env: NodeJS.ProcessEnv,
  logFd: number,
  log: string,
): Promise<{ child: ChildProcess; display: string }> {
  const child = spawn(
    file,
    ["-displayfd", "3", "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp", "-noreset"],
    { env, detached: true, stdio: ["ignore", logFd, logFd, "pipe"] },
  );
  child.on("error", () => undefined);
  child.unref();
  const fd = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
  const display = await new Promise<string>((resolve, reject) => {
    let text = "";
    const done = (error: Error | undefined, value?: string) => {
      clearTimeout(timer);
      child.removeListener("exit", onExit);
      fd.removeAllListeners("data");
      fd.destroy();
      if (error) reject(error);
      else resolve(value!);
    };
    const onExit = (code: number | null, sig: string | null) =>
      done(unavailable(`Xvfb exited (${sig ?? code}) before it took a display`, log));
    const timer = setTimeout(
      () => done(unavailable(`Xvfb took no display within ${READY_MS} ms`, log)),
      READY_MS,
    );
    fd.setEncoding("utf8");
    fd.on("data", (chunk: string) => {
      text += chunk;
      const m = /^(\d+)\n/.exec(text);
      if (m) done(undefined, `:${m[1]}`);
    });
    fd.on("error", () => undefined);
    child.once("exit", onExit);
  });
  return { child, display };
}

/** dbus-daemon --fork: it leaves once the bus listens, printing the address and the daemon's pid. */
async function startBus(file: string, socket: string, env: NodeJS.ProcessEnv, log: string) {
  const r = await run(
    file,
    [
      "--session",
      "--fork",
      "--nopidfile",
      "--print-address=1",
      "--print-pid=1",
      `--address=${unixPathAddress(socket)}`,
    ],
    env,
    READY_MS,
  );
  const lines = r.stdout.split("\n").filter(Boolean);
  const pid = Number(lines[1]);
  if (r.code !== 0 || lines.length < 2 || !Number.isInteger(pid))
    throw unavailable(`dbus-daemon did not start (exit ${r.code}): ${r.stderr.trim()}`, log);
  return { address: lines[0]!, pid };
}

/**
 * The AT-SPI bus: its first GetAddress starts the launcher; IsEnabled on for
 * toolkits that wait for it (Chromium, Qt); then the registry's root answers.
 */
async function startAccessibility(dbusSend: string, env: NodeJS.ProcessEnv, log: string): Promise<string> {
  const send = (args: string[], bus = "--session") =>
    run(dbusSend, [bus, "--print-reply", "--reply-timeout=2000", ...args], env, 3000);
  const until = Date.now() + READY_MS;
  let address: string | undefined;
  let last = "";
  while (!address) {
    const r = await send(["--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress"]);
    address = r.code === 0 ? replyString(r.stdout) : undefined;
    last = r.stderr.trim();
    if (!address) {
      if (Date.now() > until) throw unavailable(`the AT-SPI bus did not start: ${last}`, log);
      await sleep(50);
    }
  }
  const enabled = await send([
    "--dest=org.a11y.Bus",
    "/org/a11y/bus",
    "org.freedesktop.DBus.Properties.Set",
    "string:org.a11y.Status",
    "string:IsEnabled",
    "variant:boolean:true",
  ]);
  if (enabled.code !== 0)
    throw unavailable(`setting the AT-SPI IsEnabled failed: ${enabled.stderr.trim()}`, log);
  for (;;) {
    const r = await send(
      [
        "--dest=org.a11y.atspi.Registry",
        "/org/a11y/atspi/accessible/root",
        "org.a11y.atspi.Accessible.GetChildren",
      ],
      `--bus=${address}`,
    );
    if (r.code === 0) return address;
    if (Date.now() > until) throw unavailable(`the AT-SPI registry did not answer: ${r.stderr.trim()}`, log);
    await sleep(50);
  }
}

/** openbox; ready once it has claimed the screen (_NET_SUPPORTING_WM_CHECK on the root window). */
async function startWindowManager(file: string, env: NodeJS.ProcessEnv, logFd: number, log: string) {
  const child = spawn(file, ["--sm-disable"], { env, detached: true, stdio: ["ignore", logFd, logFd] });
  child.on("error", () => undefined);
  child.unref();
  const xprop = requireOptional("xprop");
  const until = Date.now() + READY_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw unavailable(`openbox exited (${child.signalCode ?? child.exitCode}) as it started`, log);
    if (xprop) {
      const r = await run(xprop, ["-root", "-notype", "_NET_SUPPORTING_WM_CHECK"], env, 2000);
      if (/window id #/.test(r.stdout)) return child;
    } else if (Date.now() > until - READY_MS + 500) return child;
    if (Date.now() > until) throw unavailable(`openbox did not take the screen within ${READY_MS} ms`, log);
    await sleep(50);
  }
}

function requireOptional(name: string): string | undefined {
  try {
    return requirePrograms([name])[name];
  } catch {
    return undefined;
  }
}

/** The environment a desktop's processes get: this process's, pointed at the desktop. */
function desktopEnv(id: string, runtimeDir?: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !FOREIGN_VARIABLES.includes(k)) env[k] = v;
  if (runtimeDir === undefined) {
    // GTK on X11 even where a Wayland session is the default.
    env.GDK_BACKEND = "x11";
  } else {
    // WAYLAND_DISPLAY is set once the compositor made its socket (gnome-shell itself must not find one).
    env.XDG_RUNTIME_DIR = runtimeDir;
    env.XDG_SESSION_TYPE = "wayland";
    env.GDK_BACKEND = "wayland";
  }
  // Qt's bridge on.
  env.ACCESSIBILITY_ENABLED = "1";
  env[MARKER] = id;
  return env;
}

function handleOf(dir: string, state: DesktopState, env: Record<string, string>): AgentDesktop {
  let stopping: Promise<void> | undefined;
  const pids: AgentDesktop["pids"] = { ...pidsOf(state), dbus: state.pids.dbus!.pid };
  return {
    name: state.name,
    session: state.session ?? "x11",
    display: state.display,
    ...(state.waylandDisplay === undefined ? {} : { waylandDisplay: state.waylandDisplay }),
    ...(state.runtimeDir === undefined ? {} : { runtimeDir: state.runtimeDir }),
    busAddress: state.busAddress,
    a11yBusAddress: state.a11yBusAddress,
    width: state.width,
    height: state.height,
    env,
    pids,
    stateFile: statePath(dir, state.name),
    stop() {
      stopping ??= (async () => {
        owned.delete(state.id);
        const survivors = await endDesktop(dir, state);
        if (survivors.length > 0)
          throw new AxsnapError(
            "DESKTOP_UNAVAILABLE",
            `desktop ${state.name}: pids ${survivors.join(", ")} survived SIGKILL`,
            {
              hint: "they may be stuck in the kernel (a hung mount or device); check them with ps",
            },
          );
      })();
      return stopping;
    },
  };
}

/**
 * Claims the name (claimState: a whole file, only where none exists). A
 * desktop of that name that is gone (its X server ended, its owner died,
 * even while it started) is cleaned away and the name taken; a live one is
 * DESKTOP_EXISTS, a running one's or one being started alike. A second start
 * does not wait for the first: the name would then be a running desktop's,
 * which is DESKTOP_EXISTS too, and waiting would only defer that answer.
 */
async function reserve(dir: string, state: DesktopState): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (claimState(dir, state)) return;
    const old = readState(dir, state.name);
    if (!old) continue;
    if (deathOf(old) === undefined)
      throw old.status === "starting"
        ? new AxsnapError(
            "DESKTOP_EXISTS",
            `a desktop named ${state.name} is being started by pid ${old.owner.pid} (since ${old.startedAt})`,
            {
              hint: `wait for it and use it (\`axsnap desktop list\` shows it once it runs; --desktop ${state.name}), or pick another name`,
            },
          )
        : new AxsnapError(
            "DESKTOP_EXISTS",
            `a desktop named ${state.name} is running (${old.session === "wayland" ? "Wayland" : `display ${old.display}`}, started ${old.startedAt} by pid ${old.owner.pid})`,
            {
              hint: `use it as it is (--desktop ${state.name}), pick another name, or stop it first (\`axsnap desktop stop ${state.name}\`)`,
            },
          );
    await endDesktop(dir, old);
  }
  throw new AxsnapError("DESKTOP_EXISTS", `the name ${state.name} was taken by another start meanwhile`, {
    hint: `see it with \`axsnap desktop list\`, or pick another name`,
  });
}

/** Starts a desktop of the agent's own; see the module's comment. */
export async function startDesktop(options: StartDesktopOptions = {}): Promise<AgentDesktop> {
  if (options === null || typeof options !== "object") throw invalidArgument("options must be an object");
  if (process.platform !== "linux")
    throw new AxsnapError("PLATFORM_NOT_SUPPORTED", "a desktop of the agent's own is X11 on Linux only", {
      hint: "on macOS, run the agent on the user's desktop; its semantic actions need no focus",
    });
  const name = checkName(options.name ?? "agent");
  const { width, height } = parseSize(options.size ?? "1280x800");
  const windowManager = options.windowManager === true;
  const wayland = options.wayland === true;
  const detached = options.detached === true;
  if (wayland && windowManager)
    throw invalidArgument(
      "a Wayland desktop's window manager is gnome-shell: windowManager (openbox) does not go with wayland",
      "leave windowManager out, or start an X11 desktop for openbox",
    );
  const programs = requirePrograms([
    ...(wayland ? WAYLAND_PROGRAMS : ["Xvfb"]),
    "dbus-daemon",
    "dbus-send",
    ...(windowManager ? ["openbox"] : []),
  ]);
  requireAtSpiService();

  const dir = stateDir();
  const id = `${name}-${randomBytes(6).toString("hex")}`;
  const owner = processId(process.pid)!;
  // Made before the claim, so the claimed file names it from the start (and whoever cleans it away removes it).
  const runtimeDir = wayland ? makeRuntimeDir() : undefined;
  const state: DesktopState = {
    version: 1,
    name,
    id,
    display: "",
    busAddress: "",
    a11yBusAddress: "",
    width,
    height,
    windowManager,
    mode: detached ? "cli" : "api",
    status: "starting",
    ...(runtimeDir === undefined
      ? {}
      : { session: "wayland" as const, runtimeDir, waylandDisplay: join(runtimeDir, WAYLAND_SOCKET) }),
    pids: {},
    owner,
    startedAt: new Date().toISOString(),
  };
  try {
    await reserve(dir, state);
  } catch (e) {
    removeRuntimeDir(runtimeDir);
    throw e;
  }
  const side = sidePaths(dir, name);
  let logFd = -1;
  try {
    logFd = openSync(side.log, "w", 0o600);
    const env = desktopEnv(id, runtimeDir);
    if (!detached) {
      const watchdog = startWatchdog(id, dir, name, runtimeDir);
      state.pids.watchdog = processId(watchdog.pid!) ?? { pid: watchdog.pid!, start: "" };
      owned.set(id, state);
      hookExit(dir);
    }
    if (runtimeDir !== undefined) await startWaylandParts(programs, state, env, logFd, side.log, runtimeDir);
    else await startX11Parts(programs, state, env, logFd, side);
    const core = wayland ? state.pids.compositor : state.pids.xvfb;
    if (!isAlive(core) || !isAlive(state.pids.dbus))
      throw unavailable(
        `the ${wayland ? "compositor" : "X server"} or the bus ended while the desktop started`,
        side.log,
        wayland,
      );
    if (readState(dir, name)?.id !== id)
      throw new AxsnapError("DESKTOP_UNAVAILABLE", `the desktop ${name} was stopped while it started`, {
        hint: `start it again (\`axsnap desktop start ${name}${wayland ? " --wayland" : ""}\`)`,
      });
    state.status = "running";
    writeState(dir, state);
    return handleOf(dir, state, env);
  } catch (e) {
    owned.delete(id);
    await endDesktop(dir, state).catch(() => undefined);
    throw e;
  } finally {
    if (logFd >= 0) closeSync(logFd);
  }
}

/** The programs of a Wayland desktop besides the bus's (pw-cli: to see WirePlumber connected). */
const WAYLAND_PROGRAMS = ["gnome-shell", "pipewire", "wireplumber", "pw-cli"];

/** Xvfb, the session bus, the AT-SPI bus, openbox if asked for. */
async function startX11Parts(
  programs: Record<string, string>,
  state: DesktopState,
  env: Record<string, string>,
  logFd: number,
  side: { bus: string; log: string },
): Promise<void> {
  const x = await startXvfb(programs.Xvfb!, state.width, state.height, env, logFd, side.log);
  state.pids.xvfb = processId(x.child.pid!) ?? { pid: x.child.pid!, start: "" };
  state.display = x.display;
  env.DISPLAY = x.display;
  const bus = await startBus(programs["dbus-daemon"]!, side.bus, env, side.log);
  state.pids.dbus = processId(bus.pid) ?? { pid: bus.pid, start: "" };
  state.busAddress = bus.address;
  env.DBUS_SESSION_BUS_ADDRESS = bus.address;
  state.a11yBusAddress = await startAccessibility(programs["dbus-send"]!, env, side.log);
  if (state.windowManager) {
    const wm = await startWindowManager(programs.openbox!, env, logFd, side.log);
    state.pids.windowManager = processId(wm.pid!) ?? { pid: wm.pid!, start: "" };
  }
}

/**
 * The session bus and a "system" bus in the runtime directory, the AT-SPI
 * bus, PipeWire, WirePlumber, then gnome-shell (the system bus its alone),
 * ready with its Overview hidden. Each pid is written into `state` as soon
 * as it exists, so a failure later ends it too.
 */
async function startWaylandParts(
  programs: Record<string, string>,
  state: DesktopState,
  env: Record<string, string>,
  logFd: number,
  log: string,
  runtimeDir: string,
): Promise<void> {
  const fail = (message: string) => unavailable(message, log, true);
  const idOf = (pid: number) => processId(pid) ?? { pid, start: "" };
  const bus = await startBus(programs["dbus-daemon"]!, join(runtimeDir, "bus"), env, log);
  state.pids.dbus = idOf(bus.pid);
  state.busAddress = bus.address;
  env.DBUS_SESSION_BUS_ADDRESS = bus.address;
  const system = await startBus(programs["dbus-daemon"]!, join(runtimeDir, "system_bus_socket"), env, log);
  state.pids.systemBus = idOf(system.pid);
  state.a11yBusAddress = await startAccessibility(programs["dbus-send"]!, env, log);
  const pipewire = await startPipewire(programs.pipewire!, env, logFd, runtimeDir, fail);
  state.pids.pipewire = idOf(pipewire.pid!);
  const wireplumber = await startWireplumber(programs.wireplumber!, programs["pw-cli"]!, env, logFd, fail);
  state.pids.wireplumber = idOf(wireplumber.pid!);
  const shellEnv = { ...env, DBUS_SYSTEM_BUS_ADDRESS: system.address };
  // A headless gnome-shell now and then never hides its Overview (its startup animation does not end):
  // that one is ended and a second started on the same socket and buses.
  const note = (line: string) => writeSync(logFd, `axsnap: ${line}\n`);
  for (let attempt = 1; ; attempt++) {
    const shell = spawnShell(programs["gnome-shell"]!, shellEnv, logFd, state);
    state.pids.compositor = idOf(shell.pid!);
    const stalled = await waitForShell(shell, programs["dbus-send"]!, env, runtimeDir, fail, note);
    if (stalled === undefined) break;
    if (attempt === 2)
      throw fail(`gnome-shell's Overview was not hidden, in two starts (last seen: ${stalled})`);
    note(`gnome-shell's Overview was not hidden within 20 s (last seen: ${stalled}): starting it again`);
    // Its forks that have not run exec hold its bus connection, and with it org.gnome.Shell.
    const compositor = state.pids.compositor;
    await terminate([compositor, ...unexecutedChildren(compositor.pid, 0)], COMPOSITOR_GRACE_MS);
  }
  env.WAYLAND_DISPLAY = state.waylandDisplay!;
}
