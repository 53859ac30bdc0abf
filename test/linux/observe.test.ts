/**
 * The observe loop on real apps (issue 11 §2): an action's fresh snapshot is
 * taken once galculator's change events stop, so a mode switch that rebuilds
 * its window comes back whole; waitFor is woken by the app's events while
 * another call acts (the wait gives the backend's worker back between
 * slices); a condition that never holds is TIMEOUT with the last observation;
 * and the CLI's `axsnap wait` does the same from a shell.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSession, type Session } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn as indexOf } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let cal: App;
let session: Session;

beforeAll(async () => {
  desktop = await useDesktop();
  cal = await startApp(desktop, "galculator", [], { name: "galculator" });
  session = createSession({ keepSnapshots: 20 });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await cal?.stop();
  await desktop?.stop();
});

const button = (label: string) => new RegExp(`^\\d+ toggle button ${label.replace(/[+*]/, "\\$&")}, `);
const menuItem = (label: string) => new RegExp(`^\\d+ radio menu item (\\([^)]*\\) )?${label}\\b`);

/** Picks a View-menu mode through the session: open the menu, click the item. */
async function switchMode(mode: string) {
  let snap = await session.snapshot({ app: cal.pid, screenshot: false });
  if (!snap.text.split("\n").some((l) => menuItem(mode).test(l.trim()))) {
    const opened = await session.click(indexOf(snap, /^\d+ menu (\(selectable\) )?View$/));
    snap = opened.snapshot!;
  }
  return session.click(indexOf(snap, menuItem(mode)));
}

describe("settling on galculator", () => {
  it(
    "a mode switch that rebuilds the window returns it whole, and says the app went quiet",
    async () => {
      for (const mode of ["Paper Mode", "Basic Mode"]) {
        const result = await switchMode(mode);
        expect(result.settled?.mode, mode).toBe("quiet");
        expect(result.settled!.events, mode).toBeGreaterThan(5);
        // Whole: a snapshot a second later shows the same elements.
        await sleep(1000);
        const later = await session.snapshot({ app: cal.pid, screenshot: false });
        const diff = later.changesSince(result.snapshot!);
        expect(diff.added.length + diff.removed.length, `${mode}: ${diff.text}`).toBe(0);
        const hasKeypad = result.snapshot!.text.split("\n").some((l) => button("7").test(l.trim()));
        expect(hasKeypad, `${mode}:\n${result.snapshot!.text}`).toBe(mode !== "Paper Mode");
      }
    },
    TIMEOUT,
  );

  it(
    "a click settles within the quiet period of its last event",
    async () => {
      const snap = await session.snapshot({ app: cal.pid, screenshot: false });
      const r = await session.click(indexOf(snap, button("AC")));
      expect(r.settled?.mode).toBe("quiet");
      expect(r.settled!.ms).toBeGreaterThanOrEqual(140);
      expect(r.settled!.ms).toBeLessThan(2000);
    },
    TIMEOUT,
  );
});

describe("waitFor on galculator", () => {
  it(
    "is woken by the display changing while another call clicks, and returns the observation that shows it",
    async () => {
      let snap = await session.snapshot({ app: cal.pid, screenshot: false });
      snap = (await session.click(indexOf(snap, button("AC")))).snapshot!;
      const clicks = (async () => {
        await sleep(300);
        let s = snap;
        for (const b of ["6", "*", "7", "="]) s = (await session.click(indexOf(s, button(b)))).snapshot!;
      })();
      const t0 = performance.now();
      const met = await session.waitFor(
        cal.pid,
        { text: "42" },
        { timeoutMs: 20_000, snapshot: { screenshot: false } },
      );
      await clicks;
      expect(met.via).toBe("events");
      expect(met.match?.roleText).toBe("text");
      expect(met.snapshot.text).toMatch(/Value: 42$/m);
      expect(performance.now() - t0).toBeGreaterThan(300);
    },
    TIMEOUT,
  );

  it(
    "times out with TIMEOUT and the last observation when the text never shows",
    async () => {
      const t0 = performance.now();
      const e = (await session
        .waitFor(cal.pid, { text: "no such text" }, { timeoutMs: 1500 })
        .catch((x) => x)) as AxsnapError;
      expect(e).toBeInstanceOf(AxsnapError);
      expect(e.code).toBe("TIMEOUT");
      expect(e.observed?.app.pid).toBe(cal.pid);
      expect(performance.now() - t0).toBeLessThan(1500 + 1000);
    },
    TIMEOUT,
  );

  it(
    "waits for the app to go idle",
    async () => {
      const met = await session.waitFor(cal.pid, { idle: true }, { snapshot: { screenshot: false } });
      expect(met.via).toBe("events");
      expect(met.snapshot.app.pid).toBe(cal.pid);
    },
    TIMEOUT,
  );
});

const state = mkdtempSync(join(tmpdir(), "axsnap-wait-"));

/** The CLI as an agent runs it: a child process; its exit code and both streams. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "lib/cli.ts", ...args], {
      env: { ...process.env, XDG_STATE_HOME: state },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("axsnap wait", () => {
  it(
    "prints the snapshot that met the condition, and exits 1 with TIMEOUT when it never holds",
    async () => {
      const met = await cli(["wait", "--app", String(cal.pid), "--role", "text", "--timeout", "5000"]);
      expect(met.stderr).toBe("");
      expect(met.code).toBe(0);
      expect(met.stdout).toMatch(/^met after \d+ ms \(\d+ observations, woken by events\); element \d+\n/);
      expect(met.stdout).toMatch(/\nsnapshot s[a-z0-9]{7} of galculator/);
      const late = await cli([
        "wait",
        "--app",
        String(cal.pid),
        "--text",
        "never shown",
        "--timeout",
        "800",
        "--json",
      ]);
      expect(late.code).toBe(1);
      expect(JSON.parse(late.stdout)).toMatchObject({
        ok: false,
        command: "wait",
        error: { code: "TIMEOUT" },
      });
      const usage = await cli(["wait", "--app", String(cal.pid)]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("exactly one of --text, --role/--name, --window, --idle");
    },
    TIMEOUT,
  );
});

describe("axsnap windows, --window, wait --window", () => {
  const TEST_APP = "axsnap-windows-test";

  it(
    "lists the app's windows, waits for a dialog a click opens, and snapshots a window by title",
    async () => {
      const app = await startApp(desktop, "/usr/bin/python3", ["test/apps/windows-app.py"], {
        name: TEST_APP,
        windowName: "axsnap windows test",
      });
      const s = createSession();
      try {
        const listed = await cli(["windows", "--app", TEST_APP]);
        expect(listed.stderr).toBe("");
        expect(listed.stdout).toMatch(
          /^0\twindow\t"axsnap windows test"\tid \/org\/a11y\/atspi\/accessible\/\S+\n$/,
        );
        // The wait starts first; the click that opens the dialog comes while it waits.
        const waiting = cli(["wait", "--app", TEST_APP, "--window", "note settings", "--timeout", "15000"]);
        await sleep(1500);
        const main = await s.snapshot({ app: TEST_APP, screenshot: false });
        await s.click(indexOf(main, /^\d+ push button Open dialog$/), { snapshot: false });
        const met = await waiting;
        expect(met.stderr).toBe("");
        expect(met.code).toBe(0);
        expect(met.stdout).toMatch(/^met after \d+ ms \(\d+ observations, woken by events\)\n/);
        expect(met.stdout).toContain('Window: "Note settings" (modal dialog)');
        // The default snapshot faces the modal dialog; --window reaches the main window behind it.
        const behind = await cli(["snapshot", "--app", TEST_APP, "--window", "axsnap windows test"]);
        expect(behind.code).toBe(0);
        expect(behind.stdout).toContain('Window: "axsnap windows test", App:');
        expect(behind.stdout).toMatch(/push button Open dialog/);
        const both = await cli(["windows", "--app", TEST_APP, "--json"]);
        expect(JSON.parse(both.stdout).data.windows.map((w: { kind: string }) => w.kind)).toEqual([
          "window",
          "dialog",
        ]);
        const dialog = await s.snapshot({ app: TEST_APP, screenshot: false });
        const closing = cli([
          "wait",
          "--app",
          TEST_APP,
          "--window",
          "note settings",
          "--gone",
          "--timeout",
          "15000",
        ]);
        await sleep(1500);
        await s.click(indexOf(dialog, /^\d+ push button Close settings$/), { snapshot: false });
        const closed = await closing;
        expect(closed.code).toBe(0);
        expect(closed.stdout).toContain('Window: "axsnap windows test", App:');
      } finally {
        await s.close();
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
