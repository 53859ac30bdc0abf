/**
 * The Linux backend end to end against gtk3-widget-factory on a real X server
 * (Xvfb), a real session bus and the real AT-SPI registry.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../lib/index.js";
import { listApps, permissions, requestPermissions, snapshot } from "../../lib/observe/desktop.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

let desktop: Desktop;
let gtk: App;
let snap: Snapshot;

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
  snap = await snapshot({ app: "gtk3-widget-factory" });
}, 60_000);

afterAll(async () => {
  await snap?.release();
  await desktop?.stop();
});

const lines = () => snap.text.split("\n");
const lineOf = (s: Snapshot, index: number) =>
  s.text.split("\n").find((l) => new RegExp(`^\\t*${index} `).test(l)) ?? "";

describe("gtk3-widget-factory", () => {
  it("lists the app with its pid", async () => {
    const apps = await listApps();
    expect(apps).toContainEqual(expect.objectContaining({ name: "gtk3-widget-factory", pid: gtk.pid }));
  });

  it("reports that Linux needs no permission, and asking changes nothing", async () => {
    const status = await permissions();
    expect(status).toMatchObject({
      platform: "linux",
      accessibility: "not_required",
      screenRecording: "not_required",
    });
    // An app started the right way is no finding; nothing to hint at (test/linux/desktop-checks.test.ts has the findings).
    expect(status.desktop?.appsWithoutTree).toEqual([]);
    expect(status.hint).toBeUndefined();
    expect(await requestPermissions()).toEqual(status);
  });

  it("prints the header and the window", () => {
    expect(lines()[0]).toBe(`App=gtk3-widget-factory (pid ${gtk.pid})`);
    expect(lines()[2]).toMatch(/^0 frame\b/);
    expect(snap.complete).toBe(true);
  });

  it("names the window, whose accessible name is empty, by its X title (issue 13)", () => {
    expect(lines()[1]).toBe('Window: "gtk3-widget-factory", App: gtk3-widget-factory.');
    expect(lines()[2]).toBe("0 frame gtk3-widget-factory");
    expect(snap.window.title).toBe("gtk3-widget-factory");
  });

  it("shows the header bar's window buttons", () => {
    for (const name of ["Minimize", "Maximize", "Close"])
      expect(snap.text).toMatch(new RegExp(`\\d+ push button ${name}\\b`));
  });

  it("shows the Page 1–3 radio buttons with Page 1 checked", () => {
    expect(snap.text).toMatch(/\d+ radio button Page 1, Value: on/);
    expect(snap.text).toMatch(/\d+ radio button Page 2, Value: off/);
    expect(snap.text).toMatch(/\d+ radio button Page 3, Value: off/);
  });

  it("shows check buttons, entries with their text and combo boxes", () => {
    expect(snap.text).toMatch(/\d+ check box checkbutton, Value: (on|off|mixed)/);
    expect(snap.records.some((r) => r.role === "combo box")).toBe(true);
    const entries = snap.text.split("\n").filter((l) => /\d+ text \(settable, string\)/.test(l));
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.some((l) => /Value: \S/.test(l))).toBe(true);
  });

  it("does not print hidden menus as on-screen elements", () => {
    for (const rec of snap.records) {
      if (rec.screenFrame) expect(rec.screenFrame.x).not.toBe(-2147483648);
    }
    expect(snap.records.some((r) => r.role === "menu" || r.role === "menu item")).toBe(false);
  });

  it("keeps every record's frame inside the window", () => {
    const w = snap.window.frame;
    for (const rec of snap.records) {
      if (!rec.screenFrame || rec.screenFrame.w === 0) continue;
      const cx = rec.screenFrame.x + rec.screenFrame.w / 2;
      const cy = rec.screenFrame.y + rec.screenFrame.h / 2;
      expect(cx, `record ${rec.index} ${rec.roleText}`).toBeGreaterThanOrEqual(w.x - 1);
      expect(cx).toBeLessThanOrEqual(w.x + w.w + 1);
      expect(cy).toBeGreaterThanOrEqual(w.y - 1);
      expect(cy).toBeLessThanOrEqual(w.y + w.h + 1);
    }
  });

  it("gives live handles in the records", () => {
    expect(snap.records.every((r) => typeof r.handle === "number" && r.handle > 0)).toBe(true);
  });

  it("captures a screenshot of the window's size times its scale, not blank", async () => {
    const shot = snap.screenshot!;
    expect(shot).toBeDefined();
    const w = snap.window.frame;
    const expectedW = Math.min(w.w * snap.window.scale, 1280);
    expect(Math.abs(shot.pixelWidth - expectedW)).toBeLessThanOrEqual(1);
    expect(Math.abs(shot.pixelHeight / shot.pixelWidth - w.h / w.w)).toBeLessThan(0.01);
    expect(shot.data.length).toBeLessThanOrEqual(900 * 1024);
    // Not blank: a blank PNG of this size compresses to a few KB.
    expect(shot.data.length).toBeGreaterThan(20_000);
    expect(shot.windowOrigin).toEqual({ x: w.x, y: w.y });
  });

  it("performs a named action and sets text through the backend primitives", async () => {
    const { liveObservation } = await import("../../lib/observe/desktop.js");
    const live = liveObservation(snap)!;
    // Text first: Page 2 shows other widgets, and page 1's entries leave the screen.
    const entry = snap.records.find((r) => r.role === "text" && r.settable)!;
    await live.backend.setText(entry.handle!, "typed by axsnap", 2000);
    const typed = await snapshot({ app: "gtk3-widget-factory", screenshot: false });
    expect(typed.text).toContain("typed by axsnap");
    await typed.release();
    const page2 = snap.records.find((r) => r.role === "radio button" && r.title === "Page 2")!;
    await live.backend.doAction(page2.handle!, "click", 2000);
    const after = await snapshot({ app: "gtk3-widget-factory", screenshot: false });
    expect(after.text).toMatch(/\d+ radio button Page 2, Value: on/);
    expect(after.text).toMatch(/\d+ radio button Page 1, Value: off/);
    await after.release();
  });

  it("clicks with XTest at a record's click point and types into a focused entry", async () => {
    const { liveObservation } = await import("../../lib/observe/desktop.js");
    // Back to Page 1, where the check boxes and entries are.
    const current = await snapshot({ app: "gtk3-widget-factory", screenshot: false });
    const page1 = current.records.find((r) => r.role === "radio button" && r.title === "Page 1")!;
    await liveObservation(current)!.backend.doAction(page1.handle!, "click", 2000);
    await current.release();
    const before = await snapshot({ app: "gtk3-widget-factory", screenshot: false });
    const live = liveObservation(before)!;
    const box = before.records.find(
      (r) =>
        r.role === "check box" &&
        /Value: off/.test(lineOf(before, r.index)) &&
        !/disabled/.test(lineOf(before, r.index)),
    );
    expect(box, "an enabled, unchecked check box").toBeDefined();
    await live.backend.pointer(
      live.window,
      {
        kind: "click",
        x: box!.clickPoint!.x,
        y: box!.clickPoint!.y,
        button: 1,
        count: 1,
      },
      5000,
    );
    const entry = before.records.find(
      (r) => r.role === "text" && r.settable && !/disabled/.test(lineOf(before, r.index)),
    )!;
    await live.backend.setText(entry.handle!, "", 2000);
    await live.backend.focus(entry.handle!, 2000);
    await live.backend.typeText(live.window, "xtest ok", 5000);
    await new Promise((r) => setTimeout(r, 200));
    const after = await snapshot({ app: "gtk3-widget-factory", screenshot: false });
    const boxAfter = after.records.find((r) => r.handle === box!.handle)!;
    expect(lineOf(after, boxAfter.index)).toMatch(/Value: on/);
    expect(after.text).toContain("xtest ok");
    await before.release();
    await after.release();
  });

  it("keeps the event loop responsive while snapshots run back to back", async () => {
    const h = monitorEventLoopDelay({ resolution: 5 });
    h.enable();
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 3000) {
      const s = await snapshot({ app: "gtk3-widget-factory", screenshot: n % 2 === 0 });
      await s.release();
      n++;
    }
    h.disable();
    const p99 = h.percentile(99) / 1e6;
    console.log(`event-loop delay p99 ${p99.toFixed(1)} ms over ${n} snapshots`);
    expect(n).toBeGreaterThan(3);
    // Behaviour, not the speed target (p99 < 20 ms, measured in bench/linux-snapshot.ts):
    // a walk or an encode on the JavaScript thread would hold the loop for a whole
    // snapshot (~70 ms here), so the loop's worst delays stay far below that.
    expect(p99).toBeLessThan(60);
  });
});
