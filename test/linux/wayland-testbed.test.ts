/**
 * The test bed on Wayland (issue 36): test/support/linux.ts's useDesktop({
 * wayland: true }) starts scripts/desktop.mjs's headless gnome-shell desktop
 * and points this process at it, as Xvfb tests are pointed at theirs. Apps
 * started there with startApp (gtk3, gtk4, Chromium with
 * --ozone-platform=wayland) are native Wayland clients in the compositor's
 * window list and in AT-SPI as axsnap's listApps reads it; stop leaves
 * nothing of the desktop.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listApps } from "../../lib/index.js";
import {
  type App,
  chromium,
  compositorWindows,
  type Desktop,
  gtk4WidgetFactory,
  gtkWidgetFactory,
} from "../../scripts/desktop.mjs";
import { processesMentioning } from "../support/agent-desktop.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 180_000;
let desktop: Desktop;

function environ(pid: number): string[] {
  return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
}

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true });
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

describe("the Wayland test bed", () => {
  it(
    "points this process at gnome-shell's desktop: WAYLAND_DISPLAY its socket, no DISPLAY",
    () => {
      expect(desktop.session).toBe("wayland");
      expect(process.env.DISPLAY).toBeUndefined();
      expect(process.env.WAYLAND_DISPLAY).toBe(desktop.waylandDisplay);
      expect(process.env.DBUS_SESSION_BUS_ADDRESS).toBe(desktop.busAddress);
      expect(desktop.waylandDisplay.startsWith(`${desktop.runtimeDir}/`)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "runs gtk3, gtk4 and Chromium as native Wayland clients, in the registry axsnap reads",
    async () => {
      const apps: App[] = [
        await gtkWidgetFactory(desktop),
        await gtk4WidgetFactory(desktop),
        await chromium(desktop, "data:text/html,<title>wl page</title><button>Press</button>", {
          windowName: "wl page",
        }),
      ];
      for (const app of apps) expect(environ(app.pid).some((kv) => kv.startsWith("DISPLAY="))).toBe(false);
      const windows = await compositorWindows(desktop);
      for (const app of apps) {
        // Chromium's window belongs to its browser process (the app's pid here).
        const own = windows.filter((w) => w.pid === app.pid);
        expect(own.length, `${app.name}: ${JSON.stringify(windows)}`).toBeGreaterThan(0);
        expect(own.every((w) => w.client === "wayland")).toBe(true);
      }
      const listed = await listApps();
      for (const app of apps) expect(listed.map((a) => a.pid)).toContain(app.pid);
      expect(listed.find((a) => a.pid === apps[0]!.pid)?.name).toBe("gtk3-widget-factory");
    },
    TIMEOUT,
  );

  it(
    "stop ends every process of the desktop",
    async () => {
      const before = processesMentioning(desktop.runtimeDir);
      expect(before.length).toBeGreaterThanOrEqual(6);
      await desktop.stop();
      expect(processesMentioning(desktop.runtimeDir)).toEqual([]);
    },
    TIMEOUT,
  );
});
