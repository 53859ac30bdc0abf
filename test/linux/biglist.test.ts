/**
 * Issue 13, item 4, on a real app under the headless desktop: a GTK3 tree
 * view of 10,000 rows (test/apps/big-list.py) between other controls. The
 * backend reads only the rows on screen (Table.GetAccessibleAt), so the
 * snapshot is complete, prints exactly the visible rows (one line each, the
 * other cells as `| b | c`) with their real row numbers in
 * `(showing A-B of 10000 items)`, the rest of the window still prints, and a
 * printed row is still selectable by a click on its line. A small list keeps
 * every row and no suffix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let session: Session;

beforeAll(async () => {
  desktop = await useDesktop();
  session = createSession({ deadlineMs: 8000 });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

async function startList(args: string[]): Promise<App> {
  return startApp(desktop, "/usr/bin/python3", ["test/apps/big-list.py", ...args], {
    name: "axsnap-big-list",
    windowName: "axsnap big list",
    timeoutMs: 20_000,
  });
}

/** Snapshots `pid` until `test` holds (the app may still be laying out or scrolling). */
async function until(pid: number, test: (snap: Snapshot) => boolean): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await session.snapshot({ app: pid, screenshot: false, deadlineMs: 8000 });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

/** Each numbered table cell line joined with the unnumbered `| b | c` line under it, trimmed. */
const rowLines = (s: Snapshot) => {
  const all = s.text.split("\n");
  const out: string[] = [];
  all.forEach((l, i) => {
    if (!/^\t*\d+ table cell\b/.test(l)) return;
    const next = all[i + 1]?.trim();
    out.push((next?.startsWith("| ") ? `${l} ${next}` : l).trim());
  });
  return out;
};
const indexOf = (line: string) => Number(/^(\d+) /.exec(line)![1]);
const showing = (s: Snapshot) => {
  const m = /^\t*\d+ table\b.*\(showing (\d+)-(\d+) of (\d+) items\)$/m.exec(s.text);
  return m ? { from: Number(m[1]), to: Number(m[2]), total: Number(m[3]) } : undefined;
};
const size = (i: number) => `${(i * 7) % 1000} KB`;
const kind = (i: number) => (i % 2 === 0 ? "even" : "odd");

describe("a 10,000-row GTK3 tree view", () => {
  let app: App;
  let snap: Snapshot;

  beforeAll(async () => {
    app = await startList([]);
    snap = await until(app.pid, (s) => /Item 0\b/.test(s.text) && /push button Apply/.test(s.text));
  }, TIMEOUT);
  afterAll(async () => {
    await app?.stop();
  });

  it("is complete and prints exactly the visible rows, with their real numbers", () => {
    expect(snap.complete, snap.text).toBe(true);
    expect(snap.cutBy).toEqual([]);
    const shown = showing(snap);
    expect(shown, snap.text).toBeDefined();
    expect(shown!.from).toBe(0);
    expect(shown!.total).toBe(10_000);
    expect(shown!.to).toBeGreaterThanOrEqual(5);
    expect(shown!.to).toBeLessThan(20);
    const rows = rowLines(snap);
    expect(rows, snap.text).toHaveLength(shown!.to - shown!.from + 1);
    rows.forEach((line, k) => {
      expect(line).toMatch(
        new RegExp(`^\\d+ table cell \\(selectable\\) Item ${k}\\b.* \\| ${size(k)} \\| ${kind(k)}$`),
      );
    });
    expect(rows[0]).toMatch(/^\d+ table cell \(selectable\) Item 0, .*\| 0 KB \| even$/);
    // One line per row: the other cells never print numbered lines of their own.
    expect(snap.text).not.toMatch(/^\t*\d+ table cell .*\b(0 KB|even)\b/m);
  });

  it("prints the rest of the window: the entry, the buttons, the label, the column headers", () => {
    const lines = snap.text.split("\n").map((l) => l.trim());
    const has = (re: RegExp) => expect(lines, snap.text).toContainEqual(expect.stringMatching(re));
    has(/^\d+ text \(settable, string\) .*Placeholder: Filter items/);
    has(/^\d+ push button Refresh$/);
    has(/^\d+ table column header Name$/);
    has(/^\d+ table column header Size$/);
    has(/^\d+ table column header Kind$/);
    has(/^\d+ label 10000 items$/);
    has(/^\d+ push button Apply$/);
  });

  it("clicks a printed row by its index: the row is selected in a fresh snapshot", async () => {
    const line = rowLines(snap).find((l) => / Item 3\b/.test(l))!;
    expect(line).toBeDefined();
    expect(line).not.toContain("selected)");
    const result = await session.click(indexOf(line));
    expect(result.channel).toBe("semantic");
    const after = await until(app.pid, (s) =>
      rowLines(s).some((l) => / Item 3\b/.test(l) && /^\d+ table cell \([^)]*selected/.test(l)),
    );
    expect(after.complete).toBe(true);
    // Only that row.
    expect(rowLines(after).filter((l) => /^\d+ table cell \([^)]*selected/.test(l))).toHaveLength(1);
  }, 60_000);
});

describe("a 10,000-row tree view scrolled to row 5000", () => {
  let app: App;
  afterAll(async () => {
    await app?.stop();
  });

  it(
    "prints the rows around 5000 with their real numbers",
    async () => {
      app = await startList(["--select", "5000"]);
      const snap = await until(app.pid, (s) => /Item 5000\b/.test(s.text));
      expect(snap.complete, snap.text).toBe(true);
      const shown = showing(snap);
      expect(shown, snap.text).toBeDefined();
      expect(shown!.total).toBe(10_000);
      expect(shown!.from).toBeGreaterThanOrEqual(4990);
      expect(shown!.from).toBeLessThanOrEqual(5000);
      expect(shown!.to).toBeGreaterThan(5000);
      const rows = rowLines(snap);
      expect(rows, snap.text).toHaveLength(shown!.to - shown!.from + 1);
      rows.forEach((line, k) => {
        const i = shown!.from + k;
        expect(line).toMatch(
          new RegExp(`table cell \\([^)]*\\) Item ${i}\\b.* \\| ${size(i)} \\| ${kind(i)}$`),
        );
      });
      expect(rows.find((l) => / Item 5000\b/.test(l))).toMatch(
        /^\d+ table cell \([^)]*\bselected\) Item 5000\b/,
      );
      expect(snap.text).not.toMatch(/ Item 0\b/);
    },
    TIMEOUT,
  );
});

describe("a 5-row tree view", () => {
  let app: App;
  afterAll(async () => {
    await app?.stop();
  });

  it(
    "prints every row and no suffix",
    async () => {
      app = await startList(["--rows", "5"]);
      const snap = await until(app.pid, (s) => /Item 4\b/.test(s.text));
      expect(snap.complete, snap.text).toBe(true);
      const rows = rowLines(snap);
      expect(rows, snap.text).toHaveLength(5);
      rows.forEach((line, k) => {
        expect(line).toMatch(
          new RegExp(`^\\d+ table cell \\(selectable\\) Item ${k}\\b.* \\| ${size(k)} \\| ${kind(k)}$`),
        );
      });
      expect(snap.text).not.toContain("(showing");
      expect(snap.text).toMatch(/^\t*\d+ label 5 items$/m);
    },
    TIMEOUT,
  );
});
