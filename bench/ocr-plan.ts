/**
 * bench/ocr-plan: what `ocr: "auto"` costs a snapshot of a named window, side by side in one run:
 *
 *   full plan   fullOcrPlan: one walk over the whole tree building regions and blanks
 *               (what every snapshot ran before the decision was split out)
 *   decision    planOcr, as a snapshot calls it: autoReadsPixels alone where auto reads nothing
 *
 * on the 1,200-node window of bench/trees.ts and the recorded windows of test/fixtures
 * (the video player, whose tree names nothing, is the one that reads: both columns build its plan).
 * Issue 20's target: 0 ms added to snapshots of named windows.
 *
 *   npm run bench:ocr-plan        (ROUNDS=200 samples of BATCH=50 calls each)
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RawNode, RawSnapshot } from "../lib/model/model.js";
import { fullOcrPlan, planOcr } from "../lib/observe/ocr/plan.js";
import { secureFieldsOf } from "../lib/render/secure.js";
import { mixedWindow } from "./trees.js";

const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 200));
const BATCH = Math.max(1, Number(process.env.BATCH ?? 50));

function countNodes(root: RawNode): number {
  let n = 0;
  const stack = [root];
  while (stack.length) {
    const x = stack.pop()!;
    n++;
    for (const c of x.children ?? []) stack.push(c);
  }
  return n;
}

/** Median µs per call; calls batched so the clock's resolution does not decide the answer. */
function perCall(fn: () => unknown): number {
  for (let i = 0; i < 500; i++) fn();
  const samples: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < BATCH; i++) fn();
    samples.push(((performance.now() - t0) * 1000) / BATCH);
  }
  samples.sort((a, b) => a - b);
  return samples[samples.length >> 1]!;
}

const fixtures = join(import.meta.dirname, "../test/fixtures");
const cases: [string, RawSnapshot][] = [
  ["1,200-node window (bench/trees.ts)", mixedWindow(1200)],
  ...readdirSync(fixtures)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f): [string, RawSnapshot] => [f, JSON.parse(readFileSync(join(fixtures, f), "utf8"))]),
];

const us = (x: number) => `${x.toFixed(2).padStart(8)} µs`;
console.log(`node ${process.version}, ${process.platform}-${process.arch}; median per call, ocr: "auto"\n`);
console.log(
  `${"tree".padEnd(36)} ${"nodes".padStart(6)}  ${"reads".padEnd(10)} ${"full plan".padStart(11)} ${"decision".padStart(11)}`,
);
for (const [name, raw] of cases) {
  // A snapshot judges its secure fields before OCR plans (lib/observe/desktop.ts), and OCR reuses the judgement.
  const secure = secureFieldsOf(raw, true);
  const plan = planOcr(raw, "auto", true, secure);
  const full = perCall(() => fullOcrPlan(raw, "auto", true, secure));
  const fast = perCall(() => planOcr(raw, "auto", true, secure));
  console.log(
    `${name.padEnd(36)} ${String(countNodes(raw.root)).padStart(6)}  ${(plan?.why ?? "nothing").padEnd(10)} ${us(full)} ${us(fast)}`,
  );
}
