/**
 * The X11 route does not depend on PipeWire: with libpipewire made "not
 * installed" for this process (AXSNAP_PIPEWIRE_LIB=/nonexistent, read when the
 * Mutter route first needs it: src-native/linux/pipewire_frame.h), the addon
 * loads and gtk3-widget-factory on the X11 desktop is captured and clicked as
 * always. The Mutter route is not taken here (no Wayland session).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../lib/index.js";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

let desktop: Desktop;
let session: Session;

beforeAll(async () => {
  process.env.AXSNAP_PIPEWIRE_LIB = "/nonexistent";
  desktop = await useDesktop();
  await gtkWidgetFactory(desktop);
  session = createSession();
}, 60_000);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

describe("X11 without libpipewire", () => {
  it("captures and clicks gtk3-widget-factory through X11", async () => {
    expect(process.env.WAYLAND_DISPLAY).toBeUndefined();
    const snap = await session.snapshot({ app: "gtk3-widget-factory" });
    expect(snap.screenshot?.data.length).toBeGreaterThan(20_000);
    expect(snap.text).not.toMatch(/PipeWire/);
    const toggle = snap.records.find(
      (r) => r.role === "toggle button" && r.identity.name === "togglebutton",
    )!;
    const shot = snap.screenshot!;
    const k = shot.pixelWidth / snap.window.frame.w;
    // Screen frame to screenshot pixel: (screen - windowOrigin) * scale.
    const f = toggle.screenFrame!;
    const x = Math.round((f.x + f.w / 2 - shot.windowOrigin.x) * k);
    const y = Math.round((f.y + f.h / 2 - shot.windowOrigin.y) * k);
    const result = await session.clickAt(x, y, { of: snap });
    expect(result).toMatchObject({ action: "clickAt", channel: "synthetic" });
  });
});
