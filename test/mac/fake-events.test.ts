/**
 * The macOS backend's change events on the fake CF/AX layer, for the second
 * macOS review (macos-review-2.md): N3 (the notifications registered, and a
 * second signal for web apps, whose silence proves nothing), N10 (the
 * observer's run loop drained at job boundaries; sessions unwatch the apps
 * they no longer observe), N11 (a registration cut short is completed by a
 * later Watch). What only a real Mac can confirm is in docs/macos.md
 * ("What is verified here"): which apps post these names, and what a Mach port does with
 * notifications nobody reads.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { unwatchLinger } from "../../lib/session/act/watches.js";
import { createSession } from "../../lib/session/session.js";
import {
  type AXElement,
  axWindow,
  type CGWindow,
  loadMacFake,
  macBackend,
  type World,
  type WorldApp,
} from "../support/mac-world.js";

const addon = loadMacFake();
const open: NativeBackend[] = [];
function backend(world: World): NativeBackend {
  const b = macBackend(world);
  open.push(b);
  return b;
}
const defaultLinger = unwatchLinger.ms;
afterEach(async () => {
  unwatchLinger.ms = defaultLinger;
  for (const b of open.splice(0)) await b.close();
  addon.macDirectClose();
  expect(addon.fakeObservers()).toBe(0);
  addon.fakeWorldClear();
  expect(addon.fakeCFLive()).toBe(0);
});

const PID = 500;
const APP_ID = 1;
const at = (x: number, y: number, w: number, h: number) => ({ AXPosition: { x, y }, AXSize: { w, h } });

const button = (id: number, title: string): AXElement => ({
  id,
  attrs: {
    AXRole: "AXButton",
    AXRoleDescription: "button",
    AXTitle: title,
    AXEnabled: true,
    ...at(120, 120, 50, 24),
  },
  actions: ["AXPress"],
});

/** The worlds' window, main and focused: the app's one window. */
const windowEl = (id: number, title: string, children: AXElement[]) =>
  axWindow(id, title, children, { AXMain: true, AXFocused: true });

function appWith(windows: AXElement[], extra: Partial<WorldApp> = {}): WorldApp {
  return {
    pid: PID,
    name: "Editor",
    bundleId: "com.example.editor",
    ...extra,
    root: {
      id: APP_ID,
      attrs: {
        AXRole: "AXApplication",
        AXTitle: "Editor",
        AXWindows: windows.map((w) => ({ ref: w.id })),
        AXChildren: windows,
        AXFocusedWindow: { ref: windows[0]!.id },
        AXMainWindow: { ref: windows[0]!.id },
      },
    },
  };
}

const cg = (number: number, title: string): CGWindow => ({
  number,
  pid: PID,
  bounds: { x: 100, y: 80, w: 800, h: 600 },
  layer: 0,
  name: title,
  onScreen: true,
  alpha: 1,
});

function nativeWorld(extra: Partial<WorldApp> = {}): World {
  const w = windowEl(10, "Doc", [button(21, "OK")]);
  return { focusedPid: PID, apps: [appWith([w], extra)], windows: [cg(10, "Doc")] };
}

/**
 * A Chromium-like app (it accepts AXManualAccessibility) whose page shows one
 * more result every `growEveryMs` and posts no notification for it, as
 * Chromium posts nothing for children added (the review's N3 evidence).
 */
function webWorld(growEveryMs: number): World {
  const results = Array.from({ length: 200 }, (_, i) => button(100 + i, `Result ${i}`));
  const webArea: AXElement = {
    id: 40,
    attrs: {
      AXRole: "AXWebArea",
      AXRoleDescription: "HTML content",
      ...at(100, 120, 800, 500),
      AXChildren: [button(41, "Search")],
    },
    hiddenChildren: results,
    ...(growEveryMs > 0 ? { growEveryMs } : {}),
  };
  const w = windowEl(10, "Page", [webArea]);
  return {
    focusedPid: PID,
    apps: [appWith([w], { chromium: { revealAfterMs: 0 } })],
    windows: [cg(10, "Page")],
  };
}

describe("N3: the notifications registered", () => {
  it("window moves and resizes and web content's notifications are registered and counted; window ones as window events", () => {
    addon.macDirectOpen(nativeWorld());
    const w = addon.macDirectWatch(PID, 2000);
    expect(w.code).toBe("NONE");
    const windowish = ["AXWindowMoved", "AXWindowResized", "AXLoadComplete"];
    const content = [
      "AXLayoutComplete",
      "AXLiveRegionChanged",
      "AXLiveRegionCreated",
      "AXExpandedChanged",
      "AXInvalidStatusChanged",
    ];
    for (const n of [...windowish, ...content]) expect(w.added).toContain(n);
    expect(w.refused).toEqual([]);
    for (const n of windowish) addon.fakeNotify(PID, n, 10);
    let e = addon.macDirectWait(PID, 2, 2000);
    expect(e).toMatchObject({ stamp: 3, windowStamp: 3 });
    for (const n of content) addon.fakeNotify(PID, n, 21);
    e = addon.macDirectWait(PID, 7, 2000);
    expect(e).toMatchObject({ stamp: 8, windowStamp: 3 });
    expect(e.recent.slice(-5)).toEqual(content);
  });

  it("an app that refuses the web names is still watched (they are named as refused)", () => {
    addon.macDirectOpen(nativeWorld({ refuseNotifications: ["AXLoadComplete", "AXLiveRegionChanged"] }));
    const w = addon.macDirectWatch(PID, 2000);
    expect(w.code).toBe("NONE");
    expect(w.refused).toEqual([
      "AXLoadComplete: kAXErrorNotificationUnsupported",
      "AXLiveRegionChanged: kAXErrorNotificationUnsupported",
    ]);
    expect(w.added).toContain("AXWindowMoved");
  });
});

describe("N3: web apps are not settled by silence alone", () => {
  it("a Chromium-like page that keeps growing without notifications does not settle quiet", async () => {
    const b = backend(webWorld(40));
    // The snapshot asks for the Chromium tree (AXManualAccessibility accepted): the app is a web app.
    const s = await createSession({ backend: b }).snapshot({ app: PID, screenshot: false });
    await s.release();
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 1500 });
    expect(r.settled).toBe("cap");
    expect(r.events).toBeGreaterThan(0);
    // A web app's quiet floor, as for Chromium on Linux.
    expect(r.quietMs).toBe(400);
    const st = await b.waitEvents(PID, Number.MAX_SAFE_INTEGER, 0);
    expect(st.recent).toContain("AXWebAreaChanged (sampled)");
    expect(st.quietFloorMs).toBe(400);
  });

  it("waitFor({ idle }) on that page does not find it idle either (the same stamps)", async () => {
    const b = backend(webWorld(40));
    const session = createSession({ backend: b });
    await session.snapshot({ app: PID, screenshot: false });
    const err = await session.waitFor(PID, { idle: true, quietMs: 150 }, { timeoutMs: 1500 }).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    );
    expect(err?.code).toBe("TIMEOUT");
    await session.close();
  });

  it("the same page, not changing, settles quiet: sampling finds nothing to count", async () => {
    const b = backend(webWorld(0));
    const s = await createSession({ backend: b }).snapshot({ app: PID, screenshot: false });
    await s.release();
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 5000 });
    expect(r.settled).toBe("quiet");
    expect(r.events).toBe(0);
    expect(r.quietMs).toBe(400);
  });

  it("a native app's silence is trusted as before: no sampling, no floor", async () => {
    // A list that grows without notifications: only web apps are sampled (a native app posts AXCreated).
    const list: AXElement = {
      id: 30,
      attrs: { AXRole: "AXList", ...at(100, 120, 800, 500), AXChildren: [] },
      hiddenChildren: Array.from({ length: 200 }, (_, i) => button(100 + i, `Row ${i}`)),
      growEveryMs: 40,
    };
    const w = windowEl(10, "Doc", [list]);
    const b = backend({ focusedPid: PID, apps: [appWith([w])], windows: [cg(10, "Doc")] });
    await createSession({ backend: b }).snapshot({ app: PID, screenshot: false });
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 5000 });
    expect(r).toMatchObject({ settled: "quiet", events: 0, quietMs: 150 });
  });
});

describe("N10: the observer's run loop between waits", () => {
  const notified = (b: NativeBackend) => b.fakeLog().filter((l) => l.startsWith("notify "));

  it("notifications are dispatched at the end of the job that caused them and at the start of the next job", async () => {
    const world = nativeWorld({ notifications: [{ atMs: 0, name: "AXValueChanged", element: 21 }] });
    const b = backend(world);
    await b.watch(PID);
    // Scripted at the observer's creation: the watch job's end drained it; nobody waited for events.
    expect(notified(b)).toEqual(["notify 500 AXValueChanged 21"]);
    addon.fakeNotify(PID, "AXTitleChanged");
    await b.listApps(2000);
    expect(notified(b)).toEqual(["notify 500 AXValueChanged 21", "notify 500 AXTitleChanged"]);
    const st = await b.waitEvents(PID, Number.MAX_SAFE_INTEGER, 0);
    expect(st.stamp).toBe(2);
  });

  it("a session unwatches the apps it observed when it closes, once no other session observes them", async () => {
    unwatchLinger.ms = 0;
    const b = backend(nativeWorld());
    const one = createSession({ backend: b });
    const two = createSession({ backend: b });
    await one.snapshot({ app: PID, screenshot: false });
    await two.snapshot({ app: PID, screenshot: false });
    // The watch is queued behind the snapshot: any later job has seen it.
    await b.listApps(2000);
    expect(addon.fakeObservers()).toBe(1);
    await one.close();
    expect(addon.fakeObservers()).toBe(1);
    await two.close();
    expect(addon.fakeObservers()).toBe(0);
    expect(b.fakeLog()).toContain("unobserve 1 AXValueChanged");
    // Observed again: watched again, counting.
    const three = createSession({ backend: b });
    await three.snapshot({ app: PID, screenshot: false });
    await b.listApps(2000);
    expect(addon.fakeObservers()).toBe(1);
    await three.close();
    expect(addon.fakeObservers()).toBe(0);
  });

  it("an app no session observes stays watched a while: the next session's snapshot does not watch it again", async () => {
    unwatchLinger.ms = 60_000;
    const b = backend(nativeWorld());
    const registrations = () => b.fakeLog().filter((l) => l === "observe 1 AXValueChanged").length;
    const one = createSession({ backend: b });
    await one.snapshot({ app: PID, screenshot: false });
    await one.close();
    await b.listApps(2000);
    expect(addon.fakeObservers()).toBe(1);
    const two = createSession({ backend: b });
    await two.snapshot({ app: PID, screenshot: false });
    await b.listApps(2000);
    expect(registrations()).toBe(1);
    // Then it goes once the linger passes with nobody observing.
    unwatchLinger.ms = 50;
    await two.close();
    await vi.waitFor(() => expect(addon.fakeObservers()).toBe(0), { timeout: 5000, interval: 20 });
  });
});

describe("N11: a registration cut short", () => {
  it("names a busy app did not register (and those not tried after it) are registered by a later Watch", () => {
    const busy = nativeWorld({ busyNotifications: ["AXTitleChanged"] });
    addon.macDirectOpen(busy);
    const first = addon.macDirectWatch(PID, 2000);
    expect(first.code).toBe("NONE");
    expect(first.added).toEqual(["AXCreated", "AXUIElementDestroyed", "AXValueChanged"]);
    expect(first.refused).toContain("AXTitleChanged: kAXErrorCannotComplete");
    addon.fakeNotify(PID, "AXMoved", 21);
    expect(addon.macDirectWait(PID, 0, 150).stamp).toBe(0);
    // The busy moment is over.
    addon.fakeWorldReplace(nativeWorld());
    const second = addon.macDirectWatch(PID, 2000);
    expect(second.code).toBe("NONE");
    expect(second.refused).toEqual([]);
    for (const n of ["AXTitleChanged", "AXMoved", "AXWindowMoved", "AXLoadComplete"])
      expect(second.added).toContain(n);
    expect(addon.fakeObservers()).toBe(1);
    addon.fakeNotify(PID, "AXMoved", 21);
    expect(addon.macDirectWait(PID, 0, 2000).stamp).toBe(1);
  });

  it("names the deadline cut off are registered by a later Watch", () => {
    // Each registration takes 150 ms: a 400 ms deadline registers two or three of them.
    addon.macDirectOpen(nativeWorld({ hungMs: 150 }));
    const first = addon.macDirectWatch(PID, 400);
    expect(first.code).toBe("NONE");
    expect(first.added.length).toBeGreaterThan(0);
    expect(first.added).not.toContain("AXMoved");
    expect(first.refused).toContain("AXMoved: the deadline passed");
    addon.fakeWorldReplace(nativeWorld());
    const second = addon.macDirectWatch(PID, 2000);
    expect(second.code).toBe("NONE");
    expect(second.refused).toEqual([]);
    expect(second.added).toContain("AXMoved");
    expect(second.added).toContain("AXInvalidStatusChanged");
    addon.fakeNotify(PID, "AXMoved", 21);
    expect(addon.macDirectWait(PID, 0, 2000).stamp).toBe(1);
  });

  it("an app still busy keeps its names for a later retry, named as refused", () => {
    addon.macDirectOpen(nativeWorld({ busyNotifications: ["AXTitleChanged"] }));
    expect(addon.macDirectWatch(PID, 2000).code).toBe("NONE");
    const again = addon.macDirectWatch(PID, 2000);
    expect(again.code).toBe("NONE");
    expect(again.added).not.toContain("AXTitleChanged");
    expect(again.refused).toContain("AXTitleChanged: kAXErrorCannotComplete");
    // Asked twice (the first Watch and its retry), not once per name per Watch.
    expect(addon.fakeWorldLog().filter((l) => l.startsWith("observe 1 AXTitleChanged"))).toHaveLength(2);
  });
});
