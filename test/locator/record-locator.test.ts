/**
 * record.locator (issue 34, design 2.3) and the audit that checks it in every
 * test (test/support/locator-audit.ts): the getter is lazy and not
 * enumerable, a collapsed or copied record does not carry it, and the audit
 * names the line and the locator when a locator finds another element.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSnapshot } from "../../lib/observe/snapshot.js";
import { defineLocators } from "../../lib/session/locator/define.js";
import { parseLocator } from "../../lib/session/locator/grammar.js";
import { matchLocator } from "../../lib/session/locator/match.js";
import { auditSnapshot } from "../support/locator-audit.js";

const raw = () =>
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "fixtures", "save-dialog.json"), "utf8"));

describe("record.locator", () => {
  it("is the printed shortest unique locator, read lazily, left out of JSON and spreads", () => {
    const snap = createSnapshot({ raw: raw() });
    const save = snap.records.find((r) => r.roleText === "button" && r.title === "Save")!;
    expect(save.locator).toBe('app=TextEdit >> window="Untitled" >> button "Save"');
    expect(matchLocator(snap, parseLocator(save.locator!))).toEqual([save]);
    expect(Object.keys(save)).not.toContain("locator");
    expect(JSON.stringify(save)).not.toContain('"locator"');
    expect({ ...save }.locator).toBeUndefined();
    // Cached: the same string each time.
    expect(save.locator).toBe(save.locator);
    expect(snap.records[0]!.locator).toBe('app=TextEdit >> window="Untitled"');
  });
});

describe("the locator audit", () => {
  it("passes a window snapshot whose every printed record its locator finds alone", () => {
    expect(auditSnapshot(createSnapshot({ raw: raw() }))).toEqual([]);
  });

  it("names the app, the line and the locator when a locator finds another element, or none", () => {
    const snap = createSnapshot({ raw: raw() });
    const save = snap.records.find((r) => r.title === "Save")!;
    const cancel = snap.records.find((r) => r.title === "Cancel")!;
    const cancelLocator = cancel.locator!;
    // A defect forced: Save's locator says Cancel's, and Cancel has none.
    Object.defineProperty(save, "locator", { get: () => cancelLocator, configurable: true });
    Object.defineProperty(cancel, "locator", { get: () => undefined, configurable: true });
    const failures = auditSnapshot(snap);
    // The getters back, so the audit after this test sees the snapshot as it was made.
    defineLocators(snap);
    expect(failures).toEqual([
      `TextEdit, window "Untitled" (tree), line ${cancel.index} "button Cancel": no locator (role button)`,
      `TextEdit, window "Untitled" (tree), line ${save.index} "button Save": ${cancelLocator} finds [${cancel.index}]`,
    ]);
  });
});
