/**
 * Issue 35 (third macOS review): apps the backend must still find and reopen,
 * on the fake CF/AX layer (test/native/macfake).
 *
 * - N1 (residue): an app with no AX window here whose only windows the window
 *   server lists off screen (closed but kept, or on another Space) is sent
 *   the reopen event (`open -b`) before WINDOW_NOT_FOUND; the fake's
 *   `reopenWindows` are the windows that event orders in.
 * - M4: launchApp by a bundle id the folder scan did not list asks Launch
 *   Services (the fake's installed entries with `listed: false`).
 * - M6: the running apps are built from the process table, not NSWorkspace's
 *   list frozen at its first read; per-pid state goes only with the process.
 *
 * What only a Mac can confirm is listed in docs/macos.md.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { liveObservation, snapshot } from "../../lib/observe/desktop.js";
import { launchApp, listLaunchable } from "../../lib/session/launch/launch.js";
import { APP_ID, appWith, at, button, cg, macBackends, PID } from "../support/mac-probes.js";
import { type AXElement, axWindow, loadMacFake, type World, type WorldApp } from "../support/mac-world.js";
import { rejects } from "../support/rejects.js";

const addon = loadMacFake();
const backend = macBackends();
const tempDirs: string[] = [];
afterEach(() => {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const opens = (b: NativeBackend) => b.fakeLog().filter((l) => l.startsWith("system open"));

describe("issue 35 N1 (residue): an app whose only window is off screen is sent the reopen event", () => {
  // CGWindow.h: kCGWindowListOptionAll lists "all windows in this user session, including both on- and
  // off-screen windows", with no Space number: a window ordered out (closed but kept) and one on another
  // Space look alike. AppKit answers the reopen event with hasVisibleWindows YES for a window on another
  // Space (the app is activated, macOS switches Space) and NO for one ordered out (the app shows it again
  // or makes a new document): `open -b` is right for both.
  it("the app shows its kept window on the reopen event: the snapshot succeeds and says it was recovered", async () => {
    const kept = axWindow(10, "Doc", [button(21, "OK")]);
    const b = backend({
      focusedPid: PID,
      apps: [{ ...appWith([]), reopenWindows: [kept] }],
      windows: [cg(10, "Doc", undefined, { onScreen: false })],
    });
    const s = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(s.text).toMatch(/button OK/);
    expect(opens(b)).toEqual(["system open -b com.example.editor"]);
    expect(liveObservation(s)!.raw.walk.notes!.join(" ")).toMatch(/the window was recovered \(.*open.*\)/);
    await s.release();
  });

  it("the app shows nothing: WINDOW_NOT_FOUND says the reopen event was sent and what else to do", async () => {
    const b = backend({
      focusedPid: PID,
      apps: [{ ...appWith([]), recoverOn: "never" }],
      windows: [cg(77, "", undefined, { onScreen: false })],
    });
    const e = await rejects(snapshot({ app: "Editor", screenshot: false }, b));
    expect(e.code).toBe("WINDOW_NOT_FOUND");
    expect(opens(b)).toEqual(["system open -b com.example.editor"]);
    expect(e.message).toMatch(
      /on another Space or hidden: .*1 window of Editor \(pid 500\) that is not on screen.*not even after a reopen event \(open -b com\.example\.editor\) and activation.*\(after recovery: unhide, activate, open/,
    );
    // S1: the hint names no API that does not exist (it once said `launch("<bundle id>")`).
    expect(`${e.message} ${e.hint}`).not.toMatch(/\blaunch\(/);
    expect(e.hint).toMatch(/switch to that Space.*do not open a new window.*menus/);
  });

  it("an app without a bundle id is not reopened, and the error says why", async () => {
    const b = backend({
      focusedPid: PID,
      apps: [{ ...appWith([]), bundleId: "", recoverOn: "never" }],
      windows: [cg(77, "", undefined, { onScreen: false })],
    });
    const e = await rejects(snapshot({ app: "Editor", screenshot: false }, b));
    expect(e.code).toBe("WINDOW_NOT_FOUND");
    expect(opens(b)).toEqual([]);
    expect(e.message).toMatch(/has no bundle id to send a reopen event to/);
  });

  it("an app that has a window here (minimized) is not reopened: the reopen event would make a second one", async () => {
    const w = axWindow(10, "Doc", [button(21, "OK")], { AXMinimized: true });
    const b = backend({
      focusedPid: PID,
      apps: [appWith([w], 10, { recoverOn: "unminimize" })],
      windows: [cg(10, "Doc", undefined, { onScreen: false })],
    });
    const s = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(s.text).toMatch(/button OK/);
    expect(opens(b)).toEqual([]);
    await s.release();
  });
});

describe("issue 35 M4: launchApp by a bundle id the folder scan did not list asks Launch Services", () => {
  // MacSystem::InstalledApps reads the standard folders and one level inside them; Launch Services
  // (-[NSWorkspace URLForApplicationWithBundleIdentifier:]) knows every registered bundle wherever it is:
  // deeper folders, /System/Library/CoreServices. The fake's `listed: false` entries are those.
  const photoshopWindow = axWindow(8001, "Untitled-1", [button(8002, "New")], {
    AXMain: true,
    AXParent: { ref: 8000 },
  });
  const photoshop: WorldApp = {
    pid: 800,
    name: "Adobe Photoshop 2025",
    bundleId: "com.adobe.Photoshop",
    root: {
      id: 8000,
      attrs: {
        AXRole: "AXApplication",
        AXTitle: "Adobe Photoshop 2025",
        AXWindows: [{ ref: 8001 }],
        AXChildren: [photoshopWindow],
      },
    },
  };
  const world = (): World => ({
    apps: [],
    windows: [{ number: 81, pid: 800, bounds: { x: 100, y: 80, w: 800, h: 600 }, name: "Untitled-1" }],
    installed: [
      {
        bundleId: "com.example.Listed",
        name: "Listed",
        executable: "Listed",
        path: "/Applications/Listed.app",
      },
      {
        bundleId: "com.adobe.Photoshop",
        name: "Adobe Photoshop 2025",
        executable: "Adobe Photoshop 2025",
        path: "/Applications/Adobe Photoshop 2025/Sub/Adobe Photoshop 2025.app",
        listed: false,
        app: photoshop,
      },
    ],
  });
  const requests = (b: NativeBackend) =>
    b.fakeLog().filter((l) => l.includes("open application") || l.includes("launch services"));

  it("an unlisted bundle id is launched through Launch Services; the pid comes back", async () => {
    const b = backend(world());
    expect((await listLaunchable({}, b)).map((e) => e.id)).toEqual(["com.example.Listed"]);
    const launched = await launchApp("com.adobe.Photoshop", { deadlineMs: 2000 }, b);
    expect(launched).toMatchObject({ pid: 800, via: "bundle", name: "Adobe Photoshop 2025" });
    expect(launched.entry).toMatchObject({
      id: "com.adobe.Photoshop",
      path: expect.stringMatching(/\.app$/),
    });
    expect(launched.window.title).toBe("Untitled-1");
    expect(requests(b)).toEqual([
      "system launch services com.adobe.Photoshop",
      "system open application com.adobe.Photoshop args=[] env=",
    ]);
  });

  it("bundle ids compare without case: the id Launch Services gives is the one opened", async () => {
    const b = backend(world());
    const launched = await launchApp("COM.ADOBE.PHOTOSHOP", { deadlineMs: 2000 }, b);
    expect(launched.pid).toBe(800);
    expect(requests(b).at(-1)).toBe("system open application com.adobe.Photoshop args=[] env=");
  });

  it("an id Launch Services does not know either is APP_NOT_FOUND, and nothing is opened", async () => {
    const b = backend(world());
    const e = await rejects(launchApp("com.example.Nowhere", { deadlineMs: 2000 }, b));
    expect(e.code).toBe("APP_NOT_FOUND");
    expect(e.message).toMatch(
      /no launchable app is called "com\.example\.Nowhere", and Launch Services knows no bundle id/,
    );
    expect(e.hint).toMatch(/listLaunchable\(\).*check the bundle id/);
    expect(requests(b)).toEqual(["system launch services com.example.Nowhere"]);
  });

  it("a name that is no bundle id is not asked of Launch Services: the listing's refusal stands", async () => {
    const b = backend(world());
    const e = await rejects(launchApp("Photoshop", { deadlineMs: 2000 }, b));
    expect(e.code).toBe("APP_NOT_FOUND");
    expect(e.message).toBe('no launchable app is called "Photoshop"');
    expect(requests(b)).toEqual([]);
  });

  it("a listed bundle is started from the listing, without asking Launch Services again", async () => {
    const w = world();
    w.installed = [
      {
        ...w.installed![0]!,
        app: { ...photoshop, pid: 801, bundleId: "com.example.Listed", name: "Listed" },
      },
    ];
    w.windows = [{ number: 81, pid: 801, bounds: { x: 100, y: 80, w: 800, h: 600 }, name: "Untitled-1" }];
    const b = backend(w);
    const launched = await launchApp("com.example.Listed", { deadlineMs: 2000 }, b);
    expect(launched.pid).toBe(801);
    expect(requests(b)).toEqual(["system open application com.example.Listed args=[] env="]);
  });
});

describe("issue 35 M6: the running apps come from the process table; state goes with the process", () => {
  // Apple: NSWorkspace.runningApplications "will only change when the main run loop runs in a common mode",
  // which Node's never does. The list is now built from proc_listallpids and
  // +[NSRunningApplication runningApplicationWithProcessIdentifier:] per pid (the fake's AppOfProcess:
  // every app of the world now; `processes` are pids that are no app).
  const PREVIEW = 600;
  const preview = (extra: Partial<WorldApp> = {}): WorldApp => ({
    pid: PREVIEW,
    name: "Preview",
    bundleId: "com.apple.Preview",
    root: { id: 6000, attrs: { AXRole: "AXApplication", AXTitle: "Preview", AXWindows: [], AXChildren: [] } },
    ...extra,
  });

  it("an app started after the first listing, with no window at all, is found and reopened", async () => {
    const editor = appWith([axWindow(10, "Doc", [button(21, "OK")], { AXMain: true })], 10);
    const b = backend({ focusedPid: PID, apps: [editor], windows: [cg(10, "Doc")], processes: [1, 77] });
    expect((await b.listApps(2000)).map((a) => a.name)).toEqual(["Editor"]);
    // Preview starts later and its window is closed (it keeps running): no window anywhere.
    const kept = axWindow(6001, "Document.pdf", [button(6002, "Zoom")]);
    kept.attrs.AXParent = { ref: 6000 };
    addon.fakeWorldReplace({
      focusedPid: PID,
      apps: [editor, preview({ reopenWindows: [kept] })],
      windows: [cg(10, "Doc"), { ...cg(61, "Document.pdf"), pid: PREVIEW, onScreen: false }],
      processes: [1, 77],
    });
    const s = await snapshot({ app: "Preview", screenshot: false }, b);
    expect(s.text).toMatch(/button Zoom/);
    expect(opens(b)).toEqual(["system open -b com.apple.Preview"]);
    await s.release();
  });

  it("processes that are no application are not listed; a later listing asks only about new pids and apps", async () => {
    const daemons = Array.from({ length: 300 }, (_, i) => 1000 + i);
    const b = backend({ apps: [preview()], windows: [], processes: daemons });
    const q0 = addon.fakeAppQueries();
    expect((await b.listApps(2000)).map((a) => a.pid)).toEqual([PREVIEW]);
    expect(addon.fakeAppQueries() - q0).toBe(301);
    await b.listApps(2000);
    expect(addon.fakeAppQueries() - q0).toBe(302); // the app only
    // A new process: asked (it may be an app still checking in), the daemons are not.
    addon.fakeWorldReplace({ apps: [preview()], windows: [], processes: [...daemons, 5000] });
    await b.listApps(2000);
    expect(addon.fakeAppQueries() - q0).toBe(304);
  });

  /** An Electron app (a bundle with Electron Framework) whose tree needs AXEnhancedUserInterface. */
  function electron(windows: AXElement[], extra: Partial<WorldApp> = {}): WorldApp {
    const bundle = mkdtempSync(join(tmpdir(), "axsnap-electron-"));
    tempDirs.push(bundle);
    mkdirSync(join(bundle, "Contents", "Frameworks", "Electron Framework.framework"), { recursive: true });
    return appWith(windows, windows[0]?.id, {
      bundlePath: bundle,
      chromium: { revealAfterMs: 50, attribute: "AXEnhancedUserInterface" },
      ...extra,
    });
  }
  const page = (): AXElement => {
    const webArea: AXElement = {
      id: 40,
      attrs: {
        AXRole: "AXWebArea",
        AXRoleDescription: "HTML content",
        ...at(100, 120, 800, 500),
        AXChildren: [],
      },
      hiddenChildren: [button(41, "Sign in")],
    };
    return axWindow(10, "Page", [webArea], { AXMain: true });
  };
  const enhancedSets = (b: NativeBackend) => b.fakeLog().filter((l) => l.includes("AXEnhancedUserInterface"));

  async function turnedOn(): Promise<{ b: NativeBackend; app: WorldApp }> {
    // The backend's first listing has no Electron app: it starts later.
    const b = backend({ apps: [], windows: [], processes: [1] });
    await b.listApps(2000);
    const app = electron([page()]);
    addon.fakeWorldReplace({ focusedPid: PID, apps: [app], windows: [cg(10, "Page")], processes: [1] });
    const s = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(s.text).toMatch(/button Sign in/);
    expect(enhancedSets(b)).toEqual(["set 1 AXEnhancedUserInterface true"]);
    await s.release();
    return { b, app };
  }

  it("an app whose windows all closed keeps its AXEnhancedUserInterface record: turned off at close", async () => {
    const { b, app } = await turnedOn();
    // Its last window closes; the app runs on (Chrome, Slack) with no window anywhere.
    addon.fakeWorldReplace({
      apps: [
        { ...app, root: { id: APP_ID, attrs: { AXRole: "AXApplication", AXWindows: [], AXChildren: [] } } },
      ],
      windows: [],
      processes: [1],
    });
    expect((await b.listApps(2000)).map((a) => a.pid)).toContain(PID);
    await b.close();
    expect(enhancedSets(b)).toEqual(["set 1 AXEnhancedUserInterface false"]);
  });

  it("an app that quit loses its record: nothing is set on its pid at close", async () => {
    const { b } = await turnedOn();
    addon.fakeWorldReplace({ apps: [], windows: [], processes: [1] });
    await b.listApps(2000);
    // The pid comes back as another app before the close: it must not get the reset either.
    addon.fakeWorldReplace({
      apps: [{ ...appWith([]), name: "Other", bundleId: "com.example.other" }],
      windows: [],
      processes: [1],
    });
    await b.close();
    expect(enhancedSets(b)).toEqual([]);
  });

  it("a pid reused by another app between two listings does not inherit the record", async () => {
    const { b } = await turnedOn();
    addon.fakeWorldReplace({
      apps: [{ ...appWith([]), name: "Other", bundleId: "com.example.other" }],
      windows: [],
      processes: [1],
    });
    await b.listApps(2000);
    await b.close();
    expect(enhancedSets(b)).toEqual([]);
  });
});
