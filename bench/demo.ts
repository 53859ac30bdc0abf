/**
 * npm run demo: the main job. Until a native backend lands there is no live
 * desktop to observe, so this renders recorded application trees and says so.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../lib/index.js";

console.log("axsnap demo: no native backend yet; rendering fixture trees modelled on real apps.\n");
for (const [file, style] of [
  ["gtk-widget-factory.json", "tree"],
  ["activity-monitor.json", "compact"],
] as const) {
  const raw = JSON.parse(readFileSync(join(import.meta.dirname, "../test/fixtures", file), "utf8"));
  const snap = createSnapshot({ raw, options: { style } });
  console.log(`--- ${file} (${style} style, snapshot ${snap.id}, ${snap.records.length} elements) ---`);
  console.log(snap.text);
  console.log();
}
