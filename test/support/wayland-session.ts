/**
 * A headless GNOME Wayland desktop for the Mutter-route tests, after
 * /work/notes/wayland-src/start.sh: a private session bus, a private "system"
 * bus (gnome-shell dies without one), PipeWire and WirePlumber (without
 * WirePlumber a stream to mutter's node is never linked), and
 * `gnome-shell --wayland --headless --virtual-monitor WxH --no-x11 --unsafe-mode`
 * (unsafe mode: org.gnome.Shell.Eval answers, which is where window places come
 * from until the compositor module of issue 36 is merged). The Overview, shown
 * at start, is hidden. Apps run as native Wayland clients (GDK_BACKEND=wayland).
 *
 * Stand-in for the real `startDesktop({ wayland: true })` that another branch
 * builds: the tests use only start(), env, evalJs(), launch() and stop(), so
 * swapping it is a one-line change. Every process started here (and every
 * process the buses activate, which inherit the marker) carries
 * AXSNAP_WAYLAND_DESKTOP=<its dir> in its environment; stop() kills them all by
 * that marker, TERM then KILL, and removes the directory.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface WaylandSession {
  dir: string;
  env: NodeJS.ProcessEnv;
  shellPid: number;
  /** org.gnome.Shell.Eval through gdbus; the parsed JSON result. Throws when Eval fails. */
  evalJs(js: string, timeoutMs?: number): Promise<unknown>;
  /** Starts a program on the desktop; resolves once `ready` holds (polled), or throws with its output. */
  launch(command: string, args: string[], extraEnv?: NodeJS.ProcessEnv): LaunchedApp;
  /** Kills gnome-shell (TERM, then KILL) and starts a new one on the same buses; its Wayland clients die with it. */
  restartShell(): Promise<void>;
  stop(): Promise<void>;
}

export interface LaunchedApp {
  pid: number;
  output(): string;
  exited(): boolean;
}

const MARKER = "AXSNAP_WAYLAND_DESKTOP";

function requireExecutables(names: string[]): void {
  const path = (process.env.PATH ?? "").split(":");
  const missing = names.filter((n) => !path.some((d) => existsSync(join(d, n))));
  if (missing.length)
    throw new Error(
      `the Wayland desktop needs ${missing.join(", ")}: apt-get install --no-install-recommends gnome-shell pipewire wireplumber`,
    );
}

async function waitFor(
  what: string,
  test: () => boolean | Promise<boolean>,
  ms: number,
  output?: () => string,
) {
  const until = Date.now() + ms;
  for (;;) {
    if (await test()) return;
    if (Date.now() > until)
      throw new Error(`wayland desktop: ${what} did not happen within ${ms} ms\n${output?.() ?? ""}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function marked(dir: string): number[] {
  const needle = `\0${MARKER}=${dir}\0`;
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (`\0${readFileSync(`/proc/${entry}/environ`, "latin1")}`.includes(needle)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function tail(child: ChildProcess): () => string {
  let text = "";
  const add = (b: Buffer) => {
    text = (text + b.toString()).slice(-8000);
  };
  child.stdout?.on("data", add);
  child.stderr?.on("data", add);
  return () => text;
}

export async function startWaylandSession({
  width = 1600,
  height = 1000,
}: {
  width?: number;
  height?: number;
} = {}): Promise<WaylandSession> {
  requireExecutables(["gnome-shell", "pipewire", "wireplumber", "dbus-daemon", "gdbus"]);
  const dir = mkdtempSync(join(tmpdir(), "axwl-"));
  chmodSync(dir, 0o700);
  const display = `wayland-ax-${process.pid}`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: "C.UTF-8",
    XDG_RUNTIME_DIR: dir,
    DBUS_SESSION_BUS_ADDRESS: `unix:path=${dir}/bus`,
    WAYLAND_DISPLAY: display,
    XDG_SESSION_TYPE: "wayland",
    XDG_CURRENT_DESKTOP: "GNOME",
    GSETTINGS_BACKEND: "memory",
    [MARKER]: dir,
  };
  const children: { name: string; child: ChildProcess; output: () => string }[] = [];
  const start = (name: string, command: string, args: string[], extra: NodeJS.ProcessEnv = {}) => {
    const child = spawn(command, args, { env: { ...env, ...extra }, stdio: ["ignore", "pipe", "pipe"] });
    const output = tail(child);
    children.push({ name, child, output });
    return { child, output };
  };
  const session: WaylandSession = {
    dir,
    env,
    shellPid: 0,
    restartShell: async () => {},
    evalJs: async (js, timeoutMs = 5000) => {
      const { stdout } = await run(
        "gdbus",
        [
          "call",
          "--session",
          "--timeout",
          String(Math.ceil(timeoutMs / 1000)),
          "--dest",
          "org.gnome.Shell",
        ].concat(["--object-path", "/org/gnome/Shell", "--method", "org.gnome.Shell.Eval", js]),
        { env, timeout: timeoutMs + 1000 },
      );
      // (true, '<json>')
      const m = /^\((true|false), '(.*)'\)\s*$/s.exec(stdout);
      if (m?.[1] !== "true") throw new Error(`Eval failed: ${stdout}`);
      const text = (m[2] ?? "").replace(/\\'/g, "'").replace(/\\\\/g, "\\");
      return text === "" ? undefined : JSON.parse(text);
    },
    launch: (command, args, extraEnv = {}) => {
      requireExecutables([command]);
      const { child, output } = start(command, command, args, { GDK_BACKEND: "wayland", ...extraEnv });
      let exit = false;
      child.on("exit", () => {
        exit = true;
      });
      return { pid: child.pid ?? 0, output, exited: () => exit };
    },
    stop: async () => {
      for (let round = 0; round < 2; round++) {
        const pids = marked(dir);
        for (const c of children) if (c.child.pid && alive(c.child.pid)) pids.push(c.child.pid);
        for (const pid of new Set(pids)) {
          try {
            process.kill(pid, "SIGCONT");
            process.kill(pid, round === 0 ? "SIGTERM" : "SIGKILL");
          } catch {
            // already gone
          }
        }
        const until = Date.now() + 3000;
        while (Date.now() < until && [...new Set(pids)].some(alive))
          await new Promise((r) => setTimeout(r, 50));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const startShell = async () => {
    const shell = start(
      "gnome-shell",
      "gnome-shell",
      ["--wayland", "--headless", "--virtual-monitor", `${width}x${height}`, "--no-x11"].concat([
        "--wayland-display",
        display,
        "--unsafe-mode",
      ]),
      { DBUS_SYSTEM_BUS_ADDRESS: `unix:path=${dir}/sysbus` },
    );
    session.shellPid = shell.child.pid ?? 0;
    await waitFor(
      "gnome-shell's Eval",
      async () => {
        if (shell.child.exitCode !== null) throw new Error(`gnome-shell exited:\n${shell.output()}`);
        try {
          return (await session.evalJs("1", 2000)) === 1;
        } catch {
          return false;
        }
      },
      60_000,
      shell.output,
    );
    // It shows the Overview once its startup animation is done (_startingUp false): no window has focus
    // and a modal grab holds the input until it is hidden.
    await waitFor(
      "the startup done and the Overview hidden",
      async () => {
        const [starting, visible, modal] = (await session.evalJs(
          `(() => { const M = imports.ui.main; if (!M.layoutManager._startingUp && M.overview.visible) M.overview.hide();
               return [M.layoutManager._startingUp, M.overview.visible, M.modalCount]; })()`,
        )) as [boolean, boolean, number];
        return !starting && !visible && modal === 0;
      },
      30_000,
    );
  };
  session.restartShell = async () => {
    const pid = session.shellPid;
    for (const sig of ["SIGCONT", "SIGTERM"] as const) {
      try {
        process.kill(pid, sig);
      } catch {
        // gone
      }
    }
    const until = Date.now() + 5000;
    while (Date.now() < until && alive(pid)) await new Promise((r) => setTimeout(r, 50));
    if (alive(pid)) process.kill(pid, "SIGKILL");
    while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
    await startShell();
  };
  try {
    start("dbus", "dbus-daemon", ["--session", `--address=${env.DBUS_SESSION_BUS_ADDRESS}`, "--nofork"]);
    start("sysbus", "dbus-daemon", ["--session", `--address=unix:path=${dir}/sysbus`, "--nofork"]);
    await waitFor("the session bus", () => existsSync(`${dir}/bus`) && existsSync(`${dir}/sysbus`), 10_000);
    const pw = start("pipewire", "pipewire", []);
    await waitFor("PipeWire", () => existsSync(`${dir}/pipewire-0`), 10_000, pw.output);
    start("wireplumber", "wireplumber", []);
    await startShell();
    return session;
  } catch (e) {
    await session.stop();
    throw e;
  }
}

/** Exports the desktop's environment into this process (before the addon's first D-Bus call). */
export function useWaylandEnv(session: WaylandSession): void {
  for (const name of ["DISPLAY", "AT_SPI_BUS_ADDRESS", "XAUTHORITY"]) delete process.env[name];
  Object.assign(process.env, session.env);
}
