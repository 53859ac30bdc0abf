/**
 * Issue 32, item 7: LibreOffice Calc (7.4, GTK3 VCL plugin) on a small .xlsx,
 * as an agent does it, deciding each step from what the door printed. Calc's
 * sheet is a table of 2^20 rows by 2^14 columns that answers ChildCount with
 * 2^31-1 and manages its cells: nothing may ask for all of them (at-spi2-atk's
 * Collection.GetMatches walks every child: Calc then spins a core and grows
 * for minutes). The snapshot prints the cells on screen, says the cut, and
 * Calc stays idle and flat after a formula is typed and entered.
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import type { Desktop } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { makeXlsx, type Office, officeDir, processUse, startOffice } from "../support/office.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 240_000;
let desktop: Desktop;
let session: Session;
let calc: Office;
let first: Snapshot;
let firstMs = 0;

beforeAll(async () => {
  desktop = await useDesktop();
  const dir = officeDir();
  const file = join(dir, "budget.xlsx");
  makeXlsx(file, [2, 3]);
  calc = await startOffice(desktop, dir, "calc", "budget.xlsx", file);
  session = createSession();
  // The first snapshot after the window shows; Calc may still be laying out its sheet.
  const end = Date.now() + 60_000;
  for (;;) {
    const t = performance.now();
    first = await session.snapshot({ app: calc.pid, screenshot: false });
    firstMs = performance.now() - t;
    if (/table cell .*\bA1\b/.test(first.text) || Date.now() > end) break;
    await sleep(500);
  }
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await calc?.app.stop();
  await desktop?.stop();
});

/** Snapshots Calc until `test` holds. */
async function until(test: (s: Snapshot) => boolean, what: string): Promise<Snapshot> {
  const end = Date.now() + 30_000;
  for (;;) {
    const s = await session.snapshot({ app: calc.pid, screenshot: false });
    if (test(s)) return s;
    if (Date.now() > end) throw new Error(`${what} never showed; last snapshot:\n${s.text}`);
    await sleep(300);
  }
}

const cellLine = (s: Snapshot, name: string) =>
  s.text.split("\n").find((l) => new RegExp(`^\\t*\\d+ table cell\\b.* ${name}(,|$)`).test(l));

describe("Calc on a small .xlsx", () => {
  it("prints the cells on screen within the default limits, and says the sheet was cut", () => {
    console.log(`Calc snapshot: ${firstMs.toFixed(0)} ms, ${first.text.split("\n").length} lines`);
    expect(first.complete, first.text).toBe(true);
    expect(first.cutBy).toEqual([]);
    // The sheet says how much of it shows: the rows on screen of 1,048,576.
    expect(first.text).toMatch(/^\t*\d+ table\b.*Sheet Data.*\(showing 0-\d+ of 1048576 items/m);
    expect(cellLine(first, "A1"), first.text).toMatch(/\b2\b/);
    // The rest of a row prints under its first cell: the cells that show something, by address.
    expect(first.text).toMatch(/\bA1, Value: 2\n\t*\| B1 Total\n/);
    expect(cellLine(first, "A2"), first.text).toMatch(/\b3\b/);
    expect(firstMs).toBeLessThan(8000);
  });

  it(
    "finds a cell by name, types a formula into it, enters it and reads its value back; Calc stays idle",
    async () => {
      const found = await session.find(calc.pid, { role: "table cell", name: "A3", exact: true });
      expect(found.matches.length, found.text).toBe(1);
      const a3 = found.matches[0]!;
      const clicked = await session.click(a3.ref);
      expect(clicked.delivery, JSON.stringify(clicked)).toMatch(/^delivered/);
      // The agent reads where the focus went before it types.
      await until((s) => {
        const focused = /The focused UI element is (\d+) /.exec(s.text)?.[1];
        return focused !== undefined && new RegExp(`^\\t*${focused} table cell\\b.* A3$`, "m").test(s.text);
      }, "A3 focused");
      const typed = await session.typeText("=A1+A2", { app: calc.pid });
      expect(typed.delivery, JSON.stringify(typed)).toMatch(/^delivered/);
      const before = processUse(calc.pid);
      const entered = await session.pressKey("Return", { app: calc.pid });
      expect(entered.delivery, JSON.stringify(entered)).toMatch(/^delivered/);
      const after = await until((s) => /\b5\b/.test(cellLine(s, "A3") ?? ""), "A3 = 5");
      expect(cellLine(after, "A3")).toMatch(/\b5\b/);
      // Nothing keeps Calc busy: over 5 s idle it uses under half a second of CPU and does not grow.
      const idleFrom = processUse(calc.pid);
      await sleep(5000);
      const idleTo = processUse(calc.pid);
      console.log(
        `Calc after the formula: ${idleTo.ticks - idleFrom.ticks} ticks in 5 s; RSS ${before.rssMB.toFixed(0)} -> ${idleTo.rssMB.toFixed(0)} MB`,
      );
      expect(idleTo.ticks - idleFrom.ticks).toBeLessThan(50);
      expect(idleTo.rssMB - before.rssMB).toBeLessThan(60);
    },
    TIMEOUT,
  );
});
