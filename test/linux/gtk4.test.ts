/**
 * GTK 4 apps (issue 32 §3) on a real headless desktop, through the Session as
 * an agent uses it: gtk4-widget-factory (Debian's gtk-4-examples). GTK 4.8
 * reports SENSITIVE without ENABLED, SHOWING on windows only, GActions as
 * action names ("window.close", "clipboard.copy") and type names as names of
 * unlabelled widgets; each test reads what a line prints and acts on it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, gtk4WidgetFactory } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
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
