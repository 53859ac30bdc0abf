/**
 * Change events and settling on the fake backend: every scripted mutation
 * (fakeReplace, an action's effect, input) is an event of its app; the
 * churnAfterAction and rebuildAfterMs faults make an app keep changing, or
 * show a half-built window, after it answered. waitQuiet must wait those out
 * (quiet) or stop at its cap, and say which; a desktop without events says
 * "unsupported" at once. Real native code and worker thread; only the
 * desktop is scripted.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RawNode } from "../../lib/model/model.js";
import { callNative, loadNative, type NativeBackend } from "../../lib/native.js";

type Node = Record<string, unknown>;
const native = loadNative();
const open: NativeBackend[] = [];
const PID = 4242;

function fake(script: object): NativeBackend {
  const b = new native.NativeBackend("fake", script);
  open.push(b);
  return b;
}

afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

const frame = { x: 100, y: 100, w: 800, h: 600 };
function desktop(go: Node = {}, extra: Node = {}) {
  return {
    apps: [
      {
        name: "Calc",
        pid: PID,
        focused: true,
        windows: [
          {
            title: "Calc",
            frame,
            focused: true,
            root: {
              role: "frame",
              title: "Calc",
              frame,
              children: [
                { role: "menu bar", title: "Menu", frame: { x: 100, y: 100, w: 800, h: 20 } },
                {
                  role: "push button",
                  title: "Go",
                  actions: ["click"],
                  frame: { x: 120, y: 140, w: 80, h: 30 },
                  ...go,
                },
                {
                  role: "text",
                  title: "Display",
                  value: "0",
                  settable: true,
                  frame: { x: 120, y: 200, w: 300, h: 30 },
                },
              ],
            },
          },
        ],
      },
    ],
    ...extra,
  };
}

async function handleOf(b: NativeBackend, title: string): Promise<number> {
  const s = await b.snapshot({ app: PID, screenshot: false, deadlineMs: 2000, maxNodes: 2400, maxDepth: 64 });
  const stack: RawNode[] = [s.raw.root];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.title === title && n.handle) return n.handle;
    stack.push(...(n.children ?? []));
  }
  throw new Error(`no ${title} in the fake snapshot`);
}

async function childTitles(b: NativeBackend): Promise<string[]> {
  const s = await b.snapshot({ app: PID, screenshot: false, deadlineMs: 2000, maxNodes: 2400, maxDepth: 64 });
  return (s.raw.root.children ?? []).map((c) => c.title ?? "");
}

describe("event stamps", () => {
  it("grow with every scripted mutation and say what happened", async () => {
    const b = fake(desktop());
    expect(await b.watch(PID)).toMatchObject({ pid: PID });
    const first = await b.waitEvents(PID, 0, 0);
    expect(first).toMatchObject({ watching: true, stamp: 0, windowStamp: 0, msSinceLast: -1, recent: [] });

    const display = await handleOf(b, "Display");
    await b.setText(display, "42", 1000);
    const afterSet = await b.waitEvents(PID, 0, 0);
    expect(afterSet.stamp).toBe(1);
    expect(afterSet.recent).toEqual(["object:text-changed:insert"]);
    expect(afterSet.msSinceLast).toBeGreaterThanOrEqual(0);

    await b.doAction(await handleOf(b, "Go"), "click", 1000);
    await b.focus(display, 1000);
    const afterActions = await b.waitEvents(PID, 0, 0);
    expect(afterActions.stamp).toBe(3);
    expect(afterActions.recent.slice(-2)).toEqual(["object:state-changed", "object:state-changed:focused"]);

    // A replaced desktop with the same windows is a content change; a new window is a window event.
    await b.fakeReplace(desktop());
    const replaced = await b.waitEvents(PID, 0, 0);
    expect(replaced.stamp).toBe(4);
    expect(replaced.windowStamp).toBe(0);
    const two = desktop();
    (two.apps[0]!.windows as object[]).push({
      title: "About",
      frame,
      root: { role: "dialog", title: "About" },
    });
    await b.fakeReplace(two);
    const opened = await b.waitEvents(PID, 0, 0);
    expect(opened.stamp).toBe(5);
    expect(opened.windowStamp).toBe(1);
    expect(opened.recent.at(-1)).toBe("window:create");
  });

  it("waitEvents returns as soon as the stamp passes sinceStamp, else at its timeout with the same stamp", async () => {
    const b = fake(desktop({ fault: { churnAfterAction: { events: 1, intervalMs: 120 } } }));
    await b.watch(PID);
    let t0 = performance.now();
    const idle = await b.waitEvents(PID, 0, 150);
    expect(idle.stamp).toBe(0);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(140);

    await b.doAction(await handleOf(b, "Go"), "click", 1000);
    t0 = performance.now();
    const now = await b.waitEvents(PID, 0, 5000);
    expect(now.stamp).toBe(1); // the action's own event, already there
    expect(performance.now() - t0).toBeLessThan(100);
    t0 = performance.now();
    const churn = await b.waitEvents(PID, 1, 5000);
    const waited = performance.now() - t0;
    expect(churn.stamp).toBe(2); // the churn event 120 ms after the action woke it, not the timeout
    expect(waited).toBeGreaterThan(60);
    expect(waited).toBeLessThan(1000);
    expect(churn.msSinceLast).toBeLessThan(50);
  });

  it("waitEvents watches an app on its own, and refuses what is not an app", async () => {
    const b = fake(desktop());
    expect((await b.waitEvents(PID, 0, 0)).watching).toBe(true);
    await expect(callNative(() => b.waitEvents(999, 0, 0))).rejects.toMatchObject({ code: "APP_NOT_FOUND" });
    await expect(callNative(() => b.watch("  "))).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(callNative(() => b.waitQuiet(0))).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("unwatch stops counting for the app", async () => {
    const b = fake(desktop());
    await b.watch(PID);
    await b.unwatch(PID);
    // Watching again is allowed and the stamp never went down.
    const st = await b.waitEvents(PID, 0, 0);
    expect(st.watching).toBe(true);
    expect(st.stamp).toBe(0);
  });
});

describe("waitQuiet", () => {
  it("an idle app is quiet after quietMs from the start", async () => {
    const b = fake(desktop());
    const r = await b.waitQuiet("Calc", { quietMs: 120, capMs: 2000 });
    expect(r).toMatchObject({ settled: "quiet", events: 0, windowEvents: 0 });
    expect(r.ms).toBeGreaterThanOrEqual(119);
    expect(r.ms).toBeLessThan(400);
  });

  it("waits out an app that keeps changing after an action (churnAfterAction), then says quiet", async () => {
    const b = fake(desktop({ fault: { churnAfterAction: { events: 6, intervalMs: 60 } } }));
    await b.watch(PID);
    await b.doAction(await handleOf(b, "Go"), "click", 1000);
    const r = await b.waitQuiet(PID, { quietMs: 100, capMs: 3000 });
    expect(r.settled).toBe("quiet");
    // The last churn event comes 360 ms after the action; quiet is 100 ms after it.
    expect(r.ms).toBeGreaterThanOrEqual(360 + 100 - 40);
    expect(r.ms).toBeLessThan(360 + 100 + 300);
    // Events that came before the wait began (the action's own) are not counted: six of churn.
    expect(r.events).toBe(6);
    const st = await b.waitEvents(PID, 0, 0);
    expect(st.stamp).toBe(7);
    expect(st.msSinceLast).toBeGreaterThanOrEqual(100);
  });

  it("stops at its cap when the app never goes quiet, and says cap", async () => {
    const b = fake(desktop({ fault: { churnAfterAction: { events: 200, intervalMs: 20 } } }));
    await b.watch(PID);
    await b.doAction(await handleOf(b, "Go"), "click", 1000);
    const r = await b.waitQuiet(PID, { quietMs: 100, capMs: 400 });
    expect(r.settled).toBe("cap");
    expect(r.ms).toBeGreaterThanOrEqual(399);
    expect(r.ms).toBeLessThan(400 + 150);
    expect(r.events).toBeGreaterThan(10);
  });

  it("a window rebuilt after the reply (rebuildAfterMs) is complete when waitQuiet says quiet", async () => {
    const b = fake(desktop({ fault: { rebuildAfterMs: 200 } }));
    await b.watch(PID);
    expect(await childTitles(b)).toEqual(["Menu", "Go", "Display"]);
    await b.doAction(await handleOf(b, "Go"), "click", 1000);
    // What a snapshot right after the reply shows (galculator's Paper mode did this): the menu bar alone.
    expect(await childTitles(b)).toEqual(["Menu"]);
    const r = await b.waitQuiet(PID, { quietMs: 300, capMs: 3000 });
    expect(r.settled).toBe("quiet");
    expect(r.windowEvents).toBe(1); // the window's content coming back
    expect(r.ms).toBeGreaterThanOrEqual(200 + 300 - 60);
    expect(await childTitles(b)).toEqual(["Menu", "Go", "Display"]);
  });

  it("a rebuild that stays silent longer than the quiet period is not waited for (the limit of settling on events)", async () => {
    const b = fake(desktop({ fault: { rebuildAfterMs: 500 } }));
    await b.watch(PID);
    await b.doAction(await handleOf(b, "Go"), "click", 1000);
    const r = await b.waitQuiet(PID, { quietMs: 100, capMs: 250 });
    expect(r.settled).toBe("quiet");
    expect(await childTitles(b)).toEqual(["Menu"]);
  });

  it("a desktop without events answers unsupported at once; watch and waitEvents reject", async () => {
    const b = fake(desktop({}, { noEvents: true }));
    const t0 = performance.now();
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 2000 });
    expect(r).toMatchObject({ settled: "unsupported", events: 0, windowEvents: 0 });
    expect(performance.now() - t0).toBeLessThan(100);
    await expect(callNative(() => b.watch(PID))).rejects.toMatchObject({ code: "ACTION_NOT_SUPPORTED" });
    await expect(callNative(() => b.waitEvents(PID, 0, 100))).rejects.toMatchObject({
      code: "ACTION_NOT_SUPPORTED",
    });
  });

  it("a cap of 0 returns at once with the events so far", async () => {
    const b = fake(desktop());
    await b.watch(PID);
    await b.setText(await handleOf(b, "Display"), "1", 1000);
    const r = await b.waitQuiet(PID, { quietMs: 150, capMs: 0 });
    expect(r.settled).toBe("cap");
    expect(r.ms).toBeLessThan(50);
  });
});
