/**
 * Issue 36, windows and frames on GNOME Wayland: gtk3-widget-factory,
 * gtk4-widget-factory and a GTK3 app of the tests' own, all native Wayland
 * clients of a headless gnome-shell in unsafe mode (useDesktop({ wayland:
 * true }), scripts/desktop.mjs).
 * A Wayland client does not know where it is, so its AT-SPI extents are
 * window-relative; listWindows and snapshot must give the compositor's
 * frames and screen-space element frames. The compositor's own answers
 * (Eval from outside this process) and AT-SPI read independently (pyatspi)
 * are the reference.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSession,
  listWindows,
  permissions,
  type Snapshot,
  snapshot,
  type WindowListing,
} from "../../lib/index.js";
import {
  type CompositorWindow,
  compositorWindows,
  type Desktop,
  gtk4WidgetFactory,
  gtkWidgetFactory,
  shellEval,
  startApp,
} from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { useDesktop, waitFor } from "../support/linux.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
const pids: Record<string, number> = {};

/** A compositor window and its place in the stacking order (0 = bottom), as listWindows' `stacking` counts. */
type ShellWindow = CompositorWindow & { stack: number };

async function shellWindows(): Promise<ShellWindow[]> {
  return (await compositorWindows(desktop)).map((w, stack) => ({ ...w, stack }));
}

/** Eval of a script run for its effect: the shell must have run it (unsafe mode), not refused or failed it. */
async function evalInShell(script: string): Promise<void> {
  expect(await shellEval(desktop, script), script).not.toBeNull();
}

/** WINDOW-coordinate extents of the first element of this role and name, read by pyatspi in another process. */
function atspiWindowExtents(
  appPid: number,
  role: string,
  name: string,
): Promise<[number, number, number, number]> {
  const py = `
import pyatspi, sys, json
pid, role, name = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def walk(o, d):
    for c in o:
        if c is None: continue
        if c.getRoleName() == role and c.name == name:
            e = c.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
            print(json.dumps([e.x, e.y, e.width, e.height])); sys.exit(0)
        if d < 40: walk(c, d + 1)
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and app.get_process_id() == pid:
        for w in app: walk(w, 0)
sys.exit(3)
`;
  return new Promise((resolve, reject) =>
    execFile(
      "/usr/bin/python3",
      ["-c", py, String(appPid), role, name],
      { env: process.env, timeout: 20_000 },
      (e, out) => (e ? reject(e) : resolve(JSON.parse(out))),
    ),
  );
}

const rect = (r: [number, number, number, number]) => ({ x: r[0], y: r[1], w: r[2], h: r[3] });

async function shellWindowOf(pid: number): Promise<ShellWindow> {
  const ws = await waitFor(
    () => shellWindows(),
    (ws) => ws.filter((w) => w.pid === pid).length === 1,
    15_000,
    `one shell window of pid ${pid}`,
  );
  return ws.find((w) => w.pid === pid) as ShellWindow;
}

/** Eval: raise and focus the window of this pid, then wait until the shell says it is focused. */
async function raiseInShell(pid: number): Promise<void> {
  await evalInShell(
    `global.get_window_actors().map(a => a.meta_window).find(w => w.get_pid() === ${pid}).activate(global.get_current_time())`,
  );
  await waitFor(
    () => shellWindows(),
    (ws) => ws.find((w) => w.pid === pid)?.focus === true,
    10_000,
    `focus on pid ${pid}`,
  );
}

async function windowsOf(pid: number, test: (ws: WindowListing[]) => boolean, what: string) {
  return waitFor(() => listWindows(pid, { deadlineMs: 5000 }), test, 15_000, what);
}

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true });
  // Each is in the AT-SPI registry with a window once started.
  pids.gtk3 = (await gtkWidgetFactory(desktop)).pid;
  pids.gtk4 = (await gtk4WidgetFactory(desktop)).pid;
  // Both mapped by the shell and listed by axsnap.
  for (const name of ["gtk3", "gtk4"]) {
    const pid = pids[name] as number;
    await shellWindowOf(pid);
    await windowsOf(pid, (ws) => ws.length > 0, `${name}'s AT-SPI window`);
  }
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
}, 30_000);

describe("GNOME Wayland: windows from the compositor", () => {
  it(
    "permissions() reports a Wayland session whose windows come from gnome-shell",
    async () => {
      const p = await permissions();
      expect(p.desktop?.session).toBe("wayland");
      expect(p.desktop?.windows?.source).toBe("gnome-shell");
      expect(p.desktop?.windows?.detail).toMatch(/Eval/);
    },
    TIMEOUT,
  );

  it(
    "listWindows gives gtk3's buffer rect and gtk4's frame rect, as the compositor has them",
    async () => {
      // GTK3's AT-SPI coordinates start at the buffer (its CSD shadow), GTK4's at the frame (research §3).
      for (const [name, which] of [
        ["gtk3", "buffer"],
        ["gtk4", "frame"],
      ] as const) {
        const pid = pids[name] as number;
        const shell = await shellWindowOf(pid);
        const listed = await listWindows(pid);
        const main = listed.filter((w) => w.kind === "window");
        expect(main, JSON.stringify(listed)).toHaveLength(1);
        expect(main[0]?.positionUnknown).toBeUndefined();
        expect(main[0]?.frame, name).toEqual(rect(shell[which]));
        expect(main[0]?.stacking).toBe(shell.stack);
        expect(main[0]?.active).toBe(shell.focus);
      }
    },
    TIMEOUT,
  );

  it(
    "snapshot: a button's recorded screen frame is the compositor's origin plus its AT-SPI window coordinates",
    async () => {
      const pid = pids.gtk3 as number;
      await raiseInShell(pid);
      const shell = await shellWindowOf(pid);
      const snap = await snapshot({ app: pid, screenshot: false });
      const index = indexIn(snap, /^\d+ radio button Page 2, Value: \w+$/);
      const record = snap.records.find((r) => r.index === index);
      const [x, y, w, h] = await atspiWindowExtents(pid, "radio button", "Page 2");
      expect(record?.screenFrame).toEqual({ x: shell.buffer[0] + x, y: shell.buffer[1] + y, w, h });
      // The printed (window-relative) frame is the same point seen from the window's frame.
      expect(snap.window.frame).toEqual(rect(shell.buffer));
      expect(record?.frame).toEqual({ x, y, w, h });
      expect(snap.window.positionUnknown).toBeUndefined();
      // The button lies inside the window's visible frame on screen.
      const sf = record?.screenFrame as { x: number; y: number };
      expect(sf.x).toBeGreaterThanOrEqual(shell.frame[0]);
      expect(sf.y).toBeGreaterThanOrEqual(shell.frame[1]);
    },
    TIMEOUT,
  );

  it(
    "snapshot of GTK4: element frames start at the compositor's frame origin",
    async () => {
      const pid = pids.gtk4 as number;
      await raiseInShell(pid);
      const shell = await shellWindowOf(pid);
      const snap = await snapshot({ app: pid, screenshot: false });
      expect(snap.window.frame).toEqual(rect(shell.frame));
      const framed = snap.records.filter((r) => r.screenFrame && r.screenFrame.w > 0);
      expect(framed.length).toBeGreaterThan(5);
      // Every visible element's screen frame starts inside the window's frame (none at window-relative 0,0 off by the origin).
      const [fx, fy, fw, fh] = shell.frame;
      const outside = framed.filter(
        (r) =>
          r.screenFrame &&
          (r.screenFrame.x < fx ||
            r.screenFrame.y < fy ||
            r.screenFrame.x > fx + fw ||
            r.screenFrame.y > fy + fh),
      );
      expect(outside.map((r) => `${r.index} ${r.role} ${JSON.stringify(r.screenFrame)}`)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "two windows: stacking and focus follow the compositor, and change when the other is raised",
    async () => {
      const a = pids.gtk3 as number;
      const b = pids.gtk4 as number;
      await raiseInShell(a);
      let wa = (await listWindows(a)).find((w) => w.kind === "window") as WindowListing;
      let wb = (await listWindows(b)).find((w) => w.kind === "window") as WindowListing;
      expect([wa.active, wb.active]).toEqual([true, false]);
      expect(wa.stacking).toBeGreaterThan(wb.stacking as number);
      await raiseInShell(b);
      wa = (await listWindows(a)).find((w) => w.kind === "window") as WindowListing;
      wb = (await listWindows(b)).find((w) => w.kind === "window") as WindowListing;
      expect([wa.active, wb.active]).toEqual([false, true]);
      expect(wb.stacking).toBeGreaterThan(wa.stacking as number);
    },
    TIMEOUT,
  );

  it(
    "a minimized window is brought back by the compositor when a snapshot needs it (recovery: raise)",
    async () => {
      const pid = pids.gtk3 as number;
      await evalInShell(
        `global.get_window_actors().map(a => a.meta_window).find(w => w.get_pid() === ${pid}).minimize()`,
      );
      await windowsOf(
        pid,
        (ws) => ws.some((w) => w.kind === "window" && w.minimized),
        "gtk3 minimized in listWindows",
      );
      const snap = await snapshot({ app: pid, screenshot: false });
      expect(snap.text).toMatch(/the window was recovered \(raise\)/);
      const shell = await shellWindowOf(pid);
      expect(shell.minimized).toBe(false);
      expect(shell.focus).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "a dialog opened by an action appears in listWindows with the compositor's frame",
    async () => {
      const { pid } = await startApp(desktop, "/usr/bin/python3", ["test/apps/windows-app.py"]);
      await shellWindowOf(pid);
      await windowsOf(pid, (ws) => ws.length === 1, "the test app's window");
      const session = createSession();
      const main: Snapshot = await session.snapshot({ app: pid, screenshot: false });
      // Its AT-SPI action: a GTK3 push button's click goes by pointer first (issue 32), which is the input route's part.
      await session.performAction(indexIn(main, /^\d+ push button Open dialog$/), "click", {
        snapshot: false,
      });
      // Until the shell has mapped it, the dialog is listed with its position unknown (never a guess).
      const listed = await windowsOf(
        pid,
        (ws) => ws.some((w) => w.kind === "dialog" && w.positionUnknown === undefined),
        "the dialog, placed",
      );
      const dialog = listed.find((w) => w.kind === "dialog") as WindowListing;
      expect(dialog.title).toBe("Note settings");
      const shellDialog = (await shellWindows()).find((w) => w.pid === pid && w.title === "Note settings");
      expect(shellDialog, "the shell lists the dialog").toBeDefined();
      const s = shellDialog as ShellWindow;
      expect([rect(s.buffer), rect(s.frame)]).toContainEqual(dialog.frame);
      expect(dialog.active).toBe(s.focus);
      expect(dialog.stacking).toBe(s.stack);
    },
    TIMEOUT,
  );
});
