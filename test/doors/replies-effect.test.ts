/**
 * Issue 32 §6 through the MCP server and the CLI, as an agent reads them, on
 * the tests' own GTK app (test/apps/closer-app.py) under this file's headless
 * desktop: an app that quit is said to have exited, its window closed, and
 * the next step the reply names (list_apps; `axsnap apps`) works; a check
 * box's changed line names the state it gained; no reply carries D-Bus text.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, type Json, runCli, runCliJson, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf } from "../support/mcp.js";

const TIMEOUT = 120_000;
const CLOSER = "axsnap-closer-test";
/** Raw D-Bus error text (a window's id, an object path, is axsnap's own address and may print). */
const RAW_DBUS =
  /GDBus|org\.freedesktop|org\.a11y\.atspi\.[A-Z]|:1\.\d+\b|Timeout was reached|could not be processed/;

let desktop: Desktop;
let state: string;
let client: Client;

beforeAll(async () => {
  desktop = await useDesktop();
  state = mkdtempSync(join(tmpdir(), "axsnap-replies-effect-"));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/cli.ts", "mcp"],
    env: { ...(process.env as Record<string, string>), ...desktop.env },
    stderr: "pipe",
  });
  client = new Client({ name: "axsnap-replies-effect-test", version: "0.0.0" });
  await client.connect(transport);
}, TIMEOUT);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  await desktop?.stop();
});

function startCloser(): Promise<App> {
  return startApp(desktop, "/usr/bin/python3", ["test/apps/closer-app.py"], {
    name: CLOSER,
    windowName: "axsnap closer test",
  });
}

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return r;
}

const cli = async (args: string[]) => {
  const r = await runCli(args, { XDG_STATE_HOME: state });
  if (r.code !== 0) throw new Error(`axsnap ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

describe("MCP", () => {
  it(
    "a click that quits the app: `the app exited`, its window closed, and list_apps as the next step, which works",
    async () => {
      const app = await startCloser();
      try {
        const before = textOf(await call("get_app_state", { app: app.pid, screenshot: false }));
        const r = await call("click", { element_index: indexIn(before, /^\d+ push button Quit app$/) });
        const text = textOf(r);
        console.log(`MCP quit reply:\n${text}`);
        expect(text).toMatch(new RegExp(`^the app exited: ${CLOSER} \\(pid ${app.pid}\\)$`, "m"));
        expect(text).toMatch(/^closed: window "axsnap closer test", id \S+$/m);
        expect(text).toMatch(/^no fresh snapshot: the app exited; list_apps lists the apps that run/m);
        expect(text).not.toContain("get_app_state");
        expect(text).not.toMatch(/^opened:/m);
        expect(text).not.toMatch(RAW_DBUS);
        const data = r.structuredContent as Json;
        expect(data.exited).toEqual({ name: CLOSER, pid: app.pid });
        expect(data.closed.map((w: Json) => w.title)).toEqual(["axsnap closer test"]);
        expect(data.snapshotId).toBeUndefined();
        // The step it names works, and shows the app gone.
        const apps = (await call("list_apps", {})).structuredContent as Json;
        expect(apps.apps.map((a: Json) => a.pid)).not.toContain(app.pid);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a check box: `[changed: value, states +checked]`, and the states in the structured changes",
    async () => {
      const app = await startCloser();
      try {
        const before = textOf(await call("get_app_state", { app: app.pid, screenshot: false }));
        const box = indexIn(before, /^\d+ check box Remember me, Value: off$/);
        const r = await call("click", { element_index: box });
        expect(textOf(r)).toMatch(
          /^\t*\d+ check box Remember me, Value: on \[changed: value, states \+checked\]$/m,
        );
        const changed = (r.structuredContent as Json).changes.changed;
        expect(changed).toContainEqual(
          expect.objectContaining({
            fields: ["value", "states"],
            states: { added: ["checked"], removed: [] },
          }),
        );
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

describe("CLI", () => {
  it(
    "a click that quits the app: `the app exited` and `axsnap apps` as the next step, which works; --json says exited",
    async () => {
      const app = await startCloser();
      try {
        const snap = await cli(["snapshot", "--app", String(app.pid)]);
        const ref = `@${snapshotIdIn(snap)}:e${indexIn(snap, /^\d+ push button Quit app$/)}`;
        const text = await cli(["click", ref]);
        console.log(`CLI quit reply:\n${text}`);
        expect(text).toMatch(new RegExp(`^the app exited: ${CLOSER} \\(pid ${app.pid}\\)$`, "m"));
        expect(text).toMatch(/^closed: window "axsnap closer test"/m);
        expect(text).toMatch(/^no fresh snapshot: the app exited; `axsnap apps` lists the apps that run/m);
        expect(text).not.toMatch(/axsnap snapshot/);
        // A listing taken while it quit saw its bare X11 window: nothing opened.
        expect(text).not.toMatch(/^opened:/m);
        expect(text).not.toMatch(RAW_DBUS);
        const apps = await cli(["apps"]);
        expect(apps).not.toContain(`pid ${app.pid}`);
      } finally {
        await app.stop();
      }
      const again = await startCloser();
      try {
        const snap = await cli(["snapshot", "--app", String(again.pid)]);
        const ref = `@${snapshotIdIn(snap)}:e${indexIn(snap, /^\d+ push button Quit app$/)}`;
        const r = await runCliJson(["click", ref], { XDG_STATE_HOME: state });
        expect(r.code).toBe(0);
        expect(r.env.data.exited).toEqual({ name: CLOSER, pid: again.pid });
        expect(r.env.data.notes.join("\n")).not.toMatch(RAW_DBUS);
      } finally {
        await again.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a check box: `[changed: value, states +checked]`",
    async () => {
      const app = await startCloser();
      try {
        const snap = await cli(["snapshot", "--app", String(app.pid)]);
        const ref = `@${snapshotIdIn(snap)}:e${indexIn(snap, /^\d+ check box Remember me, Value: off$/)}`;
        const text = await cli(["click", ref]);
        expect(text).toMatch(
          /^\t*\d+ check box Remember me, Value: on \[changed: value, states \+checked\]$/m,
        );
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
