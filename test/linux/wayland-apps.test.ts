/**
 * Issue 36's test list on real native Wayland clients (the Wayland test desktop: headless gnome-shell in
 * unsafe mode, PipeWire, WirePlumber; GDK_BACKEND=wayland): gtk3-widget-factory, gtk4-widget-factory and a
 * GTK3 window whose text is only drawn (test/apps/drawn-text.py). Every effect is read back through AT-SPI
 * (fresh snapshots) or the compositor (its window list and its own image of a window, through Eval); the
 * screenshot is checked pixel by pixel against the compositor's image, element by element.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, type Session, type Snapshot } from "../../lib/index.js";
import { listWindows } from "../../lib/observe/desktop.js";
import type { App, Desktop } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { decodePng } from "../support/png.js";
import {
  actorImage,
  agreement,
  evalJs,
  lineOf,
  openApp,
  pixelOf,
  pixelRect,
  placeWindow,
  type Rect,
  recordOf,
  spread,
  until,
  valueIn,
  windowsOfPid,
} from "../support/wayland-apps.js";

const TIMEOUT = 90_000;
const GTK3 = "gtk3-widget-factory";

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

/** A fresh snapshot of an app without a screenshot. */
const fresh = (app: number) => session.snapshot({ app, screenshot: false });

/** The printed value of the element at the same tree path as `r` (indices shift when GTK 4's tree changes). */
function valueAt(s: Snapshot, r: { path: readonly number[]; pathRoot?: string }): string | undefined {
  const same = s.records.find((x) => x.pathRoot === r.pathRoot && x.path.join() === r.path.join());
  return same && valueIn(s, same.index);
}

/** Whether a screen frame lies inside a compositor rect [x, y, w, h]. */
function inside(f: Rect, [x, y, w, h]: number[]): boolean {
  return f.x >= x! && f.y >= y! && f.x + f.w <= x! + w! && f.y + f.h <= y! + h!;
}

describe("gtk3-widget-factory as a native Wayland client", () => {
  let gtk: App;
  beforeAll(async () => {
    gtk = await openApp(desktop, GTK3);
  }, TIMEOUT);
  afterAll(async () => {
    await gtk?.stop();
  });

  it(
    "snapshot with screenshot: each control's pixels are drawn (not flat) and match the compositor's image of the window there",
    async () => {
      const snap = await session.snapshot({ app: gtk.pid });
      expect(snap.screenshot, snap.text.slice(0, 400)).toBeDefined();
      const png = decodePng(snap.screenshot!.data);
      const w = (await windowsOfPid(desktop, gtk.pid))[0]!;
      const ref = await actorImage(desktop, w.id, "gtk3");
      const origin = { x: w.buffer[0]!, y: w.buffer[1]! };
      const picked = [
        recordOf(snap, "toggle button", "togglebutton"),
        recordOf(snap, "check box", "checkbutton"),
        recordOf(snap, "slider"),
        recordOf(snap, "push button", "Sans Regular"),
      ];
      const rows = picked.map((r) => {
        const f = r.screenFrame!;
        return {
          line: lineOf(snap, r.index),
          spread: spread(png, pixelRect(snap, f)),
          agree: agreement(snap, png, ref, origin, f),
        };
      });
      console.log(
        rows
          .map((r) => `${r.line}: spread ${r.spread.toFixed(1)}, agreement ${r.agree.toFixed(3)}`)
          .join("\n"),
      );
      for (const r of rows) {
        // Something is drawn there (a flat background has spread 0)…
        expect(r.spread, r.line).toBeGreaterThan(8);
        // …and it is what the compositor shows at that place of the window.
        expect(r.agree, r.line).toBeGreaterThan(0.9);
      }
      // The same control's frame shifted by its own width does not match: the frames decide, not a flat area.
      const f = picked[0]!.screenFrame!;
      expect(agreement(snap, png, ref, { x: origin.x + f.w, y: origin.y }, f)).toBeLessThan(
        rows[0]!.agree - 0.1,
      );
    },
    TIMEOUT,
  );

  it(
    "marks: the screenshot carries each printed element's label, drawn in the PNG where the unmarked one differs",
    async () => {
      const plain = await session.snapshot({ app: gtk.pid });
      const marked = await session.snapshot({ app: gtk.pid, screenshot: { marks: true } });
      const marks = marked.screenshot!.marks!;
      expect(marks.length, marked.text.slice(0, 300)).toBeGreaterThan(20);
      const a = decodePng(plain.screenshot!.data),
        b = decodePng(marked.screenshot!.data);
      expect([b.width, b.height]).toEqual([a.width, a.height]);
      // Each label's box differs from the unmarked capture, and the label sits at its element's frame.
      let differing = 0;
      for (const m of marks) {
        let d = 0;
        for (let y = m.label.y; y < m.label.y + m.label.h; y++)
          for (let x = m.label.x; x < m.label.x + m.label.w; x++) {
            const i = (y * a.width + x) * 4;
            d = Math.max(d, Math.abs(a.data[i]! - b.data[i]!), Math.abs(a.data[i + 1]! - b.data[i + 1]!));
          }
        if (d > 60) differing++;
      }
      expect(differing / marks.length).toBeGreaterThan(0.95);
      const toggle = recordOf(marked, "toggle button", "togglebutton");
      const m = marks.find((x) => x.index === toggle.index)!;
      const r = pixelRect(marked, toggle.screenFrame!);
      expect(m, `no mark for ${toggle.index}`).toBeDefined();
      expect(Math.abs(m.label.x - r.x)).toBeLessThan(r.w + m.label.w);
      expect(Math.abs(m.label.y - r.y)).toBeLessThan(r.h + m.label.h);
    },
    TIMEOUT,
  );

  it(
    "click by index, semantic: a check box is toggled by its action (channel semantic) and reads checked",
    async () => {
      const snap = await fresh(gtk.pid);
      const box = recordOf(snap, "check box", "checkbutton");
      expect(valueIn(snap, box.index)).toBe("off");
      const result = await session.click(box.index, { snapshot: false });
      expect(result).toMatchObject({ action: "click", channel: "semantic" });
      await until("the check box checked", async () => valueIn(await fresh(gtk.pid), box.index) === "on");
    },
    TIMEOUT,
  );

  it(
    "click by index, pointer: a toggle button in GTK 3 goes by the compositor's pointer (channel synthetic) and reads on",
    async () => {
      const snap = await session.snapshot({ app: gtk.pid });
      const toggle = recordOf(snap, "toggle button", "togglebutton");
      expect(valueIn(snap, toggle.index)).toBe("off");
      const result = await session.click(toggle.index, { snapshot: false });
      expect(result).toMatchObject({ action: "click", channel: "synthetic" });
      expect(result.notes.join(" ")).toMatch(/clicked with the pointer/);
      await until("the toggle on", async () => valueIn(await fresh(gtk.pid), toggle.index) === "on");
    },
    TIMEOUT,
  );

  it(
    "clickAt on a screenshot pixel: the radio button there is chosen",
    async () => {
      const snap = await session.snapshot({ app: gtk.pid });
      const radio = recordOf(snap, "radio button", "radiobutton");
      expect(valueIn(snap, radio.index)).toBe("off");
      const p = pixelOf(snap, radio.screenFrame!);
      const result = await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      expect(result).toMatchObject({ action: "clickAt", channel: "synthetic" });
      await until("the radio button on", async () => valueIn(await fresh(gtk.pid), radio.index) === "on");
    },
    TIMEOUT,
  );

  it(
    "typeText into an entry clicked by index reads back, and pressKey ctrl+a then typing replaces it",
    async () => {
      const snap = await fresh(gtk.pid);
      const entry = recordOf(snap, "text", undefined, 0);
      const entries = snap.records.filter(
        (r) => r.role === "text" && r.settable && valueIn(snap, r.index) === "entry",
      );
      const target = entries.find((r) => !/disabled/.test(lineOf(snap, r.index))) ?? entry;
      await session.click(target.index, { snapshot: false });
      await until("the entry focused", async () => (await fresh(gtk.pid)).focusedIndex === target.index);
      await session.pressKey("ctrl+a");
      expect(await session.typeText("Wayland 36")).toMatchObject({
        action: "typeText",
        channel: "synthetic",
      });
      await until("the text typed", async () => valueIn(await fresh(gtk.pid), target.index) === "Wayland 36");
      await session.pressKey("ctrl+a");
      await session.typeText("swapped");
      await until("the text replaced", async () => valueIn(await fresh(gtk.pid), target.index) === "swapped");
    },
    TIMEOUT,
  );

  it(
    "dragAt along a slider from its middle towards its end raises its value",
    async () => {
      const snap = await session.snapshot({ app: gtk.pid });
      const slider = snap.records.find(
        (r) =>
          r.role === "slider" &&
          !/disabled/.test(lineOf(snap, r.index)) &&
          r.screenFrame!.w > r.screenFrame!.h * 3,
      )!;
      expect(slider, snap.text).toBeDefined();
      const before = Number(valueIn(snap, slider.index));
      const f = slider.screenFrame!;
      const from = pixelOf(snap, f);
      const to = pixelOf(snap, { ...f, x: f.x + f.w * 0.35 });
      const result = await session.dragAt(from, to, { of: snap, snapshot: false });
      expect(result).toMatchObject({ action: "dragAt", channel: "synthetic" });
      const after = await until("the slider moved", async () => {
        const v = Number(valueIn(await fresh(gtk.pid), slider.index));
        return v !== before && { v };
      });
      console.log(`slider ${before} → ${after.v}`);
      expect(after.v).toBeGreaterThan(before);
    },
    TIMEOUT,
  );

  it(
    "a dialog opened by clicking the font button is listed, snapshotted with its own screenshot, and its frames lie in its compositor frame",
    async () => {
      const snap = await fresh(gtk.pid);
      const button = recordOf(snap, "push button", "Sans Regular");
      await session.click(button.index, { snapshot: false });
      const dialog = await until("the dialog listed", async () =>
        (await listWindows(gtk.pid)).find((w) => w.role === "dialog"),
      );
      // GTK 3's font button makes its dialog modal only when its own window is: this one is not.
      expect(dialog.modal).toBe(false);
      // Mutter places the dialog over its parent after its first frame: wait until its place holds.
      let last = "";
      const placed = await until("the dialog placed in the compositor's list", async () => {
        const w = (await windowsOfPid(desktop, gtk.pid)).find(
          (x) => x.title === dialog.title && x.frame[2] > 0,
        );
        const now = JSON.stringify(w?.buffer);
        const still = w !== undefined && now === last;
        last = now;
        await new Promise((r) => setTimeout(r, 150));
        return still && w;
      });
      // Headless Mutter put it at the monitor's top-left corner, its header bar under the shell's top panel,
      // which the monitor's image shows over it: moved clear of the panel (the panel is no window the capture
      // can raise the dialog above; see the report of issue 36's session).
      console.log(`the dialog placed at ${placed.frame}`);
      await placeWindow(desktop, placed.id, 300, 200);
      const d = await session.snapshot({ app: gtk.pid, window: { id: dialog.id } });
      expect(d.window.title).toBe(dialog.title);
      expect(d.window.positionUnknown).toBeUndefined();
      expect(d.screenshot, d.text.slice(0, 300)).toBeDefined();
      const shellWindow = (await windowsOfPid(desktop, gtk.pid)).find((x) => x.id === placed.id)!;
      expect(shellWindow.frame.slice(0, 2)).toEqual([300, 200]);
      expect(d.window.frame).toEqual({
        x: shellWindow.buffer[0],
        y: shellWindow.buffer[1],
        w: shellWindow.buffer[2],
        h: shellWindow.buffer[3],
      });
      const framed = d.records.filter((r) => r.screenFrame && r.screenFrame.w > 0 && r.index > 0);
      expect(framed.length).toBeGreaterThan(5);
      for (const r of framed)
        expect(inside(r.screenFrame!, shellWindow.frame), lineOf(d, r.index)).toBe(true);
      // Its pixels are the dialog's, as the compositor draws it: its named buttons, control by control (the font
      // list fills in on its own time, so the whole window is no fixed reference).
      const png = decodePng(d.screenshot!.data);
      const ref = await actorImage(desktop, shellWindow.id, "dialog");
      const buttons = d.records.filter((r) => r.role === "push button" && r.identity.name && r.screenFrame);
      expect(buttons.length, d.text).toBeGreaterThan(0);
      for (const b of buttons) {
        const f = b.screenFrame!;
        const agree = agreement(d, png, ref, { x: shellWindow.buffer[0]!, y: shellWindow.buffer[1]! }, f);
        console.log(`dialog ${lineOf(d, b.index)}: agreement ${agree.toFixed(3)}`);
        expect(agree, lineOf(d, b.index)).toBeGreaterThan(0.9);
      }
      await session.pressKey("Escape");
      await until(
        "the dialog closed",
        async () => !(await listWindows(gtk.pid)).some((w) => w.role === "dialog"),
      );
    },
    TIMEOUT,
  );

  it(
    "a point of the window under the shell's top bar is refused (the bar would take the press), nothing is sent, and it clicks once the bar is gone",
    async () => {
      const snap = await session.snapshot({ app: gtk.pid, window: { title: GTK3 } });
      const toggle = recordOf(snap, "toggle button", "togglebutton");
      const was = valueIn(snap, toggle.index);
      const f = toggle.screenFrame!;
      // The shell's top bar drawn (and picked) across the toggle button: shell UI over a window's point, as
      // where a window lies under the bar or a notification covers it.
      const bar = async (dy: number) =>
        evalJs(
          desktop,
          `(() => { imports.ui.main.layoutManager.panelBox.translation_y = ${dy}; return 1; })()`,
        );
      await bar(Math.round(f.y + f.h / 2 - 16));
      try {
        const p = pixelOf(snap, f);
        const e = await session.clickAt(p.x, p.y, { of: snap, snapshot: false }).catch((err: unknown) => err);
        expect(e).toBeInstanceOf(AxsnapError);
        expect((e as AxsnapError).delivery).toBe("not_delivered");
        expect((e as AxsnapError).message).toMatch(/top bar/);
        // The app got nothing (the guard refused before any event).
        expect(valueIn(await fresh(gtk.pid), toggle.index)).toBe(was);
      } finally {
        await bar(0);
      }
      const again = await session.snapshot({ app: gtk.pid, window: { title: GTK3 } });
      const q = pixelOf(again, recordOf(again, "toggle button", "togglebutton").screenFrame!);
      await session.clickAt(q.x, q.y, { of: again, snapshot: false });
      await until("the toggle flipped", async () => valueIn(await fresh(gtk.pid), toggle.index) !== was);
    },
    TIMEOUT,
  );
});

describe("gtk4-widget-factory as a native Wayland client", () => {
  let gtk4: App;
  let shellId: string;
  beforeAll(async () => {
    gtk4 = await openApp(desktop, "gtk4-widget-factory", [], { x: 60, y: 60 });
    shellId = (await windowsOfPid(desktop, gtk4.pid))[0]!.id;
  }, TIMEOUT);
  afterAll(async () => {
    await gtk4?.stop();
  });

  it(
    "snapshot with screenshot: in screen space at the shell's frame, and its controls' pixels match the compositor's image",
    async () => {
      const snap = await session.snapshot({ app: gtk4.pid });
      expect(snap.screenshot, snap.text.slice(0, 400)).toBeDefined();
      const w = (await windowsOfPid(desktop, gtk4.pid))[0]!;
      expect(w.frame.slice(0, 2)).toEqual([60, 60]);
      const png = decodePng(snap.screenshot!.data);
      const ref = await actorImage(desktop, w.id, "gtk4");
      const origin = { x: w.buffer[0]!, y: w.buffer[1]! };
      for (const r of [
        recordOf(snap, "check box", "checkbutton"),
        recordOf(snap, "push button", "togglebutton"),
        recordOf(snap, "slider"),
      ]) {
        const f = r.screenFrame!;
        expect(inside(f, w.frame), lineOf(snap, r.index)).toBe(true);
        expect(spread(png, pixelRect(snap, f)), lineOf(snap, r.index)).toBeGreaterThan(8);
        // Downscaled to 1280 px (0.77 pixel per point), a small control's edges blend: 0.84–0.88 measured.
        const agree = agreement(snap, png, ref, origin, f);
        const shifted = agreement(snap, png, ref, { x: origin.x + f.w, y: origin.y }, f);
        console.log(
          `${lineOf(snap, r.index)}: agreement ${agree.toFixed(3)}, shifted by its width ${shifted.toFixed(3)}`,
        );
        expect(agree, lineOf(snap, r.index)).toBeGreaterThan(0.75);
        expect(shifted, lineOf(snap, r.index)).toBeLessThan(agree - 0.05);
      }
    },
    TIMEOUT,
  );

  it(
    "click by index: a check box (no action in GTK 4) by the pointer, a page tab by its action; clickAt on a pixel toggles another",
    async () => {
      const snap = await session.snapshot({ app: gtk4.pid });
      const [a, b] = snap.records.filter(
        (r) =>
          r.role === "check box" &&
          valueIn(snap, r.index) === "off" &&
          !/disabled/.test(lineOf(snap, r.index)),
      );
      expect(a && b, snap.text).toBeTruthy();
      const byPointer = await session.click(a!.index, { snapshot: false });
      expect(byPointer).toMatchObject({ channel: "synthetic" });
      expect(byPointer.notes.join(" ")).toMatch(/no press action; clicked by coordinates/);
      await until("the first check box on", async () => valueAt(await fresh(gtk4.pid), a!) === "on");
      const p = pixelOf(snap, b!.screenFrame!);
      expect(await session.clickAt(p.x, p.y, { of: snap, snapshot: false })).toMatchObject({
        channel: "synthetic",
      });
      await until("the second check box on", async () => valueAt(await fresh(gtk4.pid), b!) === "on");
      const tabs = await fresh(gtk4.pid);
      const tab = tabs.records.find((r) => r.role === "page tab" && r.identity.name === "Page _2")!;
      expect(tab, tabs.text).toBeDefined();
      expect(lineOf(tabs, tab.index)).not.toMatch(/\(selected\)/);
      const result = await session.click(tab.index, { snapshot: false });
      console.log(`GTK 4 page tab click: ${JSON.stringify(result)}`);
      expect(result.channel).toBe("semantic");
      await until("page 2 selected", async () => {
        const s = await fresh(gtk4.pid);
        const t = s.records.find((r) => r.role === "page tab" && r.identity.name === "Page _2");
        return t !== undefined && /\(selected\)/.test(lineOf(s, t.index));
      });
      // Back to page 1, where the next tests' controls are shown.
      const back = (await fresh(gtk4.pid)).records.find(
        (r) => r.role === "page tab" && r.identity.name === "Page _1",
      )!;
      await session.click(back.index, { snapshot: false });
      await until("page 1 selected", async () => {
        const s = await fresh(gtk4.pid);
        const t = s.records.find((r) => r.role === "page tab" && r.identity.name === "Page _1");
        return t !== undefined && /\(selected\)/.test(lineOf(s, t.index));
      });
    },
    TIMEOUT,
  );

  it(
    "typeText into an entry clicked by index reads back; ctrl+a then typing replaces it",
    async () => {
      const snap = await fresh(gtk4.pid);
      const entry = snap.records.find(
        (r) =>
          r.role === "text" && valueIn(snap, r.index) === "entry" && !/disabled/.test(lineOf(snap, r.index)),
      )!;
      expect(entry, snap.text).toBeDefined();
      // GTK 4 answers Component.GrabFocus with an error: the entry is clicked at its point instead, and says so.
      const clicked = await session.click(entry.index, { snapshot: false });
      expect(clicked).toMatchObject({ channel: "synthetic" });
      expect(clicked.notes.join(" ")).toMatch(/could not be focused.*clicked at its point instead/);
      await until("the entry focused", async () => {
        const s = await fresh(gtk4.pid);
        return s.focusedIndex !== undefined && s.records[s.focusedIndex]?.path.join() === entry.path.join();
      });
      await session.pressKey("ctrl+a");
      await session.typeText("gtk four");
      await until("the text typed", async () => valueAt(await fresh(gtk4.pid), entry) === "gtk four");
      await session.pressKey("ctrl+a");
      await session.typeText("4");
      await until("the text replaced", async () => valueAt(await fresh(gtk4.pid), entry) === "4");
    },
    TIMEOUT,
  );

  it(
    "after a maximize and an un-maximize the frames follow the window: clickAt on a check box's pixel toggles it",
    async () => {
      const maximized = async (on: boolean) => {
        await evalJs(
          desktop,
          `(() => { const w = global.get_window_actors().map(a => a.meta_window).find(w => w.get_id() === ${shellId});
             ${on ? "w.maximize" : "w.unmaximize"}(imports.gi.Meta.MaximizeFlags.BOTH); return 1; })()`,
        );
        return until(`the window ${on ? "" : "un-"}maximized`, async () => {
          const w = (await windowsOfPid(desktop, gtk4.pid))[0]!;
          return (on ? w.frame[0] === 0 : w.frame[0] !== 0) && w;
        });
      };
      await maximized(true);
      const big = await session.snapshot({ app: gtk4.pid, screenshot: false });
      const w = await maximized(false);
      // The frames printed now are where the window is now, not where it was maximized.
      const snap = await until("a snapshot in the un-maximized window's frame", async () => {
        const s = await session.snapshot({ app: gtk4.pid });
        return s.window.frame.w < big.window.frame.w && s;
      });
      const box = snap.records.find(
        (r) =>
          r.role === "check box" &&
          valueIn(snap, r.index) === "off" &&
          !/disabled/.test(lineOf(snap, r.index)),
      )!;
      expect(inside(box.screenFrame!, w.frame), `${JSON.stringify(box.screenFrame)} in ${w.frame}`).toBe(
        true,
      );
      const p = pixelOf(snap, box.screenFrame!);
      await session.clickAt(p.x, p.y, { of: snap, snapshot: false });
      await until("the check box on", async () => valueAt(await fresh(gtk4.pid), box) === "on");
    },
    TIMEOUT,
  );
});

describe("drawn text (OCR) and two overlapping windows, GTK 3 Wayland clients", () => {
  const spec = (title: string, words: string[]) =>
    JSON.stringify({
      title,
      width: 420,
      height: 260,
      lines: words.map((text, i) => ({ text, x: 30, y: 50 + i * 60, size: 18, box: i === 0 })),
    });
  const ALPHA = ["Alpha Harbor", "Quiet Lantern", "Copper Meadow"];
  const BRAVO = ["Bravo Signal", "Velvet Orchard", "Granite Falcon"];
  let alpha: App;
  let bravo: App;
  const ocrLines = (s: Snapshot) =>
    s.text
      .split("\n")
      .filter((l) => /^\t*\d+ text \(ocr(?:, unsure)?\) /.test(l))
      .map((l) => l.replace(/^\t*\d+ text \(ocr(?:, unsure)?\) /, ""));
  const shellOf = async (app: App) => (await windowsOfPid(desktop, app.pid))[0]!;
  const stackOf = async (id: string) =>
    (await evalJs(
      desktop,
      `global.display.sort_windows_by_stacking(global.get_window_actors().map(a => a.meta_window)).map(w => String(w.get_id())).indexOf(${JSON.stringify(id)})`,
    )) as number;

  beforeAll(async () => {
    alpha = await openApp(
      desktop,
      "/usr/bin/python3",
      ["test/apps/drawn-text.py", spec("axsnap alpha", ALPHA)],
      {
        x: 200,
        y: 150,
      },
    );
    // Bravo last: on top, covering Alpha's lower right part.
    bravo = await openApp(
      desktop,
      "/usr/bin/python3",
      ["test/apps/drawn-text.py", spec("axsnap bravo", BRAVO)],
      {
        x: 360,
        y: 260,
      },
    );
  }, TIMEOUT);
  afterAll(async () => {
    await alpha?.stop();
    await bravo?.stop();
  });

  it(
    "OCR reads the canvas's drawn lines, each frame inside the window's compositor frame, and a click on a drawn button hits it",
    async () => {
      const snap = await session.snapshot({ app: bravo.pid, screenshot: false });
      expect(ocrLines(snap), snap.text).toEqual(BRAVO);
      const w = await shellOf(bravo);
      const lines = snap.records.filter((r) => r.ocr !== undefined);
      for (const r of lines) expect(inside(r.screenFrame!, w.frame), lineOf(snap, r.index)).toBe(true);
      // Drawn 60 px apart, top to bottom.
      const ys = lines.map((r) => r.screenFrame!.y);
      expect(ys[1]! - ys[0]!).toBeGreaterThan(40);
      expect(ys[2]! - ys[1]!).toBeGreaterThan(40);
      const button = lines.find((r) => r.title === BRAVO[0])!;
      await session.click(button.index, { snapshot: false });
      await until(
        "the drawn button clicked",
        async () => (await shellOf(bravo)).title === `clicked ${BRAVO[0]} 1`,
      );
    },
    TIMEOUT,
  );

  it(
    "two windows: frames and stacking as the compositor has them; a snapshot of the covered one raises it and reads its own text",
    async () => {
      await placeWindow(desktop, (await shellOf(bravo)).id, 360, 260);
      const [wa, wb] = [await shellOf(alpha), await shellOf(bravo)];
      const [la] = await listWindows(alpha.pid);
      const [lb] = await listWindows(bravo.pid);
      const rect = (r: number[]) => ({ x: r[0], y: r[1], w: r[2], h: r[3] });
      expect(la!.frame).toEqual(rect(wa.buffer));
      expect(lb!.frame).toEqual(rect(wb.buffer));
      expect(lb!.stacking!).toBeGreaterThan(la!.stacking!);
      expect(lb!.active).toBe(true);
      expect(la!.active).toBe(false);
      expect(await stackOf(wb.id)).toBeGreaterThan(await stackOf(wa.id));
      // Alpha is covered at its lower right; its snapshot's screenshot must show Alpha, not Bravo over it.
      const snap = await session.snapshot({ app: alpha.pid, ocr: true });
      expect(snap.screenshot).toBeDefined();
      expect(ocrLines(snap)).toEqual(ALPHA);
      expect(snap.text).not.toMatch(/Bravo|Velvet|Granite/);
      const png = decodePng(snap.screenshot!.data);
      const ref = await actorImage(desktop, wa.id, "alpha");
      const fa = { x: wa.frame[0]! + 4, y: wa.frame[1]! + 4, w: wa.frame[2]! - 8, h: wa.frame[3]! - 8 };
      expect(agreement(snap, png, ref, { x: wa.buffer[0]!, y: wa.buffer[1]! }, fa)).toBeGreaterThan(0.95);
      const raised = await listWindows(alpha.pid);
      expect(raised[0]!.stacking!).toBeGreaterThan((await listWindows(bravo.pid))[0]!.stacking!);
      expect(await stackOf(wa.id)).toBeGreaterThan(await stackOf(wb.id));
    },
    TIMEOUT,
  );
});
