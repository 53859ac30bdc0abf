/**
 * bench/hit-test: what judging a point by the live UI costs (issue 18 item 2).
 * On its own headless desktop, Chromium with test/pages/moving.html and
 * gtk3-widget-factory; for one button of each:
 *   elementAt, as clickAt asks it  the live hit test with the snapshot's printed handles as stopAt
 *                                  (the climb ends at the first printed element)
 *   elementAt, full climb          stopAt empty: up to the window
 *   clickAt (snapshot: false)      the whole call (hit tests before and after the pointer arrives,
 *                                  the wait for the app to react to it, guards, input), for scale
 *
 *   npx tsx bench/hit-test.ts          (RUNS=20 by default)
 */

import { createSession, type ElementRecord, type Session, type Snapshot } from "../lib/index.js";
import { liveObservation } from "../lib/observe/desktop.js";
import { chromium, fileUrl, gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";
import { median } from "./getitems_floor.js";

const RUNS = Number(process.env.RUNS ?? 20);
const now = () => performance.now();

async function until(s: Session, app: number, test: (snap: Snapshot) => boolean): Promise<Snapshot> {
  const end = Date.now() + 30_000;
  for (;;) {
    const snap = await s.snapshot({ app, deadlineMs: 8000 });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed:\n${snap.text}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function measure(label: string, s: Session, snap: Snapshot, target: ElementRecord): Promise<void> {
  const live = liveObservation(snap)!;
  const { x, y } = target.clickPoint!;
  const printed = snap.records.flatMap((r) => (r.handle === undefined ? [] : [r.handle]));
  const times = { stop: [] as number[], full: [] as number[], click: [] as number[] };
  let depth = 0;
  for (let i = 0; i < RUNS + 2; i++) {
    let t = now();
    const a = await live.backend.elementAt(live.window, x, y, printed, 5000);
    const stop = now() - t;
    await live.backend.release(a!.handles);
    t = now();
    const b = await live.backend.elementAt(live.window, x, y, [], 5000);
    const full = now() - t;
    depth = b!.ancestors.length + 1;
    await live.backend.release(b!.handles);
    const shot = snap.screenshot!;
    t = now();
    await s.clickAt((x - shot.windowOrigin.x) * shot.scale, (y - shot.windowOrigin.y) * shot.scale, {
      of: snap,
      snapshot: false,
    });
    const click = now() - t;
    if (i < 2) continue; // warm-up
    times.stop.push(stop);
    times.full.push(full);
    times.click.push(click);
  }
  const f = (xs: number[]) => `${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)})`;
  console.log(`${label}: ${target.roleText} ${target.title} — chain of ${depth} to the window`);
  console.log(`  elementAt, as clickAt asks it   ${f(times.stop)}`);
  console.log(`  elementAt, full climb           ${f(times.full)}`);
  console.log(`  clickAt (snapshot: false)       ${f(times.click)}`);
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
const web = await chromium(desktop, fileUrl("test/pages/moving.html"), { windowName: "axsnap moving" });
const gtk = await gtkWidgetFactory(desktop);
const s = createSession();
try {
  const page = await until(s, web.pid, (x) => x.text.includes("push button Keep"));
  await measure("Chromium", s, page, page.records.find((r) => r.title === "Keep")!);
  const g = await until(s, gtk.pid, (x) => /radio button Page 1/.test(x.text));
  await measure("GTK", s, g, g.records.find((r) => r.roleText === "radio button" && r.title === "Page 1")!);
} finally {
  await s.close();
  await desktop.stop();
}
