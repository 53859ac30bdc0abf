/**
 * Issue 32 §1: an action that opens a modal dialog never leaves the app's
 * accessibility stuck. GTK 3 runs an AT-SPI action inside its accessibility
 * bridge's D-Bus dispatch (at-spi2-atk answers DoAction first, then runs the
 * action there), so a dialog that runs its own loop (gtk_dialog_run) from
 * that action holds every later accessibility call until it closes; a
 * pointer click on the same element runs it from X input, which does not.
 *
 * mousepad's File > Save As..., gtk3-demo's Interactive Dialog, and a GTK 3
 * app of the tests' own (test/apps/modal-app.py: the same dialog from a
 * button, a menu item and ctrl+n), each through to the dialog's effect (a
 * file written, a value shown), through the library and MCP.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf, useMcpClients } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let session: Session;
const mcpClient = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  session = createSession({ deadlineMs: 10_000 });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

/** Snapshots of `app` until `test` holds, at most 15 s; each must answer (a stuck app fails here). */
async function snapshotUntil(app: number, test: (s: Snapshot) => boolean, what: string): Promise<Snapshot> {
  const until = Date.now() + 15_000;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    last = await session.snapshot({ app, screenshot: false, deadlineMs: 8000 });
    if (test(last)) return last;
    await sleep(150);
  }
  throw new Error(`${what} never showed; last snapshot:\n${last?.text}`);
}

/** Waits (at most 15 s) until `file` holds `text`. */
async function fileHolds(file: string, text: string): Promise<void> {
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    if (fs.existsSync(file) && fs.readFileSync(file, "utf8").includes(text)) return;
    await sleep(100);
  }
  throw new Error(
    `${file} never held ${JSON.stringify(text)}: ${fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "no file"}`,
  );
}

const line = (re: string) => new RegExp(`^\\d+ ${re}`);

describe("mousepad: File > Save As... to a file on disk", () => {
  let app: App;
  beforeAll(async () => {
    app = await startApp(desktop, "mousepad", [], { name: "mousepad", timeoutMs: 60_000 });
  }, TIMEOUT);
  afterAll(async () => {
    await app?.stop();
  });

  it(
    "through the library: the menu item opens the dialog in the reply, the app keeps answering, the file is written",
    async () => {
      const file = path.join(desktop.tmpDir, "saved-by-library.txt");
      let snap = await session.snapshot({ app: app.pid, screenshot: false });
      await session.typeText("hello from the library", {
        target: indexIn(snap, line("text")),
        snapshot: false,
      });
      snap = await session.snapshot({ app: app.pid, screenshot: false });
      const menu = await session.click(indexIn(snap, line("menu (\\([^)]*\\) )?File$")));
      const started = Date.now();
      const saveAs = await session.click(
        indexIn(menu.snapshot!, line("menu item (\\([^)]*\\) )?Save As\\.\\.\\.")),
      );
      expect(Date.now() - started).toBeLessThan(10_250);
      // Clicked with the pointer: GTK 3 would run the action inside the accessibility call.
      expect(saveAs.channel).toBe("synthetic");
      expect(saveAs.notes.join("\n")).toMatch(/clicked with the pointer, not by its action/);
      expect((saveAs.opened ?? []).map((w) => w.kind)).toContain("dialog");
      const dialog = saveAs.snapshot!;
      expect(dialog.text).toMatch(/^Window: "Save As" \(modal dialog\)/m);
      // The app answers: its dialog is read, and the next action reaches it.
      const name = indexIn(dialog, line("text \\(settable, string\\)"));
      const set = await session.setValue(name, file, { snapshot: false });
      expect(set.delivery).toBe("delivered_verified");
      // GTK enables Save once the chooser has seen the name: an agent waits for it, as here.
      const after = await snapshotUntil(
        app.pid,
        (s) => /^\s*\d+ push button Save$/m.test(s.text),
        "Save enabled",
      );
      await session.click(indexIn(after, line("push button (\\([^)]*\\) )?Save$")), { snapshot: false });
      await fileHolds(file, "hello from the library");
      await snapshotUntil(
        app.pid,
        (s) => s.text.includes("saved-by-library.txt"),
        "the window titled by the file",
      );
    },
    TIMEOUT,
  );

  it(
    "through MCP: get_app_state, click File, click Save As..., type the name, press Return",
    async () => {
      const file = path.join(desktop.tmpDir, "saved-by-mcp.txt");
      const client = await mcpClient(session);
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as Parameters<typeof textOf>[0];
        expect(r.isError, `${name} ${JSON.stringify(args)}: ${textOf(r)}`).toBeFalsy();
        return textOf(r);
      };
      let text = await call("get_app_state", { app: app.pid, screenshot: false });
      await call("click", { app: app.pid, element_index: indexIn(text, line("text")) });
      await call("type_text", { app: app.pid, text: " and from MCP" });
      text = await call("get_app_state", { app: app.pid, screenshot: false });
      text = await call("click", {
        app: app.pid,
        element_index: indexIn(text, line("menu (\\([^)]*\\) )?File$")),
      });
      text = await call("click", {
        app: app.pid,
        element_index: indexIn(text, line("menu item (\\([^)]*\\) )?Save As\\.\\.\\.")),
      });
      expect(text).toMatch(/Save As/);
      text = await call("get_app_state", { app: app.pid, screenshot: false });
      expect(text).toMatch(/^Window: "Save As" \(modal dialog\)/m);
      await call("set_value", {
        app: app.pid,
        element_index: indexIn(text, line("text \\(settable, string\\)")),
        value: file,
      });
      await call("press_key", { app: app.pid, key: "Return" });
      await fileHolds(file, "and from MCP");
    },
    TIMEOUT,
  );
});

describe("gtk3-demo: Dialogs and Message Boxes > Interactive Dialog", () => {
  let app: App;
  beforeAll(async () => {
    app = await startApp(desktop, "gtk3-demo", ["--run", "dialog"], {
      name: "gtk3-demo",
      windowName: "Dialogs and Message Boxes",
      timeoutMs: 60_000,
    });
  }, TIMEOUT);
  afterAll(async () => {
    await app?.stop();
  });

  it(
    "the button opens the dialog in the reply; its entry typed into and OK shows the text in the window",
    async () => {
      const snap = await session.snapshot({
        app: app.pid,
        window: { title: "Dialogs and Message Boxes" },
        screenshot: false,
      });
      const result = await session.click(
        indexIn(snap, line("push button (\\([^)]*\\) )?Interactive Dialog")),
      );
      expect((result.opened ?? []).map((w) => w.kind)).toContain("dialog");
      const dialog = result.snapshot!;
      expect(dialog.text).toMatch(/^Window: "Interactive Dialog" \(modal dialog\)/m);
      const entry = indexIn(dialog, line("text \\(settable, string\\)"));
      await session.setValue(entry, "typed in the dialog", { snapshot: false });
      const again = await session.snapshot({ app: app.pid, screenshot: false });
      await session.click(indexIn(again, line("push button (\\([^)]*\\) )?(_)?OK$")), { snapshot: false });
      await snapshotUntil(
        app.pid,
        (s) => /Value: typed in the dialog/.test(s.text) && !/Interactive Dialog" \(modal/.test(s.text),
        "the typed text in the main window",
      );
    },
    TIMEOUT,
  );
});

describe("a GTK 3 app of our own: the same modal dialog from a button, a menu item and ctrl+n", () => {
  let app: App;
  let file: string;
  beforeAll(async () => {
    file = path.join(desktop.tmpDir, "modal-app-note.txt");
    app = await startApp(desktop, "/usr/bin/python3", ["test/apps/modal-app.py", file], {
      name: "axsnap-modal-test",
      windowName: "axsnap modal test",
    });
  }, TIMEOUT);
  afterAll(async () => {
    await app?.stop();
  });

  /** In the dialog the reply shows: the name typed, OK pressed; the file holds it. */
  async function nameIt(dialog: Snapshot, name: string): Promise<void> {
    expect(dialog.text).toMatch(/^Window: "Name the note" \(modal dialog\)/m);
    await session.typeText(name, { target: indexIn(dialog, line("text")), snapshot: false });
    const again = await session.snapshot({ app: app.pid, screenshot: false });
    await session.click(indexIn(again, line("push button (\\([^)]*\\) )?OK$")), { snapshot: false });
    await fileHolds(file, name);
    await snapshotUntil(app.pid, (s) => s.text.includes(`Saved: ${name}`), `"Saved: ${name}"`);
  }

  it(
    "a button",
    async () => {
      const snap = await session.snapshot({ app: app.pid, screenshot: false });
      const result = await session.click(indexIn(snap, line("push button (\\([^)]*\\) )?Name it$")));
      expect((result.opened ?? []).map((w) => w.title)).toContain("Name the note");
      await nameIt(result.snapshot!, "from the button");
    },
    TIMEOUT,
  );

  it(
    "a menu item",
    async () => {
      const snap = await session.snapshot({ app: app.pid, screenshot: false });
      const menu = await session.click(indexIn(snap, line("menu (\\([^)]*\\) )?Note$")));
      const result = await session.click(
        indexIn(menu.snapshot!, line("menu item (\\([^)]*\\) )?Name note\\.\\.\\.")),
      );
      expect(result.channel).toBe("synthetic");
      expect((result.opened ?? []).map((w) => w.title)).toContain("Name the note");
      await nameIt(result.snapshot!, "from the menu");
    },
    TIMEOUT,
  );

  it(
    "a keyboard shortcut",
    async () => {
      await session.snapshot({ app: app.pid, screenshot: false });
      const result = await session.pressKey("ctrl+n", { app: app.pid });
      expect((result.opened ?? []).map((w) => w.title)).toContain("Name the note");
      await nameIt(result.snapshot!, "from the shortcut");
    },
    TIMEOUT,
  );
});
