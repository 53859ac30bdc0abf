/**
 * Issue 9, "keep the promise", on real apps under the headless desktop:
 * zenity dialogs (a text entry whose only action submits the dialog, a
 * password dialog, a form with a password field) and Chromium pages of our
 * own that rename elements under the agent (test/pages/promise.html).
 * Races are triggered, not waited for: the rename fires on a pointer move we
 * send, and the test waits (bounded) until the app's live tree shows it.
 * The last test is the stress run of the closing note: 200 rounds of
 * snapshot → the page mutates on its own timer → click by ref.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, type Session, type Snapshot } from "../../lib/index.js";
import type { NativeBackend } from "../../lib/native.js";
import { listWindows, liveObservation } from "../../lib/observe/desktop.js";
import { type App, chromium, type Desktop, fileUrl, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { rejects } from "../support/rejects.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

/** The first record whose printed line matches `re` (line without indentation). */
function find(snap: Snapshot, re: RegExp): number {
  for (const raw of snap.text.split("\n")) {
    const line = raw.trim();
    const m = /^(\d+) /.exec(line);
    if (m && re.test(line)) return Number(m[1]);
  }
  throw new Error(`no line matches ${re} in snapshot ${snap.id}:\n${snap.text}`);
}

/** Snapshots until `test` holds (bounded): an app's tree fills in after its window appears. */
async function until(s: Session, app: number, test: (snap: Snapshot) => boolean): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await s.snapshot({ app, screenshot: false, deadlineMs: 8000 });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

describe("zenity dialogs", () => {
  let session: Session;
  const apps: App[] = [];
  beforeAll(() => {
    session = createSession({ deadlineMs: 5000 });
  });
  afterAll(async () => {
    await session?.close();
    for (const a of apps) await a.stop();
  });
  async function zenity(args: string[]): Promise<App> {
    const app = await startApp(desktop, "zenity", args, { name: "zenity", timeoutMs: 20_000 });
    apps.push(app);
    return app;
  }

  it(
    "item 7: clicking a text entry focuses it and does not submit the dialog",
    async () => {
      const app = await zenity(["--entry", "--title=Ask", "--text=Your name"]);
      const snap = await until(session, app.pid, (s) => /\d+ text \(settable/.test(s.text));
      const entry = find(snap, /^\d+ text \(settable/);
      const result = await session.click(entry, { app: app.pid });
      expect(result.channel).toBe("semantic");
      expect(result.delivery).toBe("delivered_verified");
      await sleep(500);
      expect(app.exited(), "the dialog was submitted by the click").toBe(false);
      await app.stop();
    },
    TIMEOUT,
  );

  it(
    "item 16: a ref into an app that exited is APP_NOT_FOUND, not IDENTITY_UNPROVEN",
    async () => {
      const app = await zenity(["--entry", "--title=Gone", "--text=Soon gone"]);
      const snap = await until(session, app.pid, (s) => / push button /.test(s.text));
      const ok = find(snap, / push button /);
      await app.stop();
      const e = await rejects(session.click(`@${snap.id}:e${ok}`));
      expect(e.code, e.message).toBe("APP_NOT_FOUND");
      expect(e.delivery).toBe("not_delivered");
    },
    TIMEOUT,
  );

  it(
    "item 6: typing with a target that cannot take focus types nothing (not into the focused password)",
    async () => {
      const app = await zenity(["--password", "--title=Unlock"]);
      const snap = await until(session, app.pid, (s) => /password text/.test(s.text));
      const label = find(snap, /^\d+ label /);
      const before = snap.text.split("\n").find((l) => /password text/.test(l))!;
      const e = await rejects(session.typeText("oops", { target: label, app: app.pid }));
      expect(e.delivery).toBe("not_delivered");
      expect(["ACTION_FAILED", "POLICY_DENIED"]).toContain(e.code);
      const after = await session.snapshot({ app: app.pid, screenshot: false });
      expect(after.text.split("\n").find((l) => /password text/.test(l))).toBe(before);
      await app.stop();
    },
    TIMEOUT,
  );

  it(
    "item 8: focus moved into the password field after the snapshot: typeText and pressKey are refused",
    async () => {
      const app = await zenity([
        "--forms",
        "--title=Login",
        "--add-entry=User name",
        "--add-password=Secret",
      ]);
      const snap = await until(session, app.pid, (s) => /password text/.test(s.text));
      const pw = snap.records[find(snap, /password text/)]!;
      // Focus moves behind the session's back (as a user's Tab would).
      const live = liveObservation(snap)!;
      await live.backend.focus(pw.handle!, 2000);
      expect((await rejects(session.typeText("hunter2", { app: app.pid }))).code).toBe("POLICY_DENIED");
      expect((await rejects(session.pressKey("7", { app: app.pid }))).code).toBe("POLICY_DENIED");
      const after = await session.pressKey("Tab", { app: app.pid });
      expect(after.delivery).toBe("delivered_unverified");
      await app.stop();
    },
    TIMEOUT,
  );
});

describe("Chromium pages that change under the agent", () => {
  let session: Session;
  let app: App;
  const asked: string[] = [];
  /** Clicks the page logged so far ("promise #<n> <label>" in its title). */
  const clicks = (s: Snapshot) => Number(/promise #(\d+)/.exec(s.window.title)?.[1] ?? 0);

  beforeAll(async () => {
    app = await chromium(desktop, `${fileUrl("test/pages/promise.html")}?focus=danger`, {
      windowName: "axsnap promise",
    });
    session = createSession({
      confirm: (r) => {
        asked.push(`${r.action} ${r.name}`);
        return false;
      },
    });
  }, TIMEOUT);
  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "item 9: a field named PIN and one with autocomplete=current-password print no value",
    async () => {
      const snap = await until(session, app.pid, (s) => s.text.includes("Delete account"));
      expect(snap.text).not.toContain("1234");
      expect(snap.text).not.toContain("hunter2");
    },
    TIMEOUT,
  );

  it(
    "item 10: Return or space on a focused Delete button goes through confirm",
    async () => {
      const before = await until(session, app.pid, (s) => s.text.includes("Delete account"));
      asked.length = 0;
      expect((await rejects(session.pressKey("Return", { app: app.pid }))).code).toBe("POLICY_DENIED");
      expect((await rejects(session.typeText(" ", { app: app.pid }))).code).toBe("POLICY_DENIED");
      expect(asked).toEqual(["pressKey Delete account", "typeText Delete account"]);
      const after = await session.snapshot({ app: app.pid, screenshot: false });
      expect(clicks(after)).toBe(clicks(before));
    },
    TIMEOUT,
  );

  it(
    "item 1: a button renamed right after the snapshot is not clicked under its new name",
    async () => {
      const snap = await until(session, app.pid, (s) => s.text.includes("hover here"));
      const buy = snap.records[find(snap, /push button Buy$/)]!;
      const trap = snap.records[find(snap, /hover here/)]!;
      const live = liveObservation(snap)!;
      // The rename fires on a pointer move we send, then the test waits until the app's live tree shows it.
      await live.backend.pointer(live.window, { kind: "move", ...trap.clickPoint! }, 2000);
      const end = Date.now() + 5000;
      for (;;) {
        const read = await live.backend.readElement(buy.handle!, 4, 2000);
        await live.backend.release(read.handles);
        if (read.node.title === "Delete all" || JSON.stringify(read.node).includes("Delete all")) break;
        if (Date.now() > end) throw new Error("the rename never reached the accessibility tree");
        await sleep(20);
      }
      const e = await rejects(session.click(`@${snap.id}:e${buy.index}`, { snapshot: false }));
      expect(["STALE_REF", "IDENTITY_UNPROVEN"]).toContain(e.code);
      expect(e.delivery).toBe("not_delivered");
      const after = await session.snapshot({ app: app.pid, screenshot: false });
      expect(clicks(after)).toBe(clicks(snap));
    },
    TIMEOUT,
  );
});

describe("a web element renamed while it already has focus", () => {
  let app: App;
  beforeAll(async () => {
    app = await chromium(desktop, `${fileUrl("test/pages/promise.html")}?focus=buy`, {
      windowName: "axsnap promise",
    });
  }, TIMEOUT);
  afterAll(async () => {
    await app?.stop();
  });

  it(
    "is not clicked under its new name (focusing it again would flush nothing: the flush moves focus first)",
    async () => {
      const session = createSession({ confirm: () => true, deadlineMs: 5000 });
      const clicks = (title: string) => Number(/promise #(\d+)/.exec(title)?.[1] ?? 0);
      const first = await until(session, app.pid, (s) => /push button Buy$/m.test(s.text));
      // A click by ref focuses a web element first (the flush): after it, Buy has keyboard focus.
      await session.click(`@${first.id}:e${find(first, /push button Buy$/)}`, { snapshot: false });
      const focusedIs = (s: Snapshot, index: number) =>
        s.text.includes(`The focused UI element is ${index} `);
      // Its title counts the click (the page logs it), so the window observed here stays the same.
      const snap = await until(
        session,
        app.pid,
        (s) => clicks(s.window.title) === 1 && focusedIs(s, find(s, /push button Buy$/)),
      );
      const before = 1;
      const buy = snap.records[find(snap, /push button .*Buy$/)]!;
      const trap = snap.records[find(snap, /hover here/)]!;
      const live = liveObservation(snap)!;
      // The rename and the title change run in one task of the page. Whether the click below leaves
      // before Chromium's batched tree update shows the new name is up to Chromium: test/act/promise-fake.test.ts
      // forces that order; this is the same promise on the real browser.
      // The X title follows the accessible one a moment later; input is refused (nothing sent) until they agree.
      for (let tries = 0; ; tries++) {
        try {
          await live.backend.pointer(live.window, { kind: "move", ...trap.clickPoint! }, 2000);
          break;
        } catch (e) {
          if (tries > 100) throw e;
          await sleep(20);
        }
      }
      const end = Date.now() + 5000;
      for (;;) {
        const windows = await listWindows(app.pid);
        if (windows.some((w) => w.title.includes("(renamed)"))) break;
        if (Date.now() > end) throw new Error("the page never renamed its button");
        await sleep(2);
      }
      const e = await rejects(session.click(`@${snap.id}:e${buy.index}`, { snapshot: false }));
      expect(["STALE_REF", "IDENTITY_UNPROVEN"]).toContain(e.code);
      expect(e.delivery).toBe("not_delivered");
      await sleep(200);
      const windows = await listWindows(app.pid);
      expect(clicks(windows[0]!.title)).toBe(before);
      await session.close();
    },
    TIMEOUT,
  );
});

describe("stress: 200 rounds of snapshot, mutation at a random moment, click by ref", () => {
  let app: App;
  beforeAll(async () => {
    app = await chromium(desktop, `${fileUrl("test/pages/promise.html")}?mutate=1`, {
      windowName: "axsnap promise",
    });
  }, TIMEOUT);
  afterAll(async () => {
    await app?.stop();
  });

  /**
   * When axsnap's last check of a click began, on the wall clock the page also stamps its renames with:
   * the web flush's focus request (a change the page made before it is sent along with the focus), or
   * without one the last live read. Taken from the live backend, so the line between "could have seen"
   * and "changed after the last look" does not move with how loaded the machine is (a fixed 40 ms window
   * did: under the full suite a click took up to 42 ms to reach the page after its check).
   */
  function watchChecks(backend: NativeBackend): { begin(): void; lastCheck(): number | undefined } {
    let focusAt: number | undefined;
    let readAt: number | undefined;
    const wrap = <K extends "focus" | "readElement">(name: K, mark: (t: number) => void) => {
      const original = backend[name].bind(backend) as (...a: unknown[]) => unknown;
      Object.defineProperty(backend, name, {
        configurable: true,
        value: (...a: unknown[]) => {
          mark(Date.now());
          return original(...a);
        },
      });
    };
    wrap("focus", (t) => (focusAt = t));
    wrap("readElement", (t) => (readAt = t));
    return {
      begin: () => {
        focusAt = undefined;
        readAt = undefined;
      },
      lastCheck: () => focusAt ?? readAt,
    };
  }

  it(
    "never clicks an element whose change it could have seen",
    async () => {
      const session = createSession({ confirm: () => true, deadlineMs: 5000 });
      const POOL = /^(Buy|Sell|Keep|Archive|Share|Delete all|Rename|Export)$/;
      const stats = { rounds: 0, delivered: 0, uncertain: 0, wrong: 0, staleWrong: 0, refusedButClicked: 0 };
      const refusals: Record<string, number> = {};
      const wrongs: string[] = [];
      let last = await until(session, app.pid, (s) => / push button (Buy|Sell|Keep)/.test(s.text));
      const checks = watchChecks(liveObservation(last)!.backend);
      const count = (s: Snapshot) => Number(/promise #(\d+)/.exec(s.window.title)?.[1] ?? 0);
      for (let round = 0; round < 200; round++) {
        const snap = await session.snapshot({ app: app.pid, screenshot: false, deadlineMs: 8000 });
        const buttons = snap.records.filter((r) => r.role === "push button" && POOL.test(r.title ?? ""));
        if (buttons.length === 0) continue;
        const pick = buttons[Math.floor(Math.random() * buttons.length)]!;
        const before = count(snap);
        await sleep(Math.random() * 120);
        let outcome: string;
        checks.begin();
        const started = Date.now();
        try {
          const r = await session.click(`@${snap.id}:e${pick.index}`, { snapshot: false });
          outcome = `${r.delivery}, ${r.channel}${r.notes.length ? `; ${r.notes.join("; ")}` : ""}`;
          if (r.delivery === "delivery_uncertain") stats.uncertain++;
          else stats.delivered++;
        } catch (e) {
          if (!(e instanceof AxsnapError)) throw e;
          outcome = e.code;
          refusals[e.code] = (refusals[e.code] ?? 0) + 1;
        }
        stats.rounds++;
        // The page logs the label each click met; the next observation shows it in the title.
        await sleep(60);
        last = await session.snapshot({ app: app.pid, screenshot: false, deadlineMs: 8000 });
        const clicked = count(last) - before;
        if (clicked > 0) {
          const m = /promise #\d+ (.*?)(?: \+(\d+)ms @(\d+))?(?: - Chromium)?$/.exec(last.window.title);
          const label = m?.[1] ?? "";
          if (outcome in refusals) stats.refusedButClicked++;
          if (label !== pick.title || clicked > 1) {
            stats.wrong++;
            // A label changed after the last check began changed where no client can see it (Chromium
            // ran the page's timer between our checked focus and the click): the one race no client
            // closes. A label changed before it was knowable: acting on it is a bug. 1 ms for the two
            // clocks' rounding.
            const renamedWall = m?.[3] === undefined ? Number.NEGATIVE_INFINITY : Number(m[3]);
            const checkedAt = checks.lastCheck() ?? started;
            if (renamedWall < checkedAt - 1) stats.staleWrong++;
            wrongs.push(
              `round ${round}: printed "${pick.title}", clicked "${label}" (${clicked}x, ${outcome}; its label changed ${m?.[2] ?? "never"}${m?.[2] ? " ms" : ""} before the click, ${Number.isFinite(renamedWall) ? `${renamedWall - checkedAt} ms after the last check began` : "before the snapshot"})`,
            );
          }
        }
      }
      console.log(`stress: ${JSON.stringify({ ...stats, refusals })}`);
      if (wrongs.length) console.log(wrongs.join("\n"));
      await session.close();
      expect(stats.rounds).toBeGreaterThanOrEqual(150);
      expect(stats.staleWrong, wrongs.join("\n")).toBe(0);
      // The race window is the time from the check to the page's click handler: it widens with the
      // machine's load (4 of 200 under the full suite), so it is bounded by a share, not a count.
      expect(stats.wrong, wrongs.join("\n")).toBeLessThanOrEqual(Math.ceil(stats.rounds * 0.05));
      expect(stats.refusedButClicked).toBe(0);
    },
    15 * 60_000,
  );
});
