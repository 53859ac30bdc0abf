/**
 * A headless sway (wlroots) desktop for tests (issue 36: a Wayland
 * compositor other than GNOME): a private session bus with the AT-SPI
 * registry, sway on the headless backend with no input devices and the
 * pixman renderer, and native Wayland apps on it. Only the tests use it; it
 * is not `axsnap desktop start`.
 *
 * sway refuses to run as root (it checks that root cannot be regained after
 * dropping it), so it runs as `nobody` in a runtime directory of its own;
 * root (the test and its apps) reaches its sockets anyway. Nothing here
 * sleeps on hope: every step waits on a condition, bounded.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const NOBODY = 65534;
const READY_MS = 20_000;

export interface SwayDesktop {
  /** The environment of a native Wayland client of this desktop (and of the test process, once bound). */
  env: NodeJS.ProcessEnv;
  /** sway's IPC socket (SWAYSOCK). */
  swaysock: string;
  /** Starts a program as a native Wayland client; its output goes to the desktop's log. */
  start(command: string, args?: string[]): ChildProcess;
  /** sway's window tree (swaymsg -t get_tree), parsed. */
  tree(): Promise<SwayNode>;
  /** Ends every process of the desktop (the apps, sway, the bus and what the bus started), and its files. */
  stop(): Promise<void>;
}

export interface SwayNode {
  type: string;
  name: string | null;
  pid?: number;
  app_id?: string | null;
  focused: boolean;
  rect: { x: number; y: number; width: number; height: number };
  nodes: SwayNode[];
  floating_nodes: SwayNode[];
}

/** Every node of a sway tree, depth first. */
export function swayNodes(n: SwayNode): SwayNode[] {
  return [n, ...[...n.nodes, ...n.floating_nodes].flatMap(swayNodes)];
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const end = Date.now() + READY_MS;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`the sway desktop: ${what} not within ${READY_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids whose environment names this bus: the daemon's children it activated (the AT-SPI launcher, ...). */
function pidsOnBus(address: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (
        readFileSync(`/proc/${d}/environ`, "latin1")
          .split("\0")
          .includes(`DBUS_SESSION_BUS_ADDRESS=${address}`)
      )
        out.push(Number(d));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

function kill(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startSway(): Promise<SwayDesktop> {
  const busDir = mkdtempSync(join(tmpdir(), "axsnap-sway-bus-"));
  chmodSync(busDir, 0o700);
  const swayDir = mkdtempSync(join(tmpdir(), "axsnap-sway-"));
  // sway refuses to run as root; as another user it runs as that user.
  const asNobody = process.getuid?.() === 0;
  if (asNobody) chownSync(swayDir, NOBODY, NOBODY);
  chmodSync(swayDir, 0o700);
  // sway's own output, quoted in the error when it does not start (the directory goes with stop()).
  const log = join(busDir, "sway.log");
  const logFd = openSync(log, "a");
  const pids: number[] = [];
  let busAddress = "";
  const children: ChildProcess[] = [];

  const stop = async () => {
    for (const c of children) kill(c.pid);
    const onBus = busAddress ? pidsOnBus(busAddress) : [];
    for (const p of [...onBus, ...pids]) kill(p);
    const all = [...children.map((c) => c.pid ?? 0), ...onBus, ...pids].filter((p) => p > 0);
    const end = Date.now() + 5000;
    while (all.some(alive) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    for (const p of all.filter(alive)) process.kill(p, "SIGKILL");
    closeSync(logFd);
    rmSync(busDir, { recursive: true, force: true });
    rmSync(swayDir, { recursive: true, force: true });
  };

  try {
    const base: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: busDir,
      XDG_RUNTIME_DIR: busDir,
    };
    const bus = await run(
      "dbus-daemon",
      [
        "--session",
        "--fork",
        "--nopidfile",
        "--print-address=1",
        "--print-pid=1",
        `--address=unix:path=${busDir}/bus`,
      ],
      { env: base, timeout: READY_MS },
    );
    const [address, pid] = bus.stdout.split("\n").filter(Boolean);
    busAddress = address!;
    pids.push(Number(pid));
    const env: NodeJS.ProcessEnv = { ...base, DBUS_SESSION_BUS_ADDRESS: busAddress };
    const send = (args: string[], where = "--session") =>
      run("dbus-send", [where, "--print-reply", "--reply-timeout=2000", ...args], {
        env,
        timeout: 3000,
      }).then(
        (r) => r.stdout,
        () => undefined,
      );
    // The first GetAddress starts the AT-SPI launcher; IsEnabled on; then the registry's root answers.
    const reply = await until("the AT-SPI bus", () =>
      send(["--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress"]),
    );
    const a11y = /string "([^"]+)"/.exec(reply)?.[1] ?? "";
    await send([
      "--dest=org.a11y.Bus",
      "/org/a11y/bus",
      "org.freedesktop.DBus.Properties.Set",
      "string:org.a11y.Status",
      "string:IsEnabled",
      "variant:boolean:true",
    ]);
    await until("the AT-SPI registry", () =>
      send(
        [
          "--dest=org.a11y.atspi.Registry",
          "/org/a11y/atspi/accessible/root",
          "org.a11y.atspi.Accessible.GetChildren",
        ],
        `--bus=${a11y}`,
      ),
    );

    const config = join(swayDir, "config");
    writeFileSync(config, "output HEADLESS-1 resolution 1280x800\nxwayland disable\n");
    if (asNobody) chownSync(config, NOBODY, NOBODY);
    const sway = spawn(
      asNobody ? "setpriv" : "sway",
      asNobody
        ? [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "sway", "-c", config]
        : ["-c", config],
      {
        env: {
          PATH: base.PATH,
          HOME: swayDir,
          XDG_RUNTIME_DIR: swayDir,
          WLR_BACKENDS: "headless",
          WLR_LIBINPUT_NO_DEVICES: "1",
          WLR_RENDERER: "pixman",
        },
        detached: true,
        stdio: ["ignore", logFd, logFd],
      },
    );
    sway.on("error", () => undefined);
    children.push(sway);
    const names = await until("sway's sockets", () => {
      if (sway.exitCode !== null) throw new Error(`sway ended (exit ${sway.exitCode}) as it started`);
      const files = readdirSync(swayDir);
      const wl = files.find((f) => /^wayland-\d+$/.test(f));
      const ipc = files.find((f) => /^sway-ipc\..*\.sock$/.test(f));
      return wl && ipc ? { wl, ipc } : undefined;
    });
    const swaysock = join(swayDir, names.ipc);
    Object.assign(env, {
      WAYLAND_DISPLAY: join(swayDir, names.wl),
      SWAYSOCK: swaysock,
      XDG_SESSION_TYPE: "wayland",
      XDG_CURRENT_DESKTOP: "sway",
      GDK_BACKEND: "wayland",
    });
    const tree = async () =>
      JSON.parse(
        (await run("swaymsg", ["-s", swaysock, "-t", "get_tree"], { timeout: 5000 })).stdout,
      ) as SwayNode;
    await until("sway's IPC", () => tree().catch(() => undefined));
    return {
      env,
      swaysock,
      tree,
      stop,
      start(command, args = []) {
        const child = spawn(command, args, { env, detached: true, stdio: ["ignore", "ignore", "ignore"] });
        child.on("error", () => undefined);
        children.push(child);
        return child;
      },
    };
  } catch (e) {
    const said = existsSync(log) ? readFileSync(log, "utf8").slice(-2000) : "";
    await stop();
    throw new Error(`the sway desktop did not start: ${(e as Error).message}\nsway said:\n${said}`);
  }
}

/**
 * Binds this process to the desktop: the session bus, the Wayland socket and
 * the session's words (XDG_SESSION_TYPE, XDG_CURRENT_DESKTOP, SWAYSOCK), no
 * X display and no AT-SPI address from elsewhere. Before the first native
 * call: the backend reads them when it connects.
 */
export function bindToSway(desktop: SwayDesktop): void {
  for (const k of ["DISPLAY", "AT_SPI_BUS_ADDRESS", "XAUTHORITY", "KDE_FULL_SESSION", "NO_AT_BRIDGE"])
    delete process.env[k];
  for (const k of [
    "DBUS_SESSION_BUS_ADDRESS",
    "WAYLAND_DISPLAY",
    "SWAYSOCK",
    "XDG_SESSION_TYPE",
    "XDG_CURRENT_DESKTOP",
    "XDG_RUNTIME_DIR",
  ])
    process.env[k] = desktop.env[k];
}
