/**
 * Issue 36: a user's own GNOME Wayland session, where GNOME Shell refuses
 * Eval (gnome-shell without --unsafe-mode: useDesktop({ wayland: true,
 * unsafe: false })). No window has a known place there, but Mutter's
 * ScreenCast and RemoteDesktop still answer: the focused window is captured
 * through a stream of the focused window (RecordWindow) and takes pointer
 * input on that stream in its own coordinates, and keys while it has focus.
 * Which window has focus comes from AT-SPI (the toolkit's active state). A
 * window that is not focused is refused, with nothing sent.
 *
 * Nothing here may use Eval (the shell refuses it): the Overview the shell
 * starts with is closed with Escape through RemoteDesktop, as a user would
 * press it; focus moves by opening and closing windows. Every effect is read
 * back through AT-SPI; the pixels are checked against what AT-SPI says is
 * where (an entry's white, a toggle that changes where it is).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AxsnapError,
  createSession,
  listWindows,
  permissions,
  type Session,
  type Snapshot,
} from "../../lib/index.js";
import { waylandRoutesOf } from "../../lib/observe/linux-checks.js";
import {
  type App,
  type Desktop,
  gtk4WidgetFactory,
  gtkWidgetFactory,
  shellEval,
} from "../../scripts/desktop.mjs";
import { runCli } from "../support/cli.js";
import { useDesktop, waitFor } from "../support/linux.js";
import { decodePng } from "../support/png.js";
import { lineOf, pixelOf, recordOf } from "../support/wayland-apps.js";

const TIMEOUT = 120_000;
const run = promisify(execFile);
const GTK = "gtk3-widget-factory";

let desktop: Desktop;
let gtk: App;
let session: Session;

/** Escape through a RemoteDesktop session of its own (closes the Overview the shell starts with; no Eval). */
async function pressEscapeAsUser(): Promise<void> {
  const py = `
import time
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
RD = 'org.gnome.Mutter.RemoteDesktop'
path = bus.call_sync(RD, '/org/gnome/Mutter/RemoteDesktop', RD, 'CreateSession', None, GLib.VariantType('(o)'), 0, 5000, None)[0]
bus.call_sync(RD, path, RD + '.Session', 'Start', None, None, 0, 5000, None)
time.sleep(0.5)
for sym in (0xffe1, 0xff1b):
    for down in (True, False):
        bus.call_sync(RD, path, RD + '.Session', 'NotifyKeyboardKeysym', GLib.Variant('(ub)', (sym, down)), None, 0, 5000, None)
time.sleep(0.3)
bus.call_sync(RD, path, RD + '.Session', 'Stop', None, None, 0, 5000, None)
`;
  await run("/usr/bin/python3", ["-c", py], { env: desktop.env, timeout: 15_000 });
}

/**
 * Waits until gtk3's window is (or is not) the one the compositor records as focused: its snapshot has a
 * screenshot. (AT-SPI cannot say: GTK3 on Wayland marks neither its window active nor its entry focused.)
 */
async function untilGtkFocused(focused: boolean, what: string): Promise<Snapshot> {
  return waitFor(
    () => session.snapshot({ app: GTK }),
    (s) => (s.screenshot !== undefined) === focused,
    30_000,
    what,
  );
}

/** Mean RGB of the screenshot inside a frame (inset by `inset` px). */
function meanIn(snap: Snapshot, frame: { x: number; y: number; w: number; h: number }, inset = 4) {
  const png = decodePng(snap.screenshot!.data);
  const k = png.width / snap.window.frame.w;
  let r = 0,
    g = 0,
    b = 0,
    n = 0;
  for (let y = Math.round((frame.y + inset) * k); y < Math.round((frame.y + frame.h - inset) * k); y++)
    for (let x = Math.round((frame.x + inset) * k); x < Math.round((frame.x + frame.w - inset) * k); x++) {
      const a = (y * png.width + x) * 4;
      r += png.data[a]!;
      g += png.data[a + 1]!;
      b += png.data[a + 2]!;
      n++;
    }
  return { r: r / n, g: g / n, b: b / n, png };
}

const toggleValue = async () => {
  const s = await session.snapshot({ app: GTK, screenshot: false });
  return /Value: (on|off)$/.exec(lineOf(s, recordOf(s, "toggle button", "togglebutton").index))?.[1];
};

async function entryText(): Promise<string> {
  const snap = await session.snapshot({ app: GTK, screenshot: false });
  const entry = snap.records.find((r) => r.role === "text" && r.settable)!;
  return /Value: (.*)$/.exec(lineOf(snap, entry.index))?.[1] ?? "";
}

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true, unsafe: false });
  expect(await shellEval(desktop, "1")).toBeNull();
  // The shell starts with its Overview up, where no window has focus: a user presses Escape, then starts the app,
  // whose window takes the focus when it maps.
  await pressEscapeAsUser();
  gtk = await gtkWidgetFactory(desktop);
  await waitFor(
    () => listWindows(gtk.pid, { deadlineMs: 5000 }),
    (ws) => ws.length > 0,
    30_000,
    "gtk3's AT-SPI window",
  );
  session = createSession();
  await untilGtkFocused(true, "gtk3's window focused (captured through the focused window's stream)");
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
}, 30_000);

describe("a user's GNOME Wayland session (Eval refused): the focused window through Mutter, window-relative", () => {
  it(
    "permissions() says capture and input reach the focused window only, window-relative, and what gives more",
    async () => {
      const p = await permissions();
      expect(p.desktop?.windows?.source).toBe("unknown");
      expect(p.desktop?.routes?.capture).toBe("focused-window");
      expect(p.desktop?.routes?.input).toBe("focused-window");
      expect(p.desktop?.routes?.detail).toMatch(/focused window/);
      expect(p.hint).toMatch(/focused window/);
      expect(p.hint).toMatch(/desktop start NAME --wayland/);
      // The CLI door prints the same, in its own process (no warm daemon: it must read this session).
      const cli = await runCli(["permissions"], { AXSNAP_DAEMON: "off" });
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(
        /^capture focused-window, input focused-window: .*focused native Wayland window only/m,
      );
      // The other answers, for the sessions that give them (pure).
      expect(waylandRoutesOf("gnome-shell", true).capture).toBe("screen");
      expect(waylandRoutesOf("unknown", false)).toMatchObject({ capture: "none", input: "none" });
    },
    TIMEOUT,
  );

  it(
    "snapshot with a screenshot of the focused window: window-relative, the PNG is the window",
    async () => {
      const t0 = performance.now();
      const snap = await session.snapshot({ app: GTK });
      const ms = performance.now() - t0;
      expect(snap.window.positionUnknown).toBe(true);
      expect(snap.text).toMatch(/screen positions are unknown: GNOME Shell refuses Eval/);
      expect(snap.text).toMatch(/only while it is the focused window/);
      const shot = snap.screenshot;
      expect(shot, snap.text.slice(0, 600)).toBeDefined();
      // Window-relative: the screenshot starts at the window's (0,0) and is the AT-SPI window (GTK3: the buffer).
      expect(shot!.windowOrigin).toEqual({ x: 0, y: 0 });
      expect(snap.window.frame.x).toBe(0);
      const png = decodePng(shot!.data);
      // The whole AT-SPI window (GTK3: the buffer), scaled to the size budget as on X11.
      expect(Math.abs(png.width / snap.window.frame.w - png.height / snap.window.frame.h)).toBeLessThan(0.01);
      expect(shot!.pixelWidth).toBe(png.width);
      // Pixels where AT-SPI says things are: the entry's inside is white (Adwaita), the buffer's corner is the
      // client-side shadow over nothing (dark), and the window's content is not one flat colour.
      const entry = snap.records.find((r) => r.role === "text" && r.settable)!;
      const inEntry = meanIn(snap, entry.frame!);
      expect(Math.min(inEntry.r, inEntry.g, inEntry.b), JSON.stringify(entry.frame)).toBeGreaterThan(235);
      const corner = (2 * png.width + 2) * 4;
      console.log(`the buffer's corner (client-side shadow): ${[...png.data.slice(corner, corner + 3)]}`);
      const toggle = recordOf(snap, "toggle button", "togglebutton");
      const inToggle = meanIn(snap, toggle.frame!);
      expect(Math.abs(inToggle.r - inEntry.r) + Math.abs(inToggle.g - inEntry.g)).toBeGreaterThan(3);
      console.log(`user session: snapshot + screenshot ${ms.toFixed(0)} ms (${png.width}x${png.height})`);
    },
    TIMEOUT,
  );

  it(
    "clickAt on a toggle's pixel toggles it (pointer on the window's stream), and the screenshot shows the change",
    async () => {
      const snap = await session.snapshot({ app: GTK });
      const toggle = recordOf(snap, "toggle button", "togglebutton");
      expect(lineOf(snap, toggle.index)).toMatch(/Value: off$/);
      const before = meanIn(snap, toggle.frame!);
      const p = pixelOf(snap, toggle.frame!);
      const t0 = performance.now();
      const result = await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      const sentMs = performance.now() - t0;
      expect(result).toMatchObject({ action: "clickAt", channel: "synthetic" });
      await waitFor(toggleValue, (v) => v === "on", 10_000, "the toggle on");
      console.log(
        `user session clickAt: ${sentMs.toFixed(0)} ms to return, ${(performance.now() - t0).toFixed(0)} ms until AT-SPI shows it on`,
      );
      const after = await session.snapshot({ app: GTK });
      const now = meanIn(after, recordOf(after, "toggle button", "togglebutton").frame!);
      // A checked toggle is drawn pressed (darker): the pixels at its AT-SPI frame changed.
      expect(
        Math.abs(now.r - before.r) + Math.abs(now.g - before.g) + Math.abs(now.b - before.b),
      ).toBeGreaterThan(6);
    },
    TIMEOUT,
  );

  it(
    "typeText into an entry (clicked first, then ctrl+a) reads back through AT-SPI",
    async () => {
      const snap = await session.snapshot({ app: GTK });
      const entry = snap.records.find((r) => r.role === "text" && r.settable)!;
      const p = pixelOf(snap, entry.frame!);
      // GTK3 on Wayland marks no element FOCUSED, so the click's effect is read from the typing itself.
      await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      await session.snapshot({ app: GTK, screenshot: false });
      await session.pressKey("ctrl+a");
      const typed = await session.typeText("User 1!");
      expect(typed).toMatchObject({ action: "typeText", channel: "synthetic" });
      await waitFor(entryText, (t) => t === "User 1!", 10_000, "the text typed");
    },
    TIMEOUT,
  );

  it(
    "a GTK4 window (AT-SPI measures from its frame, inside the shadow) is focused but its capture is refused: the offset is the shell's secret",
    async () => {
      const gtk4 = await gtk4WidgetFactory(desktop);
      try {
        await untilGtkFocused(false, "gtk3 no longer focused (gtk4 opened)");
        const snap = await session.snapshot({ app: gtk4.pid });
        expect(snap.screenshot).toBeUndefined();
        expect(snap.text).toMatch(/no screenshot: .*accessible frame is \d+x\d+/);
      } finally {
        await gtk4.stop();
      }
      await untilGtkFocused(true, "gtk3 focused again once gtk4 closed");
    },
    TIMEOUT,
  );

  it(
    "a window that is not focused: capture, click, keys and typing refused with the hint to bring it to the front; nothing sent",
    async () => {
      const snap = await session.snapshot({ app: GTK });
      const toggle = recordOf(snap, "toggle button", "togglebutton");
      expect(lineOf(snap, toggle.index)).toMatch(/Value: on$/);
      const p = pixelOf(snap, toggle.frame!);
      const text = await entryText();
      // Another window takes focus (a new GTK4 window is focused when it maps).
      const other = await gtk4WidgetFactory(desktop);
      try {
        await untilGtkFocused(false, "gtk3 no longer focused");
        const refused = (
          e: unknown,
          message = /another window has keyboard focus/,
          hint = /bring the window to the front/,
        ) => {
          expect(e).toBeInstanceOf(AxsnapError);
          const err = e as AxsnapError;
          expect(err.message).toMatch(message);
          expect(err.hint).toMatch(hint);
          expect(err.delivery ?? "not_delivered").toBe("not_delivered");
        };
        const unfocused = await session.snapshot({ app: GTK });
        expect(unfocused.screenshot).toBeUndefined();
        expect(unfocused.text).toMatch(/no screenshot: .*another window has keyboard focus/);
        refused(await session.clickAt(p.x, p.y, { of: snap, snapshot: false }).catch((e: unknown) => e));
        refused(await session.pressKey("ctrl+a").catch((e: unknown) => e));
        // Typing stops earlier, in the library's own guard: GTK3 marks no element focused once its window lost focus.
        refused(
          await session.typeText("x").catch((e: unknown) => e),
          /another window has keyboard focus|no element of the app has keyboard focus/,
          /bring the window to the front|click the field you mean first/,
        );
        expect(await toggleValue()).toBe("on");
        expect(await entryText()).toBe(text);
      } finally {
        await other.stop();
      }
    },
    TIMEOUT,
  );
});
