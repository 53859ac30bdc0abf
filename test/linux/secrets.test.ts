/**
 * Issue 31, items 3 and 4, on real apps under the headless desktop: a field
 * made secure by any means is never read and never typed into, by target or
 * where keyboard focus is.
 *
 * Item 3: test/apps/pin-form.py, a GTK3 entry with no name of its own and no
 * relation to a label, secure only by the label "PIN:" beside it (inferred,
 * issue 19). It has focus and its text "4711" selected: no door prints the
 * digits or the selection, and keys where focus is are refused. Its "Name:"
 * twin takes them (the refusal is the label's, not every unnamed field's).
 *
 * Item 4: test/apps/tk-password.tcl, a Tk window (no accessibility tree)
 * whose pixels show "Password:" beside a `-show *` entry with Tk's focus:
 * where typed text would go cannot be read from a window with no tree, and
 * its pixels name a password, so nothing is typed.
 *
 * Each app prints every change of its fields on stdout: a test sees whether
 * anything reached them.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { errorOf, textOf, useMcpClients } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
const PIN = "4711";
let desktop: Desktop;
let session: Session;
let form: App;
let tk: App;
let state: string;
const mcpClient = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  state = fs.mkdtempSync(path.join(desktop.tmpDir, "cli-state-"));
  session = createSession({ deadlineMs: 8000 });
  form = await startApp(desktop, "/usr/bin/python3", ["test/apps/pin-form.py"], {
    name: "axsnap-pin-form",
  });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

/** What reached a field since the app started: its stdout lines that start with `what=`. */
const reached = (app: App, what: string) =>
  app
    .output()
    .split("\n")
    .filter((l) => l.startsWith(`${what}=`));

/**
 * The form once its entries print with their inferred labels and keyboard focus is in the one
 * labelled `focus` (GTK builds its tree lazily, and the window takes focus once mapped).
 */
async function formSnapshot(
  options: { ocr?: boolean } = {},
  focus: "PIN" | "Name" = "PIN",
): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await session.snapshot({ app: form.pid, screenshot: false, ...options });
    const labelled = /Label: PIN:/.test(snap.text) && /Label: Name:/.test(snap.text);
    if (labelled && snap.focusedIndex === indexIn(snap, new RegExp(`Label: ${focus}:`))) return snap;
    if (Date.now() > end)
      throw new Error(`the form never showed focus in ${focus}; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

/** A refusal of a secure field: POLICY_DENIED, nothing sent, and a hint saying what to do instead. */
function expectSecureRefusal(e: unknown): void {
  expect(e).toBeInstanceOf(AxsnapError);
  const err = e as AxsnapError;
  expect(err.code, err.message).toBe("POLICY_DENIED");
  expect(err.message).toMatch(/secure|password|secret/i);
  expect(err.hint).toMatch(/ask the user/);
  expect(err.delivery).toBe("not_delivered");
}

const cli = (args: string[]) => runCli(args, { XDG_STATE_HOME: state });
const cliJson = (args: string[]) => runCliJson(args, { XDG_STATE_HOME: state });

describe("a PIN entry secure only by the label beside it, with focus and its text selected (item 3)", () => {
  it(
    "the library's snapshot prints neither its digits nor its selection, with or without OCR",
    async () => {
      const snap = await formSnapshot();
      const line = snap.text.split("\n").find((l) => /Label: PIN:/.test(l))!;
      expect(line.trim()).toMatch(/^\d+ text \(settable, string\) Label: PIN:, Value: •••$/);
      expect(snap.records[indexIn(snap, /Label: PIN:/)]!.secure).toBe(true);
      expect(snap.text).not.toContain(PIN);
      expect(snap.text).not.toMatch(/Selected text/);
      expect(snap.selectedText).toBeUndefined();
      // The entry shows its digits on screen: text read off the pixels paints it out like any secure field.
      const read = await formSnapshot({ ocr: true });
      expect(read.text).not.toContain(PIN);
      expect(read.text).not.toMatch(/Selected text/);
    },
    TIMEOUT,
  );

  it(
    "the CLI's text and --json print neither",
    async () => {
      await formSnapshot();
      const text = await cli(["snapshot", "--app", String(form.pid)]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/Label: PIN:, Value: •••/);
      expect(text.stdout).not.toContain(PIN);
      expect(text.stdout).not.toMatch(/Selected text/);
      const json = await cliJson(["snapshot", "--app", String(form.pid)]);
      expect(json.env.ok, json.stderr).toBe(true);
      expect(json.stdout).toMatch(/Label: PIN:, Value: •••/);
      expect(json.stdout).not.toContain(PIN);
      expect(json.stdout).not.toMatch(/Selected text/);
      expect(JSON.stringify(json.env.data)).not.toMatch(/selectedText/);
    },
    TIMEOUT,
  );

  it(
    "MCP get_app_state prints neither",
    async () => {
      await formSnapshot();
      const client = await mcpClient(session);
      const r = (await client.callTool({
        name: "get_app_state",
        arguments: { app: form.pid },
      })) as Parameters<typeof textOf>[0];
      // The text and the structured reply (the screenshot aside: pixels are no text).
      const all = JSON.stringify([textOf(r), r.structuredContent ?? null]);
      expect(textOf(r)).toMatch(/Label: PIN:, Value: •••/);
      expect(all).not.toContain(PIN);
      expect(all).not.toMatch(/Selected text/);
    },
    TIMEOUT,
  );

  it(
    'pressKey "5" and typeText "66" where focus is are refused in every door, and nothing reaches the field',
    async () => {
      await formSnapshot();
      expectSecureRefusal(await session.pressKey("5", { app: form.pid }).catch((e: unknown) => e));
      expectSecureRefusal(await session.typeText("66", { app: form.pid }).catch((e: unknown) => e));
      // By target too (this one the printed record already refused).
      const snap = await formSnapshot();
      const pin = indexIn(snap, /Label: PIN:/);
      expectSecureRefusal(await session.typeText("66", { target: pin }).catch((e: unknown) => e));
      expectSecureRefusal(await session.setValue(pin, "66").catch((e: unknown) => e));

      const client = await mcpClient(session);
      for (const [name, args] of [
        ["press_key", { app: form.pid, key: "5" }],
        ["type_text", { app: form.pid, text: "66" }],
      ] as const) {
        const r = await client.callTool({ name, arguments: args });
        const err = errorOf(r as Parameters<typeof errorOf>[0]);
        expect(err.code, name).toBe("POLICY_DENIED");
        expect(err.hint, name).toMatch(/ask the user/);
      }

      await cli(["snapshot", "--app", String(form.pid)]);
      for (const args of [
        ["press", "5", "--app", String(form.pid)],
        ["type", "66", "--app", String(form.pid)],
      ]) {
        const r = await cliJson(args);
        expect(r.env.ok, `${args.join(" ")}: ${r.stdout}`).toBe(false);
        expect(r.env.error.code).toBe("POLICY_DENIED");
        expect(r.env.error.hint).toMatch(/ask the user/);
      }
      // Let anything typed arrive before looking.
      await sleep(500);
      expect(reached(form, "pin")).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "its Name twin takes keys where focus is; back in the PIN entry (Shift+Tab), keys are refused again",
    async () => {
      await formSnapshot();
      // Tab inserts nothing: allowed in a secure field, and it moves focus to the Name entry.
      await session.pressKey("Tab", { app: form.pid });
      await formSnapshot({}, "Name");
      await session.typeText("Ann", { app: form.pid });
      const end = Date.now() + 5000;
      while (!reached(form, "name").includes("name=Ann") && Date.now() < end) await sleep(50);
      expect(reached(form, "name")).toContain("name=Ann");
      // The latest snapshot says focus is in Name; the keys' own live check finds it back in the PIN entry.
      await session.pressKey("shift+Tab", { app: form.pid });
      expectSecureRefusal(await session.typeText("66", { app: form.pid }).catch((e: unknown) => e));
      await sleep(500);
      expect(reached(form, "pin")).toEqual([]);
    },
    TIMEOUT,
  );
});

describe("a Tk window (no accessibility tree) whose pixels show Password: beside the focused entry (item 4)", () => {
  // Started after the form's tests: it takes the keyboard focus of the display.
  beforeAll(async () => {
    tk = await startApp(desktop, "wish", ["test/apps/tk-password.tcl"], { windowClass: "Tk-password.tcl" });
  }, TIMEOUT);

  it(
    "typeText and pressKey where focus is are refused in every door, and nothing reaches the entry",
    async () => {
      const snap = await session.snapshot({ app: tk.pid });
      expect(snap.text).toMatch(/text \(ocr(?:, unsure)?\) Password/);
      for (const attempt of [
        () => session.typeText("hunter2", { app: tk.pid }),
        () => session.pressKey("x", { app: tk.pid }),
      ]) {
        const e = await attempt().catch((err: unknown) => err);
        expectSecureRefusal(e);
        expect((e as AxsnapError).message).toMatch(/no accessibility tree/);
      }
      const client = await mcpClient(session);
      const r = await client.callTool({ name: "type_text", arguments: { app: tk.pid, text: "hunter2" } });
      expect(errorOf(r as Parameters<typeof errorOf>[0]).code).toBe("POLICY_DENIED");
      await cli(["snapshot", "--app", String(tk.pid)]);
      const viaCli = await cliJson(["type", "hunter2", "--app", String(tk.pid)]);
      expect(viaCli.env.ok, viaCli.stdout).toBe(false);
      expect(viaCli.env.error.code).toBe("POLICY_DENIED");
      await sleep(500);
      expect(reached(tk, "value")).toEqual([]);
    },
    TIMEOUT,
  );
});
