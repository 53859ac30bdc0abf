/**
 * Issue 11, item 1 ("Changes") on real apps: what `result.changes` and
 * `snapshot.changesSince()` report when galculator's display changes, when a
 * gtk3-widget-factory radio group moves its check, when a Chromium page
 * appends list items, and when nothing changed. One headless desktop for this
 * file; the apps are started as in the other Linux tests.
 *
 * Where an effect can land after the action returns (Chromium sends page
 * changes to its accessibility tree in batches), the test polls with fresh
 * snapshots, bounded, and diffs the snapshot acted on against the first one
 * that shows the effect. The session keeps every snapshot here (keepSnapshots)
 * so the snapshot diffed against still holds its handles: a diff keys elements
 * by handle, and an id nobody holds any more is forgotten by the backend.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActionResult,
  createSession,
  type Session,
  type Snapshot,
  type SnapshotChanges,
  snapshot,
} from "../../lib/index.js";
import {
  type App,
  chromium,
  type Desktop,
  fileUrl,
  gtkWidgetFactory,
  startApp,
} from "../../scripts/desktop.mjs";
import { indexIn as indexOf } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 60_000;

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

/** The printed line of an index without indentation and index, as a Change carries it. */
function lineOf(snap: Snapshot, index: number): string {
  const raw = snap.text.split("\n").find((l) => new RegExp(`^\\t*${index}( |$)`).test(l));
  if (raw === undefined) throw new Error(`no line ${index} in snapshot ${snap.id}`);
  return raw.trim().replace(/^\d+ ?/, "");
}

/** The summary line the counts must give. */
function expectedSummary(c: SnapshotChanges): string {
  const tail = c.renumbered > 0 ? ` (${c.renumbered} renumbered)` : "";
  const n = c.changed.length + c.added.length + c.removed.length;
  return n === 0
    ? `no changes; ${c.unchanged} unchanged${tail}`
    : `${c.changed.length} changed, ${c.added.length} added, ${c.removed.length} removed; ${c.unchanged} unchanged${tail}`;
}

/** Invariants of every diff between two snapshots of one window. */
function expectConsistent(c: SnapshotChanges, before: Snapshot, after: Snapshot): void {
  expect(c.summary).toBe(expectedSummary(c));
  expect(c.text.split("\n").at(-1)).toBe(c.summary);
  // Every element of the new snapshot is added, changed or unchanged; of the old, removed, changed or unchanged.
  expect(c.added.length + c.changed.length + c.unchanged).toBe(after.records.length);
  expect(c.removed.length + c.changed.length + c.unchanged).toBe(before.records.length);
  for (const ch of [...c.added, ...c.changed]) {
    expect(ch.line, `the change's line is line ${ch.index} of the new snapshot`).toBe(
      lineOf(after, ch.index),
    );
    expect(c.text).toContain(`${ch.index} ${ch.line} [`);
  }
  for (const ch of c.changed) expect(ch.previousLine).toBe(lineOf(before, ch.previousIndex!));
  for (const ch of c.removed) {
    expect(ch.line).toBe(lineOf(before, ch.index));
    expect(c.text).toContain(`- ${ch.index} ${ch.line}`);
  }
}

/** An action's result diff is the diff of the snapshot acted on to the fresh one, and `text` the shorter. */
function expectResultDiff(result: ActionResult, before: Snapshot): SnapshotChanges {
  expect(result.snapshot, "the action returns a fresh snapshot").toBeDefined();
  expect(result.changes).toBeDefined();
  const after = result.snapshot!;
  expectConsistent(result.changes!, before, after);
  expect(result.changes).toEqual(after.changesSince(before));
  expect(result.text).toBe(
    result.changes!.text.length < after.text.length ? result.changes!.text : after.text,
  );
  return result.changes!;
}

/**
 * The first snapshot (the action's own, else fresh ones every 150 ms, at most
 * 10 s) that passes `test`, and its diff against `before`.
 */
async function effect(
  session: Session,
  app: string | number,
  before: Snapshot,
  result: ActionResult,
  test: (s: Snapshot) => boolean,
): Promise<{ snap: Snapshot; changes: SnapshotChanges; polled: boolean }> {
  let snap = result.snapshot!;
  let polled = false;
  const until = Date.now() + 10_000;
  while (!test(snap)) {
    if (Date.now() > until) throw new Error(`the effect never showed; last snapshot:\n${snap.text}`);
    await sleep(150);
    snap = await session.snapshot({ app, screenshot: false, deadlineMs: 8000 });
    polled = true;
  }
  const changes = polled ? snap.changesSince(before) : result.changes!;
  expectConsistent(changes, before, snap);
  return { snap, changes, polled };
}

describe("galculator", () => {
  let app: App;
  let session: Session;

  beforeAll(async () => {
    app = await startApp(desktop, "galculator", [], { name: "galculator" });
    session = createSession({ keepSnapshots: 100 });
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  const display = /^\d+ text \(settable, string\) Value: /;
  const digit = (d: string) => new RegExp(`^\\d+ toggle button ${d.replace(/[+*]/, "\\$&")}, `);

  it(
    "clicking digits: the display's value changed, at its index in the new snapshot; the summary counts",
    async () => {
      // Start from a known display: AC (reset) then 0 digits typed.
      let before = await session.snapshot({ app: app.pid, screenshot: false });
      const ac = await session.click(indexOf(before, digit("AC")));
      before = (await effect(session, app.pid, before, ac, (s) => /Value: 0$/m.test(s.text))).snap;
      const displayKey = (s: Snapshot) => {
        const i = indexOf(s, display);
        return { index: i, key: s.records[i]!.handle };
      };

      let shown = "";
      for (const d of ["7", "4", "1"]) {
        shown += d;
        const want = new RegExp(`^\\d+ text \\(settable, string\\) Value: ${shown}$`);
        const result = await session.click(indexOf(before, digit(d)));
        // GTK 3: a button is pressed with the pointer (its action would run inside the accessibility call).
        expect(result.channel).toBe("synthetic");
        expectResultDiff(result, before);
        const { snap, changes } = await effect(session, app.pid, before, result, (s) =>
          s.text.split("\n").some((l) => want.test(l.trim())),
        );

        // The display: one changed entry, keyed by its live handle, at its index in the new snapshot.
        const at = displayKey(snap);
        expect(at.key).toBe(displayKey(before).key);
        const shownChange = changes.changed.find((c) => c.key === `h${at.key}`);
        expect(shownChange, changes.text).toMatchObject({
          index: at.index,
          role: "text",
          line: `text (settable, string) Value: ${shown}`,
          previousIndex: displayKey(before).index,
        });
        expect(shownChange!.fields).toEqual(["value"]);
        // Printed under its ancestors (the scroll pane, the window), marked.
        expect(changes.text).toMatch(
          new RegExp(
            `^0 frame galculator.*\\n\\t\\d+ scroll pane\\n\\t\\t${at.index} text \\(settable, string\\) Value: ${shown} \\[changed: value\\]$`,
            "m",
          ),
        );

        // Nothing else was added or removed, and every other change is a button of the keypad
        // showing itself pressed or released (galculator holds a clicked button "on" for a
        // moment): its value and checked state, nothing else.
        expect(changes.added).toEqual([]);
        expect(changes.removed).toEqual([]);
        const others = changes.changed.filter((c) => c !== shownChange);
        for (const c of others) {
          expect(c.role, changes.text).toBe("toggle button");
          expect(["value", "states"]).toEqual(expect.arrayContaining(c.fields!));
          expect(c.line).toMatch(/, Value: (on|off)$/);
        }
        // The clicked digit is among them unless its press was already over when the snapshot was taken.
        expect(changes.changed.length).toBeLessThanOrEqual(1 + 3);
        expect(changes.unchanged).toBe(snap.records.length - changes.changed.length);
        expect(changes.renumbered).toBe(0);
        before = snap;
      }
    },
    TIMEOUT,
  );

  it(
    "two snapshots of the unchanged window: no changes, nothing renumbered, the summary alone",
    async () => {
      // Let any pressed button of the last test be released first.
      let a = await session.snapshot({ app: app.pid, screenshot: false });
      const until = Date.now() + 10_000;
      while (/Value: on$/m.test(a.text) && Date.now() < until) {
        await sleep(200);
        a = await session.snapshot({ app: app.pid, screenshot: false });
      }
      const b = await session.snapshot({ app: app.pid, screenshot: false });
      const c = b.changesSince(a);
      expect(c).toMatchObject({ added: [], removed: [], changed: [], renumbered: 0 });
      expect(c.unchanged).toBe(a.records.length);
      expect(c.text).toBe(`no changes; ${a.records.length} unchanged`);
      expect(c.summary).toBe(c.text);
      expect(b.text).toBe(a.text);
    },
    TIMEOUT,
  );
});

describe("gtk3-widget-factory", () => {
  let app: App;
  let session: Session;

  beforeAll(async () => {
    app = await gtkWidgetFactory(desktop);
    session = createSession({ keepSnapshots: 100 });
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  const radio = /^\d+ radio button radiobutton, Value: (on|off)$/;

  it(
    "clicking a radio: both radios of the group changed (the check moved), printed under their window",
    async () => {
      const before = await session.snapshot({ app: app.pid, screenshot: false });
      const radios = before.records.filter((r) => radio.test(`${r.index} ${lineOf(before, r.index)}`));
      expect(radios.map((r) => lineOf(before, r.index)).sort()).toEqual([
        "radio button radiobutton, Value: off",
        "radio button radiobutton, Value: on",
      ]);
      const off = radios.find((r) => lineOf(before, r.index).endsWith("off"))!;
      const on = radios.find((r) => lineOf(before, r.index).endsWith("on"))!;

      // GTK runs the action before it answers DoAction: the returned snapshot shows it.
      const result = await session.click(off.index);
      expect(result.channel).toBe("semantic");
      const changes = expectResultDiff(result, before);
      const after = result.snapshot!;

      expect(changes.added).toEqual([]);
      expect(changes.removed).toEqual([]);
      expect(changes.renumbered).toBe(0);
      const byKey = (r: { handle?: number }) => changes.changed.find((c) => c.key === `h${r.handle}`);
      expect(byKey(off), changes.text).toMatchObject({
        index: off.index,
        previousIndex: off.index,
        line: "radio button radiobutton, Value: on",
        previousLine: "radio button radiobutton, Value: off",
      });
      expect(byKey(on), changes.text).toMatchObject({
        index: on.index,
        line: "radio button radiobutton, Value: off",
        previousLine: "radio button radiobutton, Value: on",
      });
      // Checked is printed as the value and kept as a state: both fields say so, and which state moved.
      for (const c of [byKey(off)!, byKey(on)!]) expect(c.fields).toEqual(["value", "states"]);
      expect(byKey(off)!.states).toEqual({ added: ["checked"], removed: [] });
      expect(byKey(on)!.states).toEqual({ added: [], removed: ["checked"] });
      // The radio group: exactly these two. A live app may change something else in the same moment (a
      // spinner's state, a progress value; the action's result is taken once the app went quiet, ~150 ms
      // later), so other changes are allowed, but never another radio and never anything added or removed.
      const radiosChanged = changes.changed.filter((c) => radio.test(`${c.index} ${c.line}`));
      expect(radiosChanged, changes.text).toHaveLength(2);
      expect(changes.unchanged).toBe(after.records.length - changes.changed.length);

      // The text: the window line (their ancestor), the two radios in index order, the summary.
      const [first, second] = [off.index, on.index].sort((a, b) => a - b);
      const mark = (i: number) => `[changed: value, states ${i === off.index ? "+" : "-"}checked]`;
      const lines = changes.text.split("\n");
      expect(lines[0]).toBe("0 frame gtk3-widget-factory"); // the X title (issue 13)
      const a = lines.indexOf(`\t${first} ${lineOf(after, first!)} ${mark(first!)}`);
      const b = lines.indexOf(`\t${second} ${lineOf(after, second!)} ${mark(second!)}`);
      expect(a, changes.text).toBeGreaterThan(0);
      expect(b, changes.text).toBeGreaterThan(a);
      expect(lines.at(-1)).toBe(expectedSummary(changes));
      expect(result.text).toBe(changes.text);

      // And back: the check moves home, the diff says the reverse.
      const back = await session.click(on.index);
      const reverse = expectResultDiff(back, after);
      expect(
        reverse.changed.filter((c) => radio.test(`${c.index} ${c.line}`)).map((c) => [c.index, c.line]),
      ).toEqual(
        [
          [off.index, "radio button radiobutton, Value: off"],
          [on.index, "radio button radiobutton, Value: on"],
        ].sort((a, b) => (a[0] as number) - (b[0] as number)),
      );
    },
    TIMEOUT,
  );

  it(
    "a snapshot released before the newer one was taken: compared by position and said so, not diffed as everything replaced",
    async () => {
      // Observed aside from any session: nothing else holds its handles, so releasing it lets the
      // backend forget them, and the next walk gives the same elements new ids.
      const old = await snapshot({ app: app.pid, screenshot: false });
      await old.release();
      const now = await snapshot({ app: app.pid, screenshot: false });
      try {
        expect(now.text).toBe(old.text);
        for (const [c, from, to] of [
          [now.changesSince(old), old, now],
          [old.changesSince(now), now, old],
        ] as const) {
          // The window did not change: by position, nothing changed (by the forgotten handles,
          // every element would read as removed and added again).
          expect(c, c.text).toMatchObject({ added: [], removed: [], changed: [], renumbered: 0 });
          expect(c.note).toContain("compared by position");
          expect(c.note).toContain(`snapshot ${old.id} was released before snapshot ${now.id} was taken`);
          expect(c.text).toBe(`(${c.note})\nno changes; ${to.records.length} unchanged`);
          expect(from.records.length).toBe(to.records.length);
        }
      } finally {
        await now.release();
      }
    },
    TIMEOUT,
  );

  it(
    "a snapshot released after the newer one was taken still diffs by handle (a session that keeps one)",
    async () => {
      // keepSnapshots 1: the fresh snapshot of an action releases the one acted on before the diff
      // is made; the fresh walk already holds the same ids, so the diff is still by element.
      const one = createSession({ keepSnapshots: 1 });
      try {
        const before = await one.snapshot({ app: app.pid, screenshot: false });
        const off = indexOf(before, /^\d+ radio button radiobutton, Value: off$/);
        const on = indexOf(before, /^\d+ radio button radiobutton, Value: on$/);
        const result = await one.click(off);
        expect(before.released).toBe(true);
        expect(result.changes!.note).toBeUndefined();
        expect(result.changes!.summary).toBe(
          `2 changed, 0 added, 0 removed; ${before.records.length - 2} unchanged`,
        );
        expect(result.snapshot!.changesSince(before).summary).toBe(result.changes!.summary);
        await one.click(on);
      } finally {
        await one.close();
      }
    },
    TIMEOUT,
  );

  it(
    "clicking an inert label: the result's diff is empty and its text is the summary alone",
    async () => {
      const before = await session.snapshot({ app: app.pid, screenshot: false });
      const label = indexOf(before, /^\d+ label label$/);
      const result = await session.click(label);
      const changes = expectResultDiff(result, before);
      expect(changes).toMatchObject({ added: [], removed: [], changed: [], renumbered: 0 });
      expect(changes.unchanged).toBe(before.records.length);
      expect(result.text).toBe(`no changes; ${before.records.length} unchanged`);
      expect(result.snapshot!.text).toBe(before.text);
    },
    TIMEOUT,
  );
});

describe("Chromium", () => {
  let app: App;
  let session: Session;
  const WEB = "chromium";

  beforeAll(async () => {
    app = await chromium(desktop, fileUrl("test/pages/list.html"), { windowName: "axsnap list" });
    session = createSession({ keepSnapshots: 100 });
  }, TIMEOUT);

  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  /** Web content arrives a moment after the window: poll, bounded, until it shows. */
  async function page(test: (snap: Snapshot) => boolean): Promise<Snapshot> {
    const until = Date.now() + 20_000;
    for (;;) {
      const snap = await session.snapshot({ app: WEB, screenshot: false, deadlineMs: 8000 });
      if (test(snap)) return snap;
      if (Date.now() > until) throw new Error(`the page never showed it; last snapshot:\n${snap.text}`);
      await sleep(300);
    }
  }

  const items = (s: Snapshot) => s.text.split("\n").filter((l) => /^\t*\d+ list item\b/.test(l)).length;

  it(
    "clicking a button that appends two list items: both are added, at their indices in the new snapshot; the result text is the diff",
    async () => {
      const before = await page((s) => s.text.includes("push button Add two items") && items(s) === 3);
      const result = await session.click(indexOf(before, /^\d+ push button Add two items$/));
      expect(result.channel).toBe("semantic");
      const own = expectResultDiff(result, before);
      // What the agent reads is the diff, not the page again.
      expect(result.text).toBe(own.text);
      expect(result.text!.length).toBeLessThan(result.snapshot!.text.length);

      const { snap, changes } = await effect(session, WEB, before, result, (s) => items(s) === 5);
      expect(changes.removed).toEqual([]);
      const addedItems = changes.added.filter((c) => c.role === "list item");
      expect(addedItems, changes.text).toHaveLength(2);
      // Each added item at its index in the new snapshot, after the three old ones, in order.
      const printedItems = snap.text
        .split("\n")
        .filter((l) => /^\t*\d+ list item\b/.test(l))
        .map((l) => Number(/\d+/.exec(l)![0]));
      expect(addedItems.map((c) => c.index)).toEqual(printedItems.slice(3));
      // Their text: "Item 4" and "Item 5", each on the item's line or on a line of its own added below it.
      for (const [n, c] of addedItems.entries()) {
        const own = changes.added.filter(
          (a) => a.index >= c.index && a.index < (addedItems[n + 1]?.index ?? Infinity),
        );
        expect(own.map((a) => a.line).join(" | "), changes.text).toContain(`Item ${n + 4}`);
      }
      // Everything else added is inside the new items (their text), nothing outside them.
      const lastItem = addedItems.at(-1)!.index;
      for (const a of changes.added) {
        expect(a.index, changes.text).toBeGreaterThanOrEqual(addedItems[0]!.index);
        expect(a.index, changes.text).toBeLessThanOrEqual(lastItem + 1);
      }
      // The diff text prints the new items under the list (their ancestor), marked as added.
      const list = indexOf(snap, /^\d+ list\b/);
      const lines = changes.text.split("\n");
      const depth = (l: string) => /^\t*/.exec(l)![0].length;
      const at = lines.findIndex((l) => l.trimStart().startsWith(`${list} ${lineOf(snap, list)}`));
      expect(at, changes.text).toBeGreaterThanOrEqual(0);
      for (const [n, c] of addedItems.entries()) {
        const line = lines[at + 1 + n]!;
        expect(line.trimStart()).toBe(`${c.index} ${c.line} [added]`);
        expect(depth(line)).toBe(depth(lines[at]!) + 1);
      }
      // What else changed in the page is what the two new rows explain: the list grew (resized),
      // what lies below it moved down, and focus went to the clicked button (states of the button
      // and of the document). No name or value changed in the page. Outside it, Chromium's own UI
      // may change on its own (the tab's name gains "Memory usage - 22.6 MB" at some moment): only
      // never a list item, never anything added or removed.
      const doc = indexOf(snap, /^\d+ document web\b/);
      const docDepth = depth(snap.text.split("\n").find((l) => new RegExp(`^\\t*${doc} `).test(l))!);
      const pageEnd = (() => {
        for (const l of snap.text.split("\n")) {
          const m = /^(\t*)(\d+) /.exec(l);
          if (m && Number(m[2]) > doc && m[1]!.length <= docDepth) return Number(m[2]);
        }
        return snap.records.length;
      })();
      const inPage = changes.changed.filter((c) => c.index >= doc && c.index < pageEnd);
      expect(inPage.length, changes.text).toBeGreaterThan(0);
      for (const c of inPage) {
        expect(c.role, changes.text).not.toBe("list item");
        expect(["states", "moved", "resized"], changes.text).toEqual(expect.arrayContaining(c.fields!));
        if (c.fields!.includes("resized")) expect(c.index, changes.text).toBe(list);
        if (c.fields!.includes("moved")) expect(c.index, changes.text).toBeGreaterThan(lastItem);
        if (c.fields!.includes("states"))
          expect(c.line, changes.text).toMatch(/^(document web|push button Add two items)\b/);
      }
      expect(changes.text.length).toBeLessThan(snap.text.length);
    },
    TIMEOUT,
  );
});
