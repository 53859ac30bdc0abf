/**
 * Issue 36: GNOME Wayland where GNOME Shell refuses Eval, as on a user's own
 * session (gnome-shell without --unsafe-mode: useDesktop({ wayland: true,
 * unsafe: false }), scripts/desktop.mjs). No
 * API then says where a native Wayland window is, so listWindows and
 * snapshot must say the position is unknown, never print a frame that
 * passes for a screen frame, and permissions() must say why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listWindows, permissions, snapshot } from "../../lib/index.js";
import { type Desktop, gtkWidgetFactory, shellEval } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { useDesktop, waitFor } from "../support/linux.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let pid = 0;

beforeAll(async () => {
  desktop = await useDesktop({ wayland: true, unsafe: false });
  // The premise: this shell behaves as a user's session does (the desktop waited for it to own its names).
  expect(await shellEval(desktop, "1")).toBeNull();
  pid = (await gtkWidgetFactory(desktop)).pid;
  await waitFor(
    () => listWindows(pid, { deadlineMs: 5000 }),
    (ws) => ws.length > 0,
    30_000,
    "gtk3's AT-SPI window",
  );
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
}, 30_000);

describe("GNOME Wayland, Eval refused", () => {
  it(
    "permissions() says window positions are unknown and why",
    async () => {
      const p = await permissions();
      expect(p.desktop?.session).toBe("wayland");
      expect(p.desktop?.windows?.source).toBe("unknown");
      expect(p.desktop?.windows?.detail).toMatch(/refuses Eval/);
      expect(p.hint).toMatch(/screen positions of native Wayland windows are unknown/);
    },
    TIMEOUT,
  );

  it(
    "listWindows marks the position unknown: size only, at (0,0)",
    async () => {
      const ws = await listWindows(pid);
      const main = ws.find((w) => w.kind === "window");
      expect(main?.positionUnknown).toBe(true);
      expect(main?.stacking).toBeUndefined();
      expect([main?.frame.x, main?.frame.y]).toEqual([0, 0]);
      // The size is the AT-SPI window's own (GTK3: the buffer, shadow included), which is real.
      expect(main?.frame.w).toBeGreaterThan(100);
    },
    TIMEOUT,
  );

  it(
    "snapshot notes that screen positions are unknown; element frames are relative to the window",
    async () => {
      const snap = await snapshot({ app: pid, screenshot: false });
      expect(snap.window.positionUnknown).toBe(true);
      expect(snap.text).toMatch(/screen positions are unknown: GNOME Shell refuses Eval/);
      const index = indexIn(snap, /^\d+ radio button Page 2, Value: \w+$/);
      const record = snap.records.find((r) => r.index === index);
      // Window-relative and screen frames agree only because the window is placed at (0,0): nothing is shifted by a guess.
      expect(record?.frame).toEqual(record?.screenFrame);
    },
    TIMEOUT,
  );
});
