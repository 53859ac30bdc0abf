/**
 * npm run demo: the main job. Brings up a headless desktop (Xvfb, a session
 * bus, AT-SPI) in a temporary HOME, starts gtk3-widget-factory, takes a real
 * snapshot of it, prints the text and writes the screenshot PNG, then tears
 * down only what it started.
 *
 *   npm run demo [-- --style compact] [-- --out file.png]
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { snapshot } from "../lib/observe/desktop.js";
import { gtkWidgetFactory, startDesktop } from "./desktop.mjs";

const { values } = parseArgs({
  options: {
    style: { type: "string", default: "tree" },
    out: { type: "string", default: "axsnap-demo.png" },
  },
});
const style = values.style === "compact" ? "compact" : "tree";
const out = resolve(values.out ?? "axsnap-demo.png");

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
try {
  const app = await gtkWidgetFactory(desktop);
  console.error(
    `demo: headless desktop ${desktop.display}, gtk3-widget-factory pid ${app.pid} ready in ${app.readyMs} ms\n`,
  );
  const snap = await snapshot({ app: "gtk3-widget-factory", style });
  console.log(snap.text);
  if (snap.screenshot) {
    writeFileSync(out, snap.screenshot.data);
    const s = snap.screenshot;
    console.error(
      `\ndemo: screenshot ${out}: ${s.pixelWidth}×${s.pixelHeight} px, ${(s.data.length / 1024).toFixed(0)} KB, ` +
        `${s.scale.toFixed(3)} px per point, window origin ${s.windowOrigin.x},${s.windowOrigin.y}`,
    );
  }
  console.error(
    `demo: snapshot ${snap.id}: ${snap.records.length} elements printed of ${snap.nodesObserved} read, ` +
      `${snap.timings.totalMs.toFixed(0)} ms (walk ${snap.timings.walkMs?.toFixed(0)} ms)`,
  );
  await snap.release();
} finally {
  await desktop.stop();
}
