/**
 * Issue 11, item 1 ("Changes"): what changed between two snapshots, keyed by
 * the live handle (or, for fixture trees without handles, by path). Goldens
 * over small fixture pairs, properties over random trees, and an action on
 * the fake backend whose result carries the diff.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RawNode, RawSnapshot, Rect } from "../../lib/model/model.js";
import { diffSnapshots, keysOf } from "../../lib/observe/diff.js";
import { createSnapshot, type Snapshot } from "../../lib/observe/snapshot.js";
import { snapshotArb } from "../support/arbitrary.js";
import { useFakeSessions } from "../support/editor.js";

const GOLDEN = join(import.meta.dirname, "..", "golden");
const UPDATE = process.env.UPDATE_GOLDENS === "1";
const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);

const win = { x: 0, y: 0, w: 600, h: 400 };
function raw(children: RawNode[]): RawSnapshot {
  return {
    version: 1,
    platform: "linux",
    app: { name: "demo", pid: 42 },
    window: { title: "Demo", frame: win, scale: 1 },
    root: { role: "frame", title: "Demo", frame: win, children },
    walk: { ended: "complete", nodesObserved: 1 },
  };
}
const snap = (children: RawNode[], style: "tree" | "compact" = "tree") =>
  createSnapshot({ raw: raw(children), options: { style } });

const box = (y: number, w = 120): Rect => ({ x: 10, y, w, h: 20 });
const checkbox = (checked: boolean): RawNode => ({
  role: "check box",
  title: "Wrap lines",
  states: { checked, enabled: true },
  actions: ["click"],
  frame: box(10),
});
const button = (title: string, y: number, handle?: number): RawNode => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: box(y),
  ...(handle !== undefined ? { handle } : {}),
});
const item = (title: string, y: number, handle: number): RawNode => ({
  role: "list item",
  title,
  states: { selectable: true },
  frame: box(y, 200),
  handle,
});
const list = (items: RawNode[]): RawNode => ({
  role: "list",
  title: "Files",
  frame: { x: 0, y: 40, w: 300, h: 300 },
  handle: 100,
  children: items,
});
const dialog = (children: RawNode[]): RawNode => ({
  role: "dialog",
  title: "Save",
  frame: { x: 300, y: 40, w: 280, h: 200 },
  handle: 200,
  children,
});
const label = (text: string, y: number, handle: number): RawNode => ({
  role: "label",
  title: text,
  frame: { x: 310, y, w: 200, h: 20 },
  handle,
});

const PAIRS: Record<string, [Snapshot, Snapshot]> = {
  // No handles: keyed by path, as for any fixture tree.
  "checkbox-toggled": [
    snap([checkbox(false), button("Close", 40)]),
    snap([checkbox(true), button("Close", 40)]),
  ],
  "row-added": [
    snap([list([item("a.txt", 50, 1), item("c.txt", 70, 3)]), button("Open", 360, 9)]),
    snap([list([item("a.txt", 50, 1), item("b.txt", 70, 2), item("c.txt", 90, 3)]), button("Open", 360, 9)]),
  ],
  "dialog-replaced": [
    snap([
      button("Menu", 10, 8),
      dialog([label("Save changes?", 60, 201), button("Save", 100, 202), button("Cancel", 130, 203)]),
    ]),
    snap([
      button("Menu", 10, 8),
      dialog([
        label("Saving report.pdf", 60, 211),
        { role: "progress bar", value: 40, frame: box(90), handle: 212 },
      ]),
    ]),
  ],
  "nothing-changed": [
    snap([checkbox(true), button("Close", 40)]),
    snap([checkbox(true), button("Close", 40)]),
  ],
  "row-added-compact": [
    snap([list([item("a.txt", 50, 1), item("c.txt", 70, 3)])], "compact"),
    snap([list([item("a.txt", 50, 1), item("b.txt", 70, 2), item("c.txt", 90, 3)])], "compact"),
  ],
};

describe("diff goldens over fixture pairs", () => {
  for (const [name, [before, after]] of Object.entries(PAIRS)) {
    it(name, () => {
      const changes = after.changesSince(before);
      const file = join(GOLDEN, `diff-${name}.txt`);
      const text = `${changes.text}\n`;
      if (UPDATE || !existsSync(file)) writeFileSync(file, text);
      expect(text).toBe(readFileSync(file, "utf8"));
      expect(changes.text.split("\n").at(-1)).toBe(changes.summary);
    });
  }

  it("a toggled checkbox is one changed element, named by its fields", () => {
    const [before, after] = PAIRS["checkbox-toggled"]!;
    const c = diffSnapshots(before, after);
    expect(c.added).toEqual([]);
    expect(c.removed).toEqual([]);
    expect(c.changed).toHaveLength(1);
    expect(c.changed[0]).toMatchObject({ index: 1, name: "Wrap lines", previousIndex: 1 });
    expect(c.changed[0]!.fields).toEqual(expect.arrayContaining(["value"]));
    expect(c.summary).toBe("1 changed, 0 added, 0 removed; 2 unchanged");
  });

  it("a row inserted above others: the rows below moved, none removed and added again", () => {
    const [before, after] = PAIRS["row-added"]!;
    const c = diffSnapshots(before, after);
    expect(c.added.map((a) => a.name)).toEqual(["b.txt"]);
    expect(c.removed).toEqual([]);
    const moved = c.changed.find((x) => x.name === "c.txt")!;
    expect(moved.fields).toEqual(["moved"]);
    expect(moved.key).toBe("h3");
    expect(c.renumbered).toBe(1); // the Open button: same line, new index
  });

  it("replaced dialog content reads as removed and added, the dialog itself unchanged", () => {
    const [before, after] = PAIRS["dialog-replaced"]!;
    const c = diffSnapshots(before, after);
    expect(c.removed.map((r) => r.index)).toEqual([3, 4, 5]);
    expect(c.added.map((r) => r.role)).toEqual(["label", "progress bar"]);
    expect(c.changed).toEqual([]);
    expect(c.text).toContain("- 4 push button Save");
  });

  it("a window whose content was replaced names more than ten removed elements by their old indices, in one line", () => {
    const buttons = (prefix: string, n: number, from: number) =>
      Array.from({ length: n }, (_, i) => button(`${prefix} ${i}`, 30 + i * 22, from + i));
    const before = snap([button("Keep", 8, 900), ...buttons("Old", 14, 100)]);
    const after = snap([button("Keep", 8, 900), ...buttons("New", 3, 200)]);
    const c = diffSnapshots(before, after);
    expect(c.removed).toHaveLength(14);
    const lines = c.text.split("\n");
    expect(lines.filter((l) => l.startsWith("- "))).toEqual(["- 14 elements of the previous snapshot: 2-15"]);
    expect(lines.at(-1)).toBe("0 changed, 3 added, 14 removed; 2 unchanged");
    // Ten or fewer keep their lines (the dialog golden above).
    const few = diffSnapshots(snap([button("Keep", 8, 900), ...buttons("Old", 10, 100)]), after);
    expect(few.text.split("\n").filter((l) => l.startsWith("- "))).toHaveLength(10);
  });

  it("nothing changed: the text is the summary alone", () => {
    const [before, after] = PAIRS["nothing-changed"]!;
    const c = before.changesSince(after);
    expect(c.text).toBe("no changes; 3 unchanged");
  });
});

/** Every node gets a handle, numbered in walk order: two random trees share some. */
function withHandles(s: RawSnapshot): RawSnapshot {
  let next = 1;
  const give = (n: RawNode): RawNode => ({
    ...n,
    handle: next++,
    ...(n.children ? { children: n.children.map(give) } : {}),
  });
  return { ...s, root: give(s.root), ...(s.menuBar ? { menuBar: give(s.menuBar) } : {}) };
}

describe("diff properties", () => {
  const pair = fc.tuple(snapshotArb, snapshotArb, fc.boolean(), fc.constantFrom("tree", "compact" as const));

  it("old keys minus removed plus added are the new keys; changed are in both", () => {
    fc.assert(
      fc.property(pair, ([a, b, handles, style]) => {
        const before = createSnapshot({ raw: handles ? withHandles(a) : a, options: { style } });
        const after = createSnapshot({ raw: handles ? withHandles(b) : b, options: { style } });
        const c = diffSnapshots(before, after);
        const oldKeys = new Set(keysOf(before));
        const newKeys = keysOf(after);
        const applied = new Set(oldKeys);
        for (const r of c.removed) {
          expect(applied.delete(r.key)).toBe(true);
          expect(before.records[r.index]).toBeDefined();
        }
        for (const x of c.added) {
          expect(applied.has(x.key)).toBe(false);
          applied.add(x.key);
        }
        expect([...applied].sort()).toEqual([...newKeys].sort());
        for (const x of c.changed) {
          expect(oldKeys.has(x.key) && newKeys.includes(x.key)).toBe(true);
          expect(x.fields!.length).toBeGreaterThan(0);
          expect(keysOf(after)[x.index]).toBe(x.key);
        }
        expect(c.unchanged + c.changed.length + c.added.length).toBe(after.records.length);
        expect(c.unchanged + c.changed.length + c.removed.length).toBe(before.records.length);
        expect(c.text.split("\n").at(-1)).toBe(c.summary);
      }),
      { numRuns: RUNS },
    );
  });

  it("a snapshot against itself, or a second render of the same tree, is no change", () => {
    fc.assert(
      fc.property(snapshotArb, fc.constantFrom("tree", "compact" as const), (a, style) => {
        const s = createSnapshot({ raw: a, options: { style } });
        const again = createSnapshot({ raw: a, options: { style } });
        for (const c of [diffSnapshots(s, s), diffSnapshots(s, again)]) {
          expect(c.added).toEqual([]);
          expect(c.removed).toEqual([]);
          expect(c.changed).toEqual([]);
          expect(c.unchanged).toBe(s.records.length);
          expect(c.text).toBe(`no changes; ${s.records.length} unchanged`);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe("an action's result carries the changes", () => {
  type Node = Record<string, unknown>;
  const sessions = useFakeSessions();
  const frame = { x: 100, y: 100, w: 800, h: 600 };
  const row = (key: string, title: string, y: number): Node => ({
    key,
    role: "push button",
    title,
    actions: ["click"],
    frame: { x: 120, y, w: 200, h: 20 },
  });
  /**
   * The observed window shows the rows by reference, in the order given; they
   * are declared (in a fixed order, so each keeps its element id and handle)
   * in a minimized window that is never observed.
   */
  function desktop(order: string[], count: string, ys: Record<string, number>) {
    const rows = [row("a", "Alpha", ys.a!), row("b", "Beta", ys.b!), row("c", "Gamma", ys.c!)];
    const counter = {
      key: "n",
      role: "label",
      title: "Count",
      value: count,
      valueType: "string",
      frame: { x: 120, y: 300, w: 200, h: 20 },
    };
    return {
      apps: [
        {
          name: "Editor",
          pid: 77,
          windows: [
            {
              title: "W",
              frame,
              root: {
                role: "frame",
                title: "W",
                frame,
                children: [...order.map((ref) => ({ ref })), { ref: "n" }],
              },
            },
            {
              title: "Store",
              frame,
              minimized: true,
              root: { role: "frame", title: "Store", frame, children: [...rows, counter] },
            },
          ],
        },
      ],
    };
  }

  it("names the element whose value changed, by handle, though the rows were reordered", async () => {
    const { b, s } = sessions.open(desktop(["a", "b", "c"], "1", { a: 120, b: 140, c: 160 }));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const alpha = snap.records.find((r) => r.title === "Alpha")!;
    expect(alpha.handle).toBeDefined();
    const press = b.doAction.bind(b);
    Object.defineProperty(b, "doAction", {
      configurable: true,
      value: async (h: number, name: string, d: number) => {
        await press(h, name, d);
        // The app reacts: the count goes up and the rows re-sort (Gamma first).
        await b.fakeReplace(desktop(["c", "a", "b"], "2", { c: 120, a: 140, b: 160 }));
      },
    });
    const result = await s.click(alpha.index);
    const fresh = result.snapshot!;
    const changes = result.changes!;
    expect(changes.added).toEqual([]);
    expect(changes.removed).toEqual([]);
    const count = changes.changed.find((c) => c.name === "Count")!;
    expect(count.fields).toEqual(["value"]);
    const handleOf = (name: string) => fresh.records.find((r) => r.title === name)!.handle;
    expect(count.key).toBe(`h${handleOf("Count")}`);
    expect(count.index).toBe(fresh.records.find((r) => r.title === "Count")!.index);
    // Reordered rows are the same elements, moved: not removed and added again.
    for (const name of ["Alpha", "Beta", "Gamma"]) {
      const c = changes.changed.find((x) => x.name === name)!;
      expect(c.fields).toEqual(["moved"]);
      expect(c.key).toBe(`h${handleOf(name)}`);
    }
    expect(changes.summary).toBe("4 changed, 0 added, 0 removed; 1 unchanged");
    expect(changes.text).toContain("[changed: value]");
    expect(result.text).toBe(changes.text.length < fresh.text.length ? changes.text : fresh.text);
  });

  it("a snapshot released before the other was taken is compared by path, and the diff says so", async () => {
    // Keeps one: each snapshot releases the one before it, just after it was made.
    const { s } = sessions.open(desktop(["a", "b", "c"], "1", { a: 120, b: 140, c: 160 }), {
      session: { keepSnapshots: 1 },
    });
    const first = await s.snapshot({ app: "Editor", screenshot: false });
    const second = await s.snapshot({ app: "Editor", screenshot: false });
    expect(first.released).toBe(true);
    // Released after `second` was made: `second`'s walk held the ids first, so by handle still.
    const held = second.changesSince(first);
    expect(held.note).toBeUndefined();
    expect(held.text).toBe(`no changes; ${first.records.length} unchanged`);
    const third = await s.snapshot({ app: "Editor", screenshot: false });
    // `first` was released before `third` was made: its handles may name nothing, or other elements.
    for (const c of [third.changesSince(first), first.changesSince(third)]) {
      expect(c.note).toBe(
        `compared by position, not by element: snapshot ${first.id} was released before snapshot ${third.id} was taken, so its element handles were forgotten`,
      );
      expect(c.text).toBe(`(${c.note})\nno changes; ${first.records.length} unchanged`);
      expect(c.summary).toBe(`no changes; ${first.records.length} unchanged`);
    }
    // `second` was released after `third` was made: by handle.
    expect(third.changesSince(second).note).toBeUndefined();
  });

  it("no fresh snapshot, no changes", async () => {
    const { s } = sessions.open(desktop(["a", "b", "c"], "1", { a: 120, b: 140, c: 160 }));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(snap.records.find((r) => r.title === "Beta")!.index, { snapshot: false });
    expect(result.changes).toBeUndefined();
    expect(result.text).toBeUndefined();
  });
});
