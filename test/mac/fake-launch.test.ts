/**
 * launchApp on the macOS backend (src-native/mac, NSWorkspace behind
 * MacSystem) compiled against the fake layer of test/native/macfake: the
 * world's installed bundles are what listLaunchable lists; opening one logs
 * the NSWorkspace request (bundle id or path, arguments, environment names)
 * and makes its scripted app run, whose window launchApp then waits for.
 *
 * What only a Mac can confirm: that NSWorkspace finds the bundle
 * (URLForApplicationWithBundleIdentifier:), gives the new app's pid in its
 * completion handler, passes arguments and environment as configured, and
 * that the standard folders hold what the listing reads.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import type { NativeBackend } from "../../lib/native.js";
import { launchApp, listLaunchable } from "../../lib/session/launch/launch.js";
import { type AXElement, loadMacFake, macBackend, type World, type WorldApp } from "../support/mac-world.js";

const open: NativeBackend[] = [];

afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
  const addon = loadMacFake();
  addon.fakeWorldClear();
  expect(addon.fakeCFLive()).toBe(0);
});

function app(pid: number, name: string, bundleId: string, windows: AXElement[]): WorldApp {
  return {
    pid,
    name,
    bundleId,
    bundlePath: `/Applications/${name}.app`,
    root: {
      id: pid * 10,
      attrs: {
        AXRole: "AXApplication",
        AXTitle: name,
        AXWindows: windows.map((w) => ({ ref: w.id })),
        AXChildren: windows,
      },
    },
  };
}

const notesWindow: AXElement = {
  id: 7001,
  attrs: {
    AXRole: "AXWindow",
    AXTitle: "Untitled",
    AXMain: true,
    AXPosition: { x: 100, y: 100 },
    AXSize: { w: 600, h: 400 },
    AXChildren: [
      {
        id: 7002,
        attrs: {
          AXRole: "AXButton",
          AXTitle: "New Note",
          AXPosition: { x: 120, y: 120 },
          AXSize: { w: 80, h: 24 },
        },
        actions: ["AXPress"],
      },
    ],
  },
};

function world(): World {
  return {
    apps: [],
    windows: [{ number: 71, pid: 700, bounds: { x: 100, y: 100, w: 600, h: 400 }, name: "Untitled" }],
    installed: [
      {
        bundleId: "com.example.Notes",
        name: "Notes",
        executable: "Notes",
        path: "/Applications/Notes.app",
        app: app(700, "Notes", "com.example.Notes", [notesWindow]),
      },
      {
        bundleId: "com.example.Daemon",
        name: "Daemon",
        executable: "daemond",
        path: "/Applications/Daemon.app",
        app: app(701, "Daemon", "com.example.Daemon", []),
      },
      {
        bundleId: "com.example.Broken",
        name: "Broken",
        executable: "Broken",
        path: "/Applications/Broken.app",
      },
    ],
  };
}

function backend(): NativeBackend {
  const b = macBackend(world());
  open.push(b);
  return b;
}

async function refusal(p: Promise<unknown>): Promise<AxsnapError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AxsnapError) return e;
    throw e;
  }
  throw new Error("the call was not refused");
}

describe("launchApp on the macOS backend (fake NSWorkspace)", () => {
  it("lists the installed bundles with their ids, names and executables", async () => {
    const b = backend();
    const entries = await listLaunchable({}, b);
    expect(entries.map((e) => e.id)).toEqual([
      "com.example.Broken",
      "com.example.Daemon",
      "com.example.Notes",
    ]);
    expect(entries.find((e) => e.id === "com.example.Notes")).toMatchObject({
      name: "Notes",
      executable: "Notes",
      path: "/Applications/Notes.app",
    });
  });

  it("opens a bundle by name through NSWorkspace, with the arguments and only the given environment", async () => {
    const b = backend();
    const launched = await launchApp("Notes", { args: ["--fresh"], env: { AXSNAP_TEST: "1" } }, b);
    expect(launched).toMatchObject({ pid: 700, name: "Notes", via: "bundle" });
    expect(launched.entry?.id).toBe("com.example.Notes");
    expect(launched.window.title).toBe("Untitled");
    expect(b.fakeLog()).toContain("system open application com.example.Notes args=[--fresh] env=AXSNAP_TEST");
  });

  it("opens by bundle id and by .app path; a running app is activated and its pid given", async () => {
    const b = backend();
    const byId = await launchApp("com.example.Notes", {}, b);
    const byPath = await launchApp("/Applications/Notes.app", {}, b);
    expect(byId.pid).toBe(700);
    expect(byPath.pid).toBe(700);
    expect(b.fakeLog()).toContain("system open application com.example.Notes args=[] env=");
  });

  it("a bundle that starts but opens no window is TIMEOUT with its pid", async () => {
    const b = backend();
    const e = await refusal(launchApp("Daemon", { deadlineMs: 700 }, b));
    expect(e.code).toBe("TIMEOUT");
    expect(e.pid).toBe(701);
    expect(e.delivery).toBe("delivered_unverified");
  });

  it("a bundle NSWorkspace cannot open is the error it gave; a typo names the closest bundles", async () => {
    const b = backend();
    const broken = await refusal(launchApp("Broken", {}, b));
    expect(broken.code).toBe("ACTION_FAILED");
    expect(broken.message).toContain("NSCocoaErrorDomain");
    const typo = await refusal(launchApp("Notez", {}, b));
    expect(typo.code).toBe("APP_NOT_FOUND");
    expect(typo.hint).toContain("com.example.Notes");
    expect(b.fakeLog().filter((l) => l.includes("open application"))).toEqual([
      "system open application com.example.Broken args=[] env=",
    ]);
  });
});
