/**
 * GTK3 tree views on a real desktop: gtk3-widget-factory's tree table exposes
 * its cells directly (no row objects). Its rows print one line each (the
 * first cell, then `| b | c`), its actions by name, and a row line's click
 * selects the row.
 */
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const GTK = "gtk3-widget-factory";
let desktop: Desktop;
let session: Session;
let snap: Snapshot;

beforeAll(async () => {
  desktop = await useDesktop();
  await gtkWidgetFactory(desktop);
  session = createSession();
  snap = await session.snapshot({ app: GTK, screenshot: false });
  if (process.env.ROWS_DUMP) writeFileSync(process.env.ROWS_DUMP, snap.text);
}, 60_000);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

/** Each numbered table cell line joined with the unnumbered `| b | c` line under it, if any. */
const cellLines = (s: Snapshot) => {
  const all = s.text.split("\n");
  const out: string[] = [];
  all.forEach((l, i) => {
    if (!/^\t*\d+ table cell\b/.test(l)) return;
    const next = all[i + 1]?.trim();
    out.push(next?.startsWith("| ") ? `${l} ${next}` : l);
  });
  return out;
};
const indexOf = (line: string) => Number(/^\t*(\d+) /.exec(line)![1]);

describe("gtk3-widget-factory tree view", () => {
  it("names secondary actions by their names, never their descriptions", () => {
    expect(snap.text).not.toContain("Expands or contracts");
    expect(snap.text).not.toContain("Creates a widget");
    // The check box column's cells (GTK3 gives their actions' descriptions as names).
    expect(snap.text).toMatch(/\d+ table cell .*Value: on, Secondary Actions: expand or contract, edit\b/);
    const cells = snap.records.filter((r) => r.role === "table cell");
    expect(cells.length).toBeGreaterThan(0);
    for (const c of cells) for (const a of c.actions) expect(a.length).toBeLessThanOrEqual(32);
  });

  it("prints one numbered line per visible row: the first cell, the other cells' texts under it", () => {
    // 16 cells, 4 columns: 4 rows, all visible (so no "(showing A-B of M items)").
    const rows = cellLines(snap);
    expect(rows).toHaveLength(4);
    expect(rows[0]).toMatch(/^\t*\d+ table cell \(selectable\) Value: on, .*\| Andrea \| Cimi$/);
    expect(rows[1]).toMatch(/\| Otto \| chaotic$/);
    expect(rows[2]).toMatch(/\| Orville \| Redenbacher$/);
    expect(rows[3]).toMatch(/\| Benjamin \| Company$/);
    expect(snap.text).not.toMatch(/^\t*\d+ table cell .*\bAndrea\b/m);
    expect(snap.text).toMatch(/^\t+\| Andrea \| Cimi$/m);
    expect(snap.text).not.toContain("(showing");
  });

  it("clicks a row line by its index: the row is selected in the next snapshot", async () => {
    const line = cellLines(snap).find((l) => l.endsWith("| Otto | chaotic"))!;
    const index = indexOf(line);
    expect(line).not.toContain("(selected)");
    const result = await session.click(index);
    expect(result.channel).toBe("semantic");
    expect(result.notes).toEqual([]);
    let after = result.snapshot!;
    const until = Date.now() + 5000;
    while (!cellLines(after).some((l) => l.includes("selected") && l.endsWith("| Otto | chaotic"))) {
      if (Date.now() > until)
        throw new Error(`the row never showed selected:\n${cellLines(after).join("\n")}`);
      await new Promise((r) => setTimeout(r, 100));
      after = await session.snapshot({ app: GTK, screenshot: false });
    }
    const selected = cellLines(after).find((l) => l.endsWith("| Otto | chaotic"))!;
    expect(selected).toMatch(/^\t*\d+ table cell \([^)]*selected/);
  }, 30_000);
});
