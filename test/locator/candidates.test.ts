/**
 * ELEMENT_NOT_FOUND's candidates (issue 34, design 2.4), pure over fixture
 * trees: scored by role, name similarity, ancestors and the recorded place,
 * at most three, each with its own locator, line, ancestors and why.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSnapshot } from "../../lib/observe/snapshot.js";
import { candidatesFor, nameSimilarity } from "../../lib/session/locator/candidates.js";
import { parseLocator } from "../../lib/session/locator/grammar.js";

const gtk = createSnapshot({
  raw: JSON.parse(
    readFileSync(join(import.meta.dirname, "..", "fixtures", "gtk-widget-factory.json"), "utf8"),
  ),
});

describe("name similarity", () => {
  it("is 1 for the same name in any case, falling with the edit distance; a regex that matches is 1", () => {
    expect(nameSimilarity("Save", "save")).toBe(1);
    expect(nameSimilarity("Save", "Store")).toBeCloseTo(1 - 3 / 5);
    expect(nameSimilarity("Stored", "Store")).toBeCloseTo(1 - 1 / 6);
    expect(nameSimilarity(/^Sav/, "Save")).toBe(1);
    expect(nameSimilarity(undefined, "Save")).toBe(0);
  });
});

describe("candidatesFor", () => {
  it("offers the same role with a similar name first, with its locator, line, ancestors and why", () => {
    const c = candidatesFor(gtk, parseLocator('panel "Frame" >> push button "Nested buton"'));
    expect(c.length).toBeGreaterThan(0);
    expect(c.length).toBeLessThanOrEqual(3);
    expect(c[0]).toMatchObject({
      locator: 'app=gtk3-widget-factory >> window="GTK+ Widget Factory" >> push button "Nested button"',
      line: "push button Nested button",
      ancestors: ['panel "Frame"'],
      why: "same role and ancestors, name similar",
    });
    expect(c[0]!.ref).toMatch(new RegExp(`^@${gtk.id}:e\\d+$`));
  });

  it("ranks by the recorded place when the names say nothing", () => {
    const buttons = gtk.records.filter((r) => r.roleText === "push button" && r.frame);
    const far = buttons.at(-1)!;
    const c = candidatesFor(gtk, parseLocator('push button "zzzzzz"'), { frame: far.frame! });
    expect(c[0]!.ref).toBe(`@${gtk.id}:e${far.index}`);
    expect(c[0]!.why).toMatch(/place/);
  });

  it("offers nothing that scores below 3: another role with an unlike name", () => {
    expect(candidatesFor(gtk, parseLocator('AXNothing "qqqqqqqqqqqq"'))).toEqual([]);
  });
});
