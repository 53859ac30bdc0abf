/**
 * The GTK3 file chooser (zenity --file-selection) driven as an agent drives it
 * (issue 32, section 2): folders open by double-click, and the file whose
 * line was clicked is the one zenity prints, by click + OK and by
 * double-click, through the library and through MCP. GtkTreeView cells are
 * the table's children (the name column's icon and text cells inside a
 * container cell), so a click must select the row the printed line names,
 * check that it is selected, and never fall back to the cell's "activate"
 * (which accepts the dialog with whatever row was selected before).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf, useMcpClients } from "../support/mcp.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let root: string;
const connect = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  root = mkdtempSync(join(tmpdir(), "axsnap-chooser-"));
  mkdirSync(join(root, "outer", "inner"), { recursive: true });
  for (let i = 1; i <= 5; i++) writeFileSync(join(root, "outer", "inner", `q${i}.txt`), `q${i}\n`);
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

type App = Awaited<ReturnType<typeof startApp>>;

/** zenity's file chooser, opened on the temp folder (which holds only `outer`). */
const chooser = (): Promise<App> =>
  startApp(desktop, "zenity", ["--file-selection", "--title=Pick a file", `--filename=${root}/`], {
    timeoutMs: 60_000,
  });

/** What zenity printed once it exited (the chosen path), waiting for its exit. */
async function chosen(app: App, ms = 20_000): Promise<string> {
  const until = Date.now() + ms;
  while (!app.exited()) {
    if (Date.now() > until) throw new Error(`zenity did not exit; its output so far:\n${app.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return printed(app);
}

/** The paths zenity printed on stdout (its output also holds GLib's warnings on stderr). */
const printed = (app: App) =>
  app
    .output()
    .split("\n")
    .filter((l) => l.startsWith("/"))
    .join("\n");

/** A file list's line (a table cell) whose text is `name`. */
const cellLine = (name: string) => new RegExp(`^\\d+ table cell\\b.*\\b${name.replace(".", "\\.")}\\b`);

/** Snapshots the app until its text shows `re` (a folder opens on its own time). */
async function until(s: Session, pid: number, re: RegExp, ms = 20_000): Promise<Snapshot> {
  const end = Date.now() + ms;
  for (;;) {
    const snap = await s.snapshot({ app: pid, screenshot: false });
    if (snap.text.split("\n").some((l) => re.test(l.trim()))) return snap;
    if (Date.now() > end) throw new Error(`no line matches ${re} in:\n${snap.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens outer, then inner, by double-clicking their lines; the snapshot that shows q1-q5. */
async function openFolders(s: Session, pid: number): Promise<Snapshot> {
  let snap = await until(s, pid, cellLine("outer"));
  for (const [folder, next] of [
    ["outer", "inner"],
    ["inner", "q5.txt"],
  ] as const) {
    const r = await s.click(indexIn(snap, cellLine(folder)), { count: 2, snapshot: false });
    expect(r.notes.join("\n")).not.toMatch(/GDBus|org\.freedesktop|org\.a11y/);
    snap = await until(s, pid, cellLine(next));
  }
  return snap;
}

/** The line that names `name`, with its state list. */
const lineOf = (snap: Snapshot, name: string) =>
  snap.text.split("\n").find((l) => cellLine(name).test(l.trim()))!;

describe("zenity's file chooser, through the library", () => {
  it(
    "opens two folders by double-click, then picks q3.txt by click and OK",
    async () => {
      const app = await chooser();
      const s = createSession();
      try {
        const snap = await openFolders(s, app.pid);
        expect(lineOf(snap, "q3.txt")).not.toMatch(/\(selected/);
        const r = await s.click(indexIn(snap, cellLine("q3.txt")));
        // A single click selects; it never accepts the dialog.
        await new Promise((done) => setTimeout(done, 500));
        expect(app.exited(), `the click ended the dialog, zenity printed ${printed(app)}`).toBe(false);
        // The row was selected and read back as selected; no raw D-Bus text reaches the notes.
        expect(r.notes.join("\n")).not.toMatch(/GDBus|org\.freedesktop|org\.a11y/);
        expect(r.delivery).toBe("delivered_verified");
        const after = await s.snapshot({ app: app.pid, screenshot: false });
        expect(lineOf(after, "q3.txt")).toMatch(/\(selected/);
        expect(lineOf(after, "q1.txt")).not.toMatch(/\(selected/);
        expect(lineOf(after, "q2.txt")).not.toMatch(/\(selected/);
        await s.click(indexIn(after, /^\d+ push button OK$/), { snapshot: false });
        expect(await chosen(app)).toBe(join(root, "outer", "inner", "q3.txt"));
      } finally {
        await s.close();
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "picks q3.txt by double-click",
    async () => {
      const app = await chooser();
      const s = createSession();
      try {
        const snap = await openFolders(s, app.pid);
        const r = await s.click(indexIn(snap, cellLine("q3.txt")), { count: 2, snapshot: false });
        expect(r.notes.join("\n")).not.toMatch(/GDBus|org\.freedesktop|org\.a11y/);
        expect(await chosen(app)).toBe(join(root, "outer", "inner", "q3.txt"));
      } finally {
        await s.close();
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

describe("zenity's file chooser, through MCP", () => {
  it(
    "an agent that decides each step from the printed text picks q3.txt, by click + OK and by double-click",
    async () => {
      for (const how of ["click", "double-click"] as const) {
        const app = await chooser();
        const s = createSession();
        try {
          const client = await connect(s);
          const call = async (name: string, args: Record<string, unknown>) => {
            const r = (await client.callTool({
              name,
              arguments: { app: app.pid, ...args },
            })) as CallToolResult;
            const text = textOf(r);
            expect(r.isError, text).toBeFalsy();
            expect(text).not.toMatch(/GDBus|org\.freedesktop|org\.a11y/);
            return text;
          };
          /** The app's state until `re` shows (a folder opens on its own time). */
          const stateShowing = async (re: RegExp) => {
            const end = Date.now() + 20_000;
            for (;;) {
              const text = await call("get_app_state", {});
              if (text.split("\n").some((l) => re.test(l.trim().replace(/ \[(changed|added)[^\]]*\]$/, ""))))
                return text;
              if (Date.now() > end) throw new Error(`no line matches ${re} in:\n${text}`);
              await new Promise((r) => setTimeout(r, 100));
            }
          };
          let text = await stateShowing(cellLine("outer"));
          await call("click", { element_index: indexIn(text, cellLine("outer")), click_count: 2 });
          text = await stateShowing(cellLine("inner"));
          await call("click", { element_index: indexIn(text, cellLine("inner")), click_count: 2 });
          text = await stateShowing(cellLine("q3.txt"));
          const q3 = indexIn(text, cellLine("q3.txt"));
          if (how === "click") {
            const reply = await call("click", { element_index: q3 });
            // The reply shows the row selected: the agent can see that its click did what it meant.
            const state = await stateShowing(/^\d+ table cell \([^)]*selected[^)]*\).*\bq3\.txt\b/);
            await call("click", { element_index: indexIn(state, /^\d+ push button OK$/) });
            expect(reply).not.toMatch(/no changes/i);
          } else {
            await call("click", { element_index: q3, click_count: 2 });
          }
          expect(await chosen(app), how).toBe(join(root, "outer", "inner", "q3.txt"));
        } finally {
          await s.close();
          await app.stop();
        }
      }
    },
    TIMEOUT * 2,
  );
});

describe("a GTK3 list of our own (test/apps/rows-app.py)", () => {
  const ROWS_APP = fileURLToPath(new URL("../apps/rows-app.py", import.meta.url));
  const start = () =>
    startApp(desktop, "/usr/bin/python3", [ROWS_APP], { name: "axsnap-rows-test", timeoutMs: 60_000 });
  /** The row lines of one list, "name: states" (the list's lines up to the next list). */
  const rowsOf = (snap: Snapshot, list: string) => {
    const lines = snap.text.split("\n").map((l) => l.trim());
    const from = lines.findIndex((l) => new RegExp(`^\\d+ table ${list}$`).test(l));
    const out: string[] = [];
    for (const l of lines.slice(from + 1)) {
      if (/^\d+ table \w+$/.test(l)) break;
      const m = /^\d+ table cell \(([^)]*)\) (\w+),/.exec(l);
      if (m) out.push(`${m[2]}: ${m[1]}`);
    }
    return out;
  };

  it(
    "a row of a list that takes no selection is clicked with the pointer, said unselected, and never activated",
    async () => {
      const app = await start();
      const s = createSession();
      try {
        const snap = await s.snapshot({ app: app.pid, screenshot: false });
        const r = await s.click(indexIn(snap, /^\d+ table cell \(selectable\) charlie,/), {
          snapshot: false,
        });
        const notes = r.notes.join("\n");
        expect(notes).not.toMatch(/GDBus|org\.freedesktop|org\.a11y/);
        expect(notes).toMatch(
          /could not be selected through its list \(the list refused to select the row\)/,
        );
        expect(notes).toMatch(/does not read as selected/);
        expect(r).toMatchObject({ channel: "synthetic", delivery: "delivered_unverified" });
        // Give a wrongly sent activation time to print: nothing may have been activated.
        await s.snapshot({ app: app.pid, screenshot: false });
        expect(app.output()).not.toMatch(/activated/);
        // A double-click is a pointer double-click on the row that was clicked, never another row's
        // activation, and it claims no more than it knows. (A GTK3 tree view in selection mode NONE did
        // not activate on XTest's double-click here: the reply must not say it did.)
        const d = await s.click(indexIn(snap, /^\d+ table cell \(selectable\) bravo,/), {
          count: 2,
          snapshot: false,
        });
        expect(d).toMatchObject({ channel: "synthetic", delivery: "delivered_unverified" });
        await s.snapshot({ app: app.pid, screenshot: false });
        expect(app.output().match(/activated .*/g) ?? []).not.toContain("activated Fixed charlie");
      } finally {
        await s.close();
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a click in a multiple-selection list leaves only the clicked row selected",
    async () => {
      const app = await start();
      const s = createSession();
      try {
        const snap = await s.snapshot({ app: app.pid, screenshot: false });
        expect(rowsOf(snap, "Multi").filter((l) => l.endsWith(": selected"))).toEqual([
          "one: selected",
          "two: selected",
        ]);
        const r = await s.click(indexIn(snap, /^\d+ table cell \(selectable\) four,/), { snapshot: false });
        expect(r).toMatchObject({ channel: "semantic", delivery: "delivered_verified", notes: [] });
        const after = await s.snapshot({ app: app.pid, screenshot: false });
        expect(rowsOf(after, "Multi").filter((l) => l.endsWith(": selected"))).toEqual(["four: selected"]);
        expect(app.output()).not.toMatch(/activated/);
      } finally {
        await s.close();
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
