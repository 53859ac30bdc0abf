/**
 * Issue 34, locators on a real desktop (Xvfb, AT-SPI, a GTK 3 app of the
 * tests' own, test/apps/locate-app.py, whose changes the test drives through
 * its own buttons): session.locate waits for an element in a dialog that
 * opens after an action, `click({ locator })` acts on it, a located record
 * keeps a ref's identity guards (an element renamed between locate and act
 * is STALE_REF, nothing sent), a locator that finds nothing names the closest
 * candidates, one that finds two lists both with what tells them apart, and a
 * window moved and resized still locates.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, listWindows, type Session } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { rejects } from "../support/rejects.js";

const TIMEOUT = 120_000;
const APP = "axsnap-locate-test";
const WINDOW = `app=${APP} >> window="axsnap locate"`;
let desktop: Desktop;
let session: Session;
let app: App;

beforeAll(async () => {
  desktop = await useDesktop();
  session = createSession({ deadlineMs: 10_000 });
  app = await startApp(desktop, "/usr/bin/python3", ["test/apps/locate-app.py"], {
    name: APP,
    windowName: "axsnap locate",
  });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await app?.stop();
  await desktop?.stop();
});

/** The status label's text, read by locate (a label named by its text). */
async function status(): Promise<string> {
  const found = await session.locate(`${WINDOW} >> label /^Status: /`, { timeoutMs: 5000 });
  return found.record.title ?? "";
}

describe("locate on a real GTK 3 app", () => {
  it(
    "waits for an element in a dialog that opens after an action; click({ locator }) acts on it",
    async () => {
      const opened = await session.click(
        { locator: `${WINDOW} >> push button "Open details"` },
        { snapshot: false },
      );
      expect(opened.target?.locator).toBe(`${WINDOW} >> push button "Open details"`);
      // The dialog opens two seconds after the click: it is not there yet, so locate must wait for it.
      expect((await listWindows(APP)).map((w) => w.kind)).not.toContain("dialog");
      const close = `app=${APP} >> window:dialog="Details" >> push button "Close"`;
      const found = await session.locate(close, { timeoutMs: 15_000 });
      expect(found.snapshot.window.title).toBe("Details");
      expect(found.record.title).toBe("Close");
      expect(found.record.locator).toBe(close);
      const closed = await session.click({ locator: close }, { snapshot: false });
      expect(closed.delivery).not.toBe("not_delivered");
      const gone = await session.waitFor(APP, { window: "Details", gone: true }, { timeoutMs: 10_000 });
      expect(gone.ms).toBeGreaterThanOrEqual(0);
    },
    TIMEOUT,
  );

  it(
    "several matches: AMBIGUOUS_TARGET listing each with the frame that tells it apart",
    async () => {
      const e = await rejects(session.locate(`${WINDOW} >> push button "Save"`, { timeoutMs: 5000 }));
      expect(e.code).toBe("AMBIGUOUS_TARGET");
      expect(e.message).toMatch(
        /^2 elements match push button "Save": panel "Actions" >> push button "Save" \(@s\w+:e\d+\); panel "More" >> push button "Save" \(@s\w+:e\d+\)$/,
      );
      expect(e.matches?.map((m) => m.locator)).toEqual([
        `${WINDOW} >> panel "Actions" >> push button "Save"`,
        `${WINDOW} >> panel "More" >> push button "Save"`,
      ]);
      console.log(`AMBIGUOUS_TARGET: ${e.message}\n  hint: ${e.hint}`);
    },
    TIMEOUT,
  );

  it(
    "nothing matches: ELEMENT_NOT_FOUND naming the closest candidates, with the last observation",
    async () => {
      const e = await rejects(
        session.locate(`${WINDOW} >> panel "Actions" >> push button "Stored"`, { timeoutMs: 1500 }),
      );
      expect(e.code).toBe("ELEMENT_NOT_FOUND");
      expect(e.message).toMatch(
        /^no element matches push button "Stored" in window "axsnap locate" of axsnap-locate-test/,
      );
      expect(e.candidates?.[0]).toMatchObject({
        locator: `${WINDOW} >> push button "Store"`,
        ancestors: ['panel "Actions"'],
      });
      expect(e.candidates?.[0]?.why).toMatch(/^same role and ancestors, name similar$/);
      expect(e.hint).toMatch(/^closest: push button "Store" \(@s\w+:e\d+\) · same role/);
      expect(e.observed?.window.title).toBe("axsnap locate");
      console.log(`ELEMENT_NOT_FOUND: ${e.message}\n  hint: ${e.hint}`);
    },
    TIMEOUT,
  );

  it(
    "a located record keeps a ref's guards: renamed between locate and act, it is STALE_REF and nothing is sent",
    async () => {
      const save = `${WINDOW} >> panel "Actions" >> push button "Save"`;
      const found = await session.locate(save);
      // The change, forced between locate and act: the app renames the very button located.
      await session.click({ locator: `${WINDOW} >> push button "Rename save"` }, { snapshot: false });
      await session.locate(`${WINDOW} >> panel "Actions" >> push button "Saved"`, { timeoutMs: 5000 });
      // What click({ locator }) does after locating: act on the located record.
      const e = await rejects(session.click(found.record, { snapshot: false }));
      expect(e.code).toBe("STALE_REF");
      expect(e.delivery).toBe("not_delivered");
      expect(await status()).toBe("Status: idle");
      // And the locator, located again, now finds nothing: the name was part of what it said.
      const again = await rejects(session.locate(save, { timeoutMs: 1000 }));
      expect(again.code).toBe("ELEMENT_NOT_FOUND");
      expect(again.candidates?.map((c) => c.locator)).toContain(`${WINDOW} >> push button "Saved"`);
    },
    TIMEOUT,
  );

  it(
    "a window moved and resized still locates, by what the element is, not where",
    async () => {
      const more = `${WINDOW} >> panel "More" >> push button "Save"`;
      const before = await session.locate(more);
      await session.click({ locator: `${WINDOW} >> push button "Move window"` }, { snapshot: false });
      let after = await session.locate(more);
      for (let i = 0; i < 50 && after.snapshot.window.frame.x === before.snapshot.window.frame.x; i++) {
        // The window manager moves it when it gets to it: wait for the app's next change, then look again.
        await session.waitFor(APP, { idle: true }, { timeoutMs: 2000 }).catch(() => undefined);
        after = await session.locate(more);
      }
      expect(after.snapshot.window.frame).not.toEqual(before.snapshot.window.frame);
      expect(after.record.title).toBe("Save");
      expect(after.ref).not.toBe(before.ref);
      const r = await session.click({ locator: more }, { snapshot: false });
      expect(r.delivery).not.toBe("not_delivered");
    },
    TIMEOUT,
  );
});
