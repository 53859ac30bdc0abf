/**
 * axsnap against Chromium's own account of its pages (issue 32 §4): each page
 * of test/pages/chromium-ax/ in a real Chromium, axsnap's snapshot compared
 * node by node with the AT-SPI tree Chromium gave for it
 * (`<page>-expected-auralinux.txt`, written by scripts/chromium-ax-expected.py
 * with pyatspi, not axsnap): found, role, name and states. Every difference is
 * accounted for in DIFFERENCES, with why; a new one, or one that went away,
 * fails the test.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Desktop } from "../../scripts/desktop.mjs";
import { agreement, type Compared, differenceKey, measurePage, pageNames } from "../support/chromium-ax.js";
import { useDesktop } from "../support/linux.js";

/**
 * Where axsnap prints otherwise than Chromium's tree, and why. Keys as
 * differenceKey forms them: page | [Chromium's role] name | what differs.
 */
const COLLAPSED =
  "axsnap's choice: an element Chromium marks EXPANDABLE but not EXPANDED prints `collapsed` (the state an agent acts on: it opens on a click); Chromium's tree names only EXPANDED";
const DIFFERENCES: Record<string, string> = {
  "aria-combobox | [combo box] City | states": COLLAPSED,
  "aria-expanded | [push button] More | states": COLLAPSED,
  "aria-tree-expanded | [tree item] Etc | states": COLLAPSED,
  "details | [toggle button] Shut one | states": COLLAPSED,
  "input-number | [spin button] Qty | states":
    "axsnap's choice: a spin button holds a number (`settable, float`, set by Value), not text; Chromium also marks it EDITABLE",
  "select | [combo box] Fruit | states": COLLAPSED,
  "select | [menu item] Apple | missing":
    "axsnap's choice: a collapsed <select>'s popup menu is not on screen (not SHOWING), so its options print once it is opened",
  "select | [menu item] Banana | missing":
    "as Apple: the chosen option prints on the combo box's line instead (`combo box (collapsed) Fruit, Value: Banana`)",
};

let desktop: Desktop;
const results: Compared[] = [];

beforeAll(async () => {
  desktop = await useDesktop();
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
});

describe("axsnap agrees with Chromium's own accessibility tree", () => {
  for (const page of pageNames())
    it(page, async () => {
      const got = await measurePage(desktop, page);
      results.push(...got);
      const differences = got
        .map((c) => ({ key: differenceKey(c), c }))
        .filter((d): d is { key: string; c: Compared } => d.key !== undefined);
      const unexplained = differences
        .filter((d) => DIFFERENCES[d.key] === undefined)
        .map(
          (d) =>
            `${d.key} (Chromium: ${d.c.want.join(" ") || "-"}; axsnap: ${d.c.got ? `[${d.c.got.role}] ${d.c.got.name} ${d.c.got.states.join(" ")}` : "not printed"})`,
        );
      expect(unexplained, "differences not in the table").toEqual([]);
      // An entry of the table for this page that no longer differs is stale: the table says what is true now.
      const seen = new Set(differences.map((d) => d.key));
      const stale = Object.keys(DIFFERENCES).filter((k) => k.startsWith(`${page} |`) && !seen.has(k));
      expect(stale, "table entries that no longer differ").toEqual([]);
    }, 60_000);

  it("agrees on at least 95% of Chromium's nodes in all (found, role, name) and 90% (states)", () => {
    const a = agreement(results);
    expect(a.nodes).toBeGreaterThan(100);
    expect(a.found / a.nodes).toBeGreaterThanOrEqual(0.95);
    expect(a.role / a.nodes).toBeGreaterThanOrEqual(0.95);
    expect(a.name / a.nodes).toBeGreaterThanOrEqual(0.95);
    expect(a.states / a.nodes).toBeGreaterThanOrEqual(0.9);
  });
});
