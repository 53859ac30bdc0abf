/**
 * Key names are case-insensitive (docs/acting.md, "Key names for pressKey"), X keysym names included
 * (issue 19, section 8): `kp_enter` is KP_Enter. Where X has two keysyms that
 * differ only by case (Greek_alpha and Greek_ALPHA), the exact name wins,
 * else the one whose letters' case agrees with the name's most often (the
 * lower-case keysym on a tie). First the resolution itself (the addon's
 * keysymName, no display needed), then key presses into a real field of
 * gtk3-widget-factory, each with an effect: the character it types.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { loadNative } from "../../lib/native.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 60_000;
const GTK = "gtk3-widget-factory";

describe("keysym names resolve case-insensitively", () => {
  const name = (n: string) => loadNative().keysymName!(n);

  it("finds a keysym by its name in any case", () => {
    expect(name("KP_Enter")).toBe("KP_Enter");
    expect(name("kp_enter")).toBe("KP_Enter");
    expect(name("KP_ENTER")).toBe("KP_Enter");
    expect(name("kp_add")).toBe("KP_Add");
    expect(name("scroll_lock")).toBe("Scroll_Lock");
    expect(name("iso_left_tab")).toBe("ISO_Left_Tab");
    expect(name("xf86audioplay")).toBe("XF86AudioPlay");
  });

  it("takes the exact name first where two keysyms differ only by case, else the closest case", () => {
    expect(name("Greek_alpha")).toBe("Greek_alpha");
    expect(name("Greek_ALPHA")).toBe("Greek_ALPHA");
    expect(name("greek_alpha")).toBe("Greek_alpha");
    expect(name("GREEK_ALPHA")).toBe("Greek_ALPHA");
    expect(name("Ccedilla")).toBe("Ccedilla");
    expect(name("ccedilla")).toBe("ccedilla");
  });

  it("names no keysym for a name X does not have", () => {
    expect(name("no_such_key")).toBeNull();
    expect(name("")).toBeNull();
  });
});

describe("key presses by keysym name in any case, on gtk3-widget-factory", () => {
  let desktop: Desktop;
  let app: App;
  let session: Session;
  beforeAll(async () => {
    desktop = await useDesktop();
    app = await gtkWidgetFactory(desktop);
    session = createSession();
  }, 120_000);
  afterAll(async () => {
    await session?.close();
    await app?.stop();
    await desktop?.stop();
  });

  const entryText = (snap: Snapshot, index: number) =>
    new RegExp(`^\\t*${index} text \\(settable, string\\)(?: Value: (.*))?$`, "m").exec(snap.text)?.[1] ?? "";

  it(
    "types what kp_add, kp_subtract, greek_alpha and GREEK_ALPHA name into a focused entry",
    async () => {
      const snap = await session.snapshot({ app: GTK, screenshot: false });
      const m = /^\t*(\d+) text \(settable, string\) Value: entry$/m.exec(snap.text);
      expect(m, snap.text).not.toBeNull();
      const entry = Number(m![1]);
      await session.setValue(entry, "");
      await session.click(entry);
      for (const key of ["kp_add", "KP_SUBTRACT", "greek_alpha", "GREEK_ALPHA"])
        await session.pressKey(key, { app: GTK });
      const after = await session.snapshot({ app: GTK, screenshot: false });
      expect(entryText(after, entry)).toBe("+-αΑ");
    },
    TIMEOUT,
  );
});
