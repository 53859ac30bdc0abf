/**
 * Issue 18, item 4, on the fake backend: waits pending on an app must not
 * hold the backend's single worker so that an action queues behind them
 * (its deadline holds with 20 waits pending, and it is not refused),
 * never-true waits settle by their timeout plus the documented 250 ms, a
 * refusal names the cause it really had (a deadline spent queued behind
 * axsnap's own calls is not "the app did not answer"), and a wait's
 * observations never push out the snapshots the agent holds.
 *
 * The fake's waitEvents sleeps for the whole time it is given and its walks
 * take as long as their `hangMs` faults say, so the queueing is forced, not
 * hoped for.
 */
import { setMaxListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import type { NativeBackend } from "../../lib/native.js";
import { watcherSizes } from "../../lib/session/act/watcher.js";
import type { Session } from "../../lib/session/session.js";
import { useFakeSessions } from "../support/editor.js";

const frame = { x: 100, y: 100, w: 800, h: 600 };
/** The library's promise (docs/acting.md, "Deadlines and aborts"): settled at most 250 ms after the deadline. */
const BACKSTOP_MS = 250;
const sessions = useFakeSessions(5000);

function app(name: string, pid: number, status: string, slowMs = 0) {
  return {
    name,
    pid,
    focused: name === "Calc",
    windows: [
      {
        title: name,
        frame,
        focused: true,
        root: {
          role: "frame",
          title: name,
          frame,
          children: [
            {
              role: "push button",
              title: "Go",
              actions: ["click"],
              frame: { x: 120, y: 140, w: 80, h: 30 },
            },
            {
              role: "label",
              title: status,
              frame: { x: 120, y: 200, w: 300, h: 30 },
              // Every walk of the window reads the label: a walk takes this long.
              ...(slowMs > 0 ? { fault: { hangMs: slowMs } } : {}),
            },
          ],
        },
      },
    ],
  };
}

function desktop(status = "Ready", slowMs = 0, extra: object[] = []) {
  return { apps: [app("Calc", 4343, status, slowMs), ...extra] };
}

const setup = (script: object) => sessions.open(script);

const NEVER = { text: "no line ever prints this" };
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `n` never-true waits on Calc, pending until the returned stop is called. */
async function pendingWaits(s: Session, n: number): Promise<() => Promise<void>> {
  const stop = new AbortController();
  setMaxListeners(100, stop.signal);
  const waits = Array.from({ length: n }, () =>
    s.waitFor("Calc", NEVER, { timeoutMs: 60_000, signal: stop.signal }).catch((e: unknown) => e),
  );
  // Every wait has made its first observation and is waiting for events.
  await pause(600);
  return async () => {
    stop.abort();
    for (const e of await Promise.all(waits)) expect(e).toMatchObject({ code: "ABORTED" });
  };
}

describe("actions with waits pending (issue 18 item 4)", () => {
  it("a click with 20 never-true waits pending is delivered within its deadline, never refused IDENTITY_UNPROVEN", async () => {
    const { b, s } = setup(desktop("Ready", 20));
    const snap = await s.snapshot({ app: "Calc", screenshot: false });
    const go = snap.records.find((r) => r.title === "Go")!;
    const stop = await pendingWaits(s, 20);
    try {
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const r = await s.click(`@${snap.id}:e${go.index}`, { deadlineMs: 2000, snapshot: false });
        const ms = performance.now() - t0;
        expect(r.delivery).toBe("delivered_unverified");
        expect(ms).toBeLessThan(2000 + BACKSTOP_MS);
      }
      expect(b.fakeLog().filter((l) => l.includes("click")).length).toBe(3);
    } finally {
      await stop();
    }
  });

  it("never-true waits, 40 at once, each settle TIMEOUT by timeoutMs + 250 ms", async () => {
    const { s } = setup(desktop("Ready", 5));
    const T = 1000;
    const late = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const t0 = performance.now();
        const e = await s.waitFor("Calc", NEVER, { timeoutMs: T }).catch((x: unknown) => x);
        expect(e).toMatchObject({ code: "TIMEOUT" });
        expect((e as AxsnapError).observed?.text).toContain("Ready");
        return performance.now() - t0 - T;
      }),
    );
    expect(Math.max(...late)).toBeLessThan(BACKSTOP_MS);
  });

  it("a read that never reached the app (queued behind axsnap's own snapshot) is TIMEOUT saying so, not 'the app did not answer'", async () => {
    // Another app whose window takes 1.5 s to walk: the agent's snapshot of it holds the worker.
    const { b, s } = setup(desktop("Ready", 0, [app("Slow", 5151, "Busy", 1500)]));
    const snap = await s.snapshot({ app: "Calc", screenshot: false });
    const go = snap.records.find((r) => r.title === "Go")!;
    const slow = s.snapshot({ app: "Slow", screenshot: false }).catch((e: unknown) => e);
    await pause(50);
    const t0 = performance.now();
    const e = (await s.click(`@${snap.id}:e${go.index}`, { deadlineMs: 400 }).catch((x) => x)) as AxsnapError;
    expect(performance.now() - t0).toBeLessThan(400 + BACKSTOP_MS);
    expect(e).toBeInstanceOf(AxsnapError);
    expect(e.code).toBe("TIMEOUT");
    expect(e.delivery).toBe("not_delivered");
    expect(e.message).not.toContain("did not answer");
    expect(e.message).toMatch(/never reached the app/);
    expect(b.fakeLog().some((l) => l.includes("click"))).toBe(false);
    await slow;
  });
});

describe("waits sharing one walk", () => {
  it("a wait that shared a walk cut by another wait's nearer deadline still meets its condition", async () => {
    const { b, s } = setup(desktop("Ready"));
    const short = s.waitFor("Calc", { text: "Changed" }, { timeoutMs: 900 }).catch((e: unknown) => e);
    const long = s.waitFor("Calc", { text: "Changed" }, { timeoutMs: 8000, snapshot: { screenshot: false } });
    await pause(300);
    // One event wakes both; the walk it starts takes 1.5 s, longer than the short wait has left.
    await b.fakeReplace(desktop("Changed", 1500));
    const met = await long;
    expect(met.match?.title).toBe("Changed");
    expect(await short).toMatchObject({ code: "TIMEOUT" });
  });
});

describe("a wait's observations and the agent's snapshots", () => {
  it("after 6 waits, met and timed out, the agent's first snapshot still answers its refs; only met waits become latest", async () => {
    const { b, s } = setup(desktop("Ready"));
    const first = await s.snapshot({ app: "Calc", screenshot: false });
    const go = first.records.find((r) => r.title === "Go")!;
    let metLast: string | undefined;
    for (let i = 0; i < 3; i++) {
      const status = `Step ${i} done`;
      setTimeout(() => void b.fakeReplace(desktop(status)), 100);
      const met = await s.waitFor(
        "Calc",
        { text: status },
        { timeoutMs: 3000, snapshot: { screenshot: false } },
      );
      metLast = met.snapshot.id;
      // Bare indices now mean what the met wait's snapshot printed.
      expect(s.address(0).snapshot.id).toBe(metLast);
      const timedOut = (await s
        .waitFor("Calc", NEVER, { timeoutMs: 300, snapshot: { screenshot: false } })
        .catch((x) => x)) as AxsnapError;
      expect(timedOut.code).toBe("TIMEOUT");
      // A timed-out wait's observation does not move latest; its own refs still work.
      expect(s.address(0).snapshot.id).toBe(metLast);
      expect(s.address(`@${timedOut.observed!.id}:e0`).snapshot.id).toBe(timedOut.observed!.id);
    }
    expect(s.address(`@${first.id}:e${go.index}`).record.title).toBe("Go");
    const r = await s.click(`@${first.id}:e${go.index}`, { snapshot: false });
    expect(r.delivery).toBe("delivered_unverified");
  });
});

/** Blocks this thread (timers included) for `ms`: a deadline passes while a wait is between two steps. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy: the event loop runs no timer meanwhile
  }
}

/** Waits until the backend's handle ledger holds `n` handles (released asynchronously), or gives the last count. */
async function heldSettles(b: NativeBackend, n: number): Promise<number> {
  let held = -1;
  for (let i = 0; i < 40; i++) {
    held = (await b.handleStats()).held;
    if (held === n) return held;
    await pause(25);
  }
  return held;
}

describe("waits sharing one walk: what a wait may take from it", () => {
  it("an idle wait whose deadline passes as it joins another wait's walk does not keep that walk's handles", async () => {
    const { b, s } = setup(desktop("Ready", 1200));
    const stop = new AbortController();
    // Never quiet long enough: the idle wait sleeps out its budget, then looks once.
    const idle = s
      .waitFor("Calc", { idle: true, quietMs: 5000 }, { timeoutMs: 400 })
      .catch((e: unknown) => e);
    await pause(50);
    // The same walk options: its walk (1.2 s) is under way when the idle wait looks.
    const other = s
      .waitFor("Calc", NEVER, { timeoutMs: 10_000, signal: stop.signal, snapshot: { screenshot: false } })
      .catch((e: unknown) => e);
    // The JS thread is held across the idle wait's deadline: its look starts after it passed.
    await new Promise<void>((r) =>
      setTimeout(() => {
        blockFor(250);
        r();
      }, 200),
    );
    expect(await idle).toMatchObject({ code: "TIMEOUT" });
    await pause(1200);
    stop.abort();
    expect(await other).toMatchObject({ code: "ABORTED" });
    // No snapshot was handed to anyone: the ledger empties.
    expect(await heldSettles(b, 0)).toBe(0);
  });

  it("a gone wait that shared a walk cut by another wait's nearer deadline does not report the element gone", async () => {
    const { b, s } = setup(desktop("Busy"));
    const short = s.waitFor("Calc", NEVER, { timeoutMs: 900 }).catch((e: unknown) => e);
    const long = s
      .waitFor("Calc", { text: "Busy", gone: true }, { timeoutMs: 3500, snapshot: { screenshot: false } })
      .catch((e: unknown) => e);
    await pause(300);
    // One event wakes both; the short wait's walk is cut at its deadline before it reads the label.
    await b.fakeReplace(desktop("Busy", 1500));
    const e = (await long) as AxsnapError;
    expect(e).toBeInstanceOf(AxsnapError);
    expect(e.code).toBe("TIMEOUT");
    expect(e.observed?.text).toContain("Busy");
    expect(await short).toMatchObject({ code: "TIMEOUT" });
  });
});

describe("a wait with a screenshot whose condition no longer holds", () => {
  it("leaves the agent's snapshot as the app's latest", async () => {
    const { b, s } = setup(desktop("Ready", 300));
    const mine = await s.snapshot({ app: "Calc", screenshot: false });
    // Queued on the worker behind the wait's walk: the picture taken after it no longer shows "Ready".
    const wait = s.waitFor("Calc", { text: "Ready" }, { timeoutMs: 1500, snapshot: { screenshot: true } });
    await pause(100);
    await b.fakeReplace(desktop("Gone"));
    const e = (await wait.catch((x: unknown) => x)) as AxsnapError;
    expect(e.code).toBe("TIMEOUT");
    expect(s.address(0).snapshot.id).toBe(mine.id);
  });
});

describe("an idle wait that times out", () => {
  it("carries the app as last observed", async () => {
    // A walk takes 30 ms: the wait must leave itself that much of its budget.
    const { s } = setup(desktop("Ready", 30));
    const e = (await s
      .waitFor("Calc", { idle: true, quietMs: 5000 }, { timeoutMs: 400 })
      .catch((x: unknown) => x)) as AxsnapError;
    expect(e.code).toBe("TIMEOUT");
    expect(e.observed?.text).toContain("Ready");
  });
});

describe("what waits leave behind", () => {
  it("once no wait is pending, no pump and no shared walk is kept for the app", async () => {
    const { b, s } = setup(desktop("Ready"));
    setTimeout(() => void b.fakeReplace(desktop("Done")), 100);
    const met = await s.waitFor(
      "Calc",
      { text: "Done" },
      { timeoutMs: 3000, snapshot: { screenshot: false } },
    );
    expect(met.match?.title).toBe("Done");
    const late = await s.waitFor("Calc", NEVER, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(late).toMatchObject({ code: "TIMEOUT" });
    expect(watcherSizes(b)).toEqual({ pumps: 0, shares: 0 });
  });
});
