/**
 * Which launchable entry a name means (lib/session/launch/match.ts): only exact
 * spellings start anything; a near miss is refused with the closest entries.
 */
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import { loadNative } from "../../lib/native.js";
import { launchApp, listLaunchable } from "../../lib/session/launch/launch.js";
import {
  closestEntries,
  editDistance,
  type LaunchableApp,
  matchLaunchable,
} from "../../lib/session/launch/match.js";

const entry = (id: string, name: string, executable: string): LaunchableApp => ({
  id,
  name,
  executable,
  path: `/usr/share/applications/${id}`,
  hidden: false,
});

const ENTRIES = [
  entry("gtk3-widget-factory.desktop", "Widget Factory", "gtk3-widget-factory"),
  entry("gtk3-demo.desktop", "GTK Demo", "gtk3-demo"),
  entry("galculator.desktop", "Galculator", "galculator"),
  entry("org.gnome.Calculator.desktop", "Calculator", "/usr/bin/gnome-calculator"),
  entry("vim.desktop", "Vim", "vim"),
];

function refused(fn: () => unknown): AxsnapError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AxsnapError) return e;
    throw e;
  }
  throw new Error("not refused");
}

describe("matchLaunchable", () => {
  it("takes an id with or without .desktop, a name, or an executable's name, case-insensitive", () => {
    expect(matchLaunchable("gtk3-widget-factory.desktop", ENTRIES).id).toBe("gtk3-widget-factory.desktop");
    expect(matchLaunchable("GTK3-Widget-Factory", ENTRIES).id).toBe("gtk3-widget-factory.desktop");
    expect(matchLaunchable("widget factory", ENTRIES).id).toBe("gtk3-widget-factory.desktop");
    expect(matchLaunchable("gnome-calculator", ENTRIES).id).toBe("org.gnome.Calculator.desktop");
  });

  it("an id beats another entry's name", () => {
    const clash = [...ENTRIES, entry("other.desktop", "vim", "other")];
    expect(matchLaunchable("vim", clash).id).toBe("vim.desktop");
  });

  it("two entries with one name are AMBIGUOUS_APP listing both ids", () => {
    const twice = [...ENTRIES, entry("org.kde.kcalc.desktop", "Calculator", "kcalc")];
    const e = refused(() => matchLaunchable("calculator", twice));
    expect(e.code).toBe("AMBIGUOUS_APP");
    expect(e.message).toContain("org.gnome.Calculator.desktop");
    expect(e.message).toContain("org.kde.kcalc.desktop");
  });

  it("a typo or a part of a name starts nothing: APP_NOT_FOUND naming the closest entries first", () => {
    const typo = refused(() => matchLaunchable("gtk3-widget-factroy", ENTRIES));
    expect(typo.code).toBe("APP_NOT_FOUND");
    expect(typo.hint).toMatch(
      /^the closest launchable apps are gtk3-widget-factory\.desktop \("Widget Factory"\)/,
    );
    const part = refused(() => matchLaunchable("calculat", ENTRIES));
    expect(part.hint).toContain("galculator.desktop");
    expect(part.hint).toContain("org.gnome.Calculator.desktop");
    const none = refused(() => matchLaunchable("zzzzzzzzzzzzqqq", ENTRIES));
    expect(none.hint).toMatch(/no launchable app has a similar name/);
  });
});

describe("closestEntries and editDistance", () => {
  it("counts edits", () => {
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("factroy", "factory")).toBe(2);
  });

  it("keeps at most the limit, nearest first", () => {
    const near = closestEntries("gtk3-dem", ENTRIES, 2);
    expect(near.length).toBeLessThanOrEqual(2);
    expect(near[0]!.id).toBe("gtk3-demo.desktop");
  });
});

describe("a backend without a launcher", () => {
  it("refuses listLaunchable and launchApp with ACTION_NOT_SUPPORTED, hinting at starting the app another way", async () => {
    const b = new (loadNative().NativeBackend)("fake", { apps: [] });
    try {
      for (const call of [() => listLaunchable({}, b), () => launchApp("anything", {}, b)]) {
        const e = await call().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(e).toBeInstanceOf(AxsnapError);
        expect((e as AxsnapError).code).toBe("ACTION_NOT_SUPPORTED");
        expect((e as AxsnapError).hint).toMatch(/cannot start apps/);
      }
    } finally {
      await b.close();
    }
  });
});
