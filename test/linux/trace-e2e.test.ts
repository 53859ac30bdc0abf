/**
 * Issue 34 §4, end to end on real apps: a run recorded through a door is
 * exported and replayed against a fresh instance of the app, and leaves the
 * same result behind.
 *
 * - gtk3-widget-factory through the CLI (each command its own process, one
 *   trace): a check box checked, a spin button set, a page tab selected. The
 *   exported program (npx tsx) and `axsnap replay` each run against a fresh
 *   instance and leave the same states.
 * - mousepad through MCP: three lines typed, File > Save As..., a file name,
 *   Return. The exported program and `axsnap replay` each run against a
 *   fresh instance: the same file on disk.
 *
 * Every step is decided from what the door printed, as an agent decides it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, readTrace, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf, useMcpClients } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 240_000;
const TSX = import.meta.resolve("tsx");
const LIB = fileURLToPath(new URL("../../lib/index.ts", import.meta.url));

let desktop: Desktop;
let work: string;
let state: string;
const mcpClient = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  work = mkdtempSync(join(tmpdir(), "axsnap-trace-e2e-"));
  state = mkdtempSync(join(tmpdir(), "axsnap-trace-e2e-state-"));
}, TIMEOUT);

afterAll(async () => {
  await cli(["daemon", "stop"]).catch(() => undefined);
  await desktop?.stop();
});

// Through the warm process, as an agent's shell runs it: a ref reaches the live element it printed.
const cli = (args: string[]) => runCli(args, { XDG_STATE_HOME: state });

async function ok(args: string[]): Promise<string> {
  const r = await cli(args);
  expect(r.code, `axsnap ${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

/** Runs a program with tsx; resolves with its exit code and output. */
function runTsx(file: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, file], { stdio: ["ignore", "pipe", "pipe"] });
    const out: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => out.push(d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out: Buffer.concat(out).toString("utf8") }));
  });
}

/** Exports a trace as a program importing this checkout's API, and runs it. */
async function runExported(trace: string, name: string): Promise<string> {
  const file = join(work, `${name}.ts`);
  await ok(["trace", "export", trace, "--to", "ts", "--import-from", LIB, "--out", file]);
  const program = readFileSync(file, "utf8");
  const run = await runTsx(file);
  expect(run.code, `${program}\n---\n${run.out}`).toBe(0);
  return program;
}

async function snapshotUntil(
  session: Session,
  app: number,
  test: (s: Snapshot) => boolean,
  what: string,
): Promise<Snapshot> {
  const until = Date.now() + 15_000;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    last = await session.snapshot({ app, screenshot: false });
    if (test(last)) return last;
    await sleep(150);
  }
  throw new Error(`${what} never showed; last snapshot:\n${last?.text}`);
}

const line = (re: string) => new RegExp(`^\\d+ ${re}`);

/** Against a fresh instance each: the exported program (npx tsx), then `axsnap replay`; `check` sees the same result. */
async function exportAndReplay(
  trace: string,
  name: string,
  start: () => Promise<App>,
  check: (app: App) => Promise<void>,
  reset: () => void = () => {},
): Promise<void> {
  console.log(`${name}: trace show:\n${await ok(["trace", "show", trace])}`);
  for (const how of ["program", "replay"] as const) {
    reset();
    const app = await start();
    try {
      if (how === "program") console.log(`${name}: exported program:\n${await runExported(trace, name)}`);
      else console.log(`${name}: axsnap replay:\n${await ok(["replay", trace])}`);
      await check(app);
    } finally {
      await app.stop();
    }
  }
}

/** An MCP client over a session that records to `trace`; each call must succeed. */
async function mcpRecording(trace: string) {
  const session = createSession({ deadlineMs: 10_000, trace });
  const client = await mcpClient(session);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as Parameters<typeof textOf>[0];
    expect(r.isError, `${name} ${JSON.stringify(args)}: ${textOf(r)}`).toBeFalsy();
    return textOf(r);
  };
  return { call, close: () => session.close() };
}

describe("gtk3-widget-factory: a check box, a spin button, a page tab", () => {
  /** What the run leaves: the check box on, the spin button at 70, the first tab list on its second page. */
  async function factoryAsRecorded(app: App): Promise<void> {
    const session = createSession();
    try {
      const snap = await snapshotUntil(
        session,
        app.pid,
        (s) => /spin button \(settable, float\) Value: 70\b/.test(s.text),
        "the spin button at 70",
      );
      // The first of the four tab lists shows its second page; the other three are as they were.
      expect(snap.text).toMatch(
        /page tab list\n\s*\d+ page tab \(selectable\) page 1\n\s*\d+ page tab \(selected\) page 2\n/,
      );
      expect(snap.text.match(/page tab \(selected\) page 1/g)?.length).toBe(3);
      expect(snap.text.match(/check box checkbutton, Value: on/g)?.length).toBe(2);
    } finally {
      await session.close();
    }
  }

  it(
    "through the CLI (one trace, each command its own process); the program and `axsnap replay` leave the same states",
    async () => {
      const trace = join(work, "factory-cli.axtrace");
      const app = await gtkWidgetFactory(desktop);
      try {
        // Served by the warm process, which holds the live elements of the snapshot it printed.
        await ok(["daemon", "start"]);
        const snap = await ok(["--trace", trace, "snapshot", "--app", String(app.pid)]);
        const id = /^snapshot (s[a-z0-9]{7})/m.exec(snap)![1]!;
        const ref = (re: string) => `@${id}:e${indexIn(snap, line(re))}`;
        await ok(["--trace", trace, "click", ref("check box checkbutton, Value: off$")]);
        await ok(["--trace", trace, "set-value", ref("spin button \\(settable, float\\) Value: 50"), "70"]);
        await ok(["--trace", trace, "click", ref("page tab (\\([^)]*\\) )?page 2$")]);
        await factoryAsRecorded(app);
      } finally {
        await app.stop();
      }
      const read = readTrace(trace);
      expect(new Set(read.steps.map((s) => s.runId)).size).toBe(1);
      expect(read.steps.map((s) => [s.door, s.method])).toEqual([
        ["cli", "snapshot"],
        ["cli", "click"],
        ["cli", "setValue"],
        ["cli", "click"],
      ]);
      await exportAndReplay(trace, "factory-cli", () => gtkWidgetFactory(desktop), factoryAsRecorded);
    },
    TIMEOUT,
  );

  it(
    "through MCP; the program and `axsnap replay` leave the same states",
    async () => {
      const trace = join(work, "factory-mcp.axtrace");
      const app = await gtkWidgetFactory(desktop);
      const mcp = await mcpRecording(trace);
      try {
        let text = await mcp.call("get_app_state", { app: app.pid, screenshot: false });
        text = await mcp.call("click", {
          app: app.pid,
          element_index: indexIn(text, line("check box checkbutton, Value: off$")),
        });
        text = await mcp.call("get_app_state", { app: app.pid, screenshot: false });
        await mcp.call("set_value", {
          app: app.pid,
          element_index: indexIn(text, line("spin button \\(settable, float\\) Value: 50")),
          value: 70,
        });
        text = await mcp.call("get_app_state", { app: app.pid, screenshot: false });
        await mcp.call("click", {
          app: app.pid,
          element_index: indexIn(text, line("page tab (\\([^)]*\\) )?page 2$")),
        });
        await factoryAsRecorded(app);
      } finally {
        await mcp.close();
        await app.stop();
      }
      expect(readTrace(trace).steps.every((s) => s.door === "mcp")).toBe(true);
      await exportAndReplay(trace, "factory-mcp", () => gtkWidgetFactory(desktop), factoryAsRecorded);
    },
    TIMEOUT,
  );
});

describe("mousepad: three lines, Save As through the dialog, a file name", () => {
  const lines = "one\ntwo\nthree";
  const mousepad = () => startApp(desktop, "mousepad", [], { name: "mousepad", timeoutMs: 60_000 });

  async function fileHolds(file: string, text: string): Promise<void> {
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      if (existsSync(file) && readFileSync(file, "utf8") === text) return;
      await sleep(100);
    }
    throw new Error(
      `${file} never held ${JSON.stringify(text)}: ${existsSync(file) ? readFileSync(file, "utf8") : "no file"}`,
    );
  }

  it(
    "through MCP; the program and `axsnap replay` write the same file again",
    async () => {
      const trace = join(work, "mousepad-mcp.axtrace");
      const file = join(work, "three-lines-mcp.txt");
      const app = await mousepad();
      const mcp = await mcpRecording(trace);
      try {
        let text = await mcp.call("get_app_state", { app: app.pid, screenshot: false });
        await mcp.call("type_text", {
          app: app.pid,
          element_index: indexIn(text, line("text")),
          text: lines,
        });
        text = await mcp.call("get_app_state", { app: app.pid, screenshot: false });
        text = await mcp.call("click", {
          app: app.pid,
          element_index: indexIn(text, line("menu (\\([^)]*\\) )?File$")),
        });
        text = await mcp.call("click", {
          app: app.pid,
          element_index: indexIn(text, line("menu item (\\([^)]*\\) )?Save As\\.\\.\\.")),
        });
        text = await mcp.call("get_app_state", { app: app.pid, screenshot: false });
        expect(text).toMatch(/^Window: "Save As" \(modal dialog\)/m);
        await mcp.call("set_value", {
          app: app.pid,
          element_index: indexIn(text, line("text \\(settable, string\\)")),
          value: file,
        });
        await mcp.call("press_key", { app: app.pid, key: "Return" });
        await fileHolds(file, lines);
      } finally {
        await mcp.close();
        await app.stop();
      }
      expect(readTrace(trace).steps.every((s) => s.door === "mcp")).toBe(true);
      await exportAndReplay(
        trace,
        "mousepad-mcp",
        mousepad,
        () => fileHolds(file, lines),
        () => rmSync(file, { force: true }),
      );
    },
    TIMEOUT,
  );

  it(
    "through the CLI; the program and `axsnap replay` write the same file again",
    async () => {
      const trace = join(work, "mousepad-cli.axtrace");
      const file = join(work, "three-lines-cli.txt");
      const app = await mousepad();
      const refIn = (text: string, re: string) =>
        `@${/^snapshot (s[a-z0-9]{7})/m.exec(text)![1]!}:e${indexIn(text, line(re))}`;
      try {
        await ok(["daemon", "start"]);
        let text = await ok(["--trace", trace, "snapshot", "--app", String(app.pid)]);
        await ok(
          // As an agent writes it on a shell line: newlines as \n, read by --escapes.
          ["--trace", trace, "type", "one\\ntwo\\nthree", "--into", refIn(text, "text"), "--escapes"],
        );
        text = await ok(["--trace", trace, "snapshot", "--app", String(app.pid)]);
        text = await ok(["--trace", trace, "click", refIn(text, "menu (\\([^)]*\\) )?File$")]);
        text = await ok(["--trace", trace, "snapshot", "--app", String(app.pid)]);
        await ok(["--trace", trace, "click", refIn(text, "menu item (\\([^)]*\\) )?Save As\\.\\.\\.")]);
        text = await ok(["--trace", trace, "snapshot", "--app", String(app.pid)]);
        expect(text).toMatch(/^Window: "Save As" \(modal dialog\)/m);
        await ok(["--trace", trace, "set-value", refIn(text, "text \\(settable, string\\)"), file]);
        await ok(["--trace", trace, "press", "Return", "--app", String(app.pid)]);
        await fileHolds(file, lines);
      } finally {
        await app.stop();
      }
      expect(readTrace(trace).steps.every((s) => s.door === "cli")).toBe(true);
      await exportAndReplay(
        trace,
        "mousepad-cli",
        mousepad,
        () => fileHolds(file, lines),
        () => rmSync(file, { force: true }),
      );
    },
    TIMEOUT,
  );
});
