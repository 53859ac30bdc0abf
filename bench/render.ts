/**
 * bench/render: render time and token cost of the two styles.
 *   npm run bench:render
 * Prints, for a 1,200-node window and the 10,000-row table fixture: median and
 * p95 render time (validation included) over many runs, and o200k tokens per
 * printed element for the tree and compact styles, beside the targets of the
 * foundation issue (compact ≤ 0.6× tree tokens) and of issue 19 (median < 1.5 ms at 1,200 nodes).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { render } from "../lib/index.js";
import type { RawSnapshot } from "../lib/model/model.js";
import { mixedWindow } from "./trees.js";

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, i)]!;
}

function time(snap: RawSnapshot, style: "tree" | "compact", runs: number): { median: number; p95: number } {
  // Warm up until the JIT has optimised the renderer: an agent process renders many snapshots.
  for (let i = 0; i < 300; i++) render(snap, { style });
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    render(snap, { style });
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { median: percentile(samples, 50), p95: percentile(samples, 95) };
}

function countNodes(snap: RawSnapshot): number {
  let n = 0;
  const stack = [snap.root];
  while (stack.length) {
    const x = stack.pop()!;
    n++;
    for (const c of x.children ?? []) stack.push(c);
  }
  return n;
}

// Trees load one at a time: the 90,000-node table held in the heap would slow every GC of the small case.
const cases: [string, () => RawSnapshot, number][] = [
  ["1,200-node window", () => mixedWindow(1200), 2000],
  [
    "10,000-row table",
    () => JSON.parse(readFileSync(join(import.meta.dirname, "../test/fixtures/table-10000.json"), "utf8")),
    200,
  ],
];

const fmt = (ms: number) => `${ms.toFixed(3)} ms`;
console.log(`node ${process.version}, ${process.platform}-${process.arch}\n`);
for (const [name, load, runs] of cases) {
  const snap = load();
  const tree = render(snap);
  const compact = render(snap, { style: "compact" });
  const tTree = time(snap, "tree", runs);
  const tCompact = time(snap, "compact", runs);
  const tokTree = encode(tree.text).length;
  const tokCompact = encode(compact.text).length;
  const n = tree.records.length;
  console.log(`${name}: ${countNodes(snap)} nodes, ${n} printed elements, ${runs} runs`);
  console.log(`  render time   tree    median ${fmt(tTree.median)}  p95 ${fmt(tTree.p95)}`);
  console.log(`                compact median ${fmt(tCompact.median)}  p95 ${fmt(tCompact.p95)}`);
  if (name.startsWith("1,200"))
    console.log(
      `                target: median < 1.5 ms → ${tTree.median < 1.5 && tCompact.median < 1.5 ? "met" : "NOT met"}`,
    );
  console.log(`  tokens (o200k) tree    ${tokTree} total, ${(tokTree / n).toFixed(2)} per element`);
  console.log(`                 compact ${tokCompact} total, ${(tokCompact / n).toFixed(2)} per element`);
  const ratio = tokCompact / tokTree;
  console.log(
    `                 compact/tree = ${ratio.toFixed(2)}× (target ≤ 0.60× → ${ratio <= 0.6 ? "met" : "NOT met"})\n`,
  );
}
