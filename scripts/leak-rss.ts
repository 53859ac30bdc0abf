/**
 * scripts/leak-rss: does the process grow while it takes and releases many
 * snapshots? Starts its own headless desktop with gtk3-widget-factory, takes
 * N snapshots (default 1000; first argument) through the public API,
 * alternating screenshot true/false and releasing each, and compares the
 * resident set size after a warm-up of 50 snapshots with the one at the end
 * (after a full GC when --expose-gc is on).
 *
 *   node --expose-gc --import tsx scripts/leak-rss.ts [N]
 *
 * stdout: one JSON line
 *   {snapshots, rssStartMB, rssEndMB, growthMB, perSnapshotKB, heapUsedStartMB, heapUsedEndMB, ms}
 * stderr: progress, the RSS every 200 snapshots.
 */
import { desktopBackend, snapshot } from "../lib/observe/desktop.js";
import { gtkWidgetFactory, startDesktop } from "./desktop.mjs";

const WARMUP = 50;
const REPORT_EVERY = 200;

const arg = process.argv[2];
const total = arg === undefined ? 1000 : Number(arg);
if (!Number.isInteger(total) || total <= WARMUP) {
  process.stderr.write(`leak-rss: the snapshot count must be an integer above ${WARMUP}, got ${arg}\n`);
  process.exit(2);
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc)
  process.stderr.write("leak-rss: global.gc is not exposed (run node with --expose-gc); RSS is noisier\n");

const MB = 1024 * 1024;
const round = (x: number, digits = 2) => Number(x.toFixed(digits));

/** Collects twice (finalizers of the first collection can free more), then lets the event loop settle. */
async function settle(): Promise<void> {
  if (gc) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
let exitCode = 0;
try {
  const gtk = await gtkWidgetFactory(desktop);
  process.stderr.write(`leak-rss: gtk3-widget-factory pid ${gtk.pid} ready in ${gtk.readyMs} ms\n`);

  let start: NodeJS.MemoryUsage | undefined;
  let startedAt = 0;
  let nodes = 0;
  let pngBytes = 0;
  for (let i = 1; i <= total; i++) {
    const s = await snapshot({ app: "gtk3-widget-factory", screenshot: i % 2 === 1 });
    nodes = s.nodesObserved;
    if (s.screenshot) pngBytes = s.screenshot.data.length;
    await s.release();
    if (i === WARMUP) {
      await settle();
      start = process.memoryUsage();
      startedAt = performance.now();
      process.stderr.write(
        `leak-rss: after ${i} warm-up snapshots rss ${round(start.rss / MB, 1)} MB, heapUsed ${round(start.heapUsed / MB, 1)} MB (${nodes} elements, png ${pngBytes} bytes)\n`,
      );
    } else if (i % REPORT_EVERY === 0) {
      // Settled like the start and end samples: otherwise a checkpoint measures
      // how much garbage V8 happens to hold (heapUsed swings 8-20 MB here), not growth.
      await settle();
      const m = process.memoryUsage();
      process.stderr.write(
        `leak-rss: ${i}/${total} rss ${round(m.rss / MB, 1)} MB, heapUsed ${round(m.heapUsed / MB, 1)} MB\n`,
      );
    }
  }
  const ms = performance.now() - startedAt;
  await settle();
  const end = process.memoryUsage();
  if (!start) throw new Error("unreachable: no warm-up measurement");
  const measured = total - WARMUP;
  const growth = end.rss - start.rss;
  const result = {
    snapshots: total,
    rssStartMB: round(start.rss / MB),
    rssEndMB: round(end.rss / MB),
    growthMB: round(growth / MB),
    perSnapshotKB: round(growth / 1024 / measured, 3),
    heapUsedStartMB: round(start.heapUsed / MB),
    heapUsedEndMB: round(end.heapUsed / MB),
    ms: Math.round(ms),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  await (await desktopBackend()).close();
} catch (error) {
  process.stderr.write(
    `leak-rss: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  exitCode = 1;
} finally {
  await desktop.stop();
}
process.exit(exitCode);
