/**
 * Issue 36: Chromium as a native Wayland client (--ozone-platform=wayland) on
 * the agent's GNOME Wayland desktop, acted on through the Mutter route: a
 * pixel click on a check box, typing into a field read back, and a key chord.
 * Each result is checked through the tree afterwards, never by the action's
 * own word.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Snapshot } from "../../lib/index.js";
import { chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";
import { useDesktop, waitFor } from "../support/linux.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let pid = 0;

const line = (s: Snapshot, re: RegExp) => s.text.split("\n").find((l) => re.test(l.trim()));
const indexOf = (s: Snapshot, re: RegExp) => {
  const l = line(s, re);
  if (!l) throw new Error(`no line matches ${re}:\n${s.text}`);
  return Number(/^\s*(\d+) /.exec(l)![1]);
};

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true });
  pid = (await chromium(desktop, fileUrl("test/pages/form.html"), { windowName: "axsnap form" })).pid;
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
});
