#!/usr/bin/env node
// A headless Linux desktop for axsnap's tests, benchmark and demo: Xvfb, a
// private session D-Bus (which activates the AT-SPI bus and registry on
// demand) and a temporary HOME, plus helpers that start apps on it and wait
// until they are in the accessibility registry. Node standard library only.
// `wayland: true` starts headless gnome-shell (with a private "system" bus,
// PipeWire and WirePlumber) in place of Xvfb; apps there are native Wayland
// clients (lib/observe/agent-desktop/wayland.ts does the same for the library).
//
// Library:
//   import { startDesktop, gtkWidgetFactory, chromium, startApp } from "../scripts/desktop.mjs";
//   const desktop = await startDesktop();               // { display, env, busAddress, home, stop() }
//   const app = await gtkWidgetFactory(desktop);        // { pid, busName, readyMs, stop() }
//   ... run axsnap with desktop.env (or copy it into process.env) ...
//   await desktop.stop();                               // also stops its apps
//
// CLI:
//   node scripts/desktop.mjs run [--size WxH] [--gtk-widget-factory] [--chromium URL] -- <command...>
//   node scripts/desktop.mjs demo-app
//
// Ownership: every process started here (and everything they start) carries
// AXSNAP_DESKTOP=<its temp dir> in its environment. stop() kills those and
// only those, then removes the temp dir. A watchdog does the same if this
// process dies without running stop() (even on SIGKILL).

import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const MARKER = "AXSNAP_DESKTOP";
const A11Y_DEST = "org.a11y.atspi.Registry";
const ROOT_PATH = "/org/a11y/atspi/accessible/root";
const OUTPUT_TAIL_BYTES = 16 * 1024;

/** Desktops of this process that are not stopped yet (for the exit handler). */
const live = new Set();

// ---------------------------------------------------------------------------
// small utilities

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function findExecutable(name) {
  if (name.includes("/")) return isExecutable(name) ? name : null;
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

function isExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function requireExecutables(names) {
  const missing = names.filter((n) => !findExecutable(n));
  if (missing.length > 0) {
    throw new Error(
      `desktop: missing ${missing.join(", ")} on PATH; install the test dependencies with scripts/install-deps.sh`,
    );
  }
}

/** Keeps the last `limit` bytes written to a stream, without holding the event loop. */
function tail(stream, limit = OUTPUT_TAIL_BYTES) {
  let text = "";
  if (!stream) return () => text;
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    text += chunk;
    if (text.length > limit) text = text.slice(text.length - limit);
  });
  stream.on("error", () => {});
  stream.unref?.();
  return () => text;
}

/** Runs a command; resolves { code, stdout, stderr } and never rejects. */
function run(command, args, { env, timeoutMs = 5000 } = {}) {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr || error?.message || "") });
      },
    );
  });
}

/** Fields of /proc/<pid>/stat after the command name, or null if the process is gone. */
function procStat(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const close = text.lastIndexOf(")");
  const rest = text.slice(close + 2).split(" ");
  // rest[0] = state (field 3), rest[1] = ppid, rest[2] = pgrp, rest[19] = starttime (field 22)
  return { state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19] };
}

/**
 * Whether a process with that stat has ended: a zombie only once no thread of it runs (/proc lists a process "Z" as
 * soon as its main thread exits, while its other threads, and its open files, may still be there).
 */
function ended(pid, st) {
  if (st.state === "X") return true;
  if (st.state !== "Z") return false;
  try {
    return Number(/^Threads:\s*(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) <= 1;
  } catch {
    return true;
  }
}

/** True while the process exists and has not ended. */
function alive(pid, start) {
  const st = procStat(pid);
  if (!st || ended(pid, st)) return false;
  return start === undefined || st.start === start;
}

/** Processes whose environment carries this desktop's marker: [{ pid, start, pgid }]. */
function markedProcesses(base) {
  const needle = `\0${MARKER}=${base}\0`;
  const found = [];
  let entries;
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ;
    try {
      environ = fs.readFileSync(`/proc/${entry}/environ`, "latin1");
    } catch {
      continue;
    }
    if (!`\0${environ}`.includes(needle)) continue;
    const st = procStat(pid);
    if (st && !ended(pid, st)) found.push({ pid, start: st.start, pgid: st.pgid });
  }
  return found;
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Signals a process group; the leader's pid names the group. */
function signalGroup(pgid, sig) {
  return pgid > 1 ? signal(-pgid, sig) : false;
}

async function waitUntil(predicate, timeoutMs, intervalMs = 25) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(intervalMs);
  }
}

/** SIGTERM, wait, SIGKILL what is left; processes: [{ pid, start }]. */
async function terminate(processes, graceMs = 2000) {
  const pending = () => processes.filter((p) => alive(p.pid, p.start));
  for (const p of pending()) signal(p.pid, "SIGTERM");
  if (await waitUntil(() => pending().length === 0, graceMs)) return;
  for (const p of pending()) signal(p.pid, "SIGKILL");
  await waitUntil(() => pending().length === 0, 1000);
}

// ---------------------------------------------------------------------------
// dbus-send output parsing

/** The first `string "..."` value of a reply (a variant string included). */
export function parseString(output) {
  const m = /^\s*(?:variant\s+)?string "([\s\S]*)"\s*$/m.exec(output);
  if (m) return m[1];
  // Values with embedded newlines: from the first `string "` to the last quote.
  const start = output.indexOf('string "');
  const end = output.lastIndexOf('"');
  return start >= 0 && end > start + 7 ? output.slice(start + 8, end) : null;
}

/** The first integer of a reply (int32, uint32, ...). */
export function parseInteger(output) {
  const m = /\b(?:u?int(?:16|32|64)|byte)\s+(-?\d+)/.exec(output);
  return m ? Number(m[1]) : null;
}

/** Object references (so) of a reply, in order: [{ bus, path }]. */
export function parseReferences(output) {
  const refs = [];
  const re = /string "([^"\n]*)"\s*\n\s*object path "([^"\n]*)"/g;
  for (let m = re.exec(output); m; m = re.exec(output)) refs.push({ bus: m[1], path: m[2] });
  return refs;
}

function sessionSend(env, args, timeoutMs = 2000) {
  return run("dbus-send", ["--session", "--print-reply", `--reply-timeout=${timeoutMs}`, ...args], {
    env,
    timeoutMs: timeoutMs + 1000,
  });
}

function a11ySend(desktop, args, timeoutMs = 1000) {
  return run(
    "dbus-send",
    [`--bus=${desktop.a11yBusAddress}`, "--print-reply", `--reply-timeout=${timeoutMs}`, ...args],
    { env: desktop.env, timeoutMs: timeoutMs + 1000 },
  );
}

async function getA11yProperty(desktop, bus, objectPath, property) {
  const r = await a11ySend(desktop, [
    `--dest=${bus}`,
    objectPath,
    "org.freedesktop.DBus.Properties.Get",
    "string:org.a11y.atspi.Accessible",
    `string:${property}`,
  ]);
  return r.code === 0 ? r.stdout : null;
}

/** The apps registered on the desktop's accessibility bus: [{ bus, path }]. */
export async function registryChildren(desktop) {
  const r = await a11ySend(desktop, [
    `--dest=${A11Y_DEST}`,
    ROOT_PATH,
    "org.a11y.atspi.Accessible.GetChildren",
  ]);
  if (r.code !== 0) throw new Error(`desktop: GetChildren on the registry failed: ${r.stderr.trim()}`);
  return parseReferences(r.stdout);
}

/** { name, childCount, pid } of one registered app (fields null when unreadable). */
export async function describeApp(desktop, ref) {
  const [name, count, pid] = await Promise.all([
    getA11yProperty(desktop, ref.bus, ref.path, "Name"),
    getA11yProperty(desktop, ref.bus, ref.path, "ChildCount"),
    a11ySend(desktop, [
      "--dest=org.freedesktop.DBus",
      "/org/freedesktop/DBus",
      "org.freedesktop.DBus.GetConnectionUnixProcessID",
      `string:${ref.bus}`,
    ]),
  ]);
  return {
    name: name === null ? null : parseString(name),
    childCount: count === null ? null : parseInteger(count),
    pid: pid.code === 0 ? parseInteger(pid.stdout) : null,
  };
}

// ---------------------------------------------------------------------------
// process-wide cleanup

let handlersInstalled = false;
/** The CLI handles signals itself, gracefully. */
let signalCleanup = true;

function cleanupAllSync() {
  for (const desktop of [...live]) desktop._stopSync();
}

function installHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on("exit", cleanupAllSync);
  if (!signalCleanup) return;
  // Clean up on the usual termination signals, then let them take their
  // normal course: re-raise unless someone else also handles the signal.
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    const handler = () => {
      cleanupAllSync();
      if (process.listenerCount(sig) > 1) return;
      process.removeListener(sig, handler);
      process.kill(process.pid, sig);
    };
    process.on(sig, handler);
  }
}

/**
 * A detached shell that waits for EOF on a pipe from this process (which
 * happens however this process ends) and then kills every process carrying
 * the marker and removes the temp dir. stop() kills it first.
 */
function startWatchdog(base) {
  const script = `
    read -r _ || true
    [ -d "$1" ] || exit 0
    for e in /proc/[0-9]*/environ; do
      p=\${e#/proc/}; p=\${p%/environ}
      [ "$p" = "$$" ] && continue
      if tr '\\0' '\\n' < "$e" 2>/dev/null | grep -qxF "${MARKER}=$1"; then kill -KILL "$p" 2>/dev/null; fi
    done
    rm -rf -- "$1"
  `;
  const child = spawn("/bin/sh", ["-c", script, "axsnap-desktop-watchdog", base], {
    stdio: ["pipe", "ignore", "ignore"],
    detached: true,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  });
  child.on("error", () => {});
  child.stdin.on("error", () => {});
  child.unref();
  child.stdin.unref?.();
  return child;
}

// ---------------------------------------------------------------------------
// the desktop

/**
 * A D-Bus address value, escaped as the specification asks: every byte outside
 * [-0-9A-Za-z_/.\\*] as %XX (a temporary directory with a space is no address
 * otherwise). lib/observe/agent-desktop/bus-address.ts does the same for the library;
 * this script runs under plain node and cannot import it.
 * @param {string} value
 */
function escapeAddressValue(value) {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /^[-0-9A-Za-z_/.\\*]$/.test(c) ? c : `%${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}

/**
 * Starts Xvfb, a session bus and the accessibility bus in a fresh temporary
 * HOME and XDG_RUNTIME_DIR.
 *
 * `accessibility: false` starts the X server alone: no session bus, so no
 * accessibility bus or registry either (a desktop of plain X11 clients).
 *
 * `wayland: true` starts headless gnome-shell in place of Xvfb
 * (startWaylandSession); `unsafe: false` with it starts the shell without
 * --unsafe-mode, so that its Eval is refused as on a user's session.
 *
 * @param {{ width?: number, height?: number, accessibility?: boolean, wayland?: boolean, unsafe?: boolean }} [options]
 * @returns {Promise<{
 *   display: string, env: Record<string,string>, busAddress: string,
 *   a11yBusAddress: string, home: string, runtimeDir: string, tmpDir: string,
 *   width: number, height: number, stop: () => Promise<void> }>}
 */
export async function startDesktop({
  width = 1920,
  height = 1080,
  accessibility = true,
  wayland = false,
  unsafe = true,
} = {}) {
  if (process.platform !== "linux") throw new Error("desktop: Linux only");
  if (wayland && !accessibility) throw new Error("desktop: a Wayland desktop always has its buses");
  if (!wayland && !unsafe) throw new Error("desktop: `unsafe: false` is a gnome-shell option (wayland: true)");
  requireExecutables(
    wayland
      ? ["gnome-shell", "pipewire", "wireplumber", "pw-cli", "dbus-daemon", "dbus-send"]
      : ["Xvfb", "dbus-daemon", "dbus-send"],
  );
  installHandlers();

  const base = fs.mkdtempSync(path.join(os.tmpdir(), "axsnap-desktop-"));
  const home = path.join(base, "home");
  const runtimeDir = path.join(base, "runtime");
  for (const dir of [base, home, runtimeDir]) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dir, 0o700);
  }

  const env = { ...process.env };
  for (const name of [
    "NO_AT_BRIDGE",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_STARTER_ADDRESS",
    "DBUS_STARTER_BUS_TYPE",
    "AT_SPI_BUS_ADDRESS",
    "DISPLAY",
    "XAUTHORITY",
  ]) {
    delete env[name];
  }
  Object.assign(env, {
    HOME: home,
    XDG_RUNTIME_DIR: runtimeDir,
    GDK_BACKEND: wayland ? "wayland" : "x11",
    ...(wayland ? { XDG_SESSION_TYPE: "wayland" } : {}),
    // GTK 4 draws with GL by default; on Xvfb that is software GL, and its frames kept the
    // main loop so busy that gtk4-widget-factory never got to register with AT-SPI (an idle
    // callback) in 150 s here. Cairo draws in software cheaply and it registers at once.
    GSK_RENDERER: "cairo",
    ACCESSIBILITY_ENABLED: "1",
    [MARKER]: base,
  });

  const desktop = {
    session: wayland ? "wayland" : "x11",
    display: "",
    waylandDisplay: "",
    env,
    busAddress: "",
    a11yBusAddress: "",
    home,
    runtimeDir,
    tmpDir: base,
    width,
    height,
    unsafe: wayland ? unsafe : false,
    /** @type {Set<{ stop(): Promise<void>, _killSync(): void }>} */
    apps: new Set(),
    _xvfb: null,
    _shell: null,
    _spawnGuard: undefined,
    _dbusPid: 0,
    _watchdog: null,
    _stopping: null,
    stop: () => stopDesktop(desktop),
    _stopSync: () => stopDesktopSync(desktop),
  };
  live.add(desktop);
  desktop._watchdog = startWatchdog(base);

  try {
    if (wayland) {
      await startWaylandSession(desktop);
      return desktop;
    }
    // 1. X server: -displayfd writes the display number once it accepts clients.
    const xvfb = spawn(
      "Xvfb",
      ["-displayfd", "3", "-screen", "0", `${width}x${height}x24`, "-nolisten", "tcp", "-noreset"],
      { env, detached: true, stdio: ["ignore", "ignore", "pipe", "pipe"] },
    );
    desktop._xvfb = xvfb;
    xvfb.on("error", () => {});
    const xvfbOutput = tail(xvfb.stderr);
    xvfb.unref();
    const displayNumber = await new Promise((resolve, reject) => {
      let text = "";
      const fd = xvfb.stdio[3];
      const done = (error, value) => {
        clearTimeout(timer);
        fd.removeAllListeners("data");
        xvfb.removeListener("exit", onExit);
        fd.destroy();
        error ? reject(error) : resolve(value);
      };
      const onExit = (code, sig) =>
        done(new Error(`desktop: Xvfb exited (${sig ?? code}) before it was ready:\n${xvfbOutput()}`));
      const timer = setTimeout(
        () => done(new Error(`desktop: Xvfb not ready after 10 s:\n${xvfbOutput()}`)),
        10_000,
      );
      fd.setEncoding("utf8");
      fd.on("data", (chunk) => {
        text += chunk;
        const m = /^(\d+)\n/.exec(text);
        if (m) done(null, Number(m[1]));
      });
      fd.on("error", () => {});
      xvfb.once("exit", onExit);
    });
    desktop.display = `:${displayNumber}`;
    env.DISPLAY = desktop.display;
    if (!accessibility) {
      env.NO_AT_BRIDGE = "1";
      return desktop;
    }

    // 2. Session bus. It forks into its own session (so its process group is
    //    its pid) and activates the accessibility bus launcher on demand; the
    //    launcher, the accessibility bus and the registry stay in that group.
    //    The socket lives in XDG_RUNTIME_DIR/bus, where GIO also looks for it.
    const busSocket = path.join(runtimeDir, "bus");
    const daemon = await run(
      "dbus-daemon",
      [
        "--session",
        "--fork",
        "--print-address=1",
        "--print-pid=1",
        `--address=unix:path=${escapeAddressValue(busSocket)}`,
      ],
      { env, timeoutMs: 10_000 },
    );
    const lines = daemon.stdout.split("\n").filter(Boolean);
    if (daemon.code !== 0 || lines.length < 2 || !/^\d+$/.test(lines[1])) {
      throw new Error(
        `desktop: dbus-daemon failed (${daemon.code}): ${daemon.stderr.trim()}${daemon.stdout}`,
      );
    }
    desktop.busAddress = lines[0];
    desktop._dbusPid = Number(lines[1]);
    env.DBUS_SESSION_BUS_ADDRESS = desktop.busAddress;

    // 3. Accessibility bus: activated by the first GetAddress; then enabled
    //    for toolkits that wait for IsEnabled (Chromium, Qt).
    await enableAccessibility(desktop);
    return desktop;
  } catch (error) {
    await desktop.stop();
    throw error;
  }
}

/**
 * gnome-shell shows its Overview at the end of its startup animation (after
 * its names are on the bus), where no window gets focus: wait for the startup
 * to complete, hide it, see it hidden.
 */
const HIDE_OVERVIEW =
  "(() => { const o = Main.overview; if (Main.layoutManager._startingUp) return 'starting'; if (o.visible) o.hide(); return o.visible ? 'shown (' + o._shownState + (o.animationInProgress ? ', animating' : '') + ')' : 'hidden'; })()";

/** A background part of the Wayland session, its output kept for errors. */
function spawnPart(desktop, file, args, env = desktop.env) {
  const child = spawn(file, args, { env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.on("error", () => {});
  const out = tail(child.stdout);
  const err = tail(child.stderr);
  child.unref();
  child.output = () => `${out()}${err()}`;
  return child;
}

/** Waits for `ready()` while `child` runs; throws with its output when it ends or the time is up. */
async function partReady(child, what, ready, timeoutMs) {
  let end = null;
  child.once("exit", (code, sig) => {
    end = sig ?? code;
  });
  const ok = await waitUntil(async () => end !== null || (await ready()), timeoutMs, 50);
  if (end !== null) throw new Error(`desktop: ${what} exited (${end}) as it started:\n${child.output()}`);
  if (!ok) throw new Error(`desktop: ${what} not ready within ${timeoutMs} ms:\n${child.output()}`);
}

/** A dbus-daemon with the session configuration on `socket`; { address, pid }. */
async function startBusDaemon(env, socket) {
  const daemon = await run(
    "dbus-daemon",
    [
      "--session",
      "--fork",
      "--print-address=1",
      "--print-pid=1",
      `--address=unix:path=${escapeAddressValue(socket)}`,
    ],
    { env, timeoutMs: 10_000 },
  );
  const lines = daemon.stdout.split("\n").filter(Boolean);
  if (daemon.code !== 0 || lines.length < 2 || !/^\d+$/.test(lines[1])) {
    throw new Error(`desktop: dbus-daemon failed (${daemon.code}): ${daemon.stderr.trim()}${daemon.stdout}`);
  }
  return { address: lines[0], pid: Number(lines[1]) };
}

/**
 * The Wayland session: the session bus and a "system" bus (gnome-shell dies
 * without one), the accessibility bus, PipeWire, WirePlumber (a ScreenCast
 * stream is never linked without it), then headless gnome-shell in unsafe
 * mode (its Eval lists windows), ready once it owns its D-Bus names and its
 * Overview is hidden.
 *
 * `desktop.unsafe` false: gnome-shell without --unsafe-mode, as on a user's
 * own GNOME session, where Eval answers (false, ""). Its Overview is then
 * left as the shell shows it (hiding it needs Eval), so no window is
 * focused until something activates one.
 */
async function startWaylandSession(desktop) {
  const env = desktop.env;
  const bus = await startBusDaemon(env, path.join(desktop.runtimeDir, "bus"));
  desktop.busAddress = bus.address;
  desktop._dbusPid = bus.pid;
  env.DBUS_SESSION_BUS_ADDRESS = bus.address;
  const system = await startBusDaemon(env, path.join(desktop.runtimeDir, "system_bus_socket"));
  desktop._systemBusPid = system.pid;
  await enableAccessibility(desktop);

  const pipewire = spawnPart(desktop, "pipewire", []);
  await partReady(pipewire, "pipewire", () => fs.existsSync(path.join(desktop.runtimeDir, "pipewire-0")), 10_000);
  const wireplumber = spawnPart(desktop, "wireplumber", []);
  await partReady(
    wireplumber,
    "wireplumber",
    async () => /application\.name = "WirePlumber"/.test((await run("pw-cli", ["ls", "Client"], { env })).stdout),
    10_000,
  );

  desktop._systemBusAddress = system.address;
  await startShell(desktop);
  desktop.waylandDisplay = path.join(desktop.runtimeDir, WAYLAND_SOCKET);
  env.WAYLAND_DISPLAY = desktop.waylandDisplay;
}

const WAYLAND_SOCKET = "wayland-0";

/**
 * Headless gnome-shell (in unsafe mode unless `unsafe: false`), ready once it owns its D-Bus names and (unsafe) its
 * Overview is hidden. Now and then a headless shell never hides its Overview (its startup animation does not end):
 * that one is ended and a second started, as lib/observe/agent-desktop/start.ts does.
 */
async function startShell(desktop) {
  for (let attempt = 1; ; attempt++) {
    const stalled = await startShellOnce(desktop);
    if (stalled === null) return;
    const message = `desktop: gnome-shell's Overview was not hidden within 20000 ms (last seen: ${stalled})`;
    if (attempt === 2) throw new Error(`${message}, in two starts:\n${desktop._shell.output()}`);
    console.error(`${message}: starting it again`);
    // Its process group goes with it: a fork that has not run exec holds the shell's bus connection, and a second
    // shell exits at once while org.gnome.Shell is owned.
    const old = desktop._shell;
    if (old.exitCode === null && old.signalCode === null) {
      const gone = new Promise((resolve) => old.once("exit", resolve));
      try {
        process.kill(-old.pid, "SIGKILL");
      } catch {}
      await Promise.race([gone, sleep(10_000)]);
    }
    const free = await waitUntil(async () => !(await nameOwned(desktop.env, "org.gnome.Shell")), 10_000, 50);
    if (!free) throw new Error(`${message}, and org.gnome.Shell was still owned 10 s after it was killed`);
  }
}

/**
 * A fork of gnome-shell's that has not run exec a second later hangs there, and the shell with it: gnome-shell 43 starts
 * ibus-daemon with a JavaScript child_setup that now and then hangs in the child. Killed, the shell goes on. Why, in
 * lib/observe/agent-desktop/wayland.ts (stuckSpawnGuard). Looked for each second while the shell runs: without Eval
 * (`unsafe: false`) the start cannot wait for the spawn to be past.
 */
function guardSpawns(desktop, shell) {
  clearInterval(desktop._spawnGuard);
  desktop._spawnGuard = setInterval(() => endStuckSpawns(shell.pid), 1000);
  desktop._spawnGuard.unref();
}

function endStuckSpawns(shellPid) {
  let image;
  try {
    image = fs.readlinkSync(`/proc/${shellPid}/exe`);
  } catch {
    return;
  }
  const uptime = Number.parseFloat(fs.readFileSync("/proc/uptime", "utf8"));
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const st = procStat(Number(entry));
      if (st?.ppid !== shellPid || st.state === "Z") continue;
      if (uptime - Number(st.start) / 100 < 1 || fs.readlinkSync(`/proc/${entry}/exe`) !== image) continue;
      process.kill(Number(entry), "SIGKILL");
      console.error(`desktop: gnome-shell's spawn of a helper hung before its exec (pid ${entry}): ended it`);
    } catch {}
  }
}

/** Whether `name` has an owner on the session bus of `env`. */
async function nameOwned(env, name) {
  const r = await sessionSend(env, [
    "--dest=org.freedesktop.DBus",
    "/org/freedesktop/DBus",
    "org.freedesktop.DBus.NameHasOwner",
    `string:${name}`,
  ]);
  return /boolean true/.test(r.stdout);
}

/** One start of the shell; resolves null when ready, or what Eval last said of an Overview that stayed up. */
async function startShellOnce(desktop) {
  const env = desktop.env;
  const socket = WAYLAND_SOCKET;
  // A restart's env names the socket already; the headless shell makes it, never connects to it.
  const shellEnv = { ...env, DBUS_SYSTEM_BUS_ADDRESS: desktop._systemBusAddress };
  delete shellEnv.WAYLAND_DISPLAY;
  const shell = spawnPart(
    desktop,
    "gnome-shell",
    [
      "--wayland",
      "--headless",
      "--virtual-monitor",
      `${desktop.width}x${desktop.height}`,
      "--no-x11",
      "--wayland-display",
      socket,
      ...(desktop.unsafe ? ["--unsafe-mode"] : []),
    ],
    shellEnv,
  );
  desktop._shell = shell;
  const owned = (name) => nameOwned(env, name);
  guardSpawns(desktop, shell);
  await partReady(
    shell,
    "gnome-shell",
    async () =>
      fs.existsSync(path.join(desktop.runtimeDir, socket)) &&
      (await owned("org.gnome.Shell.Introspect")) &&
      (await owned("org.gnome.Mutter.ScreenCast")),
    60_000,
  );
  // It starts with the Overview up, where no window gets focus.
  if (!desktop.unsafe) return null;
  let seen = null;
  let end = null;
  shell.once("exit", (code, sig) => {
    end = sig ?? code;
  });
  const hidden = await waitUntil(
    async () => {
      if (end !== null) return true;
      seen = await shellEval(desktop, HIDE_OVERVIEW);
      return seen === '"hidden"';
    },
    20_000,
    50,
  );
  if (end !== null) throw new Error(`desktop: gnome-shell exited (${end}) as it started:\n${shell.output()}`);
  return hidden ? null : (seen ?? "no answer");
}

/**
 * Stops the Wayland desktop's gnome-shell (its Wayland clients die with it)
 * and starts a new one on the same socket and buses, as after a compositor
 * crash. Resolves when the new shell is ready.
 */
export async function restartCompositor(desktop) {
  if (desktop.session !== "wayland") throw new Error("desktop: only a Wayland desktop has a compositor to restart");
  const old = desktop._shell;
  if (old?.pid) await terminate(markedProcesses(desktop.tmpDir).filter((p) => p.pid === old.pid), 6000);
  await startShell(desktop);
}

/** The Wayland desktop's gnome-shell process id. */
export function compositorPid(desktop) {
  if (!desktop._shell?.pid) throw new Error("desktop: no compositor runs on this desktop");
  return desktop._shell.pid;
}

/**
 * Activates the accessibility bus (first GetAddress), records its address and sets IsEnabled for toolkits
 * that wait for it. After a restart, `replacing` is the old address, which does not count as an answer.
 */
async function enableAccessibility(desktop, { replacing = null, timeoutMs = 5000 } = {}) {
  const env = desktop.env;
  let address = null;
  let lastError = "";
  const ok = await waitUntil(
    async () => {
      const r = await sessionSend(env, ["--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress"]);
      if (r.code === 0) address = parseString(r.stdout);
      else lastError = r.stderr.trim();
      return Boolean(address) && address !== replacing;
    },
    timeoutMs,
    50,
  );
  if (!ok) {
    throw new Error(
      `desktop: org.a11y.Bus.GetAddress did not answer with a new bus within ${timeoutMs / 1000} s: ${lastError}`,
    );
  }
  desktop.a11yBusAddress = address;
  const set = await sessionSend(env, [
    "--dest=org.a11y.Bus",
    "/org/a11y/bus",
    "org.freedesktop.DBus.Properties.Set",
    "string:org.a11y.Status",
    "string:IsEnabled",
    "variant:boolean:true",
  ]);
  if (set.code !== 0) throw new Error(`desktop: setting org.a11y.Status.IsEnabled failed: ${set.stderr.trim()}`);
}

/**
 * org.gnome.Shell.Eval on a Wayland desktop: the result's string (the
 * value as JSON), or null when it failed.
 */
export async function shellEval(desktop, script, timeoutMs = 3000) {
  const r = await sessionSend(
    desktop.env,
    ["--dest=org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Eval", `string:${script}`],
    timeoutMs,
  );
  if (r.code !== 0 || !/^\s*boolean true\s*$/m.test(r.stdout)) return null;
  const start = r.stdout.indexOf('string "');
  const end = r.stdout.lastIndexOf('"');
  return start >= 0 && end > start + 7 ? r.stdout.slice(start + 8, end) : null;
}

/**
 * The compositor's windows on a Wayland desktop, bottom to top: { id, title,
 * wmClass, pid, client ("wayland" | "x11"), frame, buffer, focus, minimized }.
 */
export async function compositorWindows(desktop) {
  const script = `(() => { const d = global.display; const f = d.get_focus_window();
    return d.sort_windows_by_stacking(global.get_window_actors().map((a) => a.meta_window)).map((w) => {
      const fr = w.get_frame_rect(), br = w.get_buffer_rect();
      return { id: String(w.get_id()), title: w.get_title(), wmClass: w.get_wm_class(), pid: w.get_pid(),
        client: w.get_client_type() === 0 ? "wayland" : "x11",
        frame: [fr.x, fr.y, fr.width, fr.height], buffer: [br.x, br.y, br.width, br.height], focus: w === f,
        minimized: w.minimized };
    }); })()`;
  const json = await shellEval(desktop, script.replace(/\s*\n\s*/g, " "));
  if (json === null) throw new Error("desktop: gnome-shell's Eval of the window list failed");
  return JSON.parse(json);
}

function stopDesktop(desktop) {
  clearInterval(desktop._spawnGuard);
  desktop._stopping ??= (async () => {
    await Promise.all([...desktop.apps].map((app) => app.stop()));
    // gnome-shell before the buses and PipeWire it uses; it can take more than 5 s to act on TERM.
    if (desktop._shell?.pid) {
      await terminate(markedProcesses(desktop.tmpDir).filter((p) => p.pid === desktop._shell.pid), 6000);
    }
    // The session bus's group holds the accessibility bus launcher, the
    // accessibility bus and the registry.
    if (desktop._dbusPid) {
      const group = markedProcesses(desktop.tmpDir).filter((p) => p.pgid === desktop._dbusPid);
      signalGroup(desktop._dbusPid, "SIGTERM");
      await terminate(group);
    }
    // Anything else carrying our marker, except the X server (last).
    const xvfbPid = desktop._xvfb?.pid;
    await terminate(markedProcesses(desktop.tmpDir).filter((p) => p.pid !== xvfbPid));
    await terminate(markedProcesses(desktop.tmpDir));
    const left = markedProcesses(desktop.tmpDir);
    desktop._watchdog?.kill("SIGKILL");
    fs.rmSync(desktop.tmpDir, { recursive: true, force: true });
    live.delete(desktop);
    if (left.length > 0) {
      throw new Error(`desktop: processes survived SIGKILL: ${left.map((p) => p.pid).join(", ")}`);
    }
  })();
  return desktop._stopping;
}

/** Synchronous last resort for process exit: SIGKILL everything we own. */
function stopDesktopSync(desktop) {
  clearInterval(desktop._spawnGuard);
  for (const app of desktop.apps) app._killSync();
  if (desktop._dbusPid) signalGroup(desktop._dbusPid, "SIGKILL");
  if (desktop._xvfb?.pid) signal(desktop._xvfb.pid, "SIGKILL");
  if (desktop._shell?.pid) signal(desktop._shell.pid, "SIGKILL");
  for (const p of markedProcesses(desktop.tmpDir)) signal(p.pid, "SIGKILL");
  desktop._watchdog?.kill("SIGKILL");
  try {
    fs.rmSync(desktop.tmpDir, { recursive: true, force: true });
  } catch {}
  live.delete(desktop);
}

// ---------------------------------------------------------------------------
// apps

/**
 * Starts an app on the desktop and waits until it is in the AT-SPI registry
 * with at least one child (a window). The registered app must belong to the
 * spawned process's process group, and, when `name` is given, carry that
 * accessible name.
 *
 * @param {Awaited<ReturnType<typeof startDesktop>>} desktop
 * @param {string} command
 * @param {string[]} [args]
 * `windowName`, when given, must also be part of the name of one of the app's
 * windows (Chromium: the page title, which shows before the page's content).
 *
 * @param {{ name?: string, windowName?: string, timeoutMs?: number }} [options]
 * @returns {Promise<{ pid: number, name: string, busName: string, readyMs: number,
 *   output: () => string, exited: () => boolean, stop: () => Promise<void> }>}
 */
export async function startApp(
  desktop,
  command,
  args = [],
  { name, windowName, windowClass, timeoutMs = 20_000 } = {},
) {
  if (desktop._stopping) throw new Error("desktop: already stopped");
  requireExecutables([command]);
  const started = Date.now();
  const windowsBefore = windowClass === undefined ? null : await topLevelWindows(desktop);
  const child = spawn(command, args, {
    env: desktop.env,
    detached: true, // its own process group, so stop() reaches its helpers too
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = tail(child.stdout);
  const err = tail(child.stderr);
  const output = () => `${out()}${err()}`;
  let exit = null;
  child.on("exit", (code, sig) => {
    exit = { code, signal: sig };
  });
  const spawnError = new Promise((resolve) => child.once("error", resolve));
  child.unref();
  if (!child.pid) {
    throw new Error(`desktop: could not start ${command}: ${(await spawnError)?.message ?? "unknown error"}`);
  }
  const pid = child.pid;

  let stopping = null;
  const app = {
    pid,
    name: name ?? "",
    busName: "",
    xid: "",
    started,
    readyMs: 0,
    output,
    exited: () => exit !== null,
    stop: () => {
      stopping ??= (async () => {
        const group = markedProcesses(desktop.tmpDir).filter((p) => p.pgid === pid || p.pid === pid);
        signalGroup(pid, "SIGTERM");
        await terminate(group, 3000);
        signalGroup(pid, "SIGKILL");
        desktop.apps.delete(app);
      })();
      return stopping;
    },
    _killSync: () => signalGroup(pid, "SIGKILL"),
  };
  desktop.apps.add(app);

  if (windowsBefore !== null) {
    await waitForX11Window(desktop, app, command, windowClass, windowsBefore, started + timeoutMs, () => exit);
    return app;
  }

  const rejected = new Map(); // bus names of other processes' apps -> description
  const deadline = started + timeoutMs;
  let seen = [];
  try {
    for (;;) {
      if (exit) {
        throw new Error(
          `desktop: ${command} exited (${exit.signal ?? exit.code}) before it appeared in the accessibility registry:\n${output()}`,
        );
      }
      const refs = (await registryChildren(desktop)).filter((r) => !rejected.has(r.bus));
      const infos = await Promise.all(
        refs.map(async (ref) => ({ ref, ...(await describeApp(desktop, ref)) })),
      );
      const describe = (i) => `${i.name ?? "?"} (pid ${i.pid ?? "?"}, ${i.childCount ?? "?"} children)`;
      seen = [...infos.map(describe), ...[...rejected.values()].map((d) => `${d}, not ours`)];
      for (const info of infos) {
        if (info.pid === null) continue;
        const st = procStat(info.pid);
        const ours = info.pid === pid || st?.pgid === pid;
        if (!ours) {
          rejected.set(info.ref.bus, describe(info));
          continue;
        }
        if (name !== undefined && info.name !== name) continue;
        if ((info.childCount ?? 0) > 0 && (await hasWindowNamed(desktop, info.ref, windowName))) {
          app.name = info.name ?? "";
          app.busName = info.ref.bus;
          app.readyMs = Date.now() - started;
          return app;
        }
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `desktop: ${command} (pid ${pid}) did not appear in the accessibility registry${
            name ? ` as "${name}"` : ""
          } with a window within ${timeoutMs} ms; registered: ${seen.join("; ") || "none"}\n${output()}`,
        );
      }
      await sleep(100);
    }
  } catch (error) {
    await app.stop();
    throw error;
  }
}

/**
 * The root's children as xwininfo lists them: { id, instance, klass } (no
 * window manager here, so they are the clients themselves).
 */
async function topLevelWindows(desktop) {
  requireExecutables(["xwininfo"]);
  const r = await run("xwininfo", ["-root", "-children"], { env: desktop.env });
  if (r.code !== 0) throw new Error(`desktop: xwininfo failed: ${r.stderr.trim()}`);
  const out = [];
  for (const line of r.stdout.split("\n")) {
    const m = /^\s*(0x[0-9a-f]+) .*: \("([^"]*)" "([^"]*)"\)/.exec(line);
    if (m) out.push({ id: m[1], instance: m[2], klass: m[3] });
  }
  return out;
}

/**
 * startApp for an X11 client that never registers with AT-SPI (`windowClass`
 * given: xterm, wish, xmessage): waits for a new top-level window whose
 * WM_CLASS class or instance matches it (case-insensitively), one that was not
 * there before the spawn, and notes its id as `app.xid`.
 */
async function waitForX11Window(desktop, app, command, windowClass, before, deadline, exited) {
  const known = new Set(before.map((w) => w.id));
  const want = windowClass.toLowerCase();
  try {
    for (;;) {
      if (exited()) throw new Error(`desktop: ${command} exited before its window appeared:\n${app.output()}`);
      const fresh = (await topLevelWindows(desktop)).find(
        (w) => !known.has(w.id) && (w.klass.toLowerCase() === want || w.instance.toLowerCase() === want),
      );
      if (fresh) {
        app.xid = fresh.id;
        app.name = fresh.klass;
        app.readyMs = Date.now() - app.started;
        return;
      }
      if (Date.now() >= deadline)
        throw new Error(`desktop: ${command} (pid ${app.pid}) showed no "${windowClass}" window in time\n${app.output()}`);
      await sleep(50);
    }
  } catch (error) {
    await app.stop();
    throw error;
  }
}

/** True when `windowName` is undefined or part of the name of one of the app's children. */
async function hasWindowNamed(desktop, appRef, windowName) {
  if (windowName === undefined) return true;
  const r = await a11ySend(desktop, [
    `--dest=${appRef.bus}`,
    appRef.path,
    "org.a11y.atspi.Accessible.GetChildren",
  ]);
  if (r.code !== 0) return false;
  const names = await Promise.all(
    parseReferences(r.stdout).map((ref) => getA11yProperty(desktop, ref.bus, ref.path, "Name")),
  );
  return names.some((reply) => reply !== null && (parseString(reply) ?? "").includes(windowName));
}

/**
 * Restarts the accessibility bus: SIGKILLs this desktop's at-spi-bus-launcher,
 * the accessibility bus daemon and the registry, then asks the session bus
 * for the address again (which activates a new launcher), updates
 * `desktop.a11yBusAddress` and sets IsEnabled. Returns the new address.
 * Apps registered on the old bus are not on the new one until they register again.
 *
 * @param {Awaited<ReturnType<typeof startDesktop>>} desktop
 * @returns {Promise<string>}
 */
export async function restartAccessibilityBus(desktop) {
  const old = desktop.a11yBusAddress;
  const isA11y = (p) => {
    let cmd = "";
    try {
      cmd = fs.readFileSync(`/proc/${p.pid}/cmdline`, "latin1").replaceAll("\0", " ");
    } catch {
      return false;
    }
    return /at-spi-bus-launcher|at-spi2-registryd|accessibility\.conf/.test(cmd);
  };
  const victims = markedProcesses(desktop.tmpDir).filter(isA11y);
  if (victims.length === 0) throw new Error("desktop: no accessibility bus processes found");
  for (const p of victims) signal(p.pid, "SIGKILL");
  await waitUntil(() => victims.every((p) => !alive(p.pid, p.start)), 3000);
  await enableAccessibility(desktop, { replacing: old, timeoutMs: 10_000 });
  return desktop.a11yBusAddress;
}

/** The pid of the desktop's session bus daemon (tests stop it to freeze the bus). */
export function sessionBusPid(desktop) {
  return desktop._dbusPid;
}

/** gtk3-widget-factory (Debian's gtk-3-examples), ready in the registry. */
export function gtkWidgetFactory(desktop, { timeoutMs } = {}) {
  return startApp(desktop, "gtk3-widget-factory", [], { name: "gtk3-widget-factory", timeoutMs });
}

/** gtk4-widget-factory (Debian's gtk-4-examples), ready in the registry. */
export function gtk4WidgetFactory(desktop, { timeoutMs = 40_000 } = {}) {
  return startApp(desktop, "gtk4-widget-factory", [], { name: "gtk4-widget-factory", timeoutMs });
}

/** Chromium's command-line flags for a headless, accessible, quiet browser. */
export function chromiumArgs(url, userDataDir, { wayland = false } = {}) {
  return [
    "--no-sandbox",
    "--test-type",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--password-store=basic",
    `--user-data-dir=${userDataDir}`,
    wayland ? "--ozone-platform=wayland" : "--ozone-platform=x11",
    "--force-renderer-accessibility",
    "--window-size=1280,900",
    "--window-position=0,0",
    url,
  ];
}

let chromiumCount = 0;

/**
 * Chromium on `url`, ready in the registry as "Chromium" with its window
 * (and, with `windowName`, once the window's title contains it: pass the
 * page's <title>). Web content (the document web node and its children)
 * can appear later still (spec: 1.7–2.8 s after start; here 0.5–1.2 s):
 * poll for it in the test, bounded. The profile lives in the desktop's temp
 * dir unless `userDataDir` is given.
 */
export function chromium(desktop, url, { userDataDir, windowName, timeoutMs = 30_000 } = {}) {
  const dir = userDataDir ?? path.join(desktop.tmpDir, `chromium-profile-${++chromiumCount}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const args = chromiumArgs(url, dir, { wayland: desktop.session === "wayland" });
  return startApp(desktop, "chromium", args, { name: "Chromium", windowName, timeoutMs });
}

/** A file:// URL for a path (relative paths resolve against the cwd). */
export function fileUrl(file) {
  return new URL(`file://${path.resolve(file)}`).href;
}

// ---------------------------------------------------------------------------
// CLI

function shellQuote(value) {
  return /^[A-Za-z0-9_./:,=@+-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

const USAGE = `usage:
  node scripts/desktop.mjs run [--size WxH] [--gtk-widget-factory] [--chromium URL] -- <command...>
      start the headless desktop (and the apps asked for), run the command with
      its environment, tear everything down, exit with the command's status
  node scripts/desktop.mjs demo-app [--size WxH]
      start the desktop with gtk3-widget-factory, print the environment to
      reach it, stay up until Ctrl-C or SIGTERM`;

function parseOptions(argv) {
  const options = { width: 1920, height: 1080, gtk: false, chromium: [] };
  const rest = [...argv];
  while (rest.length > 0 && rest[0] !== "--") {
    const arg = rest.shift();
    if (arg === "--size") {
      const m = /^(\d+)x(\d+)$/.exec(rest.shift() ?? "");
      if (!m) throw new Error("--size needs WIDTHxHEIGHT");
      options.width = Number(m[1]);
      options.height = Number(m[2]);
    } else if (arg === "--gtk-widget-factory") {
      options.gtk = true;
    } else if (arg === "--chromium") {
      const url = rest.shift();
      if (!url) throw new Error("--chromium needs a URL or file");
      options.chromium.push(/^[a-z]+:/.test(url) ? url : fileUrl(url));
    } else {
      throw new Error(`unknown option ${arg}`);
    }
  }
  if (rest[0] === "--") rest.shift();
  return { options, command: rest };
}

async function startWithApps(options) {
  const desktop = await startDesktop({ width: options.width, height: options.height });
  try {
    if (options.gtk) {
      const app = await gtkWidgetFactory(desktop);
      process.stderr.write(`desktop: gtk3-widget-factory pid ${app.pid} ready in ${app.readyMs} ms\n`);
    }
    for (const url of options.chromium) {
      const app = await chromium(desktop, url);
      process.stderr.write(`desktop: Chromium pid ${app.pid} ready in ${app.readyMs} ms\n`);
    }
  } catch (error) {
    await desktop.stop();
    throw error;
  }
  return desktop;
}

function exportLines(desktop) {
  const names = ["DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "GDK_BACKEND", "ACCESSIBILITY_ENABLED"];
  return [
    ...names.map((n) => `export ${n}=${shellQuote(desktop.env[n])}`),
    "unset NO_AT_BRIDGE WAYLAND_DISPLAY AT_SPI_BUS_ADDRESS",
    `# desktop HOME=${shellQuote(desktop.home)} XDG_RUNTIME_DIR=${shellQuote(desktop.runtimeDir)}`,
    `# accessibility bus: ${desktop.a11yBusAddress}`,
  ].join("\n");
}

async function cli(argv) {
  signalCleanup = false;
  const [mode, ...rest] = argv;
  if (mode === "run") {
    const { options, command } = parseOptions(rest);
    if (command.length === 0) throw new Error(`run needs a command after --\n${USAGE}`);
    const desktop = await startWithApps(options);
    const child = spawn(command[0], command.slice(1), { env: desktop.env, stdio: "inherit" });
    let stopping = false;
    const forward = (sig) => {
      if (!stopping) child.kill(sig);
    };
    for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => forward(sig));
    const status = await new Promise((resolve) => {
      child.on("error", (error) => {
        process.stderr.write(`desktop: cannot run ${command[0]}: ${error.message}\n`);
        resolve(127);
      });
      child.on("exit", (code, sig) => resolve(sig ? 128 + (os.constants.signals[sig] ?? 0) : (code ?? 1)));
    });
    stopping = true;
    await desktop.stop();
    return status;
  }
  if (mode === "demo-app") {
    const { options } = parseOptions(rest);
    options.gtk = true;
    const desktop = await startWithApps(options);
    process.stdout.write(`${exportLines(desktop)}\n`);
    process.stderr.write("desktop: up; Ctrl-C or SIGTERM tears it down\n");
    const keepAlive = setInterval(() => {}, 1 << 30);
    const sig = await new Promise((resolve) => {
      for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.once(s, () => resolve(s));
    });
    clearInterval(keepAlive);
    await desktop.stop();
    process.stderr.write(`desktop: stopped (${sig})\n`);
    return 0;
  }
  process.stderr.write(`${USAGE}\n`);
  return mode === "--help" || mode === "-h" ? 0 : 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`${error?.message ?? error}\n`);
      process.exit(1);
    },
  );
}
