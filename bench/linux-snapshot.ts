/**
 * bench/linux-snapshot: one run, one running gtk3-widget-factory, three ways
 * to read it, side by side:
 *   - axsnap's full snapshot (walk + render, no screenshot), through the public API;
 *   - a pyatspi walk reading the same fields (Debian's python3-pyatspi, /usr/bin/python3);
 *   - one org.a11y.atspi.Cache.GetItems call, the floor.
 * Then the event loop's delay while snapshots run back to back, and capture +
 * encode of a 1280×800 window (Chromium) and the encodes used.
 * Targets (issue 3): axsnap ≤ 0.2× pyatspi; event-loop delay p99 < 20 ms.
 *
 *   node scripts/desktop.mjs run -- npx tsx bench/linux-snapshot.ts   (or: npm run bench:linux)
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { desktopBackend, snapshot } from "../lib/desktop.js";
import { chromium, fileUrl, gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";
import { measureGetItems, median } from "./getitems_floor.js";

const RUNS = Number(process.env.RUNS ?? 20);
const ms = (x: number) => `${x.toFixed(1)} ms`;

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
try {
  const gtk = await gtkWidgetFactory(desktop);
  for (let i = 0; i < 3; i++) await (await snapshot({ app: gtk.pid, screenshot: false })).release();

  const axsnap: number[] = [];
  let printed = 0;
  let observed = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const s = await snapshot({ app: gtk.pid, screenshot: false });
    axsnap.push(performance.now() - t0);
    printed = s.records.length;
    observed = s.nodesObserved;
    await s.release();
  }

  const py = spawnSync(
    "/usr/bin/python3",
    [join(import.meta.dirname, "pyatspi_walk.py"), "gtk3-widget-factory", String(RUNS)],
    {
      env: { ...process.env, ...desktop.env },
      encoding: "utf8",
      timeout: 300_000,
    },
  );
  if (py.status !== 0) throw new Error(`pyatspi walk failed: ${py.stderr}`);
  const pyResult = JSON.parse(py.stdout.trim().split("\n").at(-1)!) as { nodes: number; ms: number[] };

  const floor = await measureGetItems("gtk3-widget-factory", RUNS, desktop.env);

  const a = median(axsnap);
  const p = median(pyResult.ms);
  const f = median(floor.ms);
  console.log(
    `gtk3-widget-factory, ${RUNS} runs each, medians (node ${process.version}, ${process.platform}-${process.arch})\n`,
  );
  console.log(
    `  axsnap snapshot (walk + render)  ${ms(a).padStart(10)}   ${observed} elements read, ${printed} printed`,
  );
  console.log(`  pyatspi walk (same fields)       ${ms(p).padStart(10)}   ${pyResult.nodes} elements`);
  console.log(`  Cache.GetItems (floor)           ${ms(f).padStart(10)}   ${floor.items} items in one call`);
  console.log(
    `\n  axsnap / pyatspi = ${(a / p).toFixed(2)}×  (target ≤ 0.20× → ${a / p <= 0.2 ? "met" : "NOT met"})`,
  );
  console.log(`  axsnap / floor   = ${(a / f).toFixed(1)}×`);

  // The event loop while snapshots (every other one with a screenshot) run back to back for 3 s.
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const t1 = performance.now();
  let n = 0;
  while (performance.now() - t1 < 3000) {
    const s = await snapshot({ app: gtk.pid, screenshot: n % 2 === 0 });
    await s.release();
    n++;
  }
  h.disable();
  const p99 = h.percentile(99) / 1e6;
  console.log(
    `\n  event-loop delay p99 ${ms(p99)} over ${n} snapshots  (target < 20 ms → ${p99 < 20 ? "met" : "NOT met"})`,
  );
  await gtk.stop();

  // Capture + encode: a 1280×800 Chromium window (its frame, with the page).
  const web = await chromium(desktop, fileUrl(join(import.meta.dirname, "../test/pages/form.html")), {
    windowName: "axsnap form",
  });
  const backend = await desktopBackend();
  const capture: number[] = [];
  const encode: number[] = [];
  let encodes = 0;
  let size = "";
  for (let i = 0; i < 10; i++) {
    const r = await backend.snapshot({
      app: web.pid,
      maxNodes: 50,
      maxDepth: 2,
      deadlineMs: 5000,
      screenshot: true,
    });
    await backend.release(r.handles);
    if (!r.screenshot) throw new Error(`no screenshot: ${JSON.stringify(r.raw.walk.notes)}`);
    capture.push(r.screenshot.captureMs);
    encode.push(r.screenshot.encodeMs);
    encodes = Math.max(encodes, r.screenshot.encodes);
    size = `${r.window.frame.w}×${r.window.frame.h} window → ${r.screenshot.pixelWidth}×${r.screenshot.pixelHeight} px, ${(r.screenshot.png.length / 1024).toFixed(0)} KB`;
  }
  console.log(
    `\n  capture ${ms(median(capture))} + encode ${ms(median(encode))} (median of 10; ${size}; at most ${encodes} encode${encodes === 1 ? "" : "s"})`,
  );
  await web.stop();
} finally {
  await desktop.stop();
}
