/**
 * Issue 36: GNOME Wayland where GNOME Shell refuses Eval, as on a user's own
 * session (gnome-shell without --unsafe-mode: useDesktop({ wayland: true,
 * unsafe: false }), scripts/desktop.mjs). No
 * API then says where a native Wayland window is, so listWindows and
 * snapshot must say the position is unknown, never print a frame that
 * passes for a screen frame, and permissions() must say why.
 */
import { execFile } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listWindows, permissions, snapshot } from "../../lib/index.js";
import { type Desktop, gtkWidgetFactory, shellEval, startApp } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { useDesktop, waitFor } from "../support/linux.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let pid = 0;

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true, unsafe: false });
  // The premise: this shell behaves as a user's session does (the desktop waited for it to own its names).
  expect(await shellEval(desktop, "1")).toBeNull();
  pid = (await gtkWidgetFactory(desktop)).pid;
  await waitFor(
    () => listWindows(pid, { deadlineMs: 5000 }),
    (ws) => ws.length > 0,
    30_000,
    "gtk3's AT-SPI window",
  );
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
}, 30_000);

describe("GNOME Wayland, Eval refused", () => {
  it(
    "permissions() says window positions are unknown and why",
    async () => {
      const p = await permissions();
      expect(p.desktop?.session).toBe("wayland");
      expect(p.desktop?.windows?.source).toBe("unknown");
      expect(p.desktop?.windows?.detail).toMatch(/refuses Eval/);
      expect(p.hint).toMatch(/screen positions of native Wayland windows are unknown/);
    },
    TIMEOUT,
  );

  it(
    "listWindows marks the position unknown: size only, at (0,0)",
    async () => {
      const ws = await listWindows(pid);
      const main = ws.find((w) => w.kind === "window");
      expect(main?.positionUnknown).toBe(true);
      expect(main?.stacking).toBeUndefined();
      expect([main?.frame.x, main?.frame.y]).toEqual([0, 0]);
      // The size is the AT-SPI window's own (GTK3: the buffer, shadow included), which is real.
      expect(main?.frame.w).toBeGreaterThan(100);
    },
    TIMEOUT,
  );

  it(
    "snapshot notes that screen positions are unknown; element frames are relative to the window",
    async () => {
      const snap = await snapshot({ app: pid, screenshot: false });
      expect(snap.window.positionUnknown).toBe(true);
      expect(snap.text).toMatch(/screen positions are unknown: GNOME Shell refuses Eval/);
      const index = indexIn(snap, /^\d+ radio button Page 2, Value: \w+$/);
      const record = snap.records.find((r) => r.index === index);
      // Window-relative and screen frames agree only because the window is placed at (0,0): nothing is shifted by a guess.
      expect(record?.frame).toEqual(record?.screenFrame);
    },
    TIMEOUT,
  );

  it(
    "an open menu is on a surface of its own: its items get no frame rather than one relative to another surface",
    async () => {
      const app = (await startApp(desktop, "/usr/bin/python3", ["test/apps/windows-app.py"])).pid;
      // Opened as a screen reader would (pyatspi, another process): no input route involved.
      const open = `
import pyatspi, sys
def find(o, d):
    for c in o:
        if c is None: continue
        if c.getRoleName() == "menu" and c.name == "File": return c
        if d < 30:
            r = find(c, d + 1)
            if r is not None: return r
for a in pyatspi.Registry.getDesktop(0):
    if a is not None and a.get_process_id() == int(sys.argv[1]):
        find(a, 0).queryAction().doAction(0)
`;
      await new Promise<void>((resolve, reject) =>
        execFile("/usr/bin/python3", ["-c", open, String(app)], { env: process.env, timeout: 20_000 }, (e) =>
          e ? reject(e) : resolve(),
        ),
      );
      const listed = await waitFor(
        () => listWindows(app),
        (ws) => ws.some((w) => w.kind === "menu" && w.title === "File"),
        10_000,
        "the open File menu in listWindows",
      );
      const menu = listed.find((w) => w.kind === "menu" && w.title === "File");
      expect(menu?.positionUnknown).toBe(true);
      const snap = await waitFor(
        () => snapshot({ app, window: { title: "axsnap windows test" }, screenshot: false }),
        (s) => s.records.some((r) => r.role === "menu item" && r.title === "New note"),
        10_000,
        "the open menu's items in the window's snapshot",
      );
      // The items' AT-SPI coordinates start at the menu's surface, whose place is unknown: no frame at all.
      for (const name of ["New note", "Open note"]) {
        const item = snap.records.find((r) => r.role === "menu item" && r.title === name);
        expect(item?.frame, JSON.stringify(item)).toBeUndefined();
        expect(item?.screenFrame, JSON.stringify(item)).toBeUndefined();
      }
      // The menu bar's item is on the window's surface: window-relative, as the rest.
      const bar = snap.records.find((r) => r.role === "menu" && r.title === "File");
      expect(bar?.frame).toEqual(bar?.screenFrame);
      expect(bar?.frame?.w).toBeGreaterThan(0);
    },
    TIMEOUT,
  );
});
