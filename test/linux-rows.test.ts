/**
 * GTK3 tree views on a real desktop: gtk3-widget-factory's tree table exposes
 * its cells directly (no row objects); they print as rows.
 */
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snapshot } from "../lib/desktop.js";
import type { Snapshot } from "../lib/index.js";
import { type Desktop, gtkWidgetFactory } from "../scripts/desktop.mjs";
import { useDesktop } from "./support/linux.js";

let desktop: Desktop;
let snap: Snapshot;

beforeAll(async () => {
  desktop = await useDesktop();
  await gtkWidgetFactory(desktop);
  snap = await snapshot({ app: "gtk3-widget-factory" });
}, 60_000);

afterAll(async () => {
  await snap?.release();
  await desktop?.stop();
});

describe("gtk3-widget-factory tree view", () => {
  it("names secondary actions by their names, never their descriptions", () => {
    if (process.env.ROWS_DUMP) writeFileSync(process.env.ROWS_DUMP, snap.text);
    expect(snap.text).not.toContain("Expands or contracts");
    expect(snap.text).not.toContain("Creates a widget");
    // The check box column's cells (GTK3 gives their actions' descriptions as names).
    expect(snap.text).toMatch(/\d+ table cell .*Value: on, Secondary Actions: expand or contract, edit\b/);
    const cells = snap.records.filter((r) => r.role === "table cell");
    expect(cells.length).toBeGreaterThan(0);
    for (const c of cells) for (const a of c.actions) expect(a.length).toBeLessThanOrEqual(32);
  });
});
