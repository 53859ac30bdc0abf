/**
 * Issue 18, honest results on a real desktop (one headless desktop for this
 * file): what an action's result says about the window it shows and how the
 * app settled.
 *
 * - Two windows with one title (test/apps/twin-windows.py): a click that
 *   opens a second "Doc" returns that window read whole, never diffed against
 *   the first as if it were the same one.
 * - A click in a window chosen by title: the fresh snapshot follows that
 *   window, not the app's other (focused) one.
 * - A Chromium page that changes every 10 ms (test/pages/ticker.html) sends
 *   its changes in batches ~170 ms apart: a click there settles by the cap,
 *   never "quiet", and the page is never idle; once it stops changing, a click
 *   settles quiet after the app's longer quiet period.
 * - An app that stops (SIGSTOP) right after the action: its silence is not
 *   settling, and the result says "none".
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, type Session } from "../../lib/index.js";
import { type App, chromium, type Desktop, fileUrl, startApp } from "../../scripts/desktop.mjs";
import { indexOf } from "../support/lines.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 60_000;
let desktop: Desktop;
const sessions: Session[] = [];

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  for (const s of sessions) await s.close();
  await desktop?.stop();
});

function session(): Session {
  const s = createSession({ deadlineMs: 5000 });
  sessions.push(s);
  return s;
}

async function twins(): Promise<App> {
  return startApp(desktop, "/usr/bin/python3", ["test/apps/twin-windows.py"], {
    name: "axsnap-twins",
    windowName: "Doc",
  });
}

const clicks = (app: App) => app.output().match(/CLICKED \S+/g) ?? [];

describe("windows that share a title", () => {
  it(
    "a click that opens a second window titled like the first: the result reads it whole, not as a diff of the first",
    async () => {
      const app = await twins();
      try {
        const s = session();
        const before = await s.snapshot({ app: app.pid, window: { title: "Doc" }, screenshot: false });
        const result = await s.click(indexOf(before, /^push button Open twin$/), { app: app.pid });
        expect(clicks(app)).toContain("CLICKED open-twin");
        const fresh = result.snapshot!;
        expect(result.opened?.map((w) => w.title)).toEqual(["Doc"]);
        // The new window faces the user: the fresh snapshot is of it, a window other than the one acted on.
        expect(fresh.window.id).toBe(result.opened![0]!.id);
        expect(fresh.window.id).not.toBe(before.window.id);
        expect(result.changes).toBeUndefined();
        expect(result.text).toBe(fresh.text);
        expect(result.notes.join("\n")).toMatch(/other than the one acted on; read it whole/);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a click in a window chosen by title: the fresh snapshot follows that window, not the app's focused one",
    async () => {
      const app = await twins();
      try {
        const s = session();
        const side = await s.snapshot({ app: app.pid, window: { title: "Side" }, screenshot: false });
        expect(side.window.title).toBe("Side");
        const result = await s.click(indexOf(side, /^push button Side apply$/), { app: app.pid });
        expect(clicks(app)).toContain("CLICKED apply-in-SIDE");
        expect(result.opened).toEqual([]);
        expect(result.snapshot!.window.id).toBe(side.window.id);
        expect(result.notes.join("\n")).not.toMatch(/other than the one acted on/);
        // Diffed against the window acted on: the counter's new text is the change.
        expect(result.changes?.text).toMatch(/Side apply 1/);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

describe("settling", () => {
  it(
    "an app that stops right after the action does not settle quiet: the result says none, and why",
    async () => {
      const app = await twins();
      try {
        const s = session();
        const before = await s.snapshot({ app: app.pid, window: { title: "Doc" }, screenshot: false });
        const result = await s.click(indexOf(before, /^push button Stop app$/), {
          app: app.pid,
          deadlineMs: 3000,
        });
        expect(clicks(app)).toContain("CLICKED stop");
        expect(result.snapshot).toBeUndefined();
        expect(result.settled?.mode).toBe("none");
        expect(result.notes.join("\n")).toMatch(/did not answer after the action|ran out of time/);
      } finally {
        process.kill(app.pid, "SIGCONT");
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a Chromium page that changes every 10 ms settles by the cap, never quiet, and is never idle",
    async () => {
      const app = await chromium(desktop, `${fileUrl("test/pages/ticker.html")}?mode=text`, {
        windowName: "axsnap ticker",
      });
      try {
        const s = session();
        // The window can be listed before its page is built: wait for the button, not a fixed time.
        let view = (
          await s.waitFor(
            app.pid,
            { element: { role: "push button", name: "Press" } },
            { timeoutMs: 15_000, snapshot: { screenshot: false } },
          )
        ).snapshot;
        const modes: string[] = [];
        for (let k = 0; k < 3; k++) {
          const r = await s.click(indexOf(view, /^push button Press/), {
            app: app.pid,
            settle: { capMs: 1500 },
          });
          modes.push(r.settled!.mode);
          expect(r.settled!.events).toBeGreaterThan(0);
          view = r.snapshot!;
        }
        expect(modes).toEqual(["cap", "cap", "cap"]);
        const idle = await s.waitFor(app.pid, { idle: true }, { timeoutMs: 2500 }).catch((e: unknown) => e);
        expect(idle).toBeInstanceOf(AxsnapError);
        expect((idle as AxsnapError).code).toBe("TIMEOUT");
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a Chromium page that does not change on its own settles quiet, after the app's longer quiet period",
    async () => {
      const app = await chromium(desktop, `${fileUrl("test/pages/ticker.html")}?mode=static`, {
        windowName: "axsnap ticker",
      });
      try {
        const s = session();
        // The window can be listed before its page is built (its document still empty): wait for the button.
        const snap = (
          await s.waitFor(
            app.pid,
            { element: { role: "push button", name: "Press" } },
            { timeoutMs: 15_000, snapshot: { screenshot: false } },
          )
        ).snapshot;
        const r = await s.click(indexOf(snap, /^push button Press/), { app: app.pid });
        expect(r.settled?.mode).toBe("quiet");
        expect(r.settled?.quietMs).toBeGreaterThanOrEqual(400);
        expect(r.settled!.ms).toBeGreaterThanOrEqual(400);
        const idle = await s.waitFor(app.pid, { idle: true }, { timeoutMs: 4000 });
        expect(idle.snapshot.app.pid).toBe(app.pid);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
