/**
 * GTK 4 apps (issue 32 §3) on a real headless desktop, as an agent uses them,
 * each step decided from what the door printed: gtk4-widget-factory (Debian's
 * gtk-4-examples) and Files (Nautilus 43) through the Session, GNOME
 * Calculator through the Session and the CLI. GTK 4.8
 * reports SENSITIVE without ENABLED, SHOWING on windows only, GActions as
 * action names ("window.close", "clipboard.copy") and type names as names of
 * unlabelled widgets; each test reads what a line prints and acts on it.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, gtk4WidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
const FACTORY = "gtk4-widget-factory";

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

/** The printed line of an index, without its indentation. */
function lineOf(snap: Snapshot, index: number): string {
  return (
    snap.text
      .split("\n")
      .find((l) => new RegExp(`^\\t*${index} `).test(l))
      ?.trim() ?? ""
  );
}

/** Fresh snapshots until `test` holds (the app applies pointer input after the call returns), bounded. */
async function until(session: Session, app: string, first: Snapshot, test: (s: Snapshot) => boolean) {
  let last = first;
  const end = Date.now() + 15_000;
  while (!test(last)) {
    if (Date.now() > end) throw new Error(`the effect never showed; last snapshot:\n${last.text}`);
    await sleep(150);
    last = await session.snapshot({ app, screenshot: false, deadlineMs: 15_000 });
  }
  return last;
}

describe("gtk4-widget-factory", () => {
  let app: App;
  let session: Session;
  let snap: Snapshot;

  beforeAll(async () => {
    app = await gtk4WidgetFactory(desktop);
    session = createSession();
    const t0 = performance.now();
    snap = await session.snapshot({ app: FACTORY, screenshot: false, deadlineMs: 20_000 });
    console.log(`gtk4-widget-factory: first snapshot ${(performance.now() - t0).toFixed(0)} ms`);
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it("prints the window enabled, with its own actions in words and no GAction names", () => {
    const lines = snap.text.split("\n");
    expect(lines[2]).toBe("0 frame GTK Widget Factory, Secondary Actions: close, minimize, toggle maximized");
    expect(snap.text).not.toMatch(/\b(win|window|clipboard|selection|link|menu|misc|default)\.[a-z]/);
  });

  it("prints the tree under the window, not only its pixels' text", () => {
    // The tree, not a page of OCR lines (a picture in the tab view may still be read for its text).
    expect(snap.text.split("\n").filter((l) => l.includes("(ocr)")).length).toBeLessThan(5);
    const roles = new Set(snap.records.map((r) => r.role));
    for (const role of ["check box", "push button", "text", "spin button", "slider", "combo box"])
      expect(roles, role).toContain(role);
    // Page 1 only: the stack's other pages are presented with no size, and left out.
    expect(snap.text).not.toMatch(/\d+ panel Page _[23]/);
    expect(snap.text).toMatch(/\d+ page tab \(selectable\) Page _2/);
    for (const r of snap.records)
      if (r.screenFrame) expect(r.screenFrame.w + r.screenFrame.h, `${r.index} ${r.role}`).toBeGreaterThan(0);
  });

  it("says disabled only of the widgets GTK marks insensitive", () => {
    const boxes = snap.text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^\d+ check box (\(disabled\) )?checkbutton, Value: /.test(l));
    expect(boxes).toHaveLength(6);
    expect(boxes.filter((l) => l.includes("(disabled)"))).toHaveLength(3);
    expect(
      lineOf(snap, indexIn(snap, /^\d+ text \(disabled, settable, string\) Value: entry$/)),
    ).toBeTruthy();
  });

  it("reads the app's cache once a snapshot, however long the walk takes", async () => {
    // GTK 4 answers GetItems with its whole cache (~950 objects here, hidden pages included); a walk
    // longer than the cache's 300 ms freshness read it again mid-walk (3 calls a snapshot before).
    const again = await session.snapshot({ app: FACTORY, screenshot: false, ocr: false, deadlineMs: 20_000 });
    const getItems = again.timings?.reads?.find((k) => k.kind === "GetItems");
    console.log(
      `gtk4-widget-factory: walk ${again.timings?.walkMs?.toFixed(0)} ms, GetItems ${getItems?.calls ?? 0}`,
    );
    expect(getItems?.calls ?? 0).toBeLessThanOrEqual(1);
  });

  it("names no widget by its GTK type name", () => {
    expect(snap.text).not.toMatch(/\b(Gtk|Adw)[A-Z][A-Za-z]+\b/);
  });

  it(
    "toggles a check box, clicks a radio button, types into an entry and reads each back",
    async () => {
      const current = await session.snapshot({ app: FACTORY, screenshot: false, deadlineMs: 20_000 });
      const box = indexIn(current, /^\d+ check box checkbutton, Value: off$/);
      const clicked = await session.click(box);
      expect(clicked.notes.join(" ")).not.toMatch(/enabled/);
      const checked = await until(session, FACTORY, clicked.snapshot!, (s) =>
        /Value: on$/.test(lineOf(s, box)),
      );
      expect(lineOf(checked, box)).toBe(`${box} check box checkbutton, Value: on`);

      const radio = indexIn(checked, /^\d+ check box radiobutton, Value: off$/);
      const pressed = await session.click(radio);
      const after = await until(session, FACTORY, pressed.snapshot!, (s) =>
        /Value: on$/.test(lineOf(s, radio)),
      );
      expect(lineOf(after, radio)).toBe(`${radio} check box radiobutton, Value: on`);

      const entry = indexIn(after, /^\d+ text \(settable, string\) Value: entry$/);
      const typed = await session.typeText(" typed by axsnap", { target: entry });
      const read = await until(session, FACTORY, typed.snapshot!, (s) =>
        lineOf(s, entry).includes("entry typed by axsnap"),
      );
      expect(lineOf(read, entry)).toBe(`${entry} text (settable, string) Value: entry typed by axsnap`);
    },
    TIMEOUT,
  );
});

describe("Files (Nautilus 43)", () => {
  let app: App;
  let session: Session;
  let root: string;

  beforeAll(async () => {
    // A folder tree of the test's own: docs/ with three notes and a subfolder.
    root = fs.mkdtempSync(path.join(desktop.home, "files-"));
    fs.mkdirSync(path.join(root, "docs", "sub"), { recursive: true });
    for (const n of [1, 2, 3]) fs.writeFileSync(path.join(root, "docs", `note${n}.txt`), `note ${n}\n`);
    app = await startApp(desktop, "nautilus", ["--new-window", root], {
      name: "org.gnome.Nautilus",
      windowName: path.basename(root),
      timeoutMs: 60_000,
    });
    session = createSession();
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "opens a folder by double-clicking its icon, selects a file in it, and sees it selected in the list view too",
    async () => {
      const t0 = performance.now();
      const top = await session.snapshot({
        app: "org.gnome.Nautilus",
        screenshot: false,
        deadlineMs: 20_000,
      });
      console.log(
        `Files: snapshot ${(performance.now() - t0).toFixed(0)} ms, ${top.records.length} elements`,
      );
      expect(top.text.split("\n")[2]).toBe(
        `0 frame ${path.basename(root)}, Secondary Actions: toggle maximized, minimize, close`,
      );
      // The icon grid's cells, each on a line of its own.
      const docs = indexIn(top, /^\d+ table cell docs$/);
      const opened = await session.click(docs, { count: 2 });
      const inDocs = await until(session, "org.gnome.Nautilus", opened.snapshot!, (s) =>
        s.text.split("\n")[2]!.startsWith("0 frame docs,"),
      );
      for (const name of ["note1.txt", "note2.txt", "note3.txt", "sub"])
        expect(inDocs.text).toMatch(new RegExp(`\\d+ table cell ${name.replace(".", "\\.")}$`, "m"));

      const note2 = indexIn(inDocs, /^\d+ table cell note2\.txt$/);
      const clicked = await session.click(note2);
      const selected = await until(session, "org.gnome.Nautilus", clicked.snapshot!, (s) =>
        s.text.includes("“note2.txt” selected"),
      );
      // The grid's item that holds the file's cell is the one GTK marks selected.
      const lines = selected.text.split("\n").map((l) => l.trim());
      const at = lines.findIndex((l) => /^\d+ table cell note2\.txt$/.test(l));
      expect(lines[at - 1]).toMatch(/^\d+ table cell \(selected\)$/);
      expect(selected.text.match(/table cell \(selected\)/g)).toHaveLength(1);

      // The list view (a GTK 4 column view): a header row, then a row per file with its cells,
      // the selected file's row marked selected.
      const listed = await session.pressKey("ctrl+1");
      const rows = await until(session, "org.gnome.Nautilus", listed.snapshot!, (s) =>
        /\d+ tree table/.test(s.text),
      );
      expect(rows.text).toMatch(/\d+ table row Name\n\t*\| Size \| Modified/);
      expect(rows.text).toMatch(/\d+ table row \(selected\) note2\.txt/);
      for (const name of ["note1\\.txt", "note3\\.txt", "sub"])
        expect(rows.text).toMatch(new RegExp(`\\d+ table row ${name}\\n\\t*\\| \\d+ (bytes|items?) \\|`));
    },
    TIMEOUT,
  );
});

describe("GNOME Calculator", () => {
  const CALC = "gnome-calculator";
  let app: App;
  let session: Session;

  beforeAll(async () => {
    app = await startApp(desktop, "gnome-calculator", [], { name: CALC, timeoutMs: 60_000 });
    session = createSession();
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "through the library: clicks 7 × 6 = and reads 42 in the display",
    async () => {
      const t0 = performance.now();
      let snap = await session.snapshot({ app: CALC, screenshot: false, deadlineMs: 20_000 });
      console.log(
        `Calculator: snapshot ${(performance.now() - t0).toFixed(0)} ms, ${snap.records.length} elements`,
      );
      for (const key of [
        /^\d+ push button 7\b/,
        /^\d+ push button ×/,
        /^\d+ push button 6\b/,
        /^\d+ push button =/,
      ]) {
        const done = await session.click(indexIn(snap, key));
        expect(done.channel).toBe("semantic");
        snap = done.snapshot!;
      }
      await until(session, CALC, snap, (s) => /\d+ text \(settable, string\) Value: 42$/m.test(s.text));
    },
    TIMEOUT,
  );

  it(
    "through the CLI, one process a step: types 6*9 where the focus is, presses Return, reads 54",
    async () => {
      const shot = await runCli(["snapshot", "--app", CALC]);
      expect(shot.code, shot.stderr).toBe(0);
      // Two fields print alike (the display and the one under it): the CLI refuses a ref to one
      // (AMBIGUOUS_TARGET), so the keys go where the keyboard focus is, the display.
      expect(snapshotIdIn(shot.stdout)).toMatch(/^s/);
      expect(shot.stdout).toMatch(/The focused UI element is \d+ text/);
      const typed = await runCli(["type", "6*9", "--app", CALC]);
      expect(typed.code, typed.stderr).toBe(0);
      expect(typed.stdout).toMatch(/text \(settable, string\) Value: .*6[*×]9/);
      const pressed = await runCli(["press", "Return", "--app", CALC]);
      expect(pressed.code, pressed.stderr).toBe(0);
      let text = pressed.stdout;
      const end = Date.now() + 15_000;
      while (!/text \(settable, string\) Value: 54$/m.test(text)) {
        if (Date.now() > end) throw new Error(`54 never showed:\n${text}`);
        await sleep(200);
        text = (await runCli(["snapshot", "--app", CALC])).stdout;
      }
    },
    TIMEOUT,
  );
});
