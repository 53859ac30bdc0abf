/**
 * startDesktop: a private headless X11 desktop of the agent's own. Xvfb on a
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
 * Every process of the desktop carries AXSNAP_AGENT_DESKTOP=<its id> in its
 * environment, and whatever the bus starts inherits it: that is how stop and
 * the watchdog find them all.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync } from "node:fs";
import { AxsnapError, invalidArgument } from "../errors.js";
import { unixPathAddress } from "./bus-address.js";
import { deathOf, endDesktop, endDesktopNow } from "./lifecycle.js";
import { isAlive, processId } from "./processes.js";
import { replyString, requireAtSpiService, requirePrograms, run } from "./programs.js";
import {
  checkName,
  claimState,
  type DesktopState,
  MARKER,
  parseSize,
  readState,
  sidePaths,
  stateDir,
  statePath,
  writeState,
} from "./state.js";

export interface StartDesktopOptions {
  /** Default "agent". Letters, digits, `_ . -`, at most 64. */
  name?: string;
  /** WIDTHxHEIGHT in pixels. Default "1280x800". */
  size?: string;
  /** Run openbox on it (Debian's openbox): windows get frames, focus and stacking as on a user's desktop. Default false. */
  windowManager?: boolean;
  /**
   * Leave it running after this process ends, until `axsnap desktop stop NAME`
   * (what `axsnap desktop start` does). Default false: it ends with its owner.
   */
  detached?: boolean;
}

export interface AgentDesktop {
  name: string;
  /** The X display, ":N". */
  display: string;
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
   * removed. It carries the desktop's marker: a process started with it is
   * the desktop's, and stop() ends it too.
   */
  env: Record<string, string>;
  pids: { xvfb: number; dbus: number; windowManager?: number; watchdog?: number };
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
function startWatchdog(id: string, dir: string, name: string): ChildProcess {
  const side = sidePaths(dir, name);
  const script = `
    read -r _ || true
    for e in /proc/[0-9]*/environ; do
      p=\${e#/proc/}; p=\${p%/environ}
      [ "$p" = "$$" ] && continue
      if tr '\\0' '\\n' < "$e" 2>/dev/null | grep -qxF "${MARKER}=$1"; then kill -KILL "$p" 2>/dev/null; fi
    done
    if grep -qF "\\"id\\": \\"$1\\"" "$2" 2>/dev/null; then rm -f -- "$2" "$3" "$4"; fi
  `;
  const child = spawn(
    "/bin/sh",
    ["-c", script, "axsnap-desktop-watchdog", id, statePath(dir, name), side.bus, side.log],
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

function unavailable(message: string, log: string): AxsnapError {
  const tail = logTail(log);
  return new AxsnapError("DESKTOP_UNAVAILABLE", `${message}${tail ? `:\n${tail}` : ""}`, {
    hint: "see the message for what the program said; a desktop needs the Debian packages xvfb, dbus and at-spi2-core",
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
function desktopEnv(id: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !FOREIGN_VARIABLES.includes(k)) env[k] = v;
  // GTK on X11 even where a Wayland session is the default; Qt's bridge on.
  env.GDK_BACKEND = "x11";
  env.ACCESSIBILITY_ENABLED = "1";
  env[MARKER] = id;
  return env;
}

function handleOf(dir: string, state: DesktopState, env: Record<string, string>): AgentDesktop {
  let stopping: Promise<void> | undefined;
  return {
    name: state.name,
    display: state.display,
    busAddress: state.busAddress,
    a11yBusAddress: state.a11yBusAddress,
    width: state.width,
    height: state.height,
    env,
    pids: {
      xvfb: state.pids.xvfb!.pid,
      dbus: state.pids.dbus!.pid,
      ...(state.pids.windowManager ? { windowManager: state.pids.windowManager.pid } : {}),
      ...(state.pids.watchdog ? { watchdog: state.pids.watchdog.pid } : {}),
    },
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
            `a desktop named ${state.name} is running (display ${old.display}, started ${old.startedAt} by pid ${old.owner.pid})`,
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
  const detached = options.detached === true;
  const programs = requirePrograms([
    "Xvfb",
    "dbus-daemon",
    "dbus-send",
    ...(windowManager ? ["openbox"] : []),
  ]);
  requireAtSpiService();

  const dir = stateDir();
  const id = `${name}-${randomBytes(6).toString("hex")}`;
  const owner = processId(process.pid)!;
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
    pids: {},
    owner,
    startedAt: new Date().toISOString(),
  };
  await reserve(dir, state);
  const side = sidePaths(dir, name);
  let logFd = -1;
  try {
    logFd = openSync(side.log, "w", 0o600);
    const env = desktopEnv(id);
    if (!detached) {
      const watchdog = startWatchdog(id, dir, name);
      state.pids.watchdog = processId(watchdog.pid!) ?? { pid: watchdog.pid!, start: "" };
      owned.set(id, state);
      hookExit(dir);
    }
    const x = await startXvfb(programs.Xvfb!, width, height, env, logFd, side.log);
    state.pids.xvfb = processId(x.child.pid!) ?? { pid: x.child.pid!, start: "" };
    state.display = x.display;
    env.DISPLAY = x.display;
    const bus = await startBus(programs["dbus-daemon"]!, side.bus, env, side.log);
    state.pids.dbus = processId(bus.pid) ?? { pid: bus.pid, start: "" };
    state.busAddress = bus.address;
    env.DBUS_SESSION_BUS_ADDRESS = bus.address;
    state.a11yBusAddress = await startAccessibility(programs["dbus-send"]!, env, side.log);
    if (windowManager) {
      const wm = await startWindowManager(programs.openbox!, env, logFd, side.log);
      state.pids.windowManager = processId(wm.pid!) ?? { pid: wm.pid!, start: "" };
    }
    if (!isAlive(state.pids.xvfb) || !isAlive(state.pids.dbus))
      throw unavailable("the X server or the bus ended while the desktop started", side.log);
    if (readState(dir, name)?.id !== id)
      throw new AxsnapError("DESKTOP_UNAVAILABLE", `the desktop ${name} was stopped while it started`, {
        hint: `start it again (\`axsnap desktop start ${name}\`)`,
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
