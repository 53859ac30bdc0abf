/**
 * Golden renderings: every fixture tree in both styles, compared byte for
 * byte with test/golden/<fixture>.<style>.txt. A changed rendering shows as a
 * diff in review. `npm run goldens:update` rewrites them after an intended
 * change; a missing golden fails, it is never written silently.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { render, type Style, type ViewOptions } from "../../lib/index.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");
const GOLDEN = join(import.meta.dirname, "..", "golden");
const UPDATE = process.env.UPDATE_GOLDENS === "1";

const REQUIRED = [
  "textedit",
  "finder",
  "activity-monitor",
  "system-settings",
  "chrome-form",
  "slack",
  "video-player",
  "save-dialog",
  "table-10000",
  "calculator",
  "menubar-open",
  "gtk-widget-factory",
];

const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".json"))
  .sort();

describe("golden renderings", () => {
  it("has the fixture trees the foundation issue lists (generated ones via npm run fixtures)", () => {
    for (const name of REQUIRED) expect(fixtures, `missing fixture ${name}`).toContain(`${name}.json`);
    expect(fixtures.length).toBeGreaterThanOrEqual(12);
  });

  for (const file of fixtures) {
    for (const style of ["tree", "compact"] as Style[]) {
      const name = `${basename(file, ".json")}.${style}.txt`;
      it(name, () => {
        const raw = JSON.parse(readFileSync(join(FIXTURES, file), "utf8"));
        const text = `${render(raw, { style }).text}\n`;
        const path = join(GOLDEN, name);
        if (UPDATE) writeFileSync(path, text);
        expect(existsSync(path), `missing golden ${name}; run npm run goldens:update and review it`).toBe(
          true,
        );
        expect(text).toBe(readFileSync(path, "utf8"));
      });
    }
  }
});

/** Outlines and budgets over the same fixtures: test/golden/<fixture>.<view>.txt. */
const VIEWS: [string, ViewOptions][] = [
  ["skeleton", { skeleton: true }],
  ["depth-2", { depth: 2 }],
  ["budget-300", { maxTokens: 300 }],
  ["budget-500", { maxTokens: 500 }],
  ["budget-1000", { maxTokens: 1000 }],
];

describe("golden outlines and budgets", () => {
  for (const file of fixtures) {
    for (const [view, options] of VIEWS) {
      const name = `${basename(file, ".json")}.${view}.txt`;
      it(name, () => {
        const raw = JSON.parse(readFileSync(join(FIXTURES, file), "utf8"));
        const text = `${render(raw, options).text}\n`;
        const path = join(GOLDEN, name);
        if (UPDATE) writeFileSync(path, text);
        expect(existsSync(path), `missing golden ${name}; run npm run goldens:update and review it`).toBe(
          true,
        );
        expect(text).toBe(readFileSync(path, "utf8"));
      });
    }
  }
});
