/**
 * Issue 20, "0 ms added to snapshots of named windows": the auto decision
 * (autoReadsPixels, run on every snapshot) is the full plan's decision
 * (fullOcrPlan: one walk over the whole tree, building regions and blanks),
 * and planOcr, which asks the first before building the second, returns
 * exactly the full plan. Checked on the recorded windows and on random
 * trees made of the parts the rule looks at: self-drawn roles, names,
 * window controls, secure fields, frames partly or wholly off the window.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import { autoReadsPixels, fullOcrPlan, type OcrMode, planOcr } from "../../lib/observe/ocr/plan.js";
import { snapshotArb } from "../support/arbitrary.js";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 400);
const fixtures = join(import.meta.dirname, "..", "fixtures");

function agrees(raw: RawSnapshot): void {
  for (const secureNames of [true, false]) {
    expect(autoReadsPixels(raw, secureNames)).toBe(fullOcrPlan(raw, "auto", secureNames) !== undefined);
    for (const mode of ["auto", true, false] as OcrMode[])
      expect(planOcr(raw, mode, secureNames)).toEqual(fullOcrPlan(raw, mode, secureNames));
  }
}

const WIN = { x: 100, y: 50, w: 800, h: 600 };
const ROLES = [
  "canvas",
  "drawing area",
  "terminal",
  "embedded",
  "unknown",
  "AXUnknown",
  "image",
  "icon",
  "AXImage",
  "label",
  "push button",
  "AXButton",
  "password text",
  "text",
  "entry",
  "panel",
  "filler",
  "document web",
];
const NAMES = ["", " ", "Play", "Close", "minimize", "Password", "PIN", "Volume"];
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
// Around the window's edges and the thresholds: 5% of 800×600 is 24,000 points², MIN_READABLE 8.
const frame = fc.record({
  x: fc.integer({ min: -300, max: 1000 }),
  y: fc.integer({ min: -300, max: 800 }),
  w: fc.oneof(fc.integer({ min: 0, max: 900 }), fc.constantFrom(7, 8, 200)),
  h: fc.oneof(fc.integer({ min: 0, max: 700 }), fc.constantFrom(7, 8, 120)),
});
const fields = fc.record({
  role: fc.constantFrom(...ROLES),
  subrole: maybe(fc.constantFrom("AXSecureTextField", "AXCloseButton", "AXZoomButton")),
  title: maybe(fc.constantFrom(...NAMES)),
  description: maybe(fc.constantFrom(...NAMES)),
  value: maybe(fc.oneof(fc.constantFrom(...NAMES), fc.integer())),
  secure: fc.boolean(),
  frame: maybe(frame),
});
const { node } = fc.letrec<{ node: RawNode }>((tie) => ({
  node: fc
    .tuple(fields, fc.oneof({ depthSize: "small" }, fc.constant([]), fc.array(tie("node"), { maxLength: 5 })))
    .map(([f, children]) => {
      const n: RawNode = { role: f.role };
      if (f.subrole !== undefined) n.subrole = f.subrole;
      if (f.title !== undefined) n.title = f.title;
      if (f.description !== undefined) n.description = f.description;
      if (f.value !== undefined) n.value = f.value;
      if (f.secure) n.states = { secure: true };
      if (f.frame) n.frame = { ...f.frame, x: f.frame.x + WIN.x, y: f.frame.y + WIN.y };
      if (children.length > 0) n.children = children as RawNode[];
      return n;
    }),
}));
const windowArb = fc
  .tuple(
    fc.array(node, { maxLength: 8 }),
    // A narrow window: there an element 7 points wide can cover 5% of it and still be too thin to read.
    fc.constantFrom(WIN, { ...WIN, w: 120 }, { ...WIN, w: 7 }, { ...WIN, h: 8 }),
    fc.constantFrom("frame", "password text"),
  )
  .map(
    ([children, win, role]): RawSnapshot =>
      ({
        version: 1,
        platform: "linux",
        app: { name: "demo", pid: 9 },
        window: { title: "Demo", frame: win, scale: 1 },
        root: { role, title: "Demo", frame: win, children },
        walk: { ended: "complete", nodesObserved: 1 },
      }) as RawSnapshot,
  );

describe("ocr auto: the fast decision is the full plan's", () => {
  it("on every recorded window", () => {
    const files = readdirSync(fixtures).filter((f) => f.endsWith(".json"));
    expect(files.length).toBeGreaterThan(8);
    for (const f of files) agrees(JSON.parse(readFileSync(join(fixtures, f), "utf8")) as RawSnapshot);
  });

  it("on random windows of self-drawn, named, secure and off-window elements", () => {
    let reads = 0;
    fc.assert(
      fc.property(windowArb, (raw) => {
        agrees(raw);
        if (autoReadsPixels(raw)) reads++;
      }),
      { numRuns: RUNS * 5 },
    );
    // Both answers came up often enough for the agreement to mean something.
    expect(reads).toBeGreaterThan(RUNS / 5);
    expect(reads).toBeLessThan(RUNS * 5 - RUNS / 5);
  });

  it("on the renderer's random trees (both platforms' roles, hostile text, odd frames)", () => {
    fc.assert(
      fc.property(snapshotArb, (raw) => agrees(raw)),
      { numRuns: RUNS },
    );
  });
});
