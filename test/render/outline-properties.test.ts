/**
 * Outlines and budgets over random trees and the fixture trees: an index
 * means the same element at every depth and budget of one observation, a
 * printed line says what the full rendering says of its element, a collapsed
 * line holds what it claims, and a budgeted rendering stays within its
 * budget by the real o200k count, give or take the estimator's stated error,
 * unless its closing line says it could not fit (the smallest outline).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import {
  MIN_MAX_TOKENS,
  type RawSnapshot,
  render,
  TOKEN_ESTIMATE_ERROR,
  type ViewOptions,
} from "../../lib/index.js";
import { snapshotArb } from "../support/arbitrary.js";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 200);
const TREE_LINE = /^(\t*)(\d+)(?: (.*))?$/;
const COMPACT_LINE = /^( *)(\d+): (.*)$/;
const HOLDS = / \(\+(\d+)( more)? elements?\)$/;

const viewArb: fc.Arbitrary<ViewOptions> = fc.oneof(
  fc.record({ depth: fc.integer({ min: 0, max: 6 }) }),
  fc.constant({ skeleton: true }),
  fc.record({ maxTokens: fc.integer({ min: MIN_MAX_TOKENS, max: 1500 }) }),
  fc.record({ skeleton: fc.constant(true), maxTokens: fc.integer({ min: MIN_MAX_TOKENS, max: 800 }) }),
);

/** Numbered lines of a text by index: the line after the index, the holds-count stripped. */
function numbered(text: string, style: "tree" | "compact"): Map<number, { rest: string; holds?: number }> {
  const out = new Map<number, { rest: string; holds?: number }>();
  for (const line of text.split("\n")) {
    const m = (style === "tree" ? TREE_LINE : COMPACT_LINE).exec(line);
    if (!m) continue;
    const rest = m[3] ?? "";
    const h = HOLDS.exec(rest);
    out.set(Number(m[2]), h ? { rest: rest.slice(0, h.index), holds: Number(h[1]) } : { rest });
  }
  return out;
}

type Whole = { tree: ReturnType<typeof render>; compact: ReturnType<typeof render> };

function wholeOf(snap: RawSnapshot): Whole {
  return { tree: render(snap), compact: render(snap, { style: "compact" }) };
}

function checkSameObservation(snap: RawSnapshot, view: ViewOptions, wholes = wholeOf(snap)): void {
  const full = wholes.tree;
  const r = render(snap, view);
  // The same records, index by index: an index means the same element whatever printed.
  expect(r.records.length).toBe(full.records.length);
  r.records.forEach((rec, i) => {
    expect(rec.index).toBe(i);
    expect(rec.pathRoot).toBe(full.records[i]!.pathRoot);
    expect(rec.path).toEqual(full.records[i]!.path);
    expect(rec.identity).toEqual(full.records[i]!.identity);
  });
  expect(r.facts).toEqual(full.facts);
  // Each printed line says what the full rendering of the same style says of that element.
  const whole = numbered(wholes[r.style].text, r.style);
  const printed = numbered(r.text, r.style);
  // (Compact hides a group that says nothing, unless it is collapsed: then it says what it holds.)
  for (const [index, line] of printed) {
    if (!whole.has(index) && r.style === "compact") expect(line.holds, `line ${index}`).toBeDefined();
    else if (line.rest.includes("...") && (view.skeleton === true || view.maxTokens !== undefined)) {
      // A skeleton (and a budget's) cuts long texts: what it prints of each segment starts what the whole prints.
      const full = whole.get(index)!.rest;
      for (const seg of line.rest.split(", "))
        expect(full, `line ${index}`).toContain(seg.replace(/\.\.\.$/, ""));
    } else expect(whole.get(index)?.rest, `line ${index}`).toBe(line.rest);
  }
  // Hidden records: inside a printed collapsed line, which holds at least them.
  const within = r.within;
  const inside = new Map<number, number>();
  for (let i = 0; i < r.records.length; i++) {
    const into = within?.[i] ?? -1;
    if (into < 0) continue;
    expect(printed.has(i), `hidden record ${i} printed`).toBe(false);
    expect(printed.get(into)?.holds, `record ${i} is inside ${into}, which is not collapsed`).toBeDefined();
    inside.set(into, (inside.get(into) ?? 0) + 1);
  }
  for (const [index, line] of printed)
    if (line.holds !== undefined) expect(inside.get(index) ?? 0, `holds of ${index}`).toBe(line.holds);
  expect(r.view?.hidden ?? 0).toBe(inside.size === 0 ? 0 : [...inside.values()].reduce((a, b) => a + b, 0));
}

/**
 * Over the budget only as the smallest outline there is (nothing but the roots' lines), and then
 * saying so in the closing line; saying so only when over it. Returns the real count.
 */
function checkBudget(snap: RawSnapshot, maxTokens: number): number {
  const r = render(snap, { maxTokens });
  const real = encode(r.text).length;
  const last = r.text.split("\n").at(-1) ?? "";
  const saysUnfit = last.startsWith(`(Could not fit ${maxTokens} tokens: the smallest outline is about `);
  if (real > maxTokens * (1 + TOKEN_ESTIMATE_ERROR)) {
    expect(r.view?.depth, `${real} tokens for a budget of ${maxTokens}`).toBe(0);
    expect(r.view?.collapsed ?? 0, "the smallest outline opens nothing").toBeLessThanOrEqual(2);
    expect(saysUnfit, `${real} tokens for a budget of ${maxTokens}, and the text does not say so`).toBe(true);
  }
  if (saysUnfit) {
    expect(r.view?.tokens ?? 0).toBeGreaterThan(maxTokens);
    expect(r.text).not.toMatch(/Shortened to fit/);
  }
  return real;
}

describe("outlines and budgets over random trees", () => {
  it("keep the full plan's records, print what the full rendering prints, and count what they hide", () => {
    fc.assert(
      fc.property(snapshotArb, viewArb, (snap, view) => checkSameObservation(snap, view)),
      { numRuns: RUNS },
    );
  });

  it("stay within the budget by the real o200k count, give or take the estimator's error, or say they could not", () => {
    fc.assert(
      fc.property(snapshotArb, fc.integer({ min: MIN_MAX_TOKENS, max: 1500 }), (snap, budget) => {
        checkBudget(snap, budget);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("outlines and budgets over the fixture trees", () => {
  const dir = join(import.meta.dirname, "..", "fixtures");
  const fixtures = readdirSync(dir).filter((f) => f.endsWith(".json"));
  for (const file of fixtures) {
    it(file, () => {
      const snap = JSON.parse(readFileSync(join(dir, file), "utf8")) as RawSnapshot;
      const wholes = wholeOf(snap);
      for (const view of [{ skeleton: true }, { depth: 1 }, { depth: 3 }] as ViewOptions[])
        checkSameObservation(snap, view, wholes);
      for (const maxTokens of [100, 300, 500, 1200]) {
        checkSameObservation(snap, { maxTokens }, wholes);
        const real = checkBudget(snap, maxTokens);
        // The fixtures are real windows: their smallest outline fits every budget here, but for 100
        // tokens, which a long title's tree header, focus footer and closing line can pass (the
        // budget keeps the tree style, issue 33 §6): there, it says it could not fit.
        const said = (render(snap, { maxTokens }).text.split("\n").at(-1) ?? "").startsWith("(Could not fit");
        if (maxTokens === 100 && said) continue;
        expect(real, `${file} at ${maxTokens}`).toBeLessThanOrEqual(maxTokens * (1 + TOKEN_ESTIMATE_ERROR));
      }
    });
  }
});
