/**
 * Acting on real apps on a headless Linux desktop (one desktop for this file):
 * gtk3-widget-factory through AT-SPI actions, values and X11 input, and
 * Chromium's web content with a page of the test's own (test/pages/form.html).
 * Every action goes through a Session and is checked in the snapshot it
 * returns; where the UI changes after the action returns (synthetic input),
 * the test polls with fresh snapshots, briefly and bounded, and says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActionResult,
  AxsnapError,
  type ConfirmRequest,
  createSession,
  type Session,
  type Snapshot,
} from "../../lib/index.js";
import { type App, chromium, type Desktop, fileUrl, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { indexIn as indexOf } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 60_000;
const GTK = "gtk3-widget-factory";
const WEB = "chromium";
const SECRET = "hunter2";

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

/** The printed line of an index (without its indentation). */
function lineOf(snap: Snapshot, index: number): string {
  const line = snap.text.split("\n").find((l) => new RegExp(`^\\t*${index} `).test(l));
  return line?.trim() ?? "";
}

/**
 * The snapshot an action returned if it already shows `test`; otherwise fresh
 * snapshots every 100 ms, bounded. Only for synthetic input, whose effect
 * lands after the action returns (the X server queues the events, the app
 * handles them later). In our runs the returned snapshot (which raises the
 * window and captures it first) already showed the effect every time; the
 * poll is there so a slower machine does not turn that race into a failure.
 */
async function settle(
  session: Session,
  result: ActionResult,
  test: (s: Snapshot) => boolean,
  app: string,
  seen?: Snapshot[],
): Promise<Snapshot> {
  expect(result.snapshot, "the action returns a fresh snapshot").toBeDefined();
  let last = result.snapshot!;
  seen?.push(last);
  const until = Date.now() + 10_000;
  while (!test(last)) {
    if (Date.now() > until) throw new Error(`the effect never showed; last snapshot:\n${last.text}`);
    await sleep(100);
    last = await session.snapshot({ app, screenshot: false, deadlineMs: 8000 });
    seen?.push(last);
  }
  return last;
}

describe("gtk3-widget-factory", () => {
  let gtk: App;
  let session: Session;

  beforeAll(async () => {
    gtk = await gtkWidgetFactory(desktop);
    session = createSession();
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await gtk?.stop();
  });

  it(
    "clicks the Page 2 radio by its index and sees it checked in the returned snapshot; then Page 1 by ref",
    async () => {
      const snap = await session.snapshot({ app: GTK, screenshot: false });
      expect(snap.text).toMatch(/\d+ radio button Page 1, Value: on/);
      const page2 = indexOf(snap, /^\d+ radio button Page 2, Value: off$/);

      // GTK runs the action before it answers DoAction, so the returned snapshot already shows
      // the change (no polling for GTK's semantic actions; in every run so far this held).
      const result = await session.click(page2);
      expect(result).toMatchObject({
        action: "click",
        channel: "semantic",
        delivery: "delivered_unverified",
        retry: "unsafe",
        notes: [],
        target: { snapshotId: snap.id, index: page2 },
      });
      const after = result.snapshot!;
      expect(after.id).not.toBe(snap.id);
      expect(after.text).toMatch(/\d+ radio button Page 2, Value: on/);
      expect(after.text).toMatch(/\d+ radio button Page 1, Value: off/);

      const page1 = indexOf(after, /^\d+ radio button Page 1\b/);
      const back = await session.click(`@${after.id}:e${page1}`);
      expect(back.channel).toBe("semantic");
      expect(back.snapshot!.text).toMatch(/\d+ radio button Page 1, Value: on/);
      expect(back.snapshot!.text).toMatch(/\d+ radio button Page 2, Value: off/);
    },
    TIMEOUT,
  );

  it(
    "selects a tree-view row by its row line: the table selects the row when its list refuses the cell",
    async () => {
      // GTK 3's tree view answers Selection.SelectChild(cell index) with false; the
      // backend then selects the cell's row through the Table interface, and reads it back selected.
      const snap = await session.snapshot({ app: GTK, screenshot: false });
      // The row's line is its first cell's; its other texts print on the unnumbered line under it.
      const lines = snap.text.split("\n").map((l) => l.trim());
      const andrea = Number(/^(\d+) table cell /.exec(lines[lines.indexOf("| Andrea | Cimi") - 1]!)![1]);
      const result = await session.click(andrea);
      expect(result).toMatchObject({ channel: "semantic", delivery: "delivered_verified", notes: [] });
    },
    TIMEOUT,
  );

  it(
    "toggles an enabled check button and sees its value flip, twice",
    async () => {
      const snap = await session.snapshot({ app: GTK, screenshot: false });
      // Several check buttons share the name "checkbutton" (so none is proven unique):
      // the click reaches it through its live handle, which still shows the same identity.
      const box = indexOf(snap, /^\d+ check box checkbutton, Value: (on|off)$/);
      const before = /Value: (on|off)$/.exec(lineOf(snap, box))![1];
      const flipped = before === "on" ? "off" : "on";
      expect(snap.records[box]!.proof.unique).toBe(false);

      const result = await session.click(box);
      expect(result).toMatchObject({ channel: "semantic", delivery: "delivered_unverified", notes: [] });
      expect(lineOf(result.snapshot!, box)).toBe(`${box} check box checkbutton, Value: ${flipped}`);

      const again = await session.click(box);
      expect(lineOf(again.snapshot!, box)).toBe(`${box} check box checkbutton, Value: ${before}`);
    },
    TIMEOUT,
  );

  it(
    "sets an entry's text (verified by reading it back), then types onto it semantically",
    async () => {
      const snap = await session.snapshot({ app: GTK, screenshot: false });
      const entry = indexOf(snap, /^\d+ text \(settable, string\) Value: entry$/);
      expect(snap.records[entry]).toMatchObject({ role: "text", settable: true, secure: false });

      const result = await session.setValue(entry, "set by axsnap");
      expect(result).toMatchObject({
        action: "setValue",
        channel: "semantic",
        delivery: "delivered_verified",
        retry: "unsafe",
        notes: [],
      });
      expect(lineOf(result.snapshot!, entry)).toBe(`${entry} text (settable, string) Value: set by axsnap`);

      // A settable field: typeText sets old value + text, no key events.
      const typed = await session.typeText(" and typed", { target: entry });
      expect(typed.channel).toBe("semantic");
      expect(lineOf(typed.snapshot!, entry)).toBe(
        `${entry} text (settable, string) Value: set by axsnap and typed`,
      );
    },
    TIMEOUT,
  );

  it(
    "clamps a clickAt outside the window into it and says which point it used",
    async () => {
      const snap = await session.snapshot({ app: GTK });
      const shot = snap.screenshot!;
      expect(shot).toBeDefined();
      const frame = snap.window.frame;
      // (-40, -40) screenshot pixels: above and left of the window's top-left corner.
      const given = { x: shot.windowOrigin.x - 40 / shot.scale, y: shot.windowOrigin.y - 40 / shot.scale };
      expect(given.x).toBeLessThan(frame.x);
      expect(given.y).toBeLessThan(frame.y);

      const result = await session.clickAt(-40, -40, { of: snap });
      expect(result).toMatchObject({
        action: "clickAt",
        channel: "synthetic",
        route: "x11",
        delivery: "delivered_unverified",
        retry: "unsafe",
      });
      expect(result.notes[0]).toBe(
        `the point (${Math.round(given.x)}, ${Math.round(given.y)}) is outside the window; used (${Math.round(frame.x)}, ${Math.round(frame.y)})`,
      );
      // The hit-test names what is under the used point (the window itself at its corner).
      expect(result.notes.slice(1).every((n) => n.startsWith("the point is on element"))).toBe(true);
      // The corner is empty header bar: the app is still there and unchanged.
      expect(result.snapshot!.text).toMatch(/\d+ radio button Page 1, Value: on/);
    },
    TIMEOUT,
  );

  it(
    "refuses coordinate and key input with STALE_OBSERVATION when the last observation is too old",
    async () => {
      const stale = createSession({ staleAfterMs: 50 });
      try {
        const snap = await stale.snapshot({ app: GTK });
        const shot = snap.screenshot!;
        // Aim at the Page 2 radio, so a click that got through would show.
        const page2 = snap.records[indexOf(snap, /^\d+ radio button Page 2, Value: off$/)]!;
        const px = (page2.clickPoint!.x - shot.windowOrigin.x) * shot.scale;
        const py = (page2.clickPoint!.y - shot.windowOrigin.y) * shot.scale;
        await sleep(100);

        const refusal = await stale.clickAt(px, py, { of: snap }).catch((e: unknown) => e);
        expect(refusal).toBeInstanceOf(AxsnapError);
        expect(refusal).toMatchObject({
          code: "STALE_OBSERVATION",
          delivery: "not_delivered",
          retry: "safe",
        });
        expect((refusal as AxsnapError).hint).toMatch(/snapshot/);
        await expect(stale.pressKey("Escape")).rejects.toMatchObject({
          code: "STALE_OBSERVATION",
          delivery: "not_delivered",
          retry: "safe",
        });

        const after = await session.snapshot({ app: GTK, screenshot: false });
        expect(after.text).toMatch(/\d+ radio button Page 2, Value: off/);
      } finally {
        await stale.close();
      }
    },
    TIMEOUT,
  );

  it(
    "scrolls a list: GTK offers no scroll action, so wheel events, and other rows show",
    async () => {
      const start = await session.snapshot({ app: GTK, screenshot: false });
      const toPage2 = await session.click(indexOf(start, /^\d+ radio button Page 2\b/));
      const page2 = toPage2.snapshot!;
      expect(page2.text).toMatch(/\d+ radio button Page 2, Value: on/);
      // Page 2's list box ("Row 1", "Row 2", ...) shows only its first rows.
      const list = page2.records[indexOf(page2, /^\d+ list box \(showing \d+-\d+ of \d+ items\)$/)]!;
      const rowsOf = (s: Snapshot) =>
        s.records
          .filter((r) => r.role === "list item" && /^Row \d+$/.test(r.title ?? ""))
          .map((r) => r.title!);
      const before = rowsOf(page2);
      expect(before[0]).toBe("Row 1");
      // The scroll pane around the list (scroll pane > viewport > list box).
      const pane = page2.records
        .filter((r) => r.role === "scroll pane" && list.path.join(",").startsWith(`${r.path.join(",")},`))
        .at(-1)!;
      expect(pane, "the list's scroll pane").toBeDefined();
      expect(pane.actions).toEqual([]);

      const result = await session.scroll(pane.index, "down", 1);
      expect(result).toMatchObject({
        action: "scroll",
        channel: "synthetic",
        delivery: "delivered_unverified",
        retry: "unsafe",
        notes: ["no scroll action; sent 5 wheel steps"],
      });
      // Wheel events are handled (and smooth-scrolled) after the call returns: poll.
      const scrolled = await settle(
        session,
        result,
        (s) => rowsOf(s).some((row) => !before.includes(row)),
        GTK,
      );
      const after = rowsOf(scrolled);
      expect(after.filter((row) => !before.includes(row)).length).toBeGreaterThan(0);
      expect(after).not.toContain("Row 1");
    },
    TIMEOUT,
  );

  it(
    "performs a secondary action by the pretty name the snapshot prints",
    async () => {
      const start = await session.snapshot({ app: GTK, screenshot: false });
      const toPage3 = await session.click(indexOf(start, /^\d+ radio button Page 3\b/));
      // GTK builds the page after the click's action returned: wait (bounded) for its tree.
      const snap = await settle(
        session,
        toPage3,
        (s) => /table cell .*Charlemagne, Secondary Actions: /.test(s.text),
        GTK,
      );
      const parent = indexOf(
        snap,
        /^\d+ table cell \(selectable, expanded\) Charlemagne, Secondary Actions: /,
      );
      const listed = /Secondary Actions: (.*)$/.exec(lineOf(snap, parent))![1]!.split(", ");
      const pretty = listed.find((a) => /expand/i.test(a))!;
      expect(pretty).toBe("Expand or contract");
      expect(snap.text).toContain("Pepin the Short");

      const result = await session.performAction(parent, pretty);
      expect(result).toMatchObject({
        action: "performAction",
        channel: "semantic",
        delivery: "delivered_unverified",
        notes: [],
      });
      const contracted = result.snapshot!;
      expect(lineOf(contracted, parent)).toMatch(/^\d+ table cell \(selectable, collapsed\) Charlemagne, /);
      expect(contracted.text).not.toContain("Pepin the Short");

      // The AT-SPI raw name (lower case) works too; it expands the row again.
      const again = await session.performAction(parent, "expand or contract");
      expect(lineOf(again.snapshot!, parent)).toMatch(/\(selectable, expanded\) Charlemagne/);
      expect(again.snapshot!.text).toContain("Pepin the Short");

      await expect(session.performAction(parent, "Fly away")).rejects.toMatchObject({
        code: "ACTION_NOT_SUPPORTED",
        retry: "safe",
      });
    },
    TIMEOUT,
  );
});

describe("Chromium web content", () => {
  let app: App;
  let session: Session;
  /** Every snapshot taken here, to prove the password's value is in none of them. */
  const seen: Snapshot[] = [];

  /** Web content arrives a moment after the window: poll, bounded, until it shows. */
  async function page(s: Session, test: (snap: Snapshot) => boolean): Promise<Snapshot> {
    const until = Date.now() + 20_000;
    for (;;) {
      const snap = await s.snapshot({ app: WEB, screenshot: false, deadlineMs: 8000 });
      seen.push(snap);
      if (test(snap)) return snap;
      if (Date.now() > until) throw new Error(`the page never showed it; last snapshot:\n${snap.text}`);
      await sleep(300);
    }
  }
  const formShown = (s: Snapshot) => s.text.includes("push button Delete account");

  beforeAll(async () => {
    app = await chromium(desktop, fileUrl("test/pages/form.html"), { windowName: "axsnap form" });
    session = createSession();
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "types into the web text field with key events (Chromium has no EditableText on Linux)",
    async () => {
      const snap = await page(session, formShown);
      // Settable (issue 32): Chromium marks it EDITABLE, and setValue sets it by select all and typing.
      const name = indexOf(snap, /^\d+ entry \(settable, string\) Name, Value: Ada$/);
      expect(snap.records[name]).toMatchObject({ settable: true, secure: false });

      const result = await session.typeText("Lovelace", { target: name });
      expect(result).toMatchObject({
        action: "typeText",
        channel: "synthetic",
        delivery: "delivered_unverified",
        retry: "unsafe",
        target: { snapshotId: snap.id, index: name },
      });
      // Key events reach the page after the call returns: poll.
      const typed = await settle(session, result, (s) => s.text.includes("Lovelace"), WEB, seen);
      // The keys go in at the caret; focusing the field by AT-SPI leaves it at the
      // start in Chromium, so the text lands before "Ada".
      expect(typed.text).toMatch(/\d+ entry \(settable, string\) Name, Value: (LovelaceAda|AdaLovelace)\n/);
    },
    TIMEOUT,
  );

  it(
    "refuses typing into or setting the password field, and its value appears nowhere",
    async () => {
      const snap = await page(session, formShown);
      const pw = indexOf(snap, /^\d+ password text (\(settable, string\) )?Password\b/);
      expect(snap.records[pw]!.secure).toBe(true);

      const errors: unknown[] = [];
      for (const attempt of [
        () => session.typeText("x", { target: pw }),
        () => session.setValue(pw, "x"),
        () => session.typeText("x", { target: `@${snap.id}:e${pw}` }),
      ]) {
        const e = await attempt().catch((err: unknown) => err);
        expect(e).toBeInstanceOf(AxsnapError);
        expect(e).toMatchObject({ code: "POLICY_DENIED", delivery: "not_delivered", retry: "safe" });
        errors.push(e);
      }

      // Focused by a click, typing without a target is refused too.
      const click = await session.click(pw);
      const focused = await settle(
        session,
        click,
        (s) => s.focusedIndex !== undefined && s.records[s.focusedIndex]!.secure,
        WEB,
        seen,
      );
      expect(focused.text).toMatch(/The focused UI element is \d+ password text\b/);
      const e = await session.typeText("x").catch((err: unknown) => err);
      expect(e).toMatchObject({ code: "POLICY_DENIED", delivery: "not_delivered", retry: "safe" });
      errors.push(e);

      seen.push(await session.snapshot({ app: WEB }));
      for (const s of seen) {
        expect(s.text).not.toContain(SECRET);
        expect(JSON.stringify(s.records)).not.toContain(SECRET);
        expect(s.selectedText ?? "").not.toContain(SECRET);
      }
      for (const err of errors)
        expect(JSON.stringify([String(err), (err as AxsnapError).hint])).not.toContain(SECRET);
    },
    TIMEOUT,
  );

  it(
    'refuses "Delete account" without confirm, and presses it when confirm says yes',
    async () => {
      const plain = createSession();
      const declining = createSession({ confirm: () => false });
      const asked: ConfirmRequest[] = [];
      const confirming = createSession({
        confirm: (request) => {
          asked.push(request);
          return true;
        },
      });
      try {
        const first = await page(plain, formShown);
        const del = indexOf(first, /^\d+ push button Delete account$/);
        await expect(plain.click(del)).rejects.toMatchObject({
          code: "POLICY_DENIED",
          delivery: "not_delivered",
          retry: "safe",
        });
        await page(declining, formShown);
        await expect(declining.click(del)).rejects.toMatchObject({ code: "POLICY_DENIED" });
        await sleep(300);
        expect((await page(plain, formShown)).text).not.toContain("Account deleted");

        const before = await page(confirming, formShown);
        const result = await confirming.click(indexOf(before, /^\d+ push button Delete account$/));
        expect(asked).toEqual([
          expect.objectContaining({
            action: "click",
            name: "Delete account",
            reason: expect.stringContaining("delete"),
          }),
        ]);
        expect(result.delivery).toBe("delivered_unverified");
        // Chromium's web buttons offer "press" (its raw name: the localized one is empty).
        expect(result.channel).toBe("semantic");
        const after = await settle(confirming, result, (s) => s.text.includes("Account deleted"), WEB, seen);
        expect(after.text).toMatch(/\d+ status bar\n\t*\d+ static Account deleted\n/);
      } finally {
        await plain.close();
        await declining.close();
        await confirming.close();
      }
    },
    TIMEOUT,
  );
});
