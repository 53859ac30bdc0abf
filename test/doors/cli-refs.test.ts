/**
 * Refs from another process on a headless desktop (one for this file), each
 * command a child process as an agent runs it:
 *
 * - Two surfaces with the same title (test/apps/same-title-app.py): a main
 *   window "Doc" whose "Apply" opens a modal dialog "Doc" with its own
 *   "Apply", or a second top-level window "Doc". A ref printed for the main
 *   window's Apply, used after the other surface opened, must reach the main
 *   window's Apply (found again in the window it was printed in, by that
 *   window's id) or be refused; never the other one. The app prints which
 *   Apply was clicked.
 * - Stored snapshot files that are corrupt (a record without identity,
 *   options or window null, takenAt in the future, garbage, wrong types):
 *   refused as not found, nothing sent, with a hint to snapshot again.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listWindows } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { type CliRun, indexIn, type Json, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
const APP = "axsnap-same-title-test";

let desktop: Desktop;
let state: string;
let store: string;

beforeAll(async () => {
  desktop = await useDesktop();
  state = mkdtempSync(join(tmpdir(), "axsnap-cli-refs-"));
  store = join(state, "axsnap");
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

const cliJson = (args: string[]): Promise<CliRun & { env: Json }> =>
  runCliJson(args, { XDG_STATE_HOME: state });

/** In a process of its own: no live element of another process's snapshot, so the ref is found by its identity. */
const ownJson = (args: string[]): Promise<CliRun & { env: Json }> =>
  runCliJson(args, { XDG_STATE_HOME: state, AXSNAP_DAEMON: "off" });

function startSameTitle(mode: "dialog" | "window"): Promise<App> {
  return startApp(desktop, "/usr/bin/python3", ["test/apps/same-title-app.py", mode], {
    name: APP,
    windowName: "Doc",
  });
}

/** The app's `CLICKED apply-in-…` lines so far. */
function clicked(app: App): string[] {
  return app
    .output()
    .split("\n")
    .filter((l) => l.startsWith("CLICKED "));
}

/**
 * The lines without how the press came: a GTK 3 button is clicked by ref with the pointer where it
 * can be reached (act/modal.ts), by its action elsewhere; which Apply was pressed is what counts.
 */
function pressed(lines: string[]): string[] {
  return lines.map((l) => l.replace(/ by-pointer$/, ""));
}

/** Whether the other surface's Apply was clicked, by any means. */
function otherClicked(app: App, other: string): boolean {
  return clicked(app).some((l) => l.startsWith(`CLICKED ${other}`));
}

/** Waits (bounded) until the app has printed more than `count` CLICKED lines (that pass `test`); returns them all. */
async function clickedBeyond(
  app: App,
  count: number,
  what: string,
  test: (line: string) => boolean = () => true,
): Promise<string[]> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const lines = clicked(app);
    if (lines.slice(count).some(test)) return lines;
    await sleep(50);
  }
  throw new Error(`${what}: the app printed no new CLICKED line; its output:\n${app.output()}`);
}

/** Waits (bounded) until the app lists `n` windows titled "Doc". */
async function docWindows(pid: number, n: number): Promise<void> {
  const until = Date.now() + 10_000;
  let last: unknown = [];
  while (Date.now() < until) {
    const ws = await listWindows(pid, { deadlineMs: 5000 });
    last = ws;
    if (ws.filter((w) => w.title === "Doc").length === n) return;
    await sleep(100);
  }
  throw new Error(`never ${n} windows titled "Doc"; last listing:\n${JSON.stringify(last, null, 1)}`);
}

const REFUSALS = ["STALE_REF", "WINDOW_NOT_FOUND"];

describe("a ref from another process, with two surfaces titled the same", () => {
  const outcomes: string[] = [];

  afterAll(() => {
    if (outcomes.length > 0) console.log(`same-title windows through the CLI:\n  ${outcomes.join("\n  ")}`);
  });

  for (const [mode, other] of [
    ["dialog", "apply-in-DIALOG"],
    ["window", "apply-in-SECOND-window"],
  ] as const) {
    it(
      `reaches the main window's Apply or refuses, never the ${mode === "dialog" ? "modal dialog's" : "second window's"}`,
      async () => {
        const app = await startSameTitle(mode);
        try {
          const png = join(state, `same-title-${mode}.png`);
          const snap = await cliJson(["snapshot", "--app", APP, "--screenshot", png]);
          expect(snap.code, snap.stdout).toBe(0);
          const { snapshotId: id, text } = snap.env.data;
          expect(snap.env.data.window.title).toBe("Doc");
          const apply = indexIn(text, /^\d+ push button Apply$/);
          const ref = `@${id}:e${apply}`;
          const listed = await listWindows(app.pid, { deadlineMs: 5000 });
          expect(listed.map((w) => w.title)).toEqual(["Doc"]);
          const main = listed[0]!;

          // The first click, from another process: the main window's Apply, which opens the other "Doc".
          const first = await ownJson(["click", ref]);
          expect(first.code, first.stdout).toBe(0);
          expect(pressed(await clickedBeyond(app, 0, "first click"))).toEqual(["CLICKED apply-in-MAIN"]);
          await docWindows(app.pid, 2);

          // The same ref again, from a third process, with two windows titled "Doc".
          const again = await ownJson(["click", ref]);
          let outcome: string;
          if (again.env.ok) {
            const lines = await clickedBeyond(app, 1, "the ref used again");
            expect(otherClicked(app, other)).toBe(false);
            expect(pressed(lines)).toEqual(["CLICKED apply-in-MAIN", "CLICKED apply-in-MAIN"]);
            // Found again in a new observation (of the window it was printed in, by its id: window.ts).
            expect(again.env.data.target.foundAs).toMatch(/^@s[a-z0-9]{7}:e\d+$/);
            outcome = `${mode}: ref @…:e${apply} used again → clicked the main window's Apply (${lines.at(-1)}) as ${again.env.data.target.foundAs}`;
          } else {
            expect(REFUSALS, JSON.stringify(again.env.error)).toContain(again.env.error.code);
            expect(again.env.error).toMatchObject({ delivery: "not_delivered", retry: "safe" });
            outcome = `${mode}: ref @…:e${apply} used again → refused ${again.env.error.code}: ${again.env.error.message}`;
          }
          expect(otherClicked(app, other)).toBe(false);

          // click-at the Apply's pixels of the first screenshot: the window it was taken of, or refused.
          const stored = JSON.parse(readFileSync(join(store, `${id}.json`), "utf8"));
          const shot = stored.screenshot;
          const sf = stored.records[apply].screenFrame;
          const x = Math.round((sf.x + sf.w / 2 - shot.windowOrigin.x) * shot.scale);
          const y = Math.round((sf.y + sf.h / 2 - shot.windowOrigin.y) * shot.scale);
          const before = clicked(app).length;
          const at = await cliJson(["click-at", String(x), String(y), "--of", id]);
          if (at.env.ok) {
            expect(at.env.data.notes.join("\n")).toContain(main.id);
            // A modal dialog's grab keeps pointer input from the main window: then nothing is printed.
            // Either way the ref (proven above to reach the main window or be refused) flushes the app's queue.
            const sync = await cliJson(["click", ref]);
            if (sync.env.ok) await clickedBeyond(app, before, "the sync click");
            const fromPixels = clicked(app)
              .slice(before)
              .filter((l) => l.endsWith(" by-pointer"));
            expect(fromPixels.every((l) => l === "CLICKED apply-in-MAIN by-pointer")).toBe(true);
            outcome += `; click-at ${x},${y} → sent to the main window (the app printed ${fromPixels.join(", ") || "nothing: a modal dialog's grab keeps pointer input from it"})`;
          } else {
            expect([...REFUSALS, "STALE_OBSERVATION"], JSON.stringify(at.env.error)).toContain(
              at.env.error.code,
            );
            expect(at.env.error).toMatchObject({ delivery: "not_delivered", retry: "safe" });
            outcome += `; click-at → refused ${at.env.error.code}`;
          }
          expect(otherClicked(app, other)).toBe(false);
          outcomes.push(outcome);
        } finally {
          await app.stop();
        }
      },
      TIMEOUT,
    );
  }
});

describe("corrupt stored snapshot files", () => {
  it(
    "are refused as not found with a hint to snapshot again; nothing is sent, never INTERNAL",
    async () => {
      const app = await startSameTitle("dialog");
      try {
        const snap = await cliJson(["snapshot", "--app", APP]);
        expect(snap.code, snap.stdout).toBe(0);
        const { snapshotId: good, text } = snap.env.data;
        const apply = indexIn(text, /^\d+ push button Apply$/);
        const original = readFileSync(join(store, `${good}.json`), "utf8");

        const DROP = Symbol("drop");
        // What is wrong, the field (a path into the file) and what it becomes (DROP: deleted).
        const variants: [string, string, unknown][] = [
          ["a record lacking identity", `records.${apply}.identity`, DROP],
          ["a record lacking proof", `records.${apply}.proof`, DROP],
          ["a record's identity.role a number", `records.${apply}.identity.role`, 7],
          ["a record null", `records.${apply}`, null],
          ["a record's index not its position", `records.${apply}.index`, apply + 1],
          ["options null", "options", null],
          ["window null", "window", null],
          ["window.frame a string", "window.frame", "0,0,10,10"],
          ["window.kind unknown", "window.kind", "toast"],
          ["takenAt in the future", "takenAt", Date.now() + 3_600_000],
          ["takenAt a string", "takenAt", "1764600000000"],
          ["app.name missing", "app.name", DROP],
          ["app.pid negative", "app.pid", -1],
          ["records an object", "records", { 0: {} }],
          ["cutBy not strings", "cutBy", [1, 2]],
          [
            "screenshot.scale zero",
            "screenshot",
            { pixelWidth: 10, pixelHeight: 10, scale: 0, windowOrigin: { x: 0, y: 0 } },
          ],
        ];
        const edited = (path: string, value: unknown): string => {
          const s = JSON.parse(original);
          const keys = path.split(".");
          const last = keys.pop()!;
          const parent = keys.reduce((o, k) => o[k], s);
          if (value === DROP) delete parent[last];
          else parent[last] = value;
          return JSON.stringify(s);
        };
        const garbage: [string, string][] = [
          ["garbage bytes", "\u0000\u00ff{{not json"],
          ["JSON null", "null"],
          ["a JSON array", "[1,2,3]"],
        ];
        const seen: string[] = [];
        // Every variant through click; resolve (the same lookup) for the first.
        const check = async (what: string) => {
          const commands = seen.length === 0 ? ["click", "resolve"] : ["click"];
          for (const args of commands.map((c) => [c, `@${good}:e${apply}`])) {
            const r = await cliJson(args);
            expect(r.code, `${what}: ${args[0]}: ${r.stdout}`).not.toBe(0);
            expect(r.env.ok, what).toBe(false);
            expect(
              ["SNAPSHOT_NOT_FOUND", "INVALID_ARGUMENT"],
              `${what}: ${JSON.stringify(r.env.error)}`,
            ).toContain(r.env.error.code);
            expect(r.env.error, what).toMatchObject({ delivery: "not_delivered", retry: "safe" });
            expect(r.env.error.hint, what).toMatch(/axsnap snapshot --app/);
            if (args[0] === "click") seen.push(`${what}: ${r.env.error.code}: ${r.env.error.message}`);
          }
        };
        for (const [what, path, value] of variants) {
          writeFileSync(join(store, `${good}.json`), edited(path, value));
          await check(what);
        }
        for (const [what, bytes] of garbage) {
          writeFileSync(join(store, `${good}.json`), bytes);
          await check(what);
        }
        // click-at a snapshot stamped in the future: not fresh forever.
        const shot = await cliJson(["snapshot", "--app", APP, "--screenshot", join(state, "future.png")]);
        const future = shot.env.data.snapshotId;
        const f = join(store, `${future}.json`);
        const s = JSON.parse(readFileSync(f, "utf8"));
        s.takenAt = Date.now() + 10 * 60_000;
        writeFileSync(f, JSON.stringify(s));
        const at = await cliJson(["click-at", "5", "5", "--of", future]);
        expect(at.env.ok).toBe(false);
        expect(["SNAPSHOT_NOT_FOUND", "INVALID_ARGUMENT"]).toContain(at.env.error.code);
        expect(at.env.error).toMatchObject({ delivery: "not_delivered", retry: "safe" });
        // Nothing reached the app.
        expect(clicked(app)).toEqual([]);
        console.log(`corrupt stored files, \`axsnap click\`:\n  ${seen.join("\n  ")}`);

        // The good file again: the ref works.
        writeFileSync(join(store, `${good}.json`), original);
        const ok = await cliJson(["click", `@${good}:e${apply}`]);
        expect(ok.code, ok.stdout).toBe(0);
        expect(pressed(await clickedBeyond(app, 0, "the good file"))).toEqual(["CLICKED apply-in-MAIN"]);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
