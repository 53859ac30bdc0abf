/**
 * Writes docs/marked-screenshot.png, the marked screenshot docs/observe.md shows:
 * a real snapshot of gtk3-widget-factory on a headless desktop with
 * `screenshot: { marks: true }`, shrunk for the repository (longest side
 * 800 px, the size budget's own downscale). Also measures the encode with and
 * without marks on the same captured pixels.
 *
 *   npx tsx scripts/marks-demo.ts [--out docs/marked-screenshot.png] [--runs 20]
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadNative } from "../lib/native.js";
import { desktopBackend, snapshot } from "../lib/observe/desktop.js";
import { encodeMarked } from "../lib/observe/marks.js";
import { createSnapshot } from "../lib/observe/snapshot.js";
import { gtkWidgetFactory, startDesktop } from "./desktop.mjs";

const { values } = parseArgs({
  options: {
    out: { type: "string", default: "docs/marked-screenshot.png" },
    runs: { type: "string", default: "20" },
    side: { type: "string", default: "800" },
  },
});
const out = resolve(values.out ?? "docs/marked-screenshot.png");
const runs = Math.max(1, Number(values.runs) || 20);
const side = Math.max(200, Number(values.side) || 800);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
try {
  const app = await gtkWidgetFactory(desktop);
  // The public path once, as an agent calls it.
  const marked = await snapshot({ app: app.pid, screenshot: { marks: true } });
  const shot = marked.screenshot;
  console.error(
    `marks-demo: snapshot with marks: ${marked.records.length} printed elements, ` +
      `${shot?.marks?.length ?? 0} labels (${shot?.marks?.filter((m) => m.overlaps).length ?? 0} overlapping), ` +
      `${shot?.pixelWidth}x${shot?.pixelHeight} px, ${((shot?.data.length ?? 0) / 1024).toFixed(0)} KB`,
  );
  await marked.release();

  // The same captured pixels encoded with and without marks, `runs` times each.
  const backend = await desktopBackend();
  const kept = await backend.snapshot({
    app: app.pid,
    maxNodes: 4800,
    maxDepth: 64,
    deadlineMs: 10_000,
    screenshot: true,
    keepPixels: true,
  });
  const pixels = kept.pixels;
  if (!pixels) throw new Error(`no pixels: ${kept.raw.walk.notes?.join("; ")}`);
  const snap = createSnapshot({ raw: kept.raw });
  const native = loadNative();
  const plainMs: number[] = [];
  const markedMs: number[] = [];
  let plain = await encodeMarked(native, pixels, []);
  let withMarks = await encodeMarked(native, pixels, snap.records);
  for (let i = 0; i < runs; i++) {
    plain = await encodeMarked(native, pixels, []);
    plainMs.push(plain.encodeMs);
    withMarks = await encodeMarked(native, pixels, snap.records);
    markedMs.push(withMarks.encodeMs);
  }
  console.error(
    `marks-demo: ${pixels.width}x${pixels.height} captured; median of ${runs} encodes: ` +
      `without marks ${median(plainMs).toFixed(1)} ms, ${plain.png.length} B, ${plain.encodes} encode(s); ` +
      `with ${withMarks.marks.length} marks ${median(markedMs).toFixed(1)} ms, ${withMarks.png.length} B, ${withMarks.encodes} encode(s)`,
  );

  // The page's image: the same marks at the size a small budget gives.
  const small = await encodeMarked(native, pixels, snap.records, { maxSide: side });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, small.png);
  console.error(
    `marks-demo: wrote ${out}: ${small.pixelWidth}x${small.pixelHeight} px, ${(small.png.length / 1024).toFixed(0)} KB`,
  );
  await backend.release(kept.handles);
  await backend.close();
} finally {
  await desktop.stop();
}
