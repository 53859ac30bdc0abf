/**
 * Issue 36, frames on GNOME Wayland beyond a window's own surface: Chromium
 * as a native Wayland client (web content placed by the compositor's window
 * origin), and GTK3 menus and combo lists, each drawn on a surface of its
 * own (an xdg_popup) that AT-SPI gives no window for, whose items' AT-SPI
 * coordinates are relative to that surface. On a headless gnome-shell in
 * unsafe mode (useDesktop({ wayland: true })).
 *
 * References read independently of axsnap: the compositor's windows and
 * their types through Eval, AT-SPI actions and extents through pyatspi in
 * another process (menus are opened that way, so no input route is
 * involved), and the compositor's own pixels (org.gnome.Shell.Screenshot).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ElementRecord,
  listWindows,
  type Rect,
  type Snapshot,
  snapshot,
  type WindowListing,
} from "../../lib/index.js";
import {
  chromium,
  type Desktop,
  fileUrl,
  gtkWidgetFactory,
  shellEval,
  startApp,
} from "../../scripts/desktop.mjs";
import { useDesktop, waitFor } from "../support/linux.js";
import { decodePng } from "../support/png.js";

const TIMEOUT = 120_000;
let desktop: Desktop;

type Box = [number, number, number, number];
/** A compositor window as Eval reads it, with its MetaWindowType and transient parent (bottom to top). */
interface ShellWindow {
  id: string;
  pid: number;
  type: number;
  parent: string;
  title: string;
  frame: Box;
  buffer: Box;
  focus: boolean;
}
/** MetaWindowType DROPDOWN_MENU: what mutter makes of a Wayland xdg_popup. */
const DROPDOWN_MENU = 9;

async function shellWindows(): Promise<ShellWindow[]> {
  const script = `(() => { const d = global.display; const f = d.get_focus_window();
    return d.sort_windows_by_stacking(global.get_window_actors().map((a) => a.meta_window)).map((w) => {
      const r = w.get_frame_rect(), b = w.get_buffer_rect(), t = w.get_transient_for();
      return { id: String(w.get_id()), pid: w.get_pid(), type: w.get_window_type(), parent: t ? String(t.get_id()) : "",
        title: w.get_title() || "", frame: [r.x, r.y, r.width, r.height], buffer: [b.x, b.y, b.width, b.height],
        focus: w === f };
    }); })()`;
  const json = await shellEval(desktop, script.replace(/\s*\n\s*/g, " "));
  if (json === null) throw new Error("gnome-shell's Eval of the window list failed");
  return JSON.parse(json);
}

const rect = (r: Box) => ({ x: r[0], y: r[1], w: r[2], h: r[3] });

/** True when `f` lies inside `box` (screen space). */
function inside(f: { x: number; y: number; w: number; h: number }, box: Box): boolean {
  return f.x >= box[0] && f.y >= box[1] && f.x + f.w <= box[0] + box[2] && f.y + f.h <= box[1] + box[3];
}

/** Runs a pyatspi script in another process with the app's pid and the given words as sys.argv[1:]. */
function pyatspi(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      "/usr/bin/python3",
      ["-c", script, ...args],
      { env: process.env, timeout: 20_000 },
      (e, out, err) => (e ? reject(new Error(`${String(e)}\n${err}`)) : resolve(out)),
    ),
  );
}

const FIND = `
import pyatspi, sys, json
pid, role, name = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def find(o, d):
    for c in o:
        if c is None: continue
        if c.getRoleName() == role and c.name == name and c.getState().contains(pyatspi.STATE_SHOWING): return c
        if d < 40:
            r = find(c, d + 1)
            if r is not None: return r
    return None
target = None
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and app.get_process_id() == pid:
        target = find(app, 0)
if target is None: sys.exit(3)
`;

/** Does the element's first AT-SPI action (a menu's "click", a combo box's "press"), as a screen reader would. */
async function atspiAction(pid: number, role: string, name: string): Promise<void> {
  await pyatspi(`${FIND}\ntarget.queryAction().doAction(0)\n`, [String(pid), role, name]);
}

/** WINDOW-coordinate extents of a showing element of this role and name. */
async function atspiWindowExtents(pid: number, role: string, name: string): Promise<Box> {
  const out = await pyatspi(
    `${FIND}\ne = target.queryComponent().getExtents(pyatspi.WINDOW_COORDS)\nprint(json.dumps([e.x, e.y, e.width, e.height]))\n`,
    [String(pid), role, name],
  );
  return JSON.parse(out);
}

/** The compositor's pixels of a screen area (org.gnome.Shell.Screenshot, allowed in unsafe mode). */
async function compositorPixels(box: Box) {
  const dir = mkdtempSync(join(tmpdir(), "axsnap-wlshot-"));
  const file = join(dir, "area.png");
  try {
    await new Promise<void>((resolve, reject) =>
      execFile(
        "gdbus",
        [
          "call",
          "--session",
          "--dest",
          "org.gnome.Shell.Screenshot",
          "--object-path",
          "/org/gnome/Shell/Screenshot",
          "--method",
          "org.gnome.Shell.Screenshot.ScreenshotArea",
          ...box.map(String),
          "false",
          file,
        ],
        { env: process.env, timeout: 10_000 },
        (e, _out, err) => (e ? reject(new Error(`${String(e)}\n${err}`)) : resolve()),
      ),
    );
    return decodePng(readFileSync(file));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Raises and focuses the app's main window through the shell, and waits until it is focused. */
async function raise(pid: number): Promise<void> {
  expect(
    await shellEval(
      desktop,
      `global.get_window_actors().map(a => a.meta_window).find(w => w.get_pid() === ${pid} && w.get_window_type() === 0).activate(global.get_current_time())`,
    ),
  ).not.toBeNull();
  await waitFor(
    () => shellWindows(),
    (ws) => ws.some((w) => w.pid === pid && w.type === 0 && w.focus),
    10_000,
    `focus on pid ${pid}`,
  );
}

/** The one open menu surface of the app, transient for its main window (waits for it to be mapped). */
async function menuSurface(pid: number): Promise<{ menu: ShellWindow; main: ShellWindow }> {
  const ws = await waitFor(
    () => shellWindows(),
    (ws) => ws.filter((w) => w.pid === pid && w.type === DROPDOWN_MENU && w.frame[2] > 0).length === 1,
    10_000,
    `one open menu surface of pid ${pid}`,
  );
  const menu = ws.find((w) => w.pid === pid && w.type === DROPDOWN_MENU) as ShellWindow;
  const main = ws.find((w) => w.id === menu.parent) as ShellWindow;
  expect(main, "the menu's transient parent is listed").toBeDefined();
  return { menu, main };
}

async function noMenuSurface(pid: number): Promise<void> {
  await waitFor(
    () => shellWindows(),
    (ws) => !ws.some((w) => w.pid === pid && w.type === DROPDOWN_MENU),
    10_000,
    `no menu surface of pid ${pid}`,
  );
}

function recordsNamed(snap: Snapshot, role: string, names: string[]): ElementRecord[] {
  return names.map((name) => {
    const r = snap.records.find((x) => x.role === role && x.title === name);
    expect(r, `${role} ${name} in:\n${snap.text}`).toBeDefined();
    return r as ElementRecord;
  });
}

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true });
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
}, 30_000);

describe("GNOME Wayland: Chromium as a native Wayland client", () => {
  let pid = 0;
  beforeAll(async () => {
    pid = (await chromium(desktop, fileUrl("test/pages/placed.html"), { windowName: "axsnap placed" })).pid;
  }, TIMEOUT);

  it(
    "a page's button: its screen frame is the compositor's window origin plus its place in the page, where its pixels are",
    async () => {
      await raise(pid);
      const snap = await waitFor(
        () => snapshot({ app: pid, screenshot: false }),
        (s) => s.records.some((r) => r.role === "push button" && r.title === "Placed target"),
        20_000,
        "the page's button in the snapshot",
      );
      const shell = (await shellWindows()).find((w) => w.pid === pid && w.type === 0) as ShellWindow;
      // Chromium's AT-SPI window is its buffer (client-side shadow included): the compositor's buffer rect.
      expect(snap.window.frame).toEqual(rect(shell.buffer));
      expect(snap.window.positionUnknown).toBeUndefined();
      const [button] = recordsNamed(snap, "push button", ["Placed target"]);
      // The page's viewport in the window, read by pyatspi (WINDOW coordinates), plus the CSS position (200, 150).
      const [vx, vy] = await atspiWindowExtents(pid, "document web", "axsnap placed");
      expect(button?.screenFrame).toEqual({
        x: shell.buffer[0] + vx + 200,
        y: shell.buffer[1] + vy + 150,
        w: 120,
        h: 40,
      });
      // And there on screen: the red button's pixels, as the compositor shows them.
      const img = await compositorPixels(shell.frame);
      let minX = Number.POSITIVE_INFINITY;
      let minY = Number.POSITIVE_INFINITY;
      let maxX = -1;
      let maxY = -1;
      for (let y = 0; y < img.height; y++)
        for (let x = 0; x < img.width; x++) {
          const i = (y * img.width + x) * 4;
          if ((img.data[i] ?? 0) > 220 && (img.data[i + 1] ?? 255) < 40 && (img.data[i + 2] ?? 255) < 40) {
            minX = Math.min(minX, x);
            minY = Math.min(minY, y);
            maxX = Math.max(maxX, x);
            maxY = Math.max(maxY, y);
          }
        }
      expect(maxX, "red pixels of the button").toBeGreaterThan(0);
      const seen = {
        x: shell.frame[0] + minX,
        y: shell.frame[1] + minY,
        w: maxX - minX + 1,
        h: maxY - minY + 1,
      };
      const sf = button?.screenFrame as { x: number; y: number; w: number; h: number };
      for (const k of ["x", "y", "w", "h"] as const)
        expect(Math.abs(sf[k] - seen[k]), `${k}: ${JSON.stringify(seen)}`).toBeLessThanOrEqual(2);
    },
    TIMEOUT,
  );

  it(
    "listWindows: Chromium's unshown popup frames are not given the browser window's place",
    async () => {
      const listed = await listWindows(pid);
      const main = listed.filter((w) => w.title.includes("axsnap placed"));
      expect(main, JSON.stringify(listed)).toHaveLength(1);
      const shell = (await shellWindows()).find((w) => w.pid === pid && w.type === 0) as ShellWindow;
      expect(main[0]?.frame).toEqual(rect(shell.buffer));
      // Chromium keeps untitled frames for its popups (the omnibox list, bubbles) that the shell does not list
      // while they are closed: no place of theirs is known, and the browser window's is not theirs.
      for (const w of listed.filter((x) => !x.title.includes("axsnap placed"))) {
        expect(w.positionUnknown, JSON.stringify(w)).toBe(true);
        expect(w.frame.x === 0 && w.frame.y === 0, JSON.stringify(w)).toBe(true);
      }
    },
    TIMEOUT,
  );
});

describe("GNOME Wayland: GTK3 menus and combo lists on their own surfaces", () => {
  let pid = 0;
  beforeAll(async () => {
    pid = (await startApp(desktop, "/usr/bin/python3", ["test/apps/windows-app.py"])).pid;
    await waitFor(
      () => shellWindows(),
      (ws) => ws.some((w) => w.pid === pid && w.type === 0),
      15_000,
      "the test app's window",
    );
  }, TIMEOUT);

  it(
    "a menu bar's open menu: listed with its surface's frame, its items inside it, in its snapshot and the window's",
    async () => {
      await raise(pid);
      await atspiAction(pid, "menu", "File");
      const { menu, main } = await menuSurface(pid);
      expect(main.title).toBe("axsnap windows test");
      const listed = await waitFor(
        () => listWindows(pid),
        (ws) => ws.some((w) => w.kind === "menu" && w.title === "File"),
        10_000,
        "the open File menu in listWindows",
      );
      const fileMenu = listed.find((w) => w.kind === "menu" && w.title === "File") as WindowListing;
      expect(fileMenu.positionUnknown).toBeUndefined();
      expect(fileMenu.frame).toEqual(rect(menu.frame));
      // The menu's own snapshot: its items fill the menu's surface from its top left corner.
      const own = await snapshot({ app: pid, window: { title: "File" }, screenshot: false });
      const items = recordsNamed(own, "menu item", ["New note", "Open note"]);
      for (const r of items) expect(inside(r.screenFrame as Rect, menu.frame), JSON.stringify(r)).toBe(true);
      expect(items[0]?.screenFrame?.x).toBe(menu.frame[0]);
      expect(items[0]?.screenFrame?.y).toBe(menu.frame[1]);
      // The window's snapshot reaches the same items through the menu bar: the same screen frames.
      const win = await snapshot({ app: pid, window: { title: "axsnap windows test" }, screenshot: false });
      const again = recordsNamed(win, "menu item", ["New note", "Open note"]);
      expect(again.map((r) => r.screenFrame)).toEqual(items.map((r) => r.screenFrame));
      // The bar's item itself stays on the window's surface, just above the menu.
      const [bar] = recordsNamed(win, "menu", ["File"]);
      expect(inside(bar?.screenFrame as Rect, main.frame)).toBe(true);
      await atspiAction(pid, "menu item", "New note");
      await noMenuSurface(pid);
    },
    TIMEOUT,
  );

  it(
    "a combo box's open list: a popup window of the surface's size, its items inside the surface in the window's snapshot",
    async () => {
      await raise(pid);
      await atspiAction(pid, "combo box", "Red");
      const { menu } = await menuSurface(pid);
      const listed = await waitFor(
        () => listWindows(pid),
        (ws) => ws.some((w) => w.kind === "menu" && w.role === "window"),
        10_000,
        "the combo's list in listWindows",
      );
      const popup = listed.find((w) => w.kind === "menu" && w.role === "window") as WindowListing;
      expect(popup.positionUnknown).toBeUndefined();
      expect(popup.frame).toEqual(rect(menu.buffer));
      const win = await snapshot({ app: pid, window: { title: "axsnap windows test" }, screenshot: false });
      const items = recordsNamed(win, "menu item", ["Red", "Green", "Blue"]);
      for (const r of items) expect(inside(r.screenFrame as Rect, menu.frame), JSON.stringify(r)).toBe(true);
      // The combo box itself is on the window's surface.
      const combo = win.records.find((r) => r.role === "combo box");
      expect(combo?.screenFrame?.x).toBeGreaterThanOrEqual(0);
      await atspiAction(pid, "menu item", "Green");
      await noMenuSurface(pid);
    },
    TIMEOUT,
  );

  it(
    "a submenu: its surface is transient for its menu's, and its items are placed by it (window snapshot, listWindows)",
    async () => {
      const menus = (await startApp(desktop, "/usr/bin/python3", ["test/apps/menus-app.py"])).pid;
      await waitFor(
        () => shellWindows(),
        (ws) => ws.some((w) => w.pid === menus && w.type === 0),
        15_000,
        "the menus app's window",
      );
      await raise(menus);
      await atspiAction(menus, "menu", "Notes");
      const { menu: first, main } = await menuSurface(menus);
      await atspiAction(menus, "menu", "Recent");
      const ws = await waitFor(
        () => shellWindows(),
        (ws) => ws.filter((w) => w.pid === menus && w.type === DROPDOWN_MENU && w.frame[2] > 0).length === 2,
        10_000,
        "the submenu's surface",
      );
      const second = ws.find(
        (w) => w.pid === menus && w.type === DROPDOWN_MENU && w.id !== first.id,
      ) as ShellWindow;
      // The compositor's chain: window <- menu <- submenu.
      expect(first.parent).toBe(main.id);
      expect(second.parent).toBe(first.id);
      const win = await snapshot({ app: menus, window: { title: "axsnap menus test" }, screenshot: false });
      for (const r of recordsNamed(win, "menu item", ["Shopping list", "Meeting notes", "Ideas"]))
        expect(inside(r.screenFrame as Rect, second.frame), JSON.stringify(r)).toBe(true);
      for (const r of [
        ...recordsNamed(win, "menu item", ["New note"]),
        ...recordsNamed(win, "menu", ["Recent"]),
      ])
        expect(inside(r.screenFrame as Rect, first.frame), JSON.stringify(r)).toBe(true);
      const listed = await listWindows(menus);
      const notes = listed.find((w) => w.kind === "menu" && w.title === "Notes");
      const recent = listed.find((w) => w.kind === "menu" && w.title === "Recent");
      expect(notes?.frame, JSON.stringify(listed)).toEqual(rect(first.frame));
      expect(recent?.frame, JSON.stringify(listed)).toEqual(rect(second.frame));
      // The submenu's own snapshot: the same frames.
      const own = await snapshot({ app: menus, window: { title: "Recent" }, screenshot: false });
      const items = recordsNamed(own, "menu item", ["Shopping list", "Meeting notes", "Ideas"]);
      expect(items[0]?.screenFrame?.x).toBe(second.frame[0]);
      expect(items[0]?.screenFrame?.y).toBe(second.frame[1]);
      for (const r of items)
        expect(inside(r.screenFrame as Rect, second.frame), JSON.stringify(r)).toBe(true);
      await atspiAction(menus, "menu item", "Ideas");
      await noMenuSurface(menus);
    },
    TIMEOUT,
  );

  it(
    "gtk3-widget-factory: a combo box's open list, its items inside the list's surface",
    async () => {
      const factory = (await gtkWidgetFactory(desktop)).pid;
      await waitFor(
        () => shellWindows(),
        (ws) => ws.some((w) => w.pid === factory && w.type === 0),
        15_000,
        "gtk3-widget-factory's window",
      );
      await raise(factory);
      await atspiAction(factory, "combo box", "Left");
      const { menu } = await menuSurface(factory);
      const win = await snapshot({ app: factory, screenshot: false });
      // Three combo boxes offer Left, Middle and Right: the open list's items are the ones with a frame.
      const shown = win.records.filter(
        (r) => r.role === "menu item" && ["Left", "Middle", "Right"].includes(r.title ?? "") && r.screenFrame,
      );
      expect(shown.length, win.text).toBeGreaterThanOrEqual(3);
      for (const r of shown) expect(inside(r.screenFrame as Rect, menu.frame), JSON.stringify(r)).toBe(true);
      await atspiAction(factory, "menu item", "Middle");
      await noMenuSurface(factory);
    },
    TIMEOUT,
  );
});
