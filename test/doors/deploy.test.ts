/**
 * Issue 23 §3: deploy/Dockerfile's steps, run as a shell script on this
 * machine without building an image. Its ENV lines become the environment
 * (AXSNAP_HOME and the port moved to temporary ones, no DISPLAY or bus of the
 * test's own), COPY copies from a build context holding deploy/ and the
 * packed tarball, each RUN runs in bash, and the CMD is the server. Then the
 * test is the orchestrator: the HEALTHCHECK's command until it passes, a
 * request without the token, list_apps and get_app_state of the app
 * AXSNAP_LAUNCH started, and SIGTERM leaving no process behind.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpClient } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const root = join(import.meta.dirname, "..", "..");
const dockerfile = readFileSync(join(root, "deploy", "Dockerfile"), "utf8");
const TIMEOUT = 900_000;

interface Step {
  op: string;
  args: string;
}

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function dockerSteps(text: string): Step[] {
  const joined = text.replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const m = /^(\w+)\s+(.*)$/.exec(l);
      if (!m) throw new Error(`not an instruction: ${l}`);
      return { op: (m[1] ?? "").toUpperCase(), args: m[2] ?? "" };
    });
}

/** COPY's sources: a path in the context whose last part may hold one `*`. */
function matching(source: string): string[] {
  const dir = dirname(source);
  const [head = "", tail] = source.slice(dir === "." ? 0 : dir.length + 1).split("*");
  const found = readdirSync(join(context, dir))
    .filter((f) => (tail === undefined ? f === head : f.startsWith(head) && f.endsWith(tail)))
    .map((f) => (dir === "." ? f : `${dir}/${f}`));
  if (found.length === 0) throw new Error(`COPY ${source}: nothing in the context matches`);
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Pids of live processes whose environment holds `marker` (every process the script started inherits it). */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(marker))
        pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

const work = mkdtempSync(join(tmpdir(), "axsnap-deploy-"));
const context = join(work, "context");
const home = join(work, "opt-axsnap");
const prefix = join(work, "prefix");
const runtime = join(work, "run");
const MARK_NAME = "AXSNAP_DEPLOY_TEST";
const markValue = randomBytes(8).toString("hex");
const mark = `${MARK_NAME}=${markValue}`;
const token = randomBytes(24).toString("hex");
let env: Record<string, string> = {};
let server: ChildProcess | undefined;
let serverOutput = "";
let port = 0;
let client: Client | undefined;
const log: string[] = [];

function bash(command: string, timeout = 300_000) {
  const started = performance.now();
  const r = spawnSync("bash", ["-c", command], { cwd: context, env, encoding: "utf8", timeout });
  log.push(
    `${command.slice(0, 80)}: exit ${r.status} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return r;
}

beforeAll(async () => {
  mkdirSync(context);
  mkdirSync(runtime, { mode: 0o700 });
  cpSync(join(root, "deploy"), join(context, "deploy"), { recursive: true });
  // The tarball `npm pack` makes in a checkout, as the Dockerfile's header says (prepack builds dist/).
  const pack = spawnSync("npm", ["pack", "--pack-destination", context], {
    cwd: root,
    encoding: "utf8",
    timeout: 600_000,
  });
  if (pack.status !== 0) throw new Error(`npm pack failed:\n${pack.stdout}${pack.stderr}`);

  port = await freePort();
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    // A container has no display, bus or axsnap settings of the host's, nor npm's script variables.
    if (
      v === undefined ||
      /^(DISPLAY|WAYLAND_DISPLAY|DBUS_SESSION_BUS_ADDRESS|AT_SPI_BUS_ADDRESS|XDG_RUNTIME_DIR)$/.test(k)
    )
      continue;
    if (/^(AXSNAP_|npm_|INIT_CWD$)/.test(k)) continue;
    base[k] = v;
  }
  env = {
    ...base,
    PATH: `${join(prefix, "bin")}:${process.env.PATH}`,
    NPM_CONFIG_PREFIX: prefix,
    XDG_RUNTIME_DIR: runtime,
    [MARK_NAME]: markValue,
  };

  for (const step of dockerSteps(dockerfile)) {
    if (step.op === "ENV") {
      const m = /^(\w+)[= ](.*)$/.exec(step.args);
      if (!m) throw new Error(`ENV ${step.args}`);
      const [, key = "", value = ""] = m;
      // The image's paths and port, moved to this test's own.
      env[key] = key === "AXSNAP_HOME" ? home : key === "AXSNAP_PORT" ? String(port) : value;
    } else if (step.op === "COPY") {
      const parts = step.args.split(/\s+/);
      const dest = parts.pop()!.replace(/^\/opt\/axsnap/, home);
      mkdirSync(dest, { recursive: true });
      for (const source of parts)
        for (const file of matching(source)) cpSync(join(context, file), join(dest, file.split("/").pop()!));
    } else if (step.op === "RUN") {
      const r = bash(step.args);
      if (r.status !== 0) throw new Error(`RUN ${step.args} exited ${r.status}:\n${r.stdout}${r.stderr}`);
    }
  }
  const cmd = dockerSteps(dockerfile).find((s) => s.op === "CMD");
  if (!cmd) throw new Error("the Dockerfile has no CMD");
  server = spawn("bash", ["-c", cmd.args], {
    cwd: context,
    env: { ...env, AXSNAP_MCP_TOKEN: token, AXSNAP_LAUNCH: "gtk3-widget-factory" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  server.stdout?.on("data", (d: Buffer) => {
    serverOutput += d.toString();
  });
  server.stderr?.on("data", (d: Buffer) => {
    serverOutput += d.toString();
  });
}, TIMEOUT);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  if (server && server.exitCode === null) server.kill("SIGKILL");
  for (const pid of processesWith(mark)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  console.log(`deploy steps:\n${log.join("\n")}\nserver output (tail):\n${serverOutput.slice(-3000)}`);
  rmSync(work, { recursive: true, force: true });
});

/** The Dockerfile's HEALTHCHECK command, as the container runtime runs it. */
function healthCheck(): boolean {
  const step = dockerSteps(dockerfile).find((s) => s.op === "HEALTHCHECK");
  const command = step?.args.replace(/^(--\S+\s+)*CMD\s+/, "");
  if (!command) throw new Error("the Dockerfile has no HEALTHCHECK CMD");
  return bash(command, 10_000).status === 0;
}

describe("deploy/Dockerfile run as a script", () => {
  it("the health check passes once the server listens", async () => {
    const started = performance.now();
    while (!healthCheck()) {
      if (server?.exitCode !== null)
        throw new Error(`the server exited ${server?.exitCode}:\n${serverOutput}`);
      if (performance.now() - started > 120_000) throw new Error(`not healthy after 120 s:\n${serverOutput}`);
      await sleep(500);
    }
    const r = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(r.status).toBe(200);
    log.push(`healthy after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 180_000);

  it("refuses a request without the token", async () => {
    const r = await fetch(`http://127.0.0.1:${port}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(r.status).toBe(401);
  });

  it("with the token, serves the app AXSNAP_LAUNCH started on the container's desktop", async () => {
    client = await httpClient(`http://127.0.0.1:${port}/mcp`, token, "axsnap-deploy-test");
    let apps: unknown[] = [];
    const started = performance.now();
    // The launch returned when the app was in the registry; list_apps is the check, polled briefly.
    while (performance.now() - started < 30_000) {
      const r = (await client.callTool({ name: "list_apps", arguments: {} })) as CallToolResult;
      apps = ((r.structuredContent as { apps?: unknown[] } | undefined)?.apps ?? []) as unknown[];
      if (JSON.stringify(apps).includes("gtk3-widget-factory")) break;
      await sleep(500);
    }
    expect(JSON.stringify(apps)).toContain("gtk3-widget-factory");
    const state = (await client.callTool({
      name: "get_app_state",
      arguments: { app: "gtk3-widget-factory", screenshot: false },
    })) as CallToolResult;
    expect(state.isError ?? false).toBe(false);
    const text = state.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");
    expect(text).toMatch(/^App=gtk3-widget-factory/m);
    expect(text).toMatch(/^\s*\d+ .*page tab/m);
  }, 120_000);

  it("SIGTERM stops the server and the desktop and leaves no process behind", async () => {
    await client?.close().catch(() => undefined);
    client = undefined;
    expect(processesWith(mark).length).toBeGreaterThan(2);
    const exited = new Promise<number | null>((resolve) => server?.once("exit", (code) => resolve(code)));
    server?.kill("SIGTERM");
    const code = await exited;
    expect(code).toBe(143);
    const deadline = performance.now() + 10_000;
    while (processesWith(mark).length > 0 && performance.now() < deadline) await sleep(200);
    expect(processesWith(mark)).toEqual([]);
    const list = bash("axsnap desktop list");
    expect(list.stdout).not.toMatch(/\bagent\b/);
  }, 60_000);
});
