/**
 * Issue 36: Chromium as a native Wayland client (--ozone-platform=wayland) on
 * the agent's GNOME Wayland desktop, acted on through the Mutter route, one
 * Chromium on test/pages/wayland-kit.html for the file: a pixel click on a
 * check box, typing into a field read back, and a key chord; a <select>'s
 * option chosen by index (its popup is an xdg_popup of its own, over the
 * page) and by keys; a click by index on an element with no press action
 * (pointer fallback); a drag on a slider; a scroll below the fold; OCR of a
 * <canvas>. Each result is checked through the tree afterwards, never by the
 * action's own word.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, listWindows, type Snapshot } from "../../lib/index.js";
import { chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";
import { useDesktop, waitFor } from "../support/linux.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let pid = 0;

/** A snapshot of the page's window (not its popup), without OCR unless asked. */
const page = (session: ReturnType<typeof createSession>, ocr = false) =>
  session.snapshot({ app: pid, window: { title: "axsnap kit - Chromium" }, screenshot: false, ocr });
const line = (s: Snapshot, re: RegExp) => s.text.split("\n").find((l) => re.test(l.trim()));
const indexOf = (s: Snapshot, re: RegExp) => {
  const l = line(s, re);
  if (!l) throw new Error(`no line matches ${re}:\n${s.text}`);
  return Number(/^\s*(\d+) /.exec(l)![1]);
};

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true });
  pid = (await chromium(desktop, fileUrl("test/pages/wayland-kit.html"), { windowName: "axsnap kit" })).pid;
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
}, 30_000);

describe("GNOME Wayland: Chromium through Mutter", () => {
  it(
    "clickAt on the check box's screenshot pixel checks it; typing into a field reads back; ctrl+a replaces",
    async () => {
      const session = createSession({ deadlineMs: 10_000 });
      const snap = await waitFor(
        () => session.snapshot({ app: pid, screenshot: true }),
        (s) => /check box Subscribe/.test(s.text) && s.screenshot !== undefined,
        30_000,
        "the form with a screenshot",
      );
      const box = snap.records.find((r) => r.index === indexOf(snap, /check box Subscribe/))!;
      const shot = snap.screenshot!;
      const f = box.screenFrame!;
      const clicked = await session.clickAt(
        (f.x + f.w / 2 - shot.windowOrigin.x) * shot.scale,
        (f.y + f.h / 2 - shot.windowOrigin.y) * shot.scale,
        { of: snap, snapshot: false },
      );
      expect(clicked).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      await waitFor(
        () => session.snapshot({ app: pid, screenshot: false }),
        (s) => /Value: on/.test(line(s, /check box Subscribe/) ?? ""),
        5_000,
        "the check box checked",
      );

      const now = await session.snapshot({ app: pid, screenshot: true });
      const name = indexOf(now, /^\d+ entry \(settable, string\) Name,/);
      await session.click(name, { snapshot: false });
      await session.pressKey("ctrl+a", { snapshot: false });
      const typed = await session.typeText("Grace 2!", { snapshot: false });
      expect(typed).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      await waitFor(
        () => session.snapshot({ app: pid, screenshot: false }),
        (s) => /Grace 2!/.test(s.text) && !/Ada/.test(line(s, /^\d+ entry \(settable, string\) Name,/) ?? ""),
        5_000,
        "the field reads Grace 2!",
      );
      await session.close();
    },
    TIMEOUT,
  );

  it(
    "a <select>: opened by index (its popup an xdg_popup over the page), an option clicked by index is chosen, and the popup closes",
    async () => {
      const session = createSession({ deadlineMs: 10_000 });
      const before = await page(session);
      const opened = await session.click(indexOf(before, /^\d+ combo box \(collapsed\) Fruit/), {
        snapshot: false,
      });
      // Its only action is "open", no press: the click goes by pointer through Mutter.
      expect(opened).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      const windows = await waitFor(
        () => listWindows(pid),
        // Listed as soon as Chromium makes it, its place known once the compositor has mapped it.
        (ws) => ws.some((w) => w.kind === "popup" && w.positionUnknown !== true),
        5_000,
        "the <select>'s popup, placed",
      );
      const popup = windows.find((w) => w.kind === "popup" && w.positionUnknown !== true)!;
      expect(popup.inParent).toBe(true);
      // The popup's own tree holds nothing (its snapshot is its frame alone); the options are in the page,
      // under the expanded combo box.
      const alone = await session.snapshot({
        app: pid,
        window: { id: popup.id },
        screenshot: false,
        ocr: false,
      });
      expect(alone.window.kind, alone.text).toBe("popup");
      expect(alone.text).not.toMatch(/menu item/);
      const list = await waitFor(
        () => page(session),
        (s) => /combo box \(expanded\) Fruit/.test(s.text) && /menu item .*Cherry/.test(s.text),
        5_000,
        "the options under the expanded combo box",
      );
      const cherry = list.records.find((r) => r.index === indexOf(list, /^\d+ menu item .*Cherry/))!;
      // The option is drawn on the popup's surface: its frame lies inside the popup's.
      const f = cherry.screenFrame!;
      const p = popup.frame;
      expect(
        f.x >= p.x && f.y >= p.y && f.x + f.w <= p.x + p.w && f.y + f.h <= p.y + p.h,
        JSON.stringify([f, p]),
      ).toBe(true);
      await session.click(cherry.index, { snapshot: false });
      await waitFor(
        () => page(session),
        (s) => /Chosen Cherry/.test(s.text) && /combo box \(collapsed\) Fruit, Value: Cherry/.test(s.text),
        5_000,
        "Cherry chosen",
      );
      await waitFor(
        () => listWindows(pid),
        (ws) => !ws.some((w) => w.kind === "popup"),
        5_000,
        "the popup closing",
      );
      await session.close();
    },
    TIMEOUT,
  );

  it(
    "a <select> by keys: opened by index, Down and Return choose the next option",
    async () => {
      const session = createSession({ deadlineMs: 10_000 });
      const before = await waitFor(
        () => page(session),
        (s) => /combo box \(collapsed\) Fruit, Value: Cherry/.test(s.text),
        5_000,
        "the select on Cherry",
      );
      await session.click(indexOf(before, /^\d+ combo box \(collapsed\) Fruit/), { snapshot: false });
      await waitFor(
        () => page(session),
        (s) => /combo box \(expanded\) Fruit/.test(s.text),
        5_000,
        "the select open",
      );
      await session.pressKey("Down", { snapshot: false });
      const chose = await session.pressKey("Return", { snapshot: false });
      expect(chose).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      await waitFor(
        () => page(session),
        (s) => /Chosen Damson/.test(s.text) && /combo box \(collapsed\) Fruit, Value: Damson/.test(s.text),
        5_000,
        "Damson chosen",
      );
      await session.close();
    },
    TIMEOUT,
  );

  it(
    "a click by index on an element with no press action goes by pointer through Mutter and presses it",
    async () => {
      const session = createSession({ deadlineMs: 10_000 });
      const before = await page(session);
      const tile = before.records.find((r) => r.index === indexOf(before, /^\d+ image Tile/))!;
      // Chromium offers it no press ("clickAncestor" and the context menu only): the pointer is the only way.
      expect(
        tile.actions.some((a) => /^(click|press|activate|jump|doDefault)$/i.test(a)),
        tile.actions.join(),
      ).toBe(false);
      const clicked = await session.click(tile.index, { snapshot: false });
      expect(clicked).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      expect(clicked.notes.join("\n")).toMatch(/no press action; clicked by coordinates/);
      await waitFor(
        () => page(session),
        (s) => /Tile pressed 1 times/.test(s.text),
        5_000,
        "the tile pressed once",
      );
      await session.close();
    },
    TIMEOUT,
  );

  it(
    "a drag from the slider to the text right of it moves the slider to its end",
    async () => {
      const session = createSession({ deadlineMs: 10_000 });
      const before = await page(session);
      expect(line(before, /^\d+ slider /)).toMatch(/Value: 10\b/);
      const dragged = await session.drag(
        indexOf(before, /^\d+ slider /),
        indexOf(before, /^\d+ static Loud end\b/),
        {
          snapshot: false,
        },
      );
      expect(dragged).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      await waitFor(
        () => page(session),
        (s) => /Value: 100\b/.test(line(s, /^\d+ slider /) ?? "") && /Level 100/.test(s.text),
        5_000,
        "the slider at 100",
      );
      await session.close();
    },
    TIMEOUT,
  );

  it(
    "OCR reads the words drawn on the <canvas>, as lines under it inside its frame",
    async () => {
      const session = createSession({ deadlineMs: 15_000 });
      const snap = await page(session, true);
      const canvas = snap.records.find((r) => r.role === "canvas")!;
      const ocr = snap.records.filter((r) => r.ocr !== undefined);
      expect(
        ocr.map((r) => r.title),
        snap.text,
      ).toEqual(expect.arrayContaining(["Harbor Lantern", "Copper 42"]));
      // Nested under the canvas: its line, then theirs one tab deeper.
      const block = /^(\t*)\d+ canvas\b.*\n((?:\1\t\d+ text \(ocr(?:, unsure)?\) .*\n?)+)/m.exec(snap.text);
      expect(block, snap.text).not.toBeNull();
      expect(block![2]).toMatch(/Harbor Lantern/);
      expect(block![2]).toMatch(/Copper 42/);
      const c = canvas.screenFrame!;
      for (const r of ocr.filter((r) => r.title === "Harbor Lantern" || r.title === "Copper 42")) {
        const f = r.screenFrame!;
        expect(
          f.x >= c.x && f.y >= c.y && f.x + f.w <= c.x + c.w && f.y + f.h <= c.y + c.h,
          JSON.stringify([f, c]),
        ).toBe(true);
      }
      await session.close();
    },
    TIMEOUT,
  );

  it(
    "scroll down on the page (wheel steps through Mutter) brings rows below the fold into view, and the first rows leave it",
    async () => {
      const session = createSession({ deadlineMs: 10_000 });
      const before = await page(session);
      const shown = (s: Snapshot) => /showing (\d+)-(\d+) of 120 items/.exec(line(s, /^\d+ list /) ?? "");
      expect(shown(before)?.[1], line(before, /^\d+ list /)).toBe("0");
      const scrolled = await session.scroll(indexOf(before, /^\d+ document web /), "down", 3, {
        snapshot: false,
      });
      expect(scrolled).toMatchObject({ channel: "synthetic", route: "gnome-mutter" });
      // Wheel steps over the page: rows that were below the fold come into view, the first rows leave it.
      const end0 = Number(shown(before)![2]);
      const after = await waitFor(
        () => page(session),
        (s) => Number(shown(s)?.[1] ?? 0) > 0 && Number(shown(s)?.[2] ?? 0) >= end0 + 10,
        5_000,
        "rows below the fold in view",
      );
      // The rows printed are the ones now in view (the range is 0-based): the last of them was below the fold.
      expect(after.text).toMatch(new RegExp(`list item Row ${Number(shown(after)![2]) + 1},`));
      expect(after.text).not.toMatch(/list item Row 1,/);
      await session.close();
    },
    TIMEOUT,
  );
});
