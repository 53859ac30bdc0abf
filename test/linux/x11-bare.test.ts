/**
 * A desktop where no accessibility service runs at all (Xvfb alone: no
 * session bus, so no accessibility bus or registry) still shows its X11
 * clients: listApps lists xmessage instead of failing with
 * ACCESSIBILITY_UNAVAILABLE, and a snapshot reads it as its window (issue 20).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { createSession, listApps } from "../../lib/index.js";
import { type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { decodePng, nonBlank } from "../support/png.js";

const TIMEOUT = 60_000;
let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop({ accessibility: false });
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

it(
  "lists and snapshots xmessage instead of answering ACCESSIBILITY_UNAVAILABLE",
  async () => {
    expect(process.env.DBUS_SESSION_BUS_ADDRESS).toBeUndefined();
    const msg = await startApp(desktop, "xmessage", ["Only me"], { windowClass: "Xmessage" });
    const session = createSession();
    try {
      const apps = await listApps();
      expect(apps).toEqual([{ name: "Xmessage", bundleId: "xmessage", pid: msg.pid, noTree: true }]);
      const snap = await session.snapshot({ app: "xmessage" });
      expect(snap.text).toMatch(/^0 frame xmessage/m);
      expect(snap.text).toContain("Xmessage has no accessibility tree");
      expect(nonBlank(decodePng(snap.screenshot!.data))).toBe(true);
    } finally {
      await session.close();
    }
  },
  TIMEOUT,
);
