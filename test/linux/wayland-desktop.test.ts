/**
 * The agent's desktop on Wayland (issue 36): startDesktop({ wayland: true })
 * and `axsnap desktop start NAME --wayland` start headless gnome-shell (unsafe
 * mode, a virtual monitor), a private system bus, PipeWire, WirePlumber and
 * the AT-SPI registry in a runtime directory of the desktop's own. Apps
 * launched there are native Wayland clients (checked in their environment
 * and in the compositor's own window list) and are in that desktop's AT-SPI
 * registry (listApps and snapshot through the API). Stop leaves no process
 * and no socket; two Wayland desktops run side by side; a desktop whose
 * gnome-shell was killed is DESKTOP_GONE.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentDesktop,
  AxsnapError,
  createSession,
  launchApp,
  listApps,
  listDesktops,
  permissions,
  type Session,
  startDesktop,
  stopDesktop,
} from "../../lib/index.js";
import { shellEval } from "../../lib/observe/agent-desktop/wayland.js";
import {
  marked,
  privateRuntimeDir,
  processesMentioning,
  requireDeps,
  running,
  until,
} from "../support/agent-desktop.js";
import { runCli, runCliJson } from "../support/cli.js";

const TIMEOUT = 180_000;
const TSX = import.meta.resolve("tsx");
/** No warm process: one would outlive the command with this process's environment (the "wl" desktop's bus). */
const COLD = { AXSNAP_DAEMON: "off" };
let stateDir: string;
let desk: AgentDesktop;
let session: Session;
const others: AgentDesktop[] = [];

function environOf(pid: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const kv of readFileSync(`/proc/${pid}/environ`, "latin1").split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) out.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return out;
}

function cmdline(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0").filter(Boolean);
}

/** The unix sockets the kernel lists whose path is under `dir`. */
function socketsUnder(dir: string): string[] {
  return readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .map((l) => l.trim().split(/\s+/)[7] ?? "")
    .filter((p) => p.startsWith(`${dir}/`));
}

interface ShellWindow {
  title: string | null;
  pid: number;
  client: number;
  frame: number[];
}

/** The compositor's windows, through gnome-shell's Eval (unsafe mode). */
async function shellWindows(d: AgentDesktop): Promise<ShellWindow[]> {
  const json = await shellEval(
    "dbus-send",
    d.env,
    "global.get_window_actors().map((a) => a.meta_window).map((w) => { const r = w.get_frame_rect(); " +
      "return { title: w.get_title(), pid: w.get_pid(), client: w.get_client_type(), frame: [r.x, r.y, r.width, r.height] }; })",
  );
  if (json === undefined) throw new Error("gnome-shell's Eval failed");
  return JSON.parse(json) as ShellWindow[];
}

function stateOf(name: string): {
  id: string;
  session?: string;
  runtimeDir?: string;
  pids: Record<string, { pid: number }>;
} {
  return JSON.parse(readFileSync(join(stateDir, `${name}.json`), "utf8"));
}

beforeAll(async () => {
  requireDeps();
  stateDir = join(privateRuntimeDir(), "axsnap", "desktops");
  const t0 = Date.now();
  desk = await startDesktop({ name: "wl", wayland: true, size: "1920x1080" });
  console.log(`Wayland desktop started in ${Date.now() - t0} ms`);
  session = createSession({ desktop: desk });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  for (const d of others) await d.stop().catch(() => undefined);
  await desk?.stop();
});

describe("startDesktop({ wayland: true })", () => {
  it(
    "runs headless gnome-shell (unsafe mode, Overview hidden), PipeWire, WirePlumber and two buses of its own, and says it is Wayland",
    async () => {
      expect(desk.session).toBe("wayland");
      expect(desk.display).toBe("");
      expect(desk.runtimeDir).toMatch(/\/axsnap-wl-[^/]+$/);
      expect(statSync(desk.runtimeDir!).mode & 0o777).toBe(0o700);
      expect(desk.waylandDisplay).toBe(join(desk.runtimeDir!, "wayland-0"));
      expect(lstatSync(desk.waylandDisplay!).isSocket()).toBe(true);
      expect(desk.busAddress).toContain(`unix:path=${desk.runtimeDir}/bus`);
      for (const k of ["compositor", "systemBus", "pipewire", "wireplumber", "dbus", "watchdog"] as const)
        expect(running(desk.pids[k]!), k).toBe(true);
      expect(desk.pids.xvfb).toBeUndefined();
      const shell = cmdline(desk.pids.compositor!);
      expect(shell[0]).toMatch(/gnome-shell$/);
      expect(shell).toEqual(
        expect.arrayContaining(["--wayland", "--headless", "--no-x11", "--unsafe-mode", "1920x1080"]),
      );
      // Its system bus is the desktop's own, not the machine's.
      expect(environOf(desk.pids.compositor!).get("DBUS_SYSTEM_BUS_ADDRESS")).toContain(desk.runtimeDir);
      // Eval answers (unsafe mode), the monitor has the size asked for, the Overview is hidden.
      expect(await shellEval("dbus-send", desk.env, "[global.screen_width, global.screen_height]")).toBe(
        "[1920,1080]",
      );
      expect(await shellEval("dbus-send", desk.env, "Main.overview.visible")).toBe("false");
      // The environment for its apps: a Wayland client's, none of X11.
      expect(desk.env.DISPLAY).toBeUndefined();
      expect(desk.env.WAYLAND_DISPLAY).toBe(desk.waylandDisplay);
      expect(desk.env.GDK_BACKEND).toBe("wayland");
      expect(desk.env.XDG_RUNTIME_DIR).toBe(desk.runtimeDir);
      // Written down as Wayland: list and the state file say so.
      expect(stateOf("wl")).toMatchObject({ session: "wayland", runtimeDir: desk.runtimeDir });
      expect((await listDesktops()).find((d) => d.name === "wl")).toMatchObject({
        state: "running",
        session: "wayland",
        waylandDisplay: desk.waylandDisplay,
        pids: { compositor: desk.pids.compositor, pipewire: desk.pids.pipewire },
      });
    },
    TIMEOUT,
  );

  it(
    "runs gtk3-widget-factory and gtk4-widget-factory as native Wayland clients, in its AT-SPI registry",
    async () => {
      const gtk3 = await launchApp("/usr/bin/gtk3-widget-factory", { desktop: desk });
      const gtk4 = await launchApp("/usr/bin/gtk4-widget-factory", { desktop: desk });
      for (const app of [gtk3, gtk4]) {
        const env = environOf(app.pid);
        expect(env.has("DISPLAY"), `pid ${app.pid} has DISPLAY`).toBe(false);
        expect(env.get("WAYLAND_DISPLAY")).toBe(desk.waylandDisplay);
        expect(env.get("GDK_BACKEND")).toBe("wayland");
        expect(env.get("AXSNAP_AGENT_DESKTOP")).toBe(stateOf("wl").id);
      }
      // The compositor maps a window of each, as a Wayland client (Mutter's client type 0; 1 is X11).
      let windows: ShellWindow[] = [];
      expect(
        await until(async () => {
          windows = await shellWindows(desk);
          return [gtk3.pid, gtk4.pid].every((p) => windows.some((w) => w.pid === p));
        }, 60_000),
        JSON.stringify(windows),
      ).toBe(true);
      for (const p of [gtk3.pid, gtk4.pid])
        expect(windows.filter((w) => w.pid === p).map((w) => w.client)).toEqual([0]);
      // gtk3's frame (1415 wide) fits the 1920 monitor.
      const frame = windows.find((w) => w.pid === gtk3.pid)!.frame;
      expect(frame[0]! + frame[2]!).toBeLessThanOrEqual(1920);

      // AT-SPI on that desktop's bus, through the library.
      let apps: Awaited<ReturnType<typeof listApps>> = [];
      expect(
        await until(async () => {
          apps = await listApps();
          return [gtk3.pid, gtk4.pid].every((p) => apps.some((a) => a.pid === p));
        }, 60_000),
        JSON.stringify(apps),
      ).toBe(true);
      expect(apps.find((a) => a.pid === gtk3.pid)?.name).toBe("gtk3-widget-factory");
      expect(apps.find((a) => a.pid === gtk4.pid)?.name).toBe("gtk4-widget-factory");
      // gnome-shell itself is an AT-SPI app there too.
      expect(apps.find((a) => a.pid === desk.pids.compositor)?.name).toBe("gnome-shell");
      const snap = await session.snapshot({ app: gtk3.pid });
      expect(snap.app.pid).toBe(gtk3.pid);
      expect(snap.text).toMatch(/togglebutton/);
      // permissions() says where this process is: the agent's Wayland desktop, and what works there.
      const p = await permissions();
      expect(p.desktop).toMatchObject({
        session: "wayland",
        agentDesktop: { name: "wl", session: "wayland" },
      });
      expect(p.desktop?.display).toBeUndefined();
      expect(p.hint).toMatch(/the agent's Wayland desktop wl \(headless gnome-shell\)/);
      // Its apps' pixels and input go through the compositor, in screen space.
      expect(p.desktop?.routes).toMatchObject({ capture: "screen", input: "screen" });
      expect(p.hint).toMatch(
        /go through GNOME's compositor \(Mutter ScreenCast and RemoteDesktop\), in screen space/,
      );
    },
    TIMEOUT,
  );
});

describe("more Wayland desktops", () => {
  it(
    "two start at once, each with its own runtime directory, buses and compositor",
    async () => {
      const [a, b] = await Promise.all([
        startDesktop({ name: "wa", wayland: true }),
        startDesktop({ name: "wb", wayland: true }),
      ]);
      others.push(a, b);
      expect(a.runtimeDir).not.toBe(b.runtimeDir);
      expect(a.busAddress).not.toBe(b.busAddress);
      expect(a.pids.compositor).not.toBe(b.pids.compositor);
      for (const d of [a, b]) {
        expect(await shellEval("dbus-send", d.env, "[global.screen_width, global.screen_height]")).toBe(
          "[1280,800]",
        );
        expect(environOf(d.pids.compositor!).get("DBUS_SESSION_BUS_ADDRESS")).toBe(d.busAddress);
      }
      // Each compositor sees its own clients only (launchApp would bind this process to one desktop: spawn).
      const { spawn } = await import("node:child_process");
      const child = spawn("/usr/bin/gtk3-widget-factory", [], {
        env: a.env,
        stdio: "ignore",
        detached: true,
      });
      child.unref();
      expect(await until(async () => (await shellWindows(a)).some((w) => w.pid === child.pid), 60_000)).toBe(
        true,
      );
      expect((await shellWindows(b)).some((w) => w.pid === child.pid)).toBe(false);
      await Promise.all([a.stop(), b.stop()]);
      expect(running(child.pid!)).toBe(false);
      for (const d of [a, b]) {
        expect(existsSync(d.runtimeDir!)).toBe(false);
        expect(processesMentioning(d.runtimeDir!)).toEqual([]);
      }
    },
    TIMEOUT,
  );

  it(
    "whose gnome-shell is killed is DESKTOP_GONE, listed gone, and cleaned up to the last process and socket",
    async () => {
      const d = await startDesktop({ name: "wg", wayland: true });
      others.push(d);
      const { id } = stateOf("wg");
      process.kill(d.pids.compositor!, "SIGKILL");
      expect(await until(() => !running(d.pids.compositor!), 5000)).toBe(true);
      // The CLI, pointed at it, says DESKTOP_GONE and names the compositor.
      const apps = await runCliJson(["apps", "--desktop", "wg"], COLD);
      expect(apps.code).toBe(1);
      expect(apps.env.error).toMatchObject({ code: "DESKTOP_GONE" });
      expect(apps.env.error.message).toMatch(/compositor \(gnome-shell, pid \d+\) has ended/);
      expect(await until(() => marked(id).length === 0, 10_000)).toBe(true);
      expect(existsSync(d.runtimeDir!)).toBe(false);
      expect(socketsUnder(d.runtimeDir!)).toEqual([]);
      expect(processesMentioning(d.runtimeDir!)).toEqual([]);

      // list shows one that died as gone, with the reason, and cleans it.
      const e = await startDesktop({ name: "wg2", wayland: true });
      others.push(e);
      process.kill(e.pids.compositor!, "SIGKILL");
      expect(await until(() => !running(e.pids.compositor!), 5000)).toBe(true);
      expect((await listDesktops()).find((x) => x.name === "wg2")).toMatchObject({
        state: "gone",
        session: "wayland",
        reason: expect.stringMatching(/gnome-shell/),
      });
      expect(marked(e.env.AXSNAP_AGENT_DESKTOP!)).toEqual([]);
      expect(existsSync(e.runtimeDir!)).toBe(false);
      const again = await stopDesktop("wg2").catch((x: unknown) => x);
      expect(again).toBeInstanceOf(AxsnapError);
      expect(again).toMatchObject({ code: "DESKTOP_NOT_FOUND" });
    },
    TIMEOUT,
  );

  it(
    "leaves no process, socket or runtime directory behind when its owner is SIGKILLed (the watchdog)",
    async () => {
      const script = `
        import { startDesktop } from ${JSON.stringify(fileURLToPath(new URL("../../lib/index.ts", import.meta.url)))};
        const d = await startDesktop({ name: "wo", wayland: true });
        process.stdout.write(JSON.stringify({ pids: d.pids, runtimeDir: d.runtimeDir }) + "\\n");
        setInterval(() => {}, 1000);
      `;
      const owner = spawn(process.execPath, ["--import", TSX, "--input-type=module", "-e", script], {
        env: process.env,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const line = await new Promise<string>((resolve, reject) => {
        let out = "";
        owner.stdout!.on("data", (d: Buffer) => {
          out += String(d);
          if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
        });
        owner.on("exit", (code) => reject(new Error(`owner exited (${code}) before its desktop ran`)));
      });
      const { pids, runtimeDir } = JSON.parse(line) as { pids: Record<string, number>; runtimeDir: string };
      const { id } = stateOf("wo");
      expect(Object.values(pids).every(running)).toBe(true);
      expect(processesMentioning(runtimeDir).length).toBeGreaterThanOrEqual(6);
      owner.kill("SIGKILL");
      expect(
        await until(
          () =>
            Object.values(pids).every((p) => !running(p)) &&
            marked(id).length === 0 &&
            !existsSync(runtimeDir),
          15_000,
        ),
      ).toBe(true);
      expect(processesMentioning(runtimeDir)).toEqual([]);
      expect(socketsUnder(runtimeDir)).toEqual([]);
      expect(existsSync(join(stateDir, "wo.json"))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "refuses wayland with windowManager (INVALID_ARGUMENT), and a machine without gnome-shell (DESKTOP_UNAVAILABLE), before anything starts",
    async () => {
      const e = await startDesktop({ name: "wx", wayland: true, windowManager: true }).catch(
        (x: unknown) => x,
      );
      expect(e).toMatchObject({ code: "INVALID_ARGUMENT" });
      expect(existsSync(join(stateDir, "wx.json"))).toBe(false);
      // A machine without gnome-shell (or PipeWire): DESKTOP_UNAVAILABLE naming the Debian packages.
      const path = process.env.PATH;
      process.env.PATH = "/nonexistent";
      try {
        const missing = await startDesktop({ name: "wy", wayland: true }).catch((x: unknown) => x);
        expect(missing).toMatchObject({ code: "DESKTOP_UNAVAILABLE" });
        expect((missing as AxsnapError).message).toMatch(/gnome-shell, pipewire, wireplumber, pw-cli/);
        expect((missing as AxsnapError).hint).toMatch(
          /apt-get install gnome-shell pipewire wireplumber pipewire-bin/,
        );
      } finally {
        process.env.PATH = path;
      }
      expect(existsSync(join(stateDir, "wy.json"))).toBe(false);
    },
    TIMEOUT,
  );
});

describe("axsnap desktop start NAME --wayland", () => {
  it(
    "starts, lists, prints env and stops a Wayland desktop; --wm with --wayland is a usage error",
    async () => {
      const start = await runCliJson(["desktop", "start", "cw", "--wayland"], COLD);
      expect(start.code, start.stderr).toBe(0);
      expect(start.env.data).toMatchObject({ name: "cw", session: "wayland", display: "", width: 1280 });
      const { id, runtimeDir, pids } = stateOf("cw");
      expect(pids.watchdog).toBeUndefined();
      expect(running(pids.compositor!.pid)).toBe(true);
      const wd = start.env.data.waylandDisplay as string;
      expect(wd).toBe(join(runtimeDir!, "wayland-0"));

      const text = await runCli(["desktop", "start", "cw2", "--wayland"], COLD);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(
        /^started Wayland desktop cw2: WAYLAND_DISPLAY=\/\S+\/wayland-0 1280x800, pids gnome-shell \d+/,
      );
      expect((await runCli(["desktop", "stop", "cw2"], COLD)).code).toBe(0);

      const list = await runCli(["desktop", "list"], COLD);
      expect(list.stdout).toMatch(new RegExp(`^cw\\trunning\\tWAYLAND_DISPLAY=${wd}\\t1280x800\\t`, "m"));
      const env = await runCli(["desktop", "env", "cw"], COLD);
      expect(env.stdout).toMatch(new RegExp(`^export WAYLAND_DISPLAY=${wd}$`, "m"));
      expect(env.stdout).toMatch(/^export GDK_BACKEND=wayland$/m);
      expect(env.stdout).toMatch(/^unset .*\bDISPLAY\b/m);
      expect(env.stdout).not.toMatch(/XDG_RUNTIME_DIR/);
      // A shell that evals it reaches that bus and that compositor.
      const reached = await new Promise<string>((resolve) =>
        execFile(
          "/bin/sh",
          [
            "-c",
            `eval "$(cat <<'EOF'\n${env.stdout}EOF\n)"; echo "\${DISPLAY-unset}"; dbus-send --session --print-reply --dest=org.gnome.Shell /org/gnome/Shell org.gnome.Shell.Eval string:1+1 | grep -c '"2"'`,
          ],
          { env: process.env, timeout: 30_000 },
          (_e, stdout) => resolve(String(stdout)),
        ),
      );
      expect(reached.split("\n")).toEqual(["unset", "1", ""]);

      const perm = await runCli(["permissions", "--desktop", "cw"], COLD);
      expect(perm.code, perm.stderr).toBe(0);
      expect(perm.stdout).toMatch(/^session wayland, the agent's desktop cw$/m);
      expect(perm.stdout).toMatch(/^hint: this is the agent's Wayland desktop cw/m);

      const both = await runCliJson(["desktop", "start", "cx", "--wayland", "--wm"], COLD);
      expect(both.code).toBe(2);
      expect(both.env.error.message).toMatch(/--wm and --wayland/);
      expect((await runCli(["desktop", "list", "--wayland"], COLD)).code).toBe(2);

      const stop = await runCli(["desktop", "stop", "cw"], COLD);
      expect(stop.code, stop.stderr).toBe(0);
      expect(stop.stdout).toBe("stopped desktop cw\n");
      expect(marked(id)).toEqual([]);
      expect(existsSync(runtimeDir!)).toBe(false);
      expect(socketsUnder(runtimeDir!)).toEqual([]);
      expect(processesMentioning(runtimeDir!)).toEqual([]);
    },
    TIMEOUT,
  );
});

describe("stop", () => {
  it(
    "ends every process of the desktop, the bus-activated ones too, and leaves no socket",
    async () => {
      const { id } = stateOf("wl");
      const runtimeDir = desk.runtimeDir!;
      const before = processesMentioning(runtimeDir);
      // gnome-shell, both buses, PipeWire, WirePlumber, the AT-SPI launcher, its bus and the registry at least.
      expect(before.length).toBeGreaterThanOrEqual(8);
      const names = before.map((p) => cmdline(p)[0] ?? "").join(" ");
      expect(names).toMatch(/at-spi-bus-launcher/);
      expect(socketsUnder(runtimeDir).length).toBeGreaterThan(0);
      await session.close();
      const t0 = Date.now();
      await desk.stop();
      console.log(`Wayland desktop stopped in ${Date.now() - t0} ms (${before.length} processes)`);
      await desk.stop();
      expect(before.filter(running)).toEqual([]);
      expect(marked(id)).toEqual([]);
      expect(processesMentioning(runtimeDir)).toEqual([]);
      expect(existsSync(runtimeDir)).toBe(false);
      expect(socketsUnder(runtimeDir)).toEqual([]);
      expect(existsSync(desk.stateFile)).toBe(false);
    },
    TIMEOUT,
  );
});
