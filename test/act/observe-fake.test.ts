/**
 * The observe loop on the fake backend (issue 11 §2): an action's fresh
 * snapshot waits until the app's change events stop (or a cap), and says
 * which; waitFor wakes on events, meets text/element/target/idle
 * conditions, and times out with the last observation. Timing faults
 * (churn, a window rebuilt after the reply, a page that changes later) are
 * scripted in the fake desktop, so every race here is forced, not hoped for.
 */
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import type { Session } from "../../lib/session/session.js";
import { useFakeSessions } from "../support/editor.js";

const PID = 4343;
const frame = { x: 100, y: 100, w: 800, h: 600 };
type Node = Record<string, unknown>;
const sessions = useFakeSessions(5000);

function desktop(opts: { go?: Node; status?: string; extra?: Node; check?: boolean } = {}) {
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
                  ...opts.go,
                },
                {
                  role: "check box",
                  title: "Wrap",
                  actions: ["toggle"],
                  states: { checked: opts.check === true },
                  frame: { x: 220, y: 140, w: 80, h: 30 },
                },
                { role: "label", title: opts.status ?? "Ready", frame: { x: 120, y: 200, w: 300, h: 30 } },
              ],
            },
          },
        ],
      },
    ],
    ...opts.extra,
  };
}

const setup = (script: object) => sessions.open(script);

const later = (ms: number, fn: () => unknown) => setTimeout(() => void fn(), ms);

/** The index a snapshot printed for the element with this title. */
async function indexOf(s: Session, title: string): Promise<number> {
  const snap = await s.snapshot({ app: "Calc", screenshot: false });
  const rec = snap.records.find((r) => r.title === title);
  if (!rec) throw new Error(`no ${title} in ${snap.text}`);
  return rec.index;
}

describe("settling before the fresh snapshot", () => {
  it("waits out an app that keeps changing after the action, and says quiet", async () => {
    const { s } = setup(desktop({ go: { fault: { churnAfterAction: { events: 5, intervalMs: 60 } } } }));
    const r = await s.click(await indexOf(s, "Go"));
    expect(r.settled?.mode).toBe("quiet");
    // The last churn event comes ~300 ms after the action; quiet is 150 ms after it.
    expect(r.settled!.ms).toBeGreaterThanOrEqual(300 + 150 - 60);
    expect(r.settled!.events).toBeGreaterThanOrEqual(4);
    expect(r.notes).toEqual([]);
  });

  it("a window rebuilt after the reply is whole in the fresh snapshot; without settling it is half-built", async () => {
    const { s } = setup(desktop({ go: { fault: { rebuildAfterMs: 100 } } }));
    const unsettled = await s.click(await indexOf(s, "Go"), { settle: false });
    expect(unsettled.settled).toBeUndefined();
    expect(unsettled.snapshot!.records.map((r) => r.title)).not.toContain("Go");
    await new Promise((done) => setTimeout(done, 150));
    // The rebuild restarts with each action: the settled result shows the whole window.
    const settled = await s.click(await indexOf(s, "Go"));
    expect(settled.settled?.mode).toBe("quiet");
    expect(settled.snapshot!.records.map((r) => r.title)).toEqual(
      expect.arrayContaining(["Go", "Wrap", "Ready"]),
    );
  });

  it("stops at the cap when the app never goes quiet, says cap, and still answers within the deadline", async () => {
    const { s } = setup(desktop({ go: { fault: { churnAfterAction: { events: 500, intervalMs: 15 } } } }));
    const go = await indexOf(s, "Go");
    const t0 = performance.now();
    const r = await s.click(go, { settle: { capMs: 300 } });
    expect(r.settled?.mode).toBe("cap");
    expect(r.settled!.ms).toBeGreaterThanOrEqual(299);
    expect(r.snapshot).toBeDefined();
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it("never takes more than half of what is left of the call's deadline", async () => {
    const { s } = setup(desktop({ go: { fault: { churnAfterAction: { events: 500, intervalMs: 15 } } } }));
    const r = await s.click(await indexOf(s, "Go"), { deadlineMs: 600 });
    expect(r.settled?.mode).toBe("cap");
    expect(r.settled!.ms).toBeLessThanOrEqual(320);
    expect(r.snapshot).toBeDefined();
  });

  it("says none, at once, where the platform reports no events", async () => {
    const { s } = setup(desktop({ extra: { noEvents: true } }));
    const go = await indexOf(s, "Go");
    const t0 = performance.now();
    const r = await s.click(go);
    expect(r.settled).toEqual({ mode: "none", ms: 0, events: 0 });
    expect(r.notes).toEqual([]);
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it("refuses bad settle options before anything is sent", async () => {
    const { b, s } = setup(desktop());
    await s.snapshot({ app: "Calc", screenshot: false });
    for (const settle of [{ quietMs: 0 }, { capMs: -1 }, { quietMs: "1" }, "yes", null])
      await expect(s.click(1, { settle: settle as never })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    expect(b.fakeLog().filter((l) => !l.startsWith("release"))).toEqual([]);
  });
});

describe("waitFor", () => {
  it("meets text that appears later, woken by the change event, and makes that observation latest", async () => {
    const { b, s } = setup(desktop());
    later(300, () => b.fakeReplace(desktop({ status: "Saved to disk" })));
    const t0 = performance.now();
    const met = await s.waitFor(
      "Calc",
      { text: "saved" },
      { timeoutMs: 5000, snapshot: { screenshot: false } },
    );
    const ms = performance.now() - t0;
    expect(met.via).toBe("events");
    expect(met.match?.title).toBe("Saved to disk");
    // Woken by the event, not by the 1 s safety poll.
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(900);
    expect(s.address(met.match!.index).record.title).toBe("Saved to disk");
  });

  it("waits for text to be gone", async () => {
    const { b, s } = setup(desktop({ status: "Working" }));
    later(200, () => b.fakeReplace(desktop({ status: "Idle" })));
    const met = await s.waitFor("Calc", { text: "working", gone: true }, { snapshot: { screenshot: false } });
    expect(met.snapshot.text).not.toContain("Working");
    expect(met.snapshot.text).toContain("Idle");
  });

  it("meets an element by role and name", async () => {
    const { b, s } = setup(desktop());
    later(200, () => b.fakeReplace(desktop({ go: { title: "Continue" } })));
    const met = await s.waitFor("Calc", { element: { role: "push button", name: "contin" } });
    expect(met.match?.roleText).toBe("push button");
    expect(met.match?.title).toBe("Continue");
    // The default observation carries a screenshot, taken after the condition held and checked again.
    expect(met.snapshot.screenshot?.format).toBe("png");
  });

  it("meets an element by a role in either style's words (issue 33 §6: compact's button is a push button)", async () => {
    const { b, s } = setup(desktop());
    later(200, () => b.fakeReplace(desktop({ go: { title: "Continue" } })));
    const met = await s.waitFor(
      "Calc",
      { element: { role: "button", name: "contin" } },
      { snapshot: { screenshot: false } },
    );
    expect(met.match?.roleText).toBe("push button");
    expect(met.match?.title).toBe("Continue");
  });

  it("meets a held element's state, found by its live handle", async () => {
    const { b, s } = setup(desktop());
    const wrap = await indexOf(s, "Wrap");
    later(200, () => b.fakeReplace(desktop({ check: true })));
    const met = await s.waitFor(
      "Calc",
      { target: wrap, state: "checked" },
      { snapshot: { screenshot: false } },
    );
    expect(met.match?.title).toBe("Wrap");
  });

  it("times out with TIMEOUT carrying the last observation, by its timeout", async () => {
    const { s } = setup(desktop());
    const t0 = performance.now();
    const e = (await s.waitFor("Calc", { text: "never" }, { timeoutMs: 700 }).catch((x) => x)) as AxsnapError;
    const ms = performance.now() - t0;
    expect(e).toBeInstanceOf(AxsnapError);
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toContain('text "never" to appear');
    expect(e.observed?.text).toContain("Ready");
    expect(ms).toBeGreaterThanOrEqual(650);
    expect(ms).toBeLessThan(700 + 300);
  });

  it("meets a window that opens, and shows it; then its closing", async () => {
    const { b, s } = setup(desktop());
    const dialogFrame = { x: 300, y: 300, w: 300, h: 150 };
    const withDialog = desktop();
    withDialog.apps[0]!.windows.push({
      title: "Save changes?",
      frame: dialogFrame,
      focused: false,
      kind: "dialog",
      modal: true,
      root: {
        role: "dialog",
        title: "Save changes?",
        frame: dialogFrame,
        children: [
          { role: "push button", title: "Save", actions: ["click"], frame: { x: 320, y: 400, w: 80, h: 30 } },
        ],
      },
    } as never);
    later(250, () => b.fakeReplace(withDialog));
    const met = await s.waitFor("Calc", { window: "save CHANGES" }, { snapshot: { screenshot: false } });
    expect(met.via).toBe("events");
    expect(met.window?.title).toBe("Save changes?");
    expect(met.snapshot.window.title).toBe("Save changes?");
    expect(met.snapshot.text).toMatch(/push button Save/);
    later(250, () => b.fakeReplace(desktop()));
    const closed = await s.waitFor(
      "Calc",
      { window: "save changes", gone: true },
      { snapshot: { screenshot: false } },
    );
    expect(closed.window).toBeUndefined();
    expect(closed.snapshot.window.title).toBe("Calc");
    const e = (await s
      .waitFor("Calc", { window: "never" }, { timeoutMs: 600 })
      .catch((x) => x)) as AxsnapError;
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toMatch(/a window titled "never" to open.*last: window "Calc"/);
  });

  it("polls where the platform has no events, and still meets the condition", async () => {
    const { b, s } = setup(desktop({ extra: { noEvents: true } }));
    later(300, () => b.fakeReplace(desktop({ status: "Done", extra: { noEvents: true } })));
    const met = await s.waitFor("Calc", { text: "done" }, { snapshot: { screenshot: false } });
    expect(met.via).toBe("poll");
    expect(met.match?.title).toBe("Done");
  });

  it("waits for the app to go idle after churn", async () => {
    const { s } = setup(desktop({ go: { fault: { churnAfterAction: { events: 5, intervalMs: 60 } } } }));
    await s.click(await indexOf(s, "Go"), { snapshot: false });
    const t0 = performance.now();
    const met = await s.waitFor("Calc", { idle: true, quietMs: 100 }, { snapshot: { screenshot: false } });
    expect(met.via).toBe("events");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
  });

  it("is aborted by its signal", async () => {
    const { s } = setup(desktop());
    const ac = new AbortController();
    later(200, () => ac.abort());
    await expect(s.waitFor("Calc", { text: "never" }, { signal: ac.signal })).rejects.toMatchObject({
      code: "ABORTED",
    });
  });

  it("refuses conditions it cannot check", async () => {
    const { s } = setup(desktop());
    for (const cond of [
      {},
      { text: "" },
      { text: "a", element: { role: "x" } },
      { element: {} },
      { target: 1 },
      { idle: false },
      { idle: true, quietMs: 5 },
      { window: "" },
      { window: "a", text: "b" },
      { text: "a", gone: "yes" },
      null,
    ])
      await expect(s.waitFor("Calc", cond as never)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(s.waitFor("Calc", { text: "a" }, { timeoutMs: 0 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});
