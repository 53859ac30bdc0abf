/**
 * Issue 36: input at a point over an open menu on GNOME Wayland. A menu or a combo box's list is a surface
 * of its own (an xdg_popup), over the window: the live hit test before a pixel click must ask that surface's
 * elements, in its coordinates, not the window's (LinuxBackend::MenuAtPoint). On the Wayland test desktop
 * (useDesktop({ wayland: true })), gtk3-widget-factory, a GTK 3 menu bar (test/apps/windows-app.py) and
 * gtk4-widget-factory as native Wayland clients; every effect read back from a fresh snapshot, and the
 * compositor's window list (Eval) says which popup surfaces are open.
 *
 * GTK 3 menus are opened by the pointer here: one opened by an accessibility action has no pointer grab on
 * Wayland and takes no pointer input (measured: its items are not even hovered). GTK 4.8's popovers expose
 * no list items and window-relative frames that are not the popover's place: a pixel over one is refused.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, type Session } from "../../lib/index.js";
import type { App, Desktop } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { evalJs, lineOf, openApp, pixelOf, type Rect, until, valueIn } from "../support/wayland-apps.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let session: Session;

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true });
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

/** MetaWindowType DROPDOWN_MENU (9) and POPUP_MENU (10): what mutter makes of a Wayland xdg_popup. */
async function popupSurfaces(pid: number): Promise<{ id: string; frame: number[]; buffer: number[] }[]> {
  const all = (await evalJs(
    desktop,
    `global.get_window_actors().map((a) => a.meta_window).filter((w) => w.get_pid() === ${pid}).map((w) => {
       const f = w.get_frame_rect(), b = w.get_buffer_rect();
       return { id: String(w.get_id()), type: w.get_window_type(), frame: [f.x, f.y, f.width, f.height],
         buffer: [b.x, b.y, b.width, b.height] }; })`,
  )) as { id: string; type: number; frame: number[]; buffer: number[] }[];
  return all.filter((w) => (w.type === 9 || w.type === 10) && (w.frame[2] ?? 0) > 0);
}

async function closeMenus(pid: number): Promise<void> {
  await until(
    "no open menu",
    async () => {
      if ((await popupSurfaces(pid)).length === 0) return true;
      await session.pressKey("Escape", { app: pid, snapshot: false }).catch(() => undefined);
      return false;
    },
    20_000,
  );
}

function inside(f: Rect, [x, y, w, h]: number[]): boolean {
  return f.x >= x! && f.y >= y! && f.x + f.w <= x! + w! && f.y + f.h <= y! + h!;
}

describe("gtk3-widget-factory: a point over an open menu", () => {
  let gtk: App;
  beforeAll(async () => {
    gtk = await openApp(desktop, "gtk3-widget-factory");
    // The first screenshot starts the compositor's screen cast: once here, not inside a test's snapshot.
    expect((await session.snapshot({ app: gtk.pid })).screenshot).toBeDefined();
  }, TIMEOUT);
  afterEach(async () => {
    // A test that failed with a list open leaves it open: closed here (Escape), so the next starts clean.
    await closeMenus(gtk.pid);
  }, 30_000);
  afterAll(async () => {
    await gtk?.stop();
  });

  it(
    "a combo box's list opened by clickAt, in the window's snapshot: clickAt on an item's pixel (over the list's own surface) names that item and chooses it",
    async () => {
      const before = await session.snapshot({ app: gtk.pid, window: { title: "gtk3-widget-factory" } });
      const combo = before.records.find((r) => r.role === "combo box" && valueIn(before, r.index) === "Left");
      expect(combo, before.text).toBeDefined();
      const c = pixelOf(before, combo!.screenFrame!);
      // Opened by the pointer: a GTK 3 menu opened by an accessibility action has no pointer grab on Wayland and
      // takes no pointer input (measured: its items are not even hovered), so the list is opened as a user would.
      expect((await session.clickAt(c.x, c.y, { of: before, snapshot: false })).notes.join(" ")).toContain(
        `the point is on element ${combo!.index} (combo box)`,
      );
      const [surface] = await until("the list's popup surface", async () => {
        const s = await popupSurfaces(gtk.pid);
        return s.length === 1 && s;
      });
      // The window's own snapshot (not the list's): the items are reached through the combo box, placed on the list's surface.
      const snap = await session.snapshot({ app: gtk.pid, window: { title: "gtk3-widget-factory" } });
      const item = snap.records.find((r) => r.role === "menu item" && r.title === "Right" && r.screenFrame);
      expect(item, snap.text).toBeDefined();
      expect(inside(item!.screenFrame!, surface!.frame), JSON.stringify(item!.screenFrame)).toBe(true);
      const p = pixelOf(snap, item!.screenFrame!);
      const result = await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      expect(result).toMatchObject({ action: "clickAt", channel: "synthetic", route: "gnome-mutter" });
      expect(result.notes.join(" ")).toContain(`the point is on element ${item!.index} (menu item Right)`);
      await until("the list closed", async () => (await popupSurfaces(gtk.pid)).length === 0);
      await until("the combo box reads Right", async () => {
        const s = await session.snapshot({
          app: gtk.pid,
          window: { title: "gtk3-widget-factory" },
          screenshot: false,
        });
        const c = s.records.find(
          (r) => r.path.join() === combo!.path.join() && r.pathRoot === combo!.pathRoot,
        );
        return c !== undefined && valueIn(s, c.index) === "Right";
      });
    },
    TIMEOUT,
  );

  it(
    "a combo entry's list opened by clickAt on its arrow, in the list's own snapshot: clickAt on an item's pixel names it and puts it in the entry",
    async () => {
      const before = await session.snapshot({ app: gtk.pid, window: { title: "gtk3-widget-factory" } });
      const combo = before.records.find(
        (r) => r.role === "combo box" && !/disabled/.test(lineOf(before, r.index)),
      );
      expect(combo, before.text).toBeDefined();
      // Its arrow, at the right end of the combo box (the entry fills the rest).
      const f = combo!.screenFrame!;
      const c = pixelOf(before, { x: f.x + f.w - 12, y: f.y, w: 0, h: f.h });
      expect((await session.clickAt(c.x, c.y, { of: before, snapshot: false })).notes.join(" ")).toContain(
        `the point is on element ${combo!.index} (combo box)`,
      );
      const [surface] = await until("the list's popup surface", async () => {
        const s = await popupSurfaces(gtk.pid);
        return s.length === 1 && s;
      });
      // The app's snapshot faces the open list (a popup window of its own).
      const snap = await session.snapshot({ app: gtk.pid });
      expect(snap.window.kind, snap.text).toBe("menu");
      const item = snap.records.find((r) => r.role === "menu item" && r.title === "Mickey Mouse");
      expect(item, snap.text).toBeDefined();
      expect(inside(item!.screenFrame!, surface!.frame), JSON.stringify(item!.screenFrame)).toBe(true);
      const p = pixelOf(snap, item!.screenFrame!);
      const result = await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      expect(result.notes.join(" ")).toContain(
        `the point is on element ${item!.index} (menu item Mickey Mouse)`,
      );
      await until("the list closed", async () => (await popupSurfaces(gtk.pid)).length === 0);
      await until("the entry reads Mickey Mouse", async () => {
        const s = await session.snapshot({
          app: gtk.pid,
          window: { title: "gtk3-widget-factory" },
          screenshot: false,
        });
        return s.records.some((r) => r.role === "text" && valueIn(s, r.index) === "Mickey Mouse");
      });
    },
    TIMEOUT,
  );
});

describe("a GTK 3 menu bar (test/apps/windows-app.py): a point over its open menu", () => {
  let app: App;
  beforeAll(async () => {
    app = await openApp(desktop, "/usr/bin/python3", ["test/apps/windows-app.py"], { x: 200, y: 120 });
  }, TIMEOUT);
  afterEach(async () => {
    await closeMenus(app.pid);
  }, 30_000);
  afterAll(async () => {
    await app?.stop();
  });

  it(
    "File opened by clickAt; in the window's snapshot, clickAt on an item's pixel (over the menu's surface) names it and activates it",
    async () => {
      const title = "axsnap windows test";
      const before = await session.snapshot({ app: app.pid, window: { title } });
      const file = before.records.find((r) => r.role === "menu" && r.title === "File");
      expect(file, before.text).toBeDefined();
      const c = pixelOf(before, file!.screenFrame!);
      expect((await session.clickAt(c.x, c.y, { of: before, snapshot: false })).notes.join(" ")).toContain(
        `the point is on element ${file!.index} (menu File)`,
      );
      const [surface] = await until("the menu's popup surface", async () => {
        const s = await popupSurfaces(app.pid);
        return s.length === 1 && s;
      });
      // The window's snapshot reaches the items through the menu bar; they are drawn on the menu's surface.
      const snap = await session.snapshot({ app: app.pid, window: { title } });
      const item = snap.records.find((r) => r.role === "menu item" && r.title === "Open note");
      expect(item, snap.text).toBeDefined();
      expect(inside(item!.screenFrame!, surface!.frame), JSON.stringify(item!.screenFrame)).toBe(true);
      const p = pixelOf(snap, item!.screenFrame!);
      const result = await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      expect(result).toMatchObject({ action: "clickAt", channel: "synthetic", route: "gnome-mutter" });
      expect(result.notes.join(" ")).toContain(
        `the point is on element ${item!.index} (menu item Open note)`,
      );
      await until("the menu closed", async () => (await popupSurfaces(app.pid)).length === 0);
      await until("the status label reads Menu: Open note", async () => {
        const s = await session.snapshot({ app: app.pid, window: { title }, screenshot: false });
        return s.records.some((r) => r.role === "label" && r.title === "Menu: Open note");
      });
    },
    TIMEOUT,
  );
});

describe("gtk4-widget-factory: popovers and drop-downs", () => {
  let gtk4: App;
  beforeAll(async () => {
    gtk4 = await openApp(desktop, "gtk4-widget-factory", [], { x: 60, y: 60 });
    expect((await session.snapshot({ app: gtk4.pid })).screenshot).toBeDefined();
  }, TIMEOUT);
  afterEach(async () => {
    await closeMenus(gtk4.pid);
  }, 30_000);
  afterAll(async () => {
    await gtk4?.stop();
  });

  it(
    "a drop-down's popover opened by index: the snapshot says its frames are not known; a pixel over it is refused, nothing sent",
    async () => {
      const snap = await session.snapshot({ app: gtk4.pid, screenshot: false });
      const combos = snap.records.filter(
        (r) => r.role === "combo box" && !/disabled/.test(lineOf(snap, r.index)),
      );
      // The second drop-down (no entry): its button opens a popover on a surface of its own.
      const button = snap.records.find((r) => r.role === "push button" && r.index === combos[1]!.index + 1);
      expect(button, snap.text).toBeDefined();
      expect(await session.click(button!.index, { snapshot: false })).toMatchObject({ channel: "semantic" });
      const [surface] = await until("the popover's surface", async () => {
        const s = await popupSurfaces(gtk4.pid);
        return s.length === 1 && s;
      });
      const open = await session.snapshot({ app: gtk4.pid });
      const [x, y, w, h] = surface!.frame as [number, number, number, number];
      // GTK 4 measures the popover's content from a place of its own: the snapshot says its frames are not known.
      expect(snap.text).not.toMatch(/GTK 4 popover/);
      expect(open.text).toContain(
        `a GTK 4 popover or menu is open on a surface of its own at ${x},${y} ${w}x${h}: the frames of its elements are not known`,
      );
      const p = pixelOf(open, { x, y, w, h });
      const e = await session.clickAt(p.x, p.y, { of: open, snapshot: false }).catch((err: unknown) => err);
      expect(e).toBeInstanceOf(AxsnapError);
      expect((e as AxsnapError).message).toMatch(
        /an open menu of the app is over that point.*nothing was sent/,
      );
      // Nothing was sent: the popover is still open.
      expect(await popupSurfaces(gtk4.pid)).toHaveLength(1);
    },
    TIMEOUT,
  );
});
