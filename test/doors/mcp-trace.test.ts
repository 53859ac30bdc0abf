/**
 * Issue 34, the MCP door of traces and locators, through real servers on a
 * real app (test/apps/form-app.py on this file's headless desktop):
 *
 * - `axsnap mcp --trace PATH` (stdio): every step is written with door "mcp",
 *   the tool's name, its arguments and the reply text the agent read.
 * - `start_trace` / `stop_trace`: they take no path (a remote client must not
 *   choose where the server writes), write under `--trace-dir`, and the path
 *   they return exists and holds the steps (playwright-mcp#1034 returned a
 *   path that stayed empty).
 * - `--http --trace DIR`: one trace per MCP session.
 * - `locator` on the actions reaches the element it names; a locator that
 *   names nothing is refused with its candidates; `secret: true` keeps the
 *   typed text out of every file of the trace, though the field shows it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHttpServer } from "../../lib/index.js";
import { readTrace } from "../../lib/session/trace/read.js";
import type { TraceStepLine } from "../../lib/session/trace/types.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { errorOf, httpClient, textOf } from "../support/mcp.js";

const TIMEOUT = 180_000;
const FORM = "axsnap-form-test";
const WINDOW = `app=${FORM} >> window="axsnap form"`;
const SIGN_IN = `${WINDOW} >> push button "Sign in"`;
const USER = `${WINDOW} >> text "User name"`;
const COPIES = `${WINDOW} >> spin button "Copies"`;
/** Set and typed with secret: true; each must reach the field and no file of the trace. */
const SET_SECRET = "Pw7-setvalue-key";
const SECRET = "Zq9-hunter2-tok";

let desktop: Desktop;
let app: App;
let work: string;
const clients: Client[] = [];
const stderr: string[] = [];

beforeAll(async () => {
  desktop = await useDesktop();
  app = await startApp(desktop, "/usr/bin/python3", ["test/apps/form-app.py"], {
    name: FORM,
    windowName: "axsnap form",
    timeoutMs: 30_000,
  });
  work = mkdtempSync(join(tmpdir(), "axsnap-mcp-trace-"));
}, TIMEOUT);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await app?.stop();
  await desktop?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
  if (stderr.length > 0) console.log(`server stderr:\n${stderr.join("").slice(-3000)}`);
});

/** A client of `axsnap mcp ARGS` on stdio, its state directory this test's own. */
async function stdio(args: string[]): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/cli.ts", "mcp", ...args],
    env: {
      ...(process.env as Record<string, string>),
      ...desktop.env,
      XDG_STATE_HOME: join(work, "state"),
    },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const c = new Client({ name: "axsnap-trace-test", version: "0.0.0" });
  await c.connect(transport);
  clients.push(c);
  pids.set(c, transport.pid!);
  return c;
}

const pids = new Map<Client, number>();

/** Closes a stdio server as a client does (stdin's end, then SIGTERM) and waits until its process is gone. */
async function closeServer(c: Client): Promise<void> {
  const pid = pids.get(c)!;
  await c.close();
  await gone(pid);
}

/** Waits until the process is gone. */
async function gone(pid: number): Promise<void> {
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 30_000;
  while (alive()) {
    if (Date.now() > deadline)
      throw new Error(`the server (pid ${pid}) is still running 30 s after its client closed`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${textOf(r)}`);
  return r;
}

/** Every file under a directory, with its bytes as text. */
function filesOf(dir: string): { file: string; text: string }[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((file) => ({ file, text: readFileSync(file).toString("latin1") }));
}

/** The step of a tool call whose Session method is `method`. */
const stepOf = (steps: TraceStepLine[], tool: string, method: string): TraceStepLine => {
  const s = steps.find((x) => x.call === tool && x.method === method);
  if (!s)
    throw new Error(`no ${tool} ${method} step in ${JSON.stringify(steps.map((x) => [x.call, x.method]))}`);
  return s;
};

/** The element index a ref or a find line names. */
const indexOfRef = (ref: unknown): number => Number(/:e(\d+)/.exec(String(ref))?.[1]);

describe("axsnap mcp --trace PATH (stdio)", () => {
  it(
    "records every tool call as door mcp, with the tool, its args and the reply the agent read; locator targets reach their element; a secret stays out of every file",
    async () => {
      const path = join(work, "stdio.axtrace");
      const c = await stdio(["--trace", path]);
      const look = await call(c, "get_app_state", { app: FORM, screenshot: false });
      expect(textOf(look)).toMatch(/push button Sign in/);

      // A locator reaches the element it names: the click's target is the line find prints for it.
      const click = await call(c, "click", { app: FORM, locator: SIGN_IN });
      const found = await call(c, "find_elements", { app: FORM, role: "push button", name: "Sign in" });
      const target = (click.structuredContent as { target?: string }).target;
      // Its diff is since the snapshot the locator was found in, which the agent never read: the reply says so.
      expect(textOf(click)).toMatch(/the locator was found in snapshot s[a-z0-9]+/);
      expect(indexOfRef(target)).toBe(indexOfRef(/@s[a-z0-9]+:e\d+/.exec(textOf(found))?.[0]));

      // set_value by locator: the value read back is the spin button's.
      const set = await call(c, "set_value", { app: FORM, locator: COPIES, value: 3 });
      expect(set.structuredContent).toMatchObject({ action: "setValue", value: 3 });

      await call(c, "set_value", { app: FORM, locator: USER, value: SET_SECRET, secret: true });
      const typed = await call(c, "type_text", { app: FORM, locator: USER, text: SECRET, secret: true });
      expect(typed.structuredContent).toMatchObject({ action: "typeText" });
      // The field shows it to the agent (not a secure field): the trace must not.
      const after = await call(c, "get_app_state", { app: FORM, screenshot: true });
      expect(textOf(after)).toContain(`${SET_SECRET}${SECRET}`);
      // The server writes its last steps as its session closes, before its process ends.
      await closeServer(c);
      const trace = readTrace(path);
      // One step a tool call: an action's locating is part of its step (timings.locateMs), not a step of its own.
      expect(trace.steps.map((s) => s.call)).toEqual([
        "get_app_state",
        "click",
        "find_elements",
        "set_value",
        "set_value",
        "type_text",
        "get_app_state",
      ]);
      for (const s of trace.steps) expect(s.door, JSON.stringify(s)).toBe("mcp");
      const clickStep = stepOf(trace.steps, "click", "click");
      expect(clickStep.args).toMatchObject({ app: FORM, locator: SIGN_IN });
      expect(clickStep.reply).toBe(textOf(click));
      expect(clickStep.targets?.[0]?.name).toBe("Sign in");
      expect(stepOf(trace.steps, "set_value", "setValue").args).toMatchObject({ locator: COPIES, value: 3 });
      const typeStep = stepOf(trace.steps, "type_text", "typeText");
      expect(typeStep.args.secret).toBe(true);
      expect(typeStep.secret?.env).toMatch(/^AXSNAP_SECRET_/);
      for (const { file, text } of filesOf(path)) {
        expect(text, file).not.toContain(SECRET);
        expect(text, file).not.toContain(SET_SECRET);
      }
    },
    TIMEOUT,
  );

  it(
    "SIGTERM (how a client ends a server that outlives stdin's end): the call in flight is ended and written before the process exits",
    async () => {
      const path = join(work, "sigterm.axtrace");
      const c = await stdio(["--trace", path]);
      const pid = pids.get(c)!;
      const waiting = c
        .callTool({
          name: "wait_for",
          arguments: {
            app: FORM,
            text: "a text this form never shows",
            timeout_ms: 120_000,
            screenshot: false,
          },
        })
        .catch((e: unknown) => e);
      // Answered after the wait_for was read (one pipe, read in order): the wait is in flight.
      await call(c, "get_app_state", { app: FORM, screenshot: false });
      process.kill(pid, "SIGTERM");
      await gone(pid);
      await waiting;
      const steps = readTrace(path).steps;
      expect(steps.map((s) => s.call).sort()).toEqual(["get_app_state", "wait_for"]);
      expect(steps.find((s) => s.call === "wait_for")?.error?.code).toBeDefined();
    },
    TIMEOUT,
  );

  it(
    "a locator that names nothing is refused with its candidates; an element given two ways is refused",
    async () => {
      const c = await stdio([]);
      await call(c, "get_app_state", { app: FORM, screenshot: false });
      const none = errorOf(
        (await c.callTool({
          name: "click",
          arguments: { app: FORM, locator: `${WINDOW} >> push button "Sign on"` },
        })) as CallToolResult,
      );
      expect(none).toMatchObject({ code: "ELEMENT_NOT_FOUND", delivery: "not_delivered" });
      expect((none.candidates as { line: string }[])[0]?.line).toMatch(/Sign in/);
      const both = errorOf(
        (await c.callTool({
          name: "click",
          arguments: { app: FORM, element_index: 1, locator: SIGN_IN },
        })) as CallToolResult,
      );
      expect(both).toMatchObject({ code: "INVALID_ARGUMENT", delivery: "not_delivered" });
      expect(both.message).toMatch(/element_index, ref or locator/);
    },
    TIMEOUT,
  );
});

describe("start_trace and stop_trace", () => {
  it(
    "write under --trace-dir (never a path of the client's), and the path returned exists and holds the steps",
    async () => {
      const dir = join(work, "traces");
      const c = await stdio(["--trace-dir", dir]);
      const withPath = (await c.callTool({
        name: "start_trace",
        arguments: { path: join(work, "chosen.axtrace") },
      })) as CallToolResult;
      expect(withPath.isError).toBe(true);
      expect(existsSync(join(work, "chosen.axtrace"))).toBe(false);

      const started = await call(c, "start_trace", { screenshots: false });
      const path = (started.structuredContent as { path: string }).path;
      expect(path.startsWith(`${dir}/`)).toBe(true);
      await call(c, "get_app_state", { app: FORM, screenshot: false });
      await call(c, "click", { app: FORM, locator: SIGN_IN });
      const stopped = await call(c, "stop_trace", {});
      const s = stopped.structuredContent as { path: string; runId: string; steps: number };
      expect(s.path).toBe(path);
      expect(s.steps).toBe(2);
      expect(textOf(stopped)).toContain(`axsnap trace view ${path}`);
      // Written when stop_trace answers, while the server still runs.
      expect(existsSync(path)).toBe(true);
      const trace = readTrace(path);
      expect(trace.header.runId).toBe(s.runId);
      expect(trace.steps.length).toBe(s.steps);
      expect(trace.steps.map((x) => [x.call, x.method])).toEqual([
        ["get_app_state", "snapshot"],
        ["click", "click"],
      ]);
      // A second stop says no trace is on.
      const again = errorOf((await c.callTool({ name: "stop_trace", arguments: {} })) as CallToolResult);
      expect(again.code).toBe("INVALID_ARGUMENT");
    },
    TIMEOUT,
  );
});

describe("axsnap mcp --http --trace DIR", () => {
  it(
    "two MCP sessions give two traces, named by their start and session id, each with its own steps",
    async () => {
      const dir = join(work, "http");
      const server = await createMcpHttpServer({ trace: dir, log: () => undefined });
      try {
        for (const n of [1, 2]) {
          const c = await httpClient(server.url, server.token);
          clients.push(c);
          for (let i = 0; i < n; i++) await call(c, "get_app_state", { app: FORM, screenshot: false });
        }
      } finally {
        await server.close();
      }
      const names = readdirSync(dir).sort();
      expect(names).toHaveLength(2);
      for (const name of names) expect(name).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}\.axtrace$/);
      const counts = names.map((name) => readTrace(join(dir, name)).steps);
      for (const steps of counts)
        for (const s of steps)
          expect({ door: s.door, call: s.call }).toEqual({ door: "mcp", call: "get_app_state" });
      expect(counts.map((s) => s.length).sort()).toEqual([1, 2]);
    },
    TIMEOUT,
  );
});
