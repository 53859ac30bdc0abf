/**
 * What opened (issue 11 §3) on real apps on a headless Linux desktop (one
 * desktop for this file): listWindows and snapshot's `window` option over a
 * GTK3 app of the tests' own (test/apps/windows-app.py: a menu bar, a combo
 * box, a modal dialog, a button that spawns zenity), gtk3-widget-factory's
 * combo box, and a Chromium `<select>` (test/pages/select.html).
 *
 * Popups open after the action returns (the app maps them when it handles
 * the event), so each test polls listWindows, briefly and bounded, and says
 * so in its failure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  compareWindows,
  createSession,
  listWindows,
  type Session,
  type Snapshot,
  type WindowListing,
} from "../../lib/index.js";
import { chromium, type Desktop, fileUrl, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { indexIn as indexOf } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 60_000;
const TEST_APP = "axsnap-windows-test";

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
  await startApp(desktop, "/usr/bin/python3", ["test/apps/windows-app.py"], {
    name: TEST_APP,
    windowName: "axsnap windows test",
  });
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

function recordOf(snap: Snapshot, re: RegExp) {
  const index = indexOf(snap, re);
  const record = snap.records.find((r) => r.index === index);
  if (!record) throw new Error(`no record for index ${index}`);
  return record;
}

/** listWindows until `test` holds, every 100 ms for at most 10 s. */
async function windowsUntil(
  app: string | number,
  test: (w: WindowListing[]) => boolean,
  what: string,
): Promise<WindowListing[]> {
  const until = Date.now() + 10_000;
  let last: WindowListing[] = [];
  while (Date.now() < until) {
    last = await listWindows(app, { deadlineMs: 5000 });
    if (test(last)) return last;
    await sleep(100);
  }
  throw new Error(
    `${what} never showed in listWindows(${app}); last listing:\n${JSON.stringify(last, null, 1)}`,
  );
}

/** Snapshots (default choice) until `test` holds, bounded. */
async function snapshotUntil(
  session: Session,
  app: string | number,
  test: (s: Snapshot) => boolean,
  what: string,
): Promise<Snapshot> {
  const until = Date.now() + 10_000;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    last = await session.snapshot({ app, screenshot: false, deadlineMs: 8000 });
    if (test(last)) return last;
    await sleep(100);
  }
  throw new Error(`${what} never showed; last snapshot:\n${last?.text}`);
}

const header = (s: Snapshot) => s.text.split("\n")[1] ?? "";

describe("a GTK3 app of the tests' own", () => {
  it(
    "a combo box's list is a popup window: listed, faced by the default snapshot, an item picked by its index",
    async () => {
      const session = createSession();
      const before = await listWindows(TEST_APP);
      expect(before.map((w) => [w.index, w.title, w.kind, w.role])).toEqual([
        [0, "axsnap windows test", "window", "frame"],
      ]);
      expect(before[0]?.id).toMatch(/^\/org\/a11y\/atspi\/accessible\//);
      const main = await session.snapshot({ app: TEST_APP, screenshot: false });
      // GTK names a combo box by its chosen item: that is its value (issue 32 §6).
      await session.click(recordOf(main, /^\d+ combo box Value: Red$/), { snapshot: false });
      const open = await windowsUntil(
        TEST_APP,
        (ws) => ws.some((w) => w.kind === "menu"),
        "the combo box's list",
      );
      const { opened, closed } = compareWindows(before, open);
      expect(closed).toEqual([]);
      expect(opened).toHaveLength(1);
      expect(opened[0]).toMatchObject({
        role: "window",
        kind: "menu",
        visible: true,
        inParent: false,
        index: 1,
      });

      // The default snapshot shows the list, with its own indices, and says which window it is.
      const popup = await session.snapshot({ app: TEST_APP, screenshot: true });
      expect(header(popup)).toBe(`Window: "${TEST_APP}" (menu), App: ${TEST_APP}.`);
      expect(popup.text).toMatch(/^0 window$/m);
      expect(popup.text).toMatch(/^\t+\d+ menu item .*Blue$/m);
      expect(popup.text).not.toMatch(/Open dialog/);
      expect(popup.screenshot?.pixelWidth).toBeGreaterThan(0);
      await session.click(recordOf(popup, /^\d+ menu item .*Blue$/), { snapshot: false });
      await snapshotUntil(session, TEST_APP, (s) => /label Chosen: Blue/.test(s.text), "Chosen: Blue");
      const after = await windowsUntil(TEST_APP, (ws) => ws.length === 1, "the list closing");
      expect(compareWindows(open, after)).toEqual({ opened: [], closed: opened });
    },
    TIMEOUT,
  );

  it(
    "a menu bar's menu: listed as an open menu in its window, its items in the window's snapshot and alone with window: { id }",
    async () => {
      const session = createSession();
      const main = await session.snapshot({ app: TEST_APP, screenshot: false });
      await session.click(recordOf(main, /^\d+ menu .*File$/), { snapshot: false });
      const open = await windowsUntil(TEST_APP, (ws) => ws.some((w) => w.title === "File"), "the File menu");
      const menu = open.find((w) => w.title === "File")!;
      expect(menu).toMatchObject({ role: "menu", kind: "menu", inParent: true, visible: true, index: 1 });
      expect(menu.frame.w).toBeGreaterThan(0);

      // GTK keeps a menu bar's menu inside its window: the default snapshot shows it in place.
      const whole = await session.snapshot({ app: TEST_APP, screenshot: false });
      expect(header(whole)).toBe(`Window: "axsnap windows test", App: ${TEST_APP}.`);
      expect(whole.text).toMatch(/^\t+\d+ menu item .*New note$/m);

      // Alone, by id: its items with their own indices, captured from the popup.
      const alone = await session.snapshot({ app: TEST_APP, window: { id: menu.id }, screenshot: true });
      expect(header(alone)).toBe(`Window: "File" (menu), App: ${TEST_APP}.`);
      expect(alone.text).toMatch(/^\t1 menu item .*New note$/m);
      expect(alone.text).toMatch(/^\t2 menu item .*Open note$/m);
      expect(alone.screenshot?.pixelWidth).toBeGreaterThan(0);
      await session.click(recordOf(alone, /^\d+ menu item .*Open note$/), { snapshot: false });
      await snapshotUntil(session, TEST_APP, (s) => /label Menu: Open note/.test(s.text), "Menu: Open note");
      await windowsUntil(TEST_APP, (ws) => ws.length === 1, "the menu closing");
    },
    TIMEOUT,
  );

  it(
    "a modal dialog: listed as modal, faced by default, reached by title; closing it shows in compareWindows",
    async () => {
      const session = createSession();
      const before = await listWindows(TEST_APP);
      const main = await session.snapshot({ app: TEST_APP, screenshot: false });
      await session.click(recordOf(main, /^\d+ push button Open dialog$/), { snapshot: false });
      const open = await windowsUntil(TEST_APP, (ws) => ws.some((w) => w.kind === "dialog"), "the dialog");
      const { opened } = compareWindows(before, open);
      expect(opened.map((w) => [w.title, w.role, w.kind, w.modal])).toEqual([
        ["Note settings", "dialog", "dialog", true],
      ]);

      const faced = await session.snapshot({ app: TEST_APP, screenshot: true });
      expect(header(faced)).toBe(`Window: "Note settings" (modal dialog), App: ${TEST_APP}.`);
      expect(faced.text).toMatch(/^\t\d+ push button Close settings$/m);
      // The main window is still reachable by title while the dialog is up (a unique, case-insensitive substring).
      const behind = await session.snapshot({
        app: TEST_APP,
        window: { title: "WINDOWS TEST" },
        screenshot: false,
      });
      expect(behind.text).toMatch(/push button Open dialog/);
      const byTitle = await session.snapshot({
        app: TEST_APP,
        window: { title: "settings" },
        screenshot: false,
      });
      expect(byTitle.text).toMatch(/push button Close settings/);
      await session.click(recordOf(byTitle, /^\d+ push button Close settings$/), { snapshot: false });
      const after = await windowsUntil(TEST_APP, (ws) => ws.length === 1, "the dialog closing");
      expect(compareWindows(open, after).closed.map((w) => w.title)).toEqual(["Note settings"]);
      const back = await session.snapshot({ app: TEST_APP, screenshot: false });
      expect(back.text).toMatch(/label Dialog closed/);
    },
    TIMEOUT,
  );

  it(
    "zenity spawned by a button: a dialog of another app, reached with window: { title }",
    async () => {
      const session = createSession();
      const main = await session.snapshot({ app: TEST_APP, screenshot: false });
      await session.click(recordOf(main, /^\d+ push button Run zenity$/), { snapshot: false });
      // zenity registers with the accessibility bus a moment after it starts.
      let windows: WindowListing[] = [];
      const until = Date.now() + 15_000;
      while (Date.now() < until) {
        windows = await listWindows("zenity").catch(() => []);
        if (windows.some((w) => w.title === "Zenity note")) break;
        await sleep(200);
      }
      const note = windows.find((w) => w.title === "Zenity note");
      expect(note, `zenity's window in ${JSON.stringify(windows)}`).toBeDefined();
      const snap = await session.snapshot({
        app: "zenity",
        window: { title: "Zenity note" },
        screenshot: true,
      });
      expect(header(snap)).toMatch(/^Window: "Zenity note"/);
      expect(snap.text).toMatch(/Hello from zenity/);
      expect(snap.screenshot?.pixelWidth).toBeGreaterThan(0);
      // The same window by the id and the index listWindows gave.
      const byId = await session.snapshot({ app: "zenity", window: { id: note!.id }, screenshot: false });
      const byIndex = await session.snapshot({
        app: "zenity",
        window: { index: note!.index },
        screenshot: false,
      });
      expect(byId.text).toBe(snap.text);
      expect(byIndex.text).toBe(snap.text);
      await session.click(recordOf(snap, /^\d+ push button OK$/), { snapshot: false });
    },
    TIMEOUT,
  );
});

describe("what an action opened and closed", () => {
  it(
    "clicking a combo box says which window opened and returns that window whole; picking an item says it closed",
    async () => {
      const session = createSession();
      const main = await session.snapshot({ app: TEST_APP, screenshot: false });
      expect(main.window.kind).toBe("window");
      const open = await session.click(recordOf(main, /^\d+ combo box Value: \w+$/));
      expect(open.opened?.map((w) => w.kind)).toEqual(["menu"]);
      expect(open.closed).toEqual([]);
      expect(open.settled?.mode).toBe("quiet");
      // The user now faces the list: the fresh snapshot is of it, read whole (no diff across windows).
      expect(open.snapshot!.window.kind).toBe("menu");
      expect(open.snapshot!.window.id).toBe(open.opened![0]!.id);
      expect(open.changes).toBeUndefined();
      expect(open.text).toBe(open.snapshot!.text);
      expect(open.notes.join("\n")).toContain(
        "the app now shows a menu other than the one acted on; read it whole",
      );
      const picked = await session.click(recordOf(open.snapshot!, /^\d+ menu item .*Green$/));
      expect(picked.closed?.map((w) => w.id)).toEqual([open.opened![0]!.id]);
      expect(picked.opened).toEqual([]);
      expect(picked.snapshot!.window.id).toBe(main.window.id);
      expect(picked.snapshot!.text).toMatch(/combo box Value: Green/);
      // Back in the window: compared with the session's last snapshot of it, the one the combo box was clicked in.
      expect(picked.notes.join("\n")).toContain(`compared with snapshot ${main.id} of it`);
      // The choice is the value: the same element, its value changed.
      expect(picked.changes?.changed.map((c) => [c.line, c.fields])).toContainEqual([
        expect.stringMatching(/combo box Value: Green/),
        ["value"],
      ]);
      expect(picked.text).toBe(picked.changes!.text);
    },
    TIMEOUT,
  );

  it(
    "an action that opens nothing says so with empty lists, and diffs its window",
    async () => {
      const session = createSession();
      const main = await session.snapshot({ app: TEST_APP, screenshot: false });
      const r = await session.click(recordOf(main, /^\d+ label Chosen: /));
      expect(r.opened).toEqual([]);
      expect(r.closed).toEqual([]);
      expect(r.changes).toBeDefined();
    },
    TIMEOUT,
  );
});

describe("gtk3-widget-factory", () => {
  it(
    "a combo box's list opens as a popup: listed, shown by the default snapshot, an item picked by index",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        const session = createSession();
        const before = await listWindows(gtk.pid);
        expect(before.map((w) => w.kind)).toEqual(["window"]);
        const main = await session.snapshot({ app: gtk.pid, screenshot: false });
        // The first combo box of page 1, with an entry; its list: Donald Duck, Mickey Mouse, Jet McQuack.
        const combo = recordOf(main, /^\d+ combo box$/);
        await session.click(combo, { snapshot: false });
        const open = await windowsUntil(
          gtk.pid,
          (ws) => ws.some((w) => w.kind === "menu"),
          "the combo box's list",
        );
        expect(compareWindows(before, open).opened.map((w) => [w.role, w.kind])).toEqual([
          ["window", "menu"],
        ]);
        const popup = await session.snapshot({ app: gtk.pid, screenshot: true });
        expect(header(popup)).toMatch(/\(menu\), App: gtk3-widget-factory\.$/);
        expect(popup.text).toMatch(/^\t+\d+ menu item .*Mickey Mouse$/m);
        await session.click(recordOf(popup, /^\d+ menu item .*Mickey Mouse$/), { snapshot: false });
        await snapshotUntil(
          session,
          gtk.pid,
          (s) => /text \(settable, string\) Value: Mickey Mouse$/m.test(s.text),
          "the new combo value",
        );
        await windowsUntil(gtk.pid, (ws) => ws.length === 1, "the list closing");
      } finally {
        await gtk.stop();
      }
    },
    TIMEOUT,
  );
});

describe("gtk3-widget-factory's menu button", () => {
  it(
    "its popover is listed as an open menu in its window and reached alone with window: { id }",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        const session = createSession();
        const main = await session.snapshot({ app: gtk.pid, screenshot: false });
        await session.click(recordOf(main, /^\d+ toggle button Menu\b/), { snapshot: false });
        const open = await windowsUntil(gtk.pid, (ws) => ws.some((w) => w.role === "panel"), "the popover");
        const popover = open.find((w) => w.role === "panel")!;
        // GTK3 popovers: a MODAL "panel" among the window's children; titled after the menu button.
        expect(popover).toMatchObject({
          title: "Menu",
          kind: "menu",
          inParent: true,
          visible: true,
          index: 1,
        });
        // In place in the window's snapshot (the default keeps the window)…
        const whole = await session.snapshot({ app: gtk.pid, screenshot: false });
        expect(header(whole)).toBe('Window: "gtk3-widget-factory", App: gtk3-widget-factory.');
        expect(whole.text).toMatch(/push button About Widget Factory$/m);
        // …and alone, with its own indices and no note about being hidden.
        const alone = await session.snapshot({ app: gtk.pid, window: { id: popover.id }, screenshot: true });
        expect(header(alone)).toBe('Window: "Menu" (menu), App: gtk3-widget-factory.');
        expect(alone.text).toMatch(/^\t\d+ push button About Widget Factory$/m);
        expect(alone.text).not.toMatch(/not on screen/);
        expect(alone.screenshot?.pixelWidth).toBeGreaterThan(0);
      } finally {
        await gtk.stop();
      }
    },
    TIMEOUT,
  );
});

describe("Chromium", () => {
  it(
    "a <select>'s popup is listed as a popup window; its options are in the page's snapshot, and one picked by index",
    async () => {
      const web = await chromium(desktop, fileUrl("test/pages/select.html"), { windowName: "axsnap select" });
      try {
        const session = createSession();
        const page = await snapshotUntil(
          session,
          web.pid,
          (s) => /combo box/.test(s.text),
          "the page's <select>",
        );
        const before = await listWindows(web.pid);
        await session.click(recordOf(page, /^\d+ combo box .*Fruit/), { snapshot: false });
        const open = await windowsUntil(
          web.pid,
          (ws) => ws.some((w) => w.kind === "popup"),
          "the <select> popup",
        );
        const { opened } = compareWindows(before, open);
        expect(opened.map((w) => [w.role, w.kind, w.title, w.inParent])).toEqual([
          ["frame", "popup", "", true],
        ]);
        // Chromium's popup holds nothing: the options are in the page, under the expanded combo box.
        const snap = await snapshotUntil(
          session,
          web.pid,
          (s) => /menu item .*Cherry/.test(s.text),
          "the options",
        );
        expect(header(snap)).toBe('Window: "axsnap select - Chromium", App: Chromium.');
        expect(snap.text).toMatch(/combo box \(expanded\)/);
        await session.click(recordOf(snap, /^\d+ menu item .*Cherry/), { snapshot: false });
        await snapshotUntil(session, web.pid, (s) => /Chosen Cherry/.test(s.text), "Chosen Cherry");
        await windowsUntil(web.pid, (ws) => !ws.some((w) => w.kind === "popup"), "the popup closing");
      } finally {
        await web.stop();
      }
    },
    TIMEOUT,
  );
});
