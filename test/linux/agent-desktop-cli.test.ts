/**
 * The agent's desktop's life and its refusals (issue 23, section 1): the
 * CLI's start/list/env/stop round trip (the env lines eval'd by a real
 * shell), a name in use, a desktop whose X server died (its commands say
 * DESKTOP_GONE, list shows it gone and cleans it), no process left after
 * stop or after the owner of an API desktop is SIGKILLed, the state
 * directory's mode, bad names and sizes, Xvfb missing, and the warm process
 * of one desktop never serving another; MCP over HTTP (the API's and the
 * CLI's) serving the agent's desktop named.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, listDesktops, startDesktop } from "../../lib/index.js";
import { marked, privateRuntimeDir, requireDeps, running, until } from "../support/agent-desktop.js";
import { runCli, runCliJson } from "../support/cli.js";
import { httpClient, textOf } from "../support/mcp.js";

const TIMEOUT = 90_000;
const APP = fileURLToPath(new URL("../apps/input-app.py", import.meta.url));
const TSX = import.meta.resolve("tsx");
const CLI = fileURLToPath(new URL("../../lib/cli.ts", import.meta.url));
const TOKEN = "agent-desktop-mcp-token-0123456789";
let runtime: string;
let stateDir: string;
const started: string[] = [];

function stateOf(name: string): { id: string; pids: Record<string, { pid: number }> } {
  return JSON.parse(readFileSync(join(stateDir, `${name}.json`), "utf8"));
}

/** `axsnap --json launch ... -- ARGS`: --json before the app's own arguments. */
async function launchJson(args: string[]) {
  const r = await runCli(["--json", ...args]);
  return { ...r, env: JSON.parse(r.stdout) };
}

function sh(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("/bin/sh", ["-c", script], { env: process.env, timeout: 30_000 }, (e, stdout, stderr) =>
      resolve({ code: e ? Number(e.code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

beforeAll(() => {
  requireDeps();
  runtime = privateRuntimeDir();
  stateDir = join(runtime, "axsnap", "desktops");
});

afterAll(async () => {
  for (const name of started) await runCli(["desktop", "stop", name]);
});

describe("axsnap desktop, from the command line", () => {
  it(
    "start, list, env (eval'd by sh), stop: and nothing of it runs after stop",
    async () => {
      started.push("round");
      const start = await runCliJson(["desktop", "start", "round", "--size", "1024x700"]);
      expect(start.code, start.stderr).toBe(0);
      expect(start.env.data).toMatchObject({ name: "round", width: 1024, height: 700 });
      const { id, pids } = stateOf("round");
      const all = Object.values(pids).map((p) => p.pid);
      expect(all.every(running)).toBe(true);
      // The CLI's desktop outlives the command that started it: no watchdog, no owner.
      expect(pids.watchdog).toBeUndefined();
      expect(marked(id).length).toBeGreaterThanOrEqual(4); // Xvfb, dbus, the AT-SPI launcher, its bus, the registry

      // The state directory and file: the user's alone.
      expect(statSync(stateDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(runtime, "axsnap")).mode & 0o777).toBe(0o700);
      expect(statSync(join(stateDir, "round.json")).mode & 0o777).toBe(0o600);

      const list = await runCli(["desktop", "list"]);
      expect(list.stdout).toMatch(
        new RegExp(`^round\\trunning\\tDISPLAY=${start.env.data.display}\\t1024x700\\t`, "m"),
      );

      const env = await runCli(["desktop", "env", "round"]);
      expect(env.code).toBe(0);
      expect(env.stdout).toMatch(/^export DISPLAY=:\d+$/m);
      expect(env.stdout).toMatch(/^export DBUS_SESSION_BUS_ADDRESS='?unix:path=/m);
      // A real shell evals it and reaches that X server and that bus.
      const evald = await sh(
        `eval "$(cat <<'EOF'\n${env.stdout}EOF\n)"; echo "$DISPLAY"; xdpyinfo | grep -c 'dimensions: *1024x700'; dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId >/dev/null && echo bus-ok`,
      );
      expect(evald.stdout.split("\n")).toEqual([start.env.data.display, "1", "bus-ok", ""]);

      // An app launched into it with --desktop is the desktop's: it ends with it.
      const launched = await launchJson(["launch", APP, "--desktop", "round", "--", "round app"]);
      expect(launched.code, launched.stdout).toBe(0);
      const appPid = launched.env.data.pid as number;
      const apps = await runCliJson(["apps", "--desktop", "round"]);
      expect(apps.env.data.apps.map((a: { pid: number }) => a.pid)).toContain(appPid);

      const stop = await runCli(["desktop", "stop", "round"]);
      expect(stop.code, stop.stderr).toBe(0);
      expect(stop.stdout).toBe("stopped desktop round\n");
      expect(all.filter(running)).toEqual([]);
      expect(running(appPid)).toBe(false);
      expect(marked(id)).toEqual([]);
      expect(existsSync(join(stateDir, "round.json"))).toBe(false);
      expect(existsSync(join(stateDir, "round.bus"))).toBe(false);
      expect((await runCli(["desktop", "list"])).stdout).toBe("no desktops\n");
    },
    TIMEOUT,
  );

  it(
    "refuses a name in use with DESKTOP_EXISTS, and leaves the running one as it was",
    async () => {
      started.push("busy");
      const first = await runCliJson(["desktop", "start", "busy"]);
      expect(first.code).toBe(0);
      const again = await runCliJson(["desktop", "start", "busy"]);
      expect(again.code).toBe(1);
      expect(again.env.error).toMatchObject({ code: "DESKTOP_EXISTS" });
      expect(again.env.error.hint).toContain("axsnap desktop stop busy");
      // The API says the same about the same name.
      const api = await startDesktop({ name: "busy" }).catch((e: unknown) => e);
      expect(api).toBeInstanceOf(AxsnapError);
      expect(api).toMatchObject({ code: "DESKTOP_EXISTS" });
      const { pids } = stateOf("busy");
      expect(pids.xvfb!.pid).toBe(first.env.data.pids.xvfb);
      expect(running(pids.xvfb!.pid)).toBe(true);
      expect((await runCli(["desktop", "stop", "busy"])).code).toBe(0);
    },
    TIMEOUT,
  );

  it(
    "a desktop whose X server died: its commands say DESKTOP_GONE, list shows it gone once and cleans up",
    async () => {
      started.push("dies");
      const start = await runCliJson(["desktop", "start", "dies"]);
      expect(start.code).toBe(0);
      const { id, pids } = stateOf("dies");
      process.kill(pids.xvfb!.pid, "SIGKILL");
      expect(await until(() => !running(pids.xvfb!.pid), 5000)).toBe(true);

      const snap = await runCliJson(["snapshot", "--app", "anything", "--desktop", "dies"]);
      expect(snap.code).toBe(1);
      expect(snap.env.error.code).toBe("DESKTOP_GONE");
      expect(snap.env.error.message).toMatch(/X server \(Xvfb, pid \d+\) has ended/);
      // Told once; after that the name is simply free.
      const again = await runCliJson(["apps", "--desktop", "dies"]);
      expect(again.env.error.code).toBe("DESKTOP_NOT_FOUND");
      expect(marked(id)).toEqual([]);

      // list shows a desktop that died as gone, and cleans it.
      started.push("dies2");
      expect((await runCliJson(["desktop", "start", "dies2"])).code).toBe(0);
      const second = stateOf("dies2");
      process.kill(second.pids.xvfb!.pid, "SIGKILL");
      expect(await until(() => !running(second.pids.xvfb!.pid), 5000)).toBe(true);
      const list = await runCliJson(["desktop", "list"]);
      expect(list.env.data.desktops).toEqual([
        expect.objectContaining({ name: "dies2", state: "gone", reason: expect.stringMatching(/X server/) }),
      ]);
      const text = await runCli(["desktop", "list"]);
      expect(text.stdout).toBe("no desktops\n");
      expect(marked(second.id)).toEqual([]);
      expect(existsSync(join(stateDir, "dies2.json"))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "bad names, sizes and actions are usage errors (exit 2), before anything starts",
    async () => {
      const name = await runCliJson(["desktop", "start", "../evil"]);
      expect(name.code).toBe(2);
      expect(name.env.error.code).toBe("INVALID_ARGUMENT");
      const size = await runCliJson(["desktop", "start", "ok", "--size", "big"]);
      expect(size.code).toBe(2);
      expect(size.env.error.message).toMatch(/WIDTHxHEIGHT/);
      expect((await runCli(["desktop", "stop"])).code).toBe(2);
      expect((await runCli(["desktop", "frobnicate"])).code).toBe(2);
      expect(existsSync(join(stateDir, "ok.json"))).toBe(false);
      expect((await listDesktops()).map((d) => d.name)).not.toContain("ok");
    },
    TIMEOUT,
  );
});

describe("startDesktop, from the API", () => {
  it(
    "leaves no process behind when its owner is SIGKILLed",
    async () => {
      const script = `
        import { startDesktop } from ${JSON.stringify(fileURLToPath(new URL("../../lib/index.ts", import.meta.url)))};
        const d = await startDesktop({ name: "orphan", windowManager: true });
        process.stdout.write(JSON.stringify(d.pids) + "\\n");
        setInterval(() => {}, 1000);
      `;
      const owner = spawn(process.execPath, ["--import", TSX, "--input-type=module", "-e", script], {
        env: process.env,
        stdio: ["ignore", "pipe", "inherit"],
      });
      const [line] = await lineOf(owner, "stdout", /^.*\n/);
      const pids = JSON.parse(line!) as Record<string, number>;
      const { id } = stateOf("orphan");
      expect(Object.keys(pids).sort()).toEqual(["dbus", "watchdog", "windowManager", "xvfb"]);
      expect(Object.values(pids).every(running)).toBe(true);
      const before = marked(id).length;
      owner.kill("SIGKILL");
      const t0 = Date.now();
      expect(
        await until(() => Object.values(pids).every((p) => !running(p)) && marked(id).length === 0, 5000),
      ).toBe(true);
      console.log(
        `owner SIGKILLed: ${before} marked processes and the watchdog gone after ${Date.now() - t0} ms`,
      );
      expect(existsSync(join(stateDir, "orphan.json"))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "stop() ends every process of the desktop and is idempotent",
    async () => {
      const d = await startDesktop({ name: "api-stop" });
      const { id } = stateOf("api-stop");
      expect(d.env.DISPLAY).toBe(d.display);
      expect(d.env.AT_SPI_BUS_ADDRESS).toBeUndefined();
      const before = marked(id);
      expect(before.length).toBeGreaterThanOrEqual(4);
      await d.stop();
      await d.stop();
      expect(before.filter(running)).toEqual([]);
      expect(marked(id)).toEqual([]);
      expect(running(d.pids.watchdog!)).toBe(false);
      expect(existsSync(d.stateFile)).toBe(false);
    },
    TIMEOUT,
  );

  it("refuses bad options with INVALID_ARGUMENT and a missing Xvfb with DESKTOP_UNAVAILABLE naming the packages", async () => {
    await expect(startDesktop({ name: "" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(startDesktop({ name: "a/b" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(startDesktop({ size: "10x10" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      const e = await startDesktop({ name: "nox" }).catch((err: unknown) => err);
      expect(e).toMatchObject({ code: "DESKTOP_UNAVAILABLE" });
      expect((e as AxsnapError).message).toMatch(/Xvfb, dbus-daemon, dbus-send not found/);
      expect((e as AxsnapError).hint).toMatch(/xvfb, dbus/);
      expect((e as AxsnapError).hint).toMatch(/at-spi2-core/);
    } finally {
      process.env.PATH = path;
    }
    expect(existsSync(join(stateDir, "nox.json"))).toBe(false);
  });
});

describe("the warm process and --desktop", () => {
  it(
    "a warm process of one desktop never serves another: each desktop's apps, twice each",
    async () => {
      started.push("warm-a", "warm-b");
      expect((await runCliJson(["desktop", "start", "warm-a"])).code).toBe(0);
      expect((await runCliJson(["desktop", "start", "warm-b"])).code).toBe(0);
      const a = await launchJson(["launch", APP, "--desktop", "warm-a", "--", "warm a"]);
      const b = await launchJson(["launch", APP, "--desktop", "warm-b", "--", "warm b"]);
      expect(a.code).toBe(0);
      expect(b.code).toBe(0);
      const env = { AXSNAP_DAEMON: "on", AXSNAP_DAEMON_IDLE_MS: "5000" };
      const pidsOf = async (name: string) => {
        const r = await runCliJson(["apps", "--desktop", name], env);
        expect(r.code, r.stdout).toBe(0);
        return r.env.data.apps.map((x: { pid: number }) => x.pid);
      };
      for (let round = 0; round < 2; round++) {
        // The first of each starts a warm process; the second is served by it.
        await new Promise((r) => setTimeout(r, round * 1500));
        expect(await pidsOf("warm-a")).toEqual([a.env.data.pid]);
        expect(await pidsOf("warm-b")).toEqual([b.env.data.pid]);
      }
      for (const name of ["warm-a", "warm-b"]) expect((await runCli(["desktop", "stop", name])).code).toBe(0);
    },
    TIMEOUT,
  );
});

/** A child that prints a line matching `re` on `stream` (its match), else fails when it exits first. */
function lineOf(
  child: ReturnType<typeof spawn>,
  stream: "stdout" | "stderr",
  re: RegExp,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let out = "";
    child[stream]!.on("data", (d: Buffer) => {
      out += String(d);
      const m = out.match(re);
      if (m) resolve(m);
    });
    child.on("exit", (code) => reject(new Error(`exited (${code}) before ${re}:\n${out}`)));
  });
}

/** list_apps over HTTP at `url`: the pids it names. */
async function appPidsOver(url: string): Promise<number[]> {
  const c = await httpClient(url, TOKEN, "agent-desktop-test");
  try {
    const r = (await c.callTool({ name: "list_apps", arguments: {} })) as CallToolResult;
    expect(r.isError, textOf(r)).toBeFalsy();
    return (JSON.parse(textOf(r)) as { pid: number }[]).map((a) => a.pid);
  } finally {
    await c.close();
  }
}

describe("MCP over HTTP on the agent's desktop", () => {
  it(
    "createMcpHttpServer({ desktop }) serves the desktop's apps, not this process's display",
    async () => {
      const script = `
        import { createMcpHttpServer, startDesktop } from ${JSON.stringify(fileURLToPath(new URL("../../lib/index.ts", import.meta.url)))};
        const d = await startDesktop({ name: "mcp-api" });
        const s = await createMcpHttpServer({ port: 0, desktop: d, token: ${JSON.stringify(TOKEN)}, log: () => {} });
        process.stdout.write(JSON.stringify({ url: s.url }) + "\\n");
        process.stdin.resume();
        process.stdin.on("end", async () => { await s.close(); await d.stop(); process.exit(0); });
      `;
      const owner = spawn(process.execPath, ["--import", TSX, "--input-type=module", "-e", script], {
        env: { ...process.env, DISPLAY: ":0-not-this-one" },
        stdio: ["pipe", "pipe", "inherit"],
      });
      try {
        const [line] = await lineOf(owner, "stdout", /\{.*\}\n/);
        const { url } = JSON.parse(line!) as { url: string };
        // Launched by another process: only the server's own option puts the owner on that desktop.
        const app = await launchJson(["launch", APP, "--desktop", "mcp-api", "--", "mcp api"]);
        expect(app.code, app.stderr).toBe(0);
        expect(await appPidsOver(url)).toEqual([app.env.data.pid]);
      } finally {
        const exited = new Promise((r) => owner.on("exit", r));
        owner.stdin!.end();
        await exited;
      }
      expect(existsSync(join(stateDir, "mcp-api.json"))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "axsnap mcp --http --desktop NAME serves that desktop's apps",
    async () => {
      started.push("mcp-cli");
      expect((await runCliJson(["desktop", "start", "mcp-cli"])).code).toBe(0);
      const app = await launchJson(["launch", APP, "--desktop", "mcp-cli", "--", "mcp cli"]);
      expect(app.code, app.stderr).toBe(0);
      const server = spawn(
        process.execPath,
        ["--import", TSX, CLI, "mcp", "--http", "127.0.0.1:0", "--desktop", "mcp-cli"],
        { env: { ...process.env, AXSNAP_MCP_TOKEN: TOKEN }, stdio: ["ignore", "ignore", "pipe"] },
      );
      try {
        const [, url] = await lineOf(server, "stderr", /serving MCP \(Streamable HTTP\) on (http\S+) /);
        expect(await appPidsOver(url!)).toEqual([app.env.data.pid]);
      } finally {
        const exited = new Promise((r) => server.on("exit", r));
        server.kill("SIGTERM");
        await exited;
      }
      expect((await runCli(["desktop", "stop", "mcp-cli"])).code).toBe(0);
    },
    TIMEOUT,
  );
});
