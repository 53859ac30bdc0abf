/**
 * Apps with no accessibility tree at all (issue 20): xterm, Tk's wish and
 * xmessage never register with AT-SPI. axsnap finds them through X11 (their
 * top-level windows; the pid from _NET_WM_PID or, where the client does not
 * set it, from the X server's X-Resource record), lists them marked noTree,
 * snapshots them as their window, and sends pointer and key input to them
 * through the same observed-window checks as any app.
 * The desktop with no accessibility service at all is in
 * x11-bare.test.ts (its own process: the addon keeps its display).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, listApps, listWindows, type Session } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf, useMcpClients } from "../support/mcp.js";
import { decodePng, nonBlank } from "../support/png.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 60_000;
let desktop: Desktop;
let session: Session;
let xterm: App;
let xterm2: App;
let tk: App;
let xmsg: App;
let pressedFile: string;
const mcpClient = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  pressedFile = path.join(desktop.tmpDir, "tk-pressed");
  tk = await startApp(desktop, "wish", ["test/apps/tk-app.tcl", pressedFile], { windowClass: "Tk-app.tcl" });
  xterm = await startApp(
    desktop,
    "xterm",
    ["-title", "axsnap xterm one", "-geometry", "60x10+400+20", "-e", "sh"],
    { windowClass: "XTerm" },
  );
  xterm2 = await startApp(
    desktop,
    "xterm",
    ["-title", "axsnap xterm two", "-geometry", "60x10+400+400", "-hold", "-e", "echo hello"],
    { windowClass: "XTerm" },
  );
  xmsg = await startApp(desktop, "xmessage", ["-geometry", "+20+400", "Hello from xmessage"], {
    windowClass: "Xmessage",
  });
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

describe("X11 clients with no accessibility tree", () => {
  it(
    "lists xterm, wish and xmessage with the pid of the spawned process, marked noTree",
    async () => {
      const apps = await listApps();
      for (const [app, name, alias] of [
        [tk, "Tk-app.tcl", "wish"],
        [xterm, "XTerm", "xterm"],
        [xmsg, "Xmessage", "xmessage"],
      ] as const) {
        const found = apps.filter((a) => a.pid === app.pid);
        expect(found, `${name} in ${JSON.stringify(apps)}`).toHaveLength(1);
        expect(found[0]).toMatchObject({ name, bundleId: alias, pid: app.pid, noTree: true });
      }
      // Two xterm processes are two apps.
      expect(
        apps
          .filter((a) => a.name === "XTerm")
          .map((a) => a.pid)
          .sort(),
      ).toEqual([xterm.pid, xterm2.pid].sort());
    },
    TIMEOUT,
  );

  it(
    "axsnap apps says which apps have no accessibility tree, in its text and its --json",
    async () => {
      const r = await runCli(["apps"]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.split("\n");
      for (const [app, name] of [
        [tk, "Tk-app.tcl"],
        [xterm, "XTerm"],
        [xmsg, "Xmessage"],
      ] as const)
        expect(lines).toContain(`${name}\tpid ${app.pid}\t(no accessibility tree)`);
      const j = await runCliJson(["apps"]);
      expect(j.env.ok, j.stderr).toBe(true);
      expect(j.env.data.apps).toContainEqual({
        name: "Xmessage",
        bundleId: "xmessage",
        pid: xmsg.pid,
        noTree: true,
      });
    },
    TIMEOUT,
  );

  it(
    "MCP list_apps marks them noTree, and says in its description what that means",
    async () => {
      const client = await mcpClient(session);
      const tool = (await client.listTools()).tools.find((t) => t.name === "list_apps");
      expect(tool?.description).toMatch(/noTree/);
      const r = await client.callTool({ name: "list_apps", arguments: {} });
      const apps = (r.structuredContent as { apps: { pid: number; noTree?: boolean }[] }).apps;
      expect(apps.find((a) => a.pid === xmsg.pid)).toMatchObject({ name: "Xmessage", noTree: true });
      expect(JSON.parse(textOf(r as Parameters<typeof textOf>[0]))).toEqual(apps);
    },
    TIMEOUT,
  );

  it(
    "snapshots an app found by name or pid as its window: line 0 with title and frame, the note, a screenshot",
    async () => {
      const byName = await session.snapshot({ app: "xmessage" });
      expect(byName.app.pid).toBe(xmsg.pid);
      const byAlias = await session.snapshot({ app: "wish" });
      expect(byAlias.app.pid).toBe(tk.pid);
      expect(byAlias.text).toMatch(/^0 frame axsnap tk test/m);
      expect(byAlias.window).toMatchObject({
        title: "axsnap tk test",
        frame: { x: 20, y: 20, w: 320, h: 200 },
      });
      // Beyond line 0, only the text of its pixels (issue 20): the tree is thin, so auto reads it.
      expect(byAlias.records.slice(1).every((r) => r.ocr !== undefined)).toBe(true);
      // The button's label and the status label, each whole, each where Tk placed it.
      expect(byAlias.records.slice(1).map((r) => r.title)).toEqual(["Press me", "not pressed"]);
      const inside = (f: { x: number; y: number; w: number; h: number }, r: typeof f) =>
        f.x >= r.x && f.y >= r.y && f.x + f.w <= r.x + r.w && f.y + f.h <= r.y + r.h;
      // The button is placed at (20, 20) 140x50, the label at (20, 100) 200x30 (test/apps/tk-app.tcl).
      expect(inside(byAlias.records[1]!.frame!, { x: 20, y: 20, w: 140, h: 50 })).toBe(true);
      expect(inside(byAlias.records[2]!.frame!, { x: 20, y: 100, w: 200, h: 30 })).toBe(true);
      // Its text spans both words: centred on the button (the widget centres its label), not on "me".
      const press = byAlias.records[1]!.frame!;
      expect(Math.abs(press.x + press.w / 2 - 90)).toBeLessThanOrEqual(4);
      // Record frames are window-relative: line 0 is the whole window.
      expect(byAlias.records[0]!.frame).toEqual({ x: 0, y: 0, w: 320, h: 200 });
      expect(byAlias.text).toContain("Tk-app.tcl has no accessibility tree: only its window (X11 0x");
      expect(byAlias.screenshot).toBeDefined();
      expect(nonBlank(decodePng(byAlias.screenshot!.data))).toBe(true);

      const byPid = await session.snapshot({ app: xterm2.pid });
      expect(byPid.text).toMatch(/^0 frame axsnap xterm two/m);
      expect(byPid.app).toMatchObject({ name: "XTerm", pid: xterm2.pid, noTree: true });
      expect(nonBlank(decodePng(byPid.screenshot!.data))).toBe(true);
      // Ambiguous by class name: two xterm processes.
      await expect(session.snapshot({ app: "xterm" })).rejects.toMatchObject({ code: "AMBIGUOUS_APP" });
    },
    TIMEOUT,
  );

  it(
    "lists each top-level as a window with a stable id",
    async () => {
      const first = await listWindows(xmsg.pid);
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({ kind: "window", title: "xmessage" });
      expect(first[0]!.id).toBe(`x11:0x${xmsg.xid.slice(2).padStart(8, "0")}`);
      const again = await listWindows("xmessage");
      expect(again[0]!.id).toBe(first[0]!.id);
    },
    TIMEOUT,
  );

  it(
    "a clickAt on the Tk button's pixels reaches the app although it never set _NET_WM_PID",
    async () => {
      const snap = await session.snapshot({ app: tk.pid });
      const shot = snap.screenshot!;
      // The button is placed at (20, 20) 140x50 inside the window.
      const result = await session.clickAt(90 * shot.scale, 45 * shot.scale, { of: snap });
      expect(result).toMatchObject({ action: "clickAt", channel: "synthetic" });
      const until = Date.now() + 5000;
      while (!fs.existsSync(pressedFile) && Date.now() < until) await sleep(50);
      expect(fs.readFileSync(pressedFile, "utf8")).toBe("pressed\n");
    },
    TIMEOUT,
  );

  it(
    "a click on line 0 (the window element, no actions) is a pointer action at its centre",
    async () => {
      const snap = await session.snapshot({ app: xmsg.pid });
      const result = await session.click(`@${snap.id}:e0`);
      expect(result.channel).toBe("synthetic");
    },
    TIMEOUT,
  );

  it(
    "typeText into xterm reaches its shell",
    async () => {
      const file = path.join(desktop.tmpDir, "typed");
      await session.snapshot({ app: xterm.pid });
      await session.typeText(`echo typed > ${file}\n`);
      const until = Date.now() + 5000;
      while (!fs.existsSync(file) && Date.now() < until) await sleep(50);
      expect(fs.readFileSync(file, "utf8")).toBe("typed\n");
    },
    TIMEOUT,
  );

  it(
    "refuses input to an observed window whose app has gone, sending nothing",
    async () => {
      const other = await startApp(desktop, "xmessage", ["-geometry", "+700+400", "Going away"], {
        windowClass: "Xmessage",
      });
      const snap = await session.snapshot({ app: other.pid });
      await other.stop();
      const refusal = await session.clickAt(10, 10, { of: snap }).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(AxsnapError);
      expect(refusal).toMatchObject({ delivery: "not_delivered" });
    },
    TIMEOUT,
  );
});
