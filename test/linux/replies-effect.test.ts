/**
 * Issue 32 §6 through the library, on real apps under this file's headless
 * desktop: a reply says what the action did to the app. A window the action
 * closed, or an app that quit, is said in words, with no next step that
 * leads to an error and no raw D-Bus text (test/apps/closer-app.py: a dialog
 * whose button closes it, buttons that quit the app); a check box's changed
 * line names the states it gained and lost; zenity's combo box keeps its
 * "Color" label once a value is chosen; after ctrl+s in mousepad the header
 * and the window's line name the same title.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeReply, type DoorWords, replyText } from "../../lib/doors/reply.js";
import { type ActionResult, createSession, listWindows, type Snapshot } from "../../lib/index.js";
import { desktopBackend } from "../../lib/observe/desktop-backend.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { withMethod } from "../support/editor.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
const CLOSER = "axsnap-closer-test";
const WORDS: DoorWords = {
  whole: "WHOLE",
  idle: "IDLE",
  apps: "LIST-APPS",
  snapshot: "SNAPSHOT-AGAIN",
};

/**
 * Raw D-Bus error text: error and interface names, unique bus names, GLib's timeout. (A window's
 * id, an object path, is axsnap's own address for it and may print.)
 */
const RAW_DBUS =
  /GDBus|org\.freedesktop|org\.a11y\.atspi\.[A-Z]|:1\.\d+\b|Timeout was reached|could not be processed/;

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

const textOf = (r: ActionResult) => replyText(composeReply(r, { words: WORDS }), []);

function startCloser(): Promise<App> {
  return startApp(desktop, "/usr/bin/python3", ["test/apps/closer-app.py"], {
    name: CLOSER,
    windowName: "axsnap closer test",
  });
}

/** Opens the app's "Save As" dialog and returns a snapshot of it. */
async function openDialog(session: ReturnType<typeof createSession>, app: App): Promise<Snapshot> {
  const main = await session.snapshot({ app: app.pid, screenshot: false });
  await session.click(indexIn(main, /^\d+ push button Open Save As$/), { snapshot: false });
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const ws = await listWindows(app.pid);
    if (ws.some((w) => w.title === "Save As"))
      return session.snapshot({ app: app.pid, window: { title: "Save As" }, screenshot: false });
    await sleep(100);
  }
  throw new Error("the Save As dialog never showed in listWindows");
}

/** Whether a process has ended (gone, or a zombie no one reaped yet). */
function ended(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

describe("a window that closed, an app that quit (test/apps/closer-app.py)", () => {
  it(
    "a button that quits the app: the result says the app exited and its window closed, and sends the agent to the app list",
    async () => {
      const app = await startCloser();
      try {
        const session = createSession();
        const main = await session.snapshot({ app: app.pid, screenshot: false });
        const r = await session.click(indexIn(main, /^\d+ push button Quit app$/));
        expect(ended(app.pid)).toBe(true);
        expect(r.snapshot).toBeUndefined();
        expect(r.exited).toEqual({ name: CLOSER, pid: app.pid });
        expect(r.closed?.map((w) => w.title)).toEqual(["axsnap closer test"]);
        for (const n of r.notes) expect(n).not.toMatch(RAW_DBUS);
        const text = textOf(r);
        console.log(`quit's reply:\n${text}`);
        expect(text).toMatch(new RegExp(`^the app exited: ${CLOSER} \\(pid ${app.pid}\\)`, "m"));
        expect(text).toMatch(/^closed: window "axsnap closer test"/m);
        expect(r.opened).toEqual([]);
        expect(text).toContain("LIST-APPS");
        expect(text).not.toContain("SNAPSHOT-AGAIN");
        expect(text).not.toMatch(RAW_DBUS);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    'a button that closes its dialog: `closed: window "Save As"`, and the fresh snapshot is the window that stays',
    async () => {
      const app = await startCloser();
      try {
        const session = createSession();
        const dialog = await openDialog(session, app);
        const r = await session.click(indexIn(dialog, /^\d+ push button Close dialog$/));
        expect(r.exited).toBeUndefined();
        expect(r.closed?.map((w) => w.title)).toEqual(["Save As"]);
        expect(r.snapshot?.window.title).toBe("axsnap closer test");
        const text = textOf(r);
        expect(text).toMatch(/^closed: window "Save As"/m);
        expect(text).toMatch(/label Dialog closed/);
        expect(text).not.toMatch(RAW_DBUS);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a dialog that closes between the listing after the action and the fresh snapshot: the snapshot is of the window that stays, no D-Bus text",
    async () => {
      const app = await startCloser();
      try {
        const session = createSession();
        const dialog = await openDialog(session, app);
        // The race forced: the app closes the dialog (SIGUSR1) right after the listing that still
        // showed it, so the fresh snapshot asks for a window that is gone by then.
        const real = await desktopBackend();
        let listings = 0;
        const backend = withMethod(real, "listWindows", (original) => async (request) => {
          const out = await original(request);
          if (++listings === 2) {
            process.kill(app.pid, "SIGUSR1");
            const until = Date.now() + 10_000;
            while ((await original(request)).some((w) => w.title === "Save As"))
              if (Date.now() > until) throw new Error("the dialog did not close on SIGUSR1");
          }
          return out;
        });
        const raced = createSession({ backend });
        const seen = await raced.snapshot({
          app: app.pid,
          window: { id: dialog.window.id! },
          screenshot: false,
        });
        listings = 0;
        // Listing 1 comes before the click, listing 2 after it: the dialog closes right after that one.
        const r = await raced.click(indexIn(seen, /^\d+ label Where to save the note$/));
        expect(listings).toBeGreaterThanOrEqual(2);
        for (const n of r.notes) expect(n).not.toMatch(RAW_DBUS);
        expect(r.snapshot?.window.title).toBe("axsnap closer test");
        const text = textOf(r);
        console.log(`the raced reply:\n${text}`);
        expect(r.closed?.map((w) => w.title)).toEqual(["Save As"]);
        expect(text).toMatch(/^closed: window "Save As"/m);
        expect(text).not.toMatch(RAW_DBUS);
        expect(text).not.toContain("SNAPSHOT-AGAIN");
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a button in the dialog that quits the app: both windows closed, the app exited",
    async () => {
      const app = await startCloser();
      try {
        const session = createSession();
        const dialog = await openDialog(session, app);
        const r = await session.click(indexIn(dialog, /^\d+ push button Quit from dialog$/));
        expect(r.exited).toEqual({ name: CLOSER, pid: app.pid });
        expect(r.closed?.map((w) => w.title).sort()).toEqual(["Save As", "axsnap closer test"]);
        const text = textOf(r);
        expect(text).toMatch(/^closed: window "Save As"/m);
        expect(text).toMatch(/^the app exited/m);
        expect(text).not.toMatch(RAW_DBUS);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a check box's changed line names the states it gained and lost: `[changed: value, states +checked]`, then `-checked`",
    async () => {
      const app = await startCloser();
      try {
        const session = createSession();
        const main = await session.snapshot({ app: app.pid, screenshot: false });
        const box = indexIn(main, /^\d+ check box Remember me, Value: off$/);
        const on = await session.click(box);
        expect(on.text).toMatch(/check box Remember me, Value: on \[changed: value, states \+checked\]$/m);
        expect(on.changes?.changed[0]?.states).toEqual({ added: ["checked"], removed: [] });
        const off = await session.click(box);
        expect(off.text).toMatch(/check box Remember me, Value: off \[changed: value, states -checked\]$/m);
        expect(off.changes?.changed[0]?.states).toEqual({ added: [], removed: ["checked"] });
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

describe("zenity --forms: a combo box keeps its label", () => {
  it(
    "the combo box is still `Label: Color` once Green is chosen, with Green as its value, and the ref from before still reaches it",
    async () => {
      const app = await startApp(
        desktop,
        "/usr/bin/zenity",
        [
          "--forms",
          "--title",
          "Pick",
          "--add-entry",
          "Name",
          "--add-combo",
          "Color",
          "--combo-values",
          "Red|Green|Blue",
        ],
        { name: "zenity", windowName: "Pick" },
      );
      try {
        const session = createSession();
        const before = await session.snapshot({ app: app.pid, screenshot: false });
        const combo = indexIn(before, /^\d+ combo box Label: Color$/);
        const open = await session.click(combo);
        const green = indexIn(open.snapshot!, /^\d+ menu item .*Green$/);
        const picked = await session.click(green);
        console.log(`picking Green:\n${picked.text}`);
        expect(picked.text).toMatch(/combo box Label: Color, Value: Green/);
        const now = await session.snapshot({ app: app.pid, screenshot: false });
        expect(now.text).toMatch(/^\t*\d+ combo box Label: Color, Value: Green$/m);
        const rec = now.records.find((r) => r.role === "combo box")!;
        expect(rec).toMatchObject({ title: "Color", nameSource: "inferred" });
        // Its identity did not change with the choice: the first snapshot's ref still reaches it.
        await expect(session.resolve(`@${before.id}:e${combo}`)).resolves.toMatchObject({
          how: "live",
        });
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

describe("mousepad: ctrl+s in a named file", () => {
  it(
    "the header and the window's line name the same title, the saved one",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-mousepad-"));
      const file = join(dir, "notes.txt");
      writeFileSync(file, "first line\n");
      const app = await startApp(desktop, "/usr/bin/mousepad", [file], {
        name: "mousepad",
        windowName: "notes.txt",
        timeoutMs: 40_000,
      });
      try {
        const session = createSession();
        const snap = await session.snapshot({ app: app.pid, screenshot: false });
        await session.click(indexIn(snap, /^\d+ text \(settable, string\)/), { snapshot: false });
        const typed = await session.typeText("more ", { app: app.pid });
        expect(typed.snapshot?.window.title).toMatch(/^\*/);
        const saved = await session.pressKey("ctrl+s", { app: app.pid, snapshot: { style: "tree" } });
        const fresh = saved.snapshot!;
        const header = /^Window: "(.*)", App: mousepad\.$/m.exec(fresh.text)?.[1];
        const line = /^0 frame (.*)$/m.exec(fresh.text)?.[1];
        expect(header).toBe(line);
        expect(fresh.window.title).toBe(line);
        expect(readFileSync(file, "utf8")).toContain("more ");
        // The title the file has on disk once saved: no `*`.
        const until = Date.now() + 10_000;
        let last = fresh;
        while (/^\*/.test(last.window.title) && Date.now() < until) {
          await sleep(100);
          last = await session.snapshot({ app: app.pid, screenshot: false });
        }
        expect(last.window.title).toMatch(/^[^*].*notes\.txt/);
        expect(/^0 frame (.*)$/m.exec(last.text)?.[1]).toBe(last.window.title);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
