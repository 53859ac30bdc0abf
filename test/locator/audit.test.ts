/**
 * The locator audit over the fixture trees (issue 34, design 2.6 in its pure
 * form): every printed record's shortest locator, printed and parsed back,
 * names exactly that record, in both styles. It also counts the records that
 * needed an ordinal, the last resort, so a change that makes more of them shows.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSnapshot } from "../../lib/observe/snapshot.js";
import type { Style } from "../../lib/render/format.js";
import { locatorOf } from "../../lib/session/locator/compute.js";
import { parseLocator, printLocator } from "../../lib/session/locator/grammar.js";
import { matchLocator } from "../../lib/session/locator/match.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".json"))
  .sort();

const withNth: Record<string, number> = {};

describe("every fixture record's locator finds it again", () => {
  for (const file of fixtures)
    for (const style of ["tree", "compact"] as Style[])
      it(`${basename(file, ".json")} (${style})`, () => {
        const raw = JSON.parse(readFileSync(join(FIXTURES, file), "utf8"));
        const snap = createSnapshot({ raw, options: { style } });
        const failures: string[] = [];
        let nth = 0;
        for (const record of snap.records) {
          const l = locatorOf(snap, record);
          if (l === undefined) {
            failures.push(`${record.index}: no locator (${record.roleText} / ${record.role})`);
            continue;
          }
          const printed = printLocator(l);
          const again = parseLocator(printed);
          expect(again, printed).toEqual(l);
          const found = matchLocator(snap, again);
          if (found.length !== 1 || found[0] !== record)
            failures.push(`${record.index}: ${printed} → [${found.map((r) => r.index).join(", ")}]`);
          if (l.path.some((s) => s.nth !== undefined)) nth++;
        }
        withNth[`${basename(file, ".json")}.${style}`] = nth;
        expect(failures).toEqual([]);
      });

  it("reports how many needed an ordinal", () => {
    console.log(`records needing nth: ${JSON.stringify(withNth)}`);
  });
});
