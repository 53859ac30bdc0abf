/**
 * Issue 36: a Wayland compositor other than GNOME's: sway 1.7 (wlroots),
 * headless, with gtk3-widget-factory as a native Wayland client
 * (test/support/sway.ts). axsnap has no capture or input route there (its
 * route is GNOME's Mutter; the xdg-desktop-portal route is not built), so
 * the tree and semantic actions must work, and what cannot be done must be
 * said: permissions() names sway and routes "none" with a hint; a snapshot
 * comes without a screenshot and says why; pointer and key input are
 * refused with a stable code, nothing sent (checked in sway's own tree and
 * in the app's); frames are marked positionUnknown (sway places the window
 * where AT-SPI's frame does not say).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AxsnapError,
  createSession,
  listApps,
  listWindows,
  permissions,
  type Session,
  type Snapshot,
} from "../../lib/index.js";
import { runCli } from "../support/cli.js";
import { waitFor } from "../support/linux.js";
import { bindToSway, type SwayDesktop, startSway, swayNodes } from "../support/sway.js";

const TIMEOUT = 90_000;
let desktop: SwayDesktop;
let pid = 0;
let session: Session;

beforeAll(async () => {
  desktop = await startSway();
  bindToSway(desktop);
  pid = desktop.start("gtk3-widget-factory").pid!;
  // sway has mapped its window, and AT-SPI lists the app.
  await waitFor(
    () => desktop.tree(),
    (t) => swayNodes(t).some((n) => n.pid === pid && n.rect.width > 0),
    30_000,
    "gtk3-widget-factory's window in sway's tree",
  );
  await waitFor(
    () => listApps(),
    (apps) => apps.some((a) => a.pid === pid),
    30_000,
    "gtk3-widget-factory in the AT-SPI registry",
  );
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
}, 30_000);

const lineOf = (snap: Snapshot, re: RegExp) =>
  snap.text
    .split("\n")
    .find((l) => re.test(l))
    ?.trim() ?? "";
const indexOf = (snap: Snapshot, re: RegExp) => {
  const line = lineOf(snap, re);
  if (!line) throw new Error(`no line ${re} in\n${snap.text.slice(0, 3000)}`);
  return Number(line.split(" ")[0]);
};

/** The refusal of a call, which must fail. */
async function refusal(call: () => Promise<unknown>): Promise<AxsnapError> {
  try {
    await call();
  } catch (e) {
    if (e instanceof AxsnapError) return e;
    throw e;
  }
  throw new Error("the call was not refused");
}

describe("sway 1.7 headless, gtk3-widget-factory as a native Wayland client", () => {
  it(
    "permissions() names the Wayland session and sway, routes none, with a hint",
    async () => {
      const p = await permissions();
      expect(p.desktop?.session).toBe("wayland");
      expect(p.desktop?.compositor).toEqual({ name: "sway", evidence: `SWAYSOCK=${desktop.swaysock}` });
      expect(p.desktop?.routes).toMatchObject({ capture: "none", input: "none" });
      expect(p.desktop?.routes?.detail).toMatch(/^sway \(a wlroots compositor\) gives axsnap no route/);
      expect(p.desktop?.routes?.detail).toMatch(/no xdg-desktop-portal route/);
      expect(p.desktop?.windows?.source).toBe("unknown");
      expect(p.hint).toMatch(/axsnap desktop start NAME --wayland/);
      expect(p.hint).toMatch(/GDK_BACKEND=x11/);
    },
    TIMEOUT,
  );

  it(
    "axsnap permissions prints the compositor and the routes",
    async () => {
      const cli = await runCli(["permissions"]);
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toMatch(/^session wayland$/m);
      expect(cli.stdout).toMatch(/^compositor sway \(SWAYSOCK=\S+\)$/m);
      expect(cli.stdout).toMatch(
        /^capture none, input none: sway \(a wlroots compositor\) gives axsnap no route/m,
      );
      expect(cli.stdout).toMatch(/^hint: .*axsnap desktop start NAME --wayland/m);
    },
    TIMEOUT,
  );

  it(
    "listWindows marks the window's frame as not a screen frame",
    async () => {
      const ws = await listWindows(pid);
      expect(ws).toHaveLength(1);
      expect(ws[0]!.positionUnknown).toBe(true);
      // The premise of the flag: sway has the window somewhere AT-SPI's frame does not say (below sway's bar).
      const mine = swayNodes(await desktop.tree()).find((n) => n.pid === pid)!;
      expect({ x: mine.rect.x, y: mine.rect.y }).not.toEqual({ x: ws[0]!.frame.x, y: ws[0]!.frame.y });
    },
    TIMEOUT,
  );

  it(
    "a snapshot asked with a screenshot has its lines, no screenshot, and says why",
    async () => {
      const snap = await session.snapshot({ app: pid, screenshot: true });
      expect(snap.screenshot).toBeUndefined();
      expect(snap.window.positionUnknown).toBe(true);
      expect(lineOf(snap, /radio button Page 1/)).toMatch(/Value: on/);
      expect(snap.text).toMatch(
        /\(no screenshot: sway \(a wlroots compositor\) gives axsnap no route for screenshots of native Wayland windows/,
      );
      expect(snap.text).toMatch(
        /\(gtk3-widget-factory is a native Wayland window on sway .*pointer and key input are refused with nothing sent/,
      );
      expect(snap.text).toMatch(
        /\(screen positions are unknown: sway \(a wlroots compositor\) does not tell/,
      );
    },
    TIMEOUT,
  );

  it(
    "typeText into a field by index inserts the text through AT-SPI",
    async () => {
      const snap = await session.snapshot({ app: pid });
      const entry = indexOf(snap, /^\t*\d+ text \(settable, string\) Value: entry$/);
      const r = await session.typeText("-sway", { target: entry });
      expect(r.channel).toBe("semantic");
      await waitFor(
        () => session.snapshot({ app: pid }),
        (s) => lineOf(s, /^\t*\d+ text \(settable, string\) Value: entry-sway$/) !== "",
        10_000,
        "the entry's new value",
      );
    },
    TIMEOUT,
  );

  it(
    "click by index goes through AT-SPI's action and takes effect",
    async () => {
      const snap = await session.snapshot({ app: pid });
      expect(lineOf(snap, /radio button Page 2/)).toMatch(/Value: off/);
      const r = await session.click(indexOf(snap, /radio button Page 2/));
      expect(r.channel).toBe("semantic");
      const after = await waitFor(
        () => session.snapshot({ app: pid }),
        (s) => /Value: on/.test(lineOf(s, /radio button Page 2/)),
        10_000,
        "Page 2 selected",
      );
      expect(lineOf(after, /radio button Page 1/)).toMatch(/Value: off/);
    },
    TIMEOUT,
  );

  it(
    "clickAt, pressKey, drag by index and typeText with no target are refused with ACTION_NOT_SUPPORTED, nothing sent",
    async () => {
      const before = await session.snapshot({ app: pid, screenshot: true });
      const focusedBefore = swayNodes(await desktop.tree()).find((n) => n.focused)?.pid;
      const at = await refusal(() => session.clickAt(10, 10));
      expect(at.code).toBe("ACTION_NOT_SUPPORTED");
      expect(at.delivery).toBe("not_delivered");
      expect(at.message).toMatch(/sway \(a wlroots compositor\) gives axsnap no route/);
      expect(at.hint).toMatch(/axsnap desktop start NAME --wayland/);
      const key = await refusal(() => session.pressKey("ctrl+a"));
      expect(key.code).toBe("ACTION_NOT_SUPPORTED");
      expect(key.delivery).toBe("not_delivered");
      expect(key.message).toMatch(/no route for key input of native Wayland windows.*: nothing was sent$/);
      expect(key.hint).toMatch(/XWayland client/);
      // By index too: a drag is pointer input only (no semantic path), refused by the native route check.
      const drag = await refusal(() =>
        session.drag(indexOf(before, /radio button Page 1/), indexOf(before, /radio button Page 3/)),
      );
      expect(drag.code).toBe("ACTION_NOT_SUPPORTED");
      expect(drag.delivery).toBe("not_delivered");
      expect(drag.message).toMatch(
        /no route for pointer input of native Wayland windows.*: nothing was sent$/,
      );
      // Typing with no target meets the key guard first (GTK3 on Wayland marks no focus): refused, nothing typed.
      const typed = await refusal(() => session.typeText("zz"));
      expect(typed.delivery).toBe("not_delivered");
      // Nothing changed: the app's lines and sway's focus are as they were.
      const after = await session.snapshot({ app: pid });
      expect(after.text.split("\n").slice(2, 40)).toEqual(before.text.split("\n").slice(2, 40));
      expect(swayNodes(await desktop.tree()).find((n) => n.focused)?.pid).toBe(focusedBefore);
    },
    TIMEOUT,
  );
});
