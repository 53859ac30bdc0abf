/**
 * A headless GNOME Wayland session for the tests (after the research's
 * start.sh, /work/notes/wayland-src/start.sh): a private session bus, a
 * private "system" bus (gnome-shell will not run without one), PipeWire and
 * WirePlumber, and `gnome-shell --wayland --headless --virtual-monitor` with
 * --unsafe-mode (so that its Eval answers) or without it (as on a user's own
 * session, where Eval is refused). Apps launched here are native Wayland
 * clients (GDK_BACKEND=wayland, no DISPLAY).
 *
 * Meant to be swapped for the agent desktop's `startDesktop({ wayland: true })`
 * once that exists: the tests use only `env`, `launch`, `evalJs`, `shellWindows`
 * and `stop`.
 *
 * Cleanup: every process started here, and every process the private bus
 * activated (the AT-SPI bus, gvfsd, dconf...), carries this session's bus
 * address in its environment; stop() kills those by pid (TERM, then KILL).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ShellWindow {
  id: number;
  stack: number;
  title: string;
  wmclass: string | null;
  pid: number;
  client: number;
  frame: [number, number, number, number];
  buffer: [number, number, number, number];
  focus: boolean;
  hidden: boolean;
  minimized: boolean;
}

export interface WaylandDesktop {
  /** The session's environment (also exported into this process by useWaylandDesktop). */
  env: Record<string, string>;
  unsafe: boolean;
  /** Starts a program as a native Wayland client of this session; stop() ends it. */
  launch(file: string, args?: string[], extraEnv?: Record<string, string>): ChildProcess;
  /** org.gnome.Shell.Eval: [success, the JSON string it returned]. */
  evalJs(script: string): Promise<[boolean, string]>;
  /** The shell's windows, bottom to top (unsafe mode only). */
  shellWindows(): Promise<ShellWindow[]>;
  stop(): Promise<void>;
}

const WINDOWS_JS = `(() => { const d = global.display; const f = d.get_focus_window();
  const ws = d.sort_windows_by_stacking(global.get_window_actors().map(a => a.meta_window));
  return ws.map((w, i) => { const fr = w.get_frame_rect(), br = w.get_buffer_rect();
    return { id: w.get_id(), stack: i, title: w.get_title(), wmclass: w.get_wm_class(), pid: w.get_pid(),
      client: w.get_client_type(), frame: [fr.x, fr.y, fr.width, fr.height], buffer: [br.x, br.y, br.width, br.height],
      focus: w === f, hidden: w.is_hidden(), minimized: w.minimized }; }); })()`;

// The Eval call from outside this process: Debian's python3 has GObject introspection (the pyenv one on PATH may not).
const EVAL_PY = `
import sys
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
r = bus.call_sync("org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell", "Eval",
                  GLib.Variant("(s)", (sys.stdin.read(),)), GLib.VariantType("(bs)"), 0, 10000, None)
ok, out = r.unpack()
sys.stdout.write(("1" if ok else "0") + out)
`;

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input?: string, timeoutMs = 15_000) {
  return new Promise<string>((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { env, timeout: timeoutMs, killSignal: "SIGKILL" },
      (err, stdout, stderr) =>
        err ? reject(new Error(`${file} ${args.join(" ")}: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

async function until(test: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (await test()) return;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`wayland desktop: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The pids (not ours) whose environment names this bus address. */
function pidsOnBus(busAddress: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
      if (env.includes(`DBUS_SESSION_BUS_ADDRESS=${busAddress}`)) pids.push(pid);
    } catch {
      // gone, or another user's
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

async function killAll(pids: number[]): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // gone
    }
  }
  // gnome-shell sometimes takes more than 5 s to act on TERM (research §2).
  const end = Date.now() + 3000;
  while (Date.now() < end && pids.some(alive)) await new Promise((r) => setTimeout(r, 50));
  for (const pid of pids.filter(alive)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
}

export async function startWaylandDesktop(
  options: { unsafe?: boolean; width?: number; height?: number } = {},
): Promise<WaylandDesktop> {
  const unsafe = options.unsafe ?? true;
  const width = options.width ?? 1920;
  const height = options.height ?? 1080;
  for (const bin of ["gnome-shell", "dbus-daemon", "pipewire", "wireplumber"])
    if (!["/usr/bin", "/bin"].some((d) => existsSync(join(d, bin))))
      throw new Error(
        `wayland desktop: ${bin} is not installed (apt-get install gnome-shell pipewire wireplumber)`,
      );
  const dir = mkdtempSync(join(tmpdir(), "axsnap-wl-"));
  const run_ = join(dir, "run");
  const home = join(dir, "home");
  mkdirSync(run_, { mode: 0o700 });
  mkdirSync(home);
  const display = "wl-axsnap";
  const bus = `unix:path=${run_}/bus`;
  const sysbus = `unix:path=${run_}/sysbus`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_RUNTIME_DIR: run_,
    DBUS_SESSION_BUS_ADDRESS: bus,
    WAYLAND_DISPLAY: display,
    XDG_SESSION_TYPE: "wayland",
    NO_AT_BRIDGE: "0",
    LANG: "C.UTF-8",
  };
  const children: ChildProcess[] = [];
  const log: string[] = [];
  const start = (file: string, args: string[], extra: Record<string, string> = {}) => {
    const child = spawn(file, args, { env: { ...env, ...extra }, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.on("data", (d: Buffer) => {
      if (log.length < 400) log.push(`${file}: ${d.toString().trimEnd()}`);
    });
    children.push(child);
    return child;
  };
  const desktop: WaylandDesktop = {
    env,
    unsafe,
    launch: (file, args = [], extraEnv = {}) => start(file, args, { GDK_BACKEND: "wayland", ...extraEnv }),
    evalJs: async (script) => {
      const out = await run("/usr/bin/python3", ["-c", EVAL_PY], env, script);
      return [out.startsWith("1"), out.slice(1)];
    },
    shellWindows: async () => {
      const [ok, json] = await desktop.evalJs(WINDOWS_JS);
      if (!ok) throw new Error(`gnome-shell refused Eval: ${json}`);
      return JSON.parse(json) as ShellWindow[];
    },
    stop: async () => {
      await killAll(children.map((c) => c.pid).filter((p): p is number => p !== undefined));
      // What the bus activated (at-spi-bus-launcher, registryd, gvfsd, dconf-service...), then the buses' stragglers.
      await killAll(pidsOnBus(bus));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    start("dbus-daemon", ["--session", `--address=${bus}`, "--nofork"]);
    start("dbus-daemon", ["--session", `--address=${sysbus}`, "--nofork"]);
    await until(
      () => existsSync(`${run_}/bus`) && existsSync(`${run_}/sysbus`),
      10_000,
      "the D-Bus daemons listen",
    );
    start("pipewire", []);
    await until(() => existsSync(`${run_}/pipewire-0`), 10_000, "PipeWire listens");
    start("wireplumber", []);
    const shellArgs = ["--wayland", "--headless", "--virtual-monitor", `${width}x${height}`, "--no-x11"];
    shellArgs.push("--wayland-display", display);
    if (unsafe) shellArgs.push("--unsafe-mode");
    start("gnome-shell", shellArgs, { DBUS_SYSTEM_BUS_ADDRESS: sysbus });
    await until(
      async () =>
        (
          await run(
            "dbus-send",
            [
              "--session",
              "--print-reply",
              "--dest=org.freedesktop.DBus",
              "/org/freedesktop/DBus",
              "org.freedesktop.DBus.NameHasOwner",
              "string:org.gnome.Shell.Introspect",
            ],
            env,
          )
        ).includes("boolean true"),
      60_000,
      "gnome-shell owns org.gnome.Shell.Introspect",
    );
    if (unsafe) {
      // It starts with the Overview up, where no window gets focus.
      await until(
        async () => (await desktop.evalJs("Main.overview.hide(); Main.overview.visible"))[1] === "false",
        15_000,
        "the Overview hides",
      );
    }
  } catch (e) {
    await desktop.stop();
    throw new Error(`${(e as Error).message}\n${log.slice(-40).join("\n")}`);
  }
  return desktop;
}

/** startWaylandDesktop, its environment exported into this process before the addon's first D-Bus call. */
export async function useWaylandDesktop(options: { unsafe?: boolean } = {}): Promise<WaylandDesktop> {
  if (process.platform !== "linux") throw new Error("the Wayland tests need Linux (gnome-shell, PipeWire)");
  const desktop = await startWaylandDesktop(options);
  for (const name of ["DISPLAY", "AT_SPI_BUS_ADDRESS", "XAUTHORITY"]) delete process.env[name];
  Object.assign(process.env, desktop.env);
  return desktop;
}

/** Waits until `test` holds, every 100 ms, bounded; the error says what never held. */
export async function waitFor<T>(
  get: () => Promise<T>,
  test: (value: T) => boolean,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await get();
      if (test(last)) return last;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > end)
      throw new Error(
        `${what} did not happen within ${ms} ms; last: ${JSON.stringify(last)?.slice(0, 2000)} ${lastError ? String(lastError) : ""}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}
