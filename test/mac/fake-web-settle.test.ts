/**
 * Settling on web pages (macOS review 3, M2) and notifications that waited in
 * the observer's port between jobs (S3), on the fake CF/AX layer.
 */
import { describe, expect, it } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { createSession } from "../../lib/session/session.js";
import { appWith, at, button, cg, macBackends, PID } from "../support/mac-probes.js";
import { type AXElement, axWindow, loadMacFake, type World, type WorldApp } from "../support/mac-world.js";

const addon = loadMacFake();
const backend = macBackends();

const shown = (t: string) => (t.match(/Result \d+/g) ?? []).length;

/**
 * A single-page app's shape: web area > root > main landmark > results list,
 * the list two containers below the web area. `grow` results appear one every
 * `everyMs` after the world is installed, with no notification (Chromium posts
 * none when children are added: BrowserAccessibilityManagerMac, review 2 N3).
 * `filler` adds static groups of `perGroup` buttons beside the list (a big page).
 */
function spaPage(
  o: {
    grow?: number;
    everyMs?: number;
    filler?: number;
    perGroup?: number;
    mainFaults?: Record<string, unknown>;
  } = {},
): AXElement {
  const results: AXElement = {
    id: 43,
    attrs: { AXRole: "AXList", AXRoleDescription: "list", ...at(100, 200, 800, 400), AXChildren: [] },
    ...(o.grow
      ? {
          hiddenChildren: Array.from({ length: o.grow }, (_, i) =>
            button(100 + i, `Result ${i}`, 120, 200 + (i % 20) * 20),
          ),
          growEveryMs: o.everyMs ?? 40,
        }
      : {}),
  };
  let next = 1000;
  const filler: AXElement[] = Array.from({ length: o.filler ?? 0 }, () => ({
    id: next++,
    attrs: {
      AXRole: "AXGroup",
      ...at(100, 160, 800, 40),
      AXChildren: Array.from({ length: o.perGroup ?? 0 }, () => button(next++, "Static", 120, 170)),
    },
  }));
  const main: AXElement = {
    id: 42,
    attrs: {
      AXRole: "AXGroup",
      AXSubrole: "AXLandmarkMain",
      ...at(100, 160, 800, 460),
      AXChildren: [...filler, results],
    },
    ...(o.mainFaults ? { faults: o.mainFaults } : {}),
  };
  const root: AXElement = {
    id: 41,
    attrs: { AXRole: "AXGroup", ...at(100, 120, 800, 500), AXChildren: [main] },
  };
  return {
    id: 40,
    attrs: {
      AXRole: "AXWebArea",
      AXRoleDescription: "HTML content",
      ...at(100, 120, 800, 500),
      AXChildren: [root],
    },
  };
}

/** A Chromium-like app (it accepts AXManualAccessibility: the backend treats it as a web app) showing `page`. */
function webWorld(page: AXElement, extra: Partial<WorldApp> = {}): World {
  const w = axWindow(10, "Page", [page], { AXMain: true, AXFocused: true });
  return {
    focusedPid: PID,
    apps: [appWith([w], 10, { chromium: { revealAfterMs: 0 }, ...extra })],
    windows: [cg(10, "Page")],
  };
}

/** Opens the app as an agent does (the snapshot asks for the Chromium tree), then lets the snapshot go. */
async function opened(b: NativeBackend): Promise<number> {
  const s = await createSession({ backend: b }).snapshot({ app: PID, screenshot: false });
  const n = shown(s.text);
  await s.release();
  return n;
}

describe("M2: web content that changes below the web area's first level", () => {
  // The review's M2 probe, turned: it asserted settled "quiet" with 0 events while the list grew.
  it("a results list two containers below the web area that keeps growing is not taken for quiet", async () => {
    const b = backend(webWorld(spaPage({ grow: 200, everyMs: 40 })));
    const session = createSession({ backend: b });
    const n0 = await opened(b);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 1500 });
    expect(r.settled).toBe("cap");
    expect(r.events).toBeGreaterThan(0);
    expect(r.quietMs).toBe(400);
    const st = await b.waitEvents(PID, Number.MAX_SAFE_INTEGER, 0);
    expect(st.recent).toContain("AXWebAreaChanged (sampled)");
    const after = await session.snapshot({ app: PID, screenshot: false });
    expect(shown(after.text)).toBeGreaterThan(n0 + 5);
    await session.close();
  });

  it("growth that stops: the wait settles quiet after the last result appeared, and the next snapshot has them all", async () => {
    const b = backend(webWorld(spaPage({ grow: 20, everyMs: 60 })));
    const session = createSession({ backend: b });
    await opened(b);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 5000 });
    expect(r.settled).toBe("quiet");
    expect(r.events).toBeGreaterThan(0);
    const after = await session.snapshot({ app: PID, screenshot: false });
    expect(shown(after.text)).toBe(20);
    await session.close();
  });

  it("a deep page that does not change settles quiet at the 400 ms floor, with no event", async () => {
    const b = backend(webWorld(spaPage({ grow: 0, filler: 20, perGroup: 5 })));
    await opened(b);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 5000 });
    expect(r).toMatchObject({ settled: "quiet", events: 0, quietMs: 400 });
    expect(r.ms).toBeLessThan(1000);
  });

  it("a huge page (5,000 nodes) is sampled within the bound on nodes: a bounded number of reads per sample", async () => {
    const b = backend(webWorld(spaPage({ grow: 0, filler: 50, perGroup: 100 })));
    await opened(b);
    const calls0 = addon.fakeAXCalls();
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 5000 });
    const calls = addon.fakeAXCalls() - calls0;
    expect(r).toMatchObject({ settled: "quiet", events: 0, quietMs: 400 });
    expect(r.ms).toBeLessThan(1000);
    // One sample per 100 ms at most (and one at each end): each reads at most its 256 nodes and the busy flag.
    const samples = Math.ceil(r.ms / 100) + 2;
    expect(calls).toBeLessThanOrEqual(samples * 258);
    expect(calls).toBeGreaterThan(256); // it did go past the first levels
  });

  it("a slow app (each read 5 ms): samples cut by time at different nodes are compared on what both read, no false change", async () => {
    const b = backend(webWorld(spaPage({ grow: 0, filler: 10, perGroup: 4 }), { hungMs: 5 }));
    await opened(b);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 3000 });
    expect(r).toMatchObject({ settled: "quiet", events: 0, quietMs: 400 });
    expect(r.ms).toBeLessThan(1200);
  });

  it("a slow app whose list grows inside what a cut sample still reads is not taken for quiet", async () => {
    const b = backend(webWorld(spaPage({ grow: 200, everyMs: 40 }), { hungMs: 5 }));
    await opened(b);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 1500 });
    expect(r.settled).toBe("cap");
    expect(r.events).toBeGreaterThan(0);
  });

  it("an element destroyed mid-sample (kAXErrorInvalidUIElement) does not break the wait: the change is counted, then quiet", async () => {
    const b = backend(
      webWorld(spaPage({ grow: 0, filler: 3, perGroup: 2, mainFaults: { dieAfterReads: 4 } })),
    );
    await opened(b);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 5000 });
    // The main landmark answers the snapshot (a batch and its children: 2 reads) and the wait's first two
    // samples, then kAXErrorInvalidUIElement: its death is one change, after which the page is quiet again.
    expect(r).toMatchObject({ settled: "quiet", events: 1, quietMs: 400 });
    expect(r.ms).toBeLessThan(1500);
    const st = await b.waitEvents(PID, Number.MAX_SAFE_INTEGER, 0);
    expect(st.watching).toBe(true);
    expect(st.recent).toEqual(["AXWebAreaChanged (sampled)"]);
  });
});

/**
 * S3 (review 3, N10 residue): a notification that waited in the observer's
 * port between jobs is counted when a drain dispatches it, so its time is the
 * drain's (AX callbacks carry no time). Settling takes its baseline at its
 * start, so a backlog drained at the start of its job is not "recent"; these
 * pin that for both doors that wait for quiet (docs/macos.md, "What is
 * verified here").
 */
describe("S3: notifications that waited in the port between jobs", () => {
  const QUIET = 400;
  const nativeWorld = (): World => ({
    focusedPid: PID,
    apps: [appWith([axWindow(10, "Doc", [button(21, "OK")], { AXMain: true, AXFocused: true })], 10)],
    windows: [cg(10, "Doc")],
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it("a backlog drained at the start of the settle's job is its baseline: quiet is not delayed by it", async () => {
    const b = backend(nativeWorld());
    await b.watch(PID);
    // Posted while no job runs: it waits in the port until the next job's first drain.
    addon.fakeNotify(PID, "AXValueChanged", 21);
    addon.fakeNotify(PID, "AXTitleChanged");
    await sleep(200);
    const r = await b.waitQuiet(PID, { quietMs: QUIET, capMs: 5000 });
    expect(r).toMatchObject({ settled: "quiet", events: 0, quietMs: QUIET });
    // Not QUIET more (the backlog taken for activity at the drain): the wait's own QUIET and no more.
    expect(r.ms).toBeLessThan(QUIET + QUIET / 2);
    expect(b.fakeLog().filter((l) => l.startsWith("notify "))).toHaveLength(2);
  });

  it("waitFor({ idle }) after a backlog is not delayed by a full quiet period either", async () => {
    const b = backend(nativeWorld());
    const session = createSession({ backend: b });
    await session.snapshot({ app: PID, screenshot: false });
    const timed = async () => {
      const t0 = performance.now();
      await session.waitFor(PID, { idle: true, quietMs: QUIET }, { timeoutMs: 5000 });
      return performance.now() - t0;
    };
    const calm = await timed();
    addon.fakeNotify(PID, "AXValueChanged", 21);
    await sleep(200);
    const afterBacklog = await timed();
    expect(afterBacklog - calm).toBeLessThan(QUIET / 2);
    await session.close();
  });

  it("a notification posted during another app's long walk is timed by when it came, not by the walk's end", async () => {
    // App B answers every read 5 ms late: its snapshot is one long job on the backend's worker. App A posts
    // one notification early in that job. Counted at the walk's end, it would hold A's idle wait for a whole
    // quiet period after the walk; the walk services the observers' run loop as it goes, so it is counted
    // within ~50 ms of its arrival, and A is idle as soon as the walk ends and QUIET has passed since then.
    const pidB = 600;
    const rows = Array.from({ length: 60 }, (_, i) => button(300 + i, `Row ${i}`));
    const slow: WorldApp = {
      pid: pidB,
      name: "Slow",
      bundleId: "com.example.slow",
      hungMs: 5,
      root: {
        id: 2,
        attrs: {
          AXRole: "AXApplication",
          AXTitle: "Slow",
          AXWindows: [{ ref: 20 }],
          AXChildren: [axWindow(20, "Big", rows, { AXMain: true, AXFocused: true, AXParent: { ref: 2 } })],
          AXFocusedWindow: { ref: 20 },
          AXMainWindow: { ref: 20 },
        },
      },
    };
    const world = nativeWorld();
    const b = backend({
      ...world,
      apps: [...world.apps, slow],
      windows: [...world.windows, { ...cg(20, "Big"), pid: pidB }],
    });
    const session = createSession({ backend: b });
    await session.snapshot({ app: PID, screenshot: false });
    await b.watch(PID);
    const idle = (async () => {
      await session.waitFor(PID, { idle: true, quietMs: QUIET }, { timeoutMs: 8000 });
      return performance.now();
    })();
    await sleep(50);
    const t0 = performance.now();
    const walk = session.snapshot({ app: pidB, screenshot: false });
    await sleep(100);
    addon.fakeNotify(PID, "AXValueChanged", 21);
    const posted = performance.now();
    await (await walk).release();
    const walkEnd = performance.now();
    const idleAt = await idle;
    expect(walkEnd - t0).toBeGreaterThan(QUIET + 100); // the walk is long enough to matter
    // Not a full quiet period after the walk: QUIET after the notification, or the walk's end when later.
    expect(idleAt - Math.max(walkEnd, posted + QUIET)).toBeLessThan(QUIET / 2);
    await session.close();
  });
});
