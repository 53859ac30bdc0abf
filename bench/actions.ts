/**
 * bench/actions: the round trip of an action on a running gtk3-widget-factory
 * (own headless desktop): resolve + act + fresh snapshot, for a click
 * (toggling a check button by its index) and a setValue (an entry), and the
 * share of each stage.
 *
 * Stages are timed through the Session's own calls, as an agent would make them:
 *   resolve         session.resolve(index)
 *   act             session.click(index, { snapshot: false }) / session.setValue(..., { snapshot: false })
 *                   (which resolves again, confirms the identity landed, acts, and for
 *                   setValue reads the value back)
 *   fresh snapshot  session.snapshot({ app, deadlineMs }): what an action takes after
 *                   itself, screenshot included (the default)
 * and separately the whole call with its fresh snapshot on (what an agent pays).
 *
 *   npx tsx bench/actions.ts          (RUNS=20 by default)
 */

import { type ActionResult, createSession, type Snapshot } from "../lib/index.js";
import { liveObservation } from "../lib/observe/desktop.js";
import { gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";
import { median } from "./getitems_floor.js";

const RUNS = Number(process.env.RUNS ?? 20);
const WARMUP = 3;
const DEADLINE_MS = 5000;

const now = () => performance.now();
const ms = (x: number) => `${x.toFixed(1)} ms`;

function indexOf(snap: Snapshot, re: RegExp): number {
  for (const raw of snap.text.split("\n")) {
    const line = raw.trim();
    const m = /^(\d+) /.exec(line);
    if (m && re.test(line)) return Number(m[1]);
  }
  throw new Error(`no line matches ${re}:\n${snap.text}`);
}

interface Stages {
  resolve: number[];
  act: number[];
  snapshot: number[];
  whole: number[];
  /** The native primitive alone (doAction / setText on the held handle), for scale. */
  primitive: number[];
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
try {
  const gtk = await gtkWidgetFactory(desktop);
  const app = gtk.pid;
  const session = createSession({ deadlineMs: DEADLINE_MS });
  const first = await session.snapshot({ app, screenshot: false });
  const box = indexOf(first, /^\d+ check box checkbutton, Value: (on|off)$/);
  const entry = indexOf(first, /^\d+ text \(settable, string\) Value: entry$/);

  const check = (r: ActionResult, what: string, delivery: string) => {
    if (r.channel !== "semantic" || r.delivery !== delivery)
      throw new Error(`${what}: expected a semantic ${delivery} action, got ${JSON.stringify(r)}`);
  };

  async function measure(
    act: (i: number, snapshot: boolean) => Promise<ActionResult>,
    target: number,
    /** Runs the native primitive once; resolves to the time of that call alone. */
    primitive: (i: number) => Promise<number>,
  ): Promise<Stages> {
    const out: Stages = { resolve: [], act: [], snapshot: [], whole: [], primitive: [] };
    for (let i = 0; i < WARMUP; i++) await act(i, true);
    for (let i = 0; i < RUNS; i++) {
      const t0 = now();
      await session.resolve(target);
      const t1 = now();
      await act(i, false);
      const t2 = now();
      await session.snapshot({ app, deadlineMs: DEADLINE_MS });
      const t3 = now();
      out.resolve.push(t1 - t0);
      out.act.push(t2 - t1);
      out.snapshot.push(t3 - t2);
    }
    for (let i = 0; i < RUNS; i++) {
      const t0 = now();
      await act(i, true);
      out.whole.push(now() - t0);
    }
    for (let i = 0; i < RUNS; i++) out.primitive.push(await primitive(i));
    return out;
  }

  // An even number of clicks per loop leaves the check button as it was.
  const click = await measure(
    async (_i, snapshot) => {
      const r = await session.click(box, { snapshot });
      check(r, "click", "delivered_unverified");
      return r;
    },
    box,
    async () => {
      const snap = await session.snapshot({ app, screenshot: false });
      const live = liveObservation(snap)!;
      // Only the doAction is timed: the snapshot above just provides the handle.
      const t0 = now();
      await live.backend.doAction(snap.records[box]!.handle!, "click", DEADLINE_MS);
      return now() - t0;
    },
  );

  const setValue = await measure(
    async (i, snapshot) => {
      const r = await session.setValue(entry, `bench ${i} ${snapshot ? "whole" : "staged"}`, { snapshot });
      check(r, "setValue", "delivered_verified");
      return r;
    },
    entry,
    async (i) => {
      const snap = await session.snapshot({ app, screenshot: false });
      const live = liveObservation(snap)!;
      const t0 = now();
      await live.backend.setText(snap.records[entry]!.handle!, `primitive ${i}`, DEADLINE_MS);
      return now() - t0;
    },
  );

  // A fresh snapshot without the screenshot, for scale.
  const bare: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = now();
    await session.snapshot({ app, screenshot: false, deadlineMs: DEADLINE_MS });
    bare.push(now() - t0);
  }
  const shot = await session.snapshot({ app });

  console.log(
    `gtk3-widget-factory, ${RUNS} runs each (after ${WARMUP} warm-up), medians; node ${process.version}, ${process.platform}-${process.arch}`,
  );
  console.log(
    `window ${shot.window.frame.w}×${shot.window.frame.h}, ${shot.records.length} elements printed, screenshot ${shot.screenshot?.pixelWidth}×${shot.screenshot?.pixelHeight} px\n`,
  );
  const header = ["", "resolve", "act", "fresh snapshot", "sum of stages", "whole call"];
  const widths = [10, 16, 16, 18, 15, 12];
  const row = (cells: string[]) => console.log(cells.map((c, i) => c.padStart(widths[i]!)).join("  "));
  row(header);
  for (const [name, s] of [
    ["click", click],
    ["setValue", setValue],
  ] as const) {
    const r = median(s.resolve);
    const a = median(s.act);
    const n = median(s.snapshot);
    const sum = r + a + n;
    const pct = (x: number) => `${((100 * x) / sum).toFixed(0)}%`;
    row([
      name,
      `${ms(r)} ${pct(r).padStart(4)}`,
      `${ms(a)} ${pct(a).padStart(4)}`,
      `${ms(n)} ${pct(n).padStart(4)}`,
      ms(sum),
      ms(median(s.whole)),
    ]);
  }
  console.log(
    `\n  act includes its own resolve, the confirm-landed read and (setValue) the read-back;` +
      `\n  the native primitive alone: doAction ${ms(median(click.primitive))}, setText ${ms(median(setValue.primitive))}.` +
      `\n  fresh snapshot = with screenshot, as actions take it; without screenshot: ${ms(median(bare))}.`,
  );
  await session.close();
  await gtk.stop();
} finally {
  await desktop.stop();
}
