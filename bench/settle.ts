/**
 * bench/settle: how long waiting for an app to go quiet (change events, the
 * native waitQuiet) takes after an action, against today's post-action
 * timing (none: the fresh snapshot is taken as soon as the action returns),
 * and whether the snapshot then shows the finished UI.
 *
 *   gtk3-widget-factory  toggle a check button (AT-SPI action)
 *   galculator           switch mode (Paper / Basic / Scientific) from its View menu's radio items:
 *                        the app rebuilds its window after it answered the action
 *
 * For each quiet period: the settle time (action returned → quiet), and for
 * galculator whether the snapshot after quiet shows the new mode's layout,
 * beside a snapshot taken at once. Also the longest silence between two
 * events while an app is reacting (what a quiet period must exceed).
 *
 *   npx tsx bench/settle.ts          (RUNS=6 by default)
 */

import type { RawNode } from "../lib/model/model.js";
import { loadNative, type NativeBackend, type NativeWindow } from "../lib/native.js";
import { gtkWidgetFactory, startApp, startDesktop } from "../scripts/desktop.mjs";
import { median } from "./getitems_floor.js";

const RUNS = Number(process.env.RUNS ?? 6);
const QUIETS = [50, 100, 150];
const now = () => performance.now();

function nodes(root: RawNode): RawNode[] {
  const out: RawNode[] = [];
  const stack = [root];
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    stack.push(...(n.children ?? []));
  }
  return out;
}

const MODES = ["Paper Mode", "Basic Mode", "Scientific Mode"] as const;
/** Whether a galculator tree shows the finished layout of `mode`. */
function showsMode(root: RawNode, mode: (typeof MODES)[number]): boolean {
  const all = nodes(root);
  const toggles = all.filter((n) => n.role === "toggle button").length;
  const table = all.some((n) => n.role === "table");
  if (mode === "Paper Mode") return table && toggles === 0;
  if (mode === "Basic Mode") return !table && toggles >= 20 && toggles < 40;
  return !table && toggles >= 40;
}

/**
 * Arrival times of the app's events after `act` returned, until `silenceMs` pass without one (at most 5 s):
 * how many, when the first and last came, and the longest silence between two of them.
 */
async function eventGaps(b: NativeBackend, pid: number, act: () => Promise<void>, silenceMs = 1000) {
  let since = (await b.waitEvents(pid, 0, 0)).stamp;
  await act();
  const t0 = now();
  const times: number[] = [];
  while (now() - t0 < 5000) {
    const st = await b.waitEvents(pid, since, silenceMs);
    if (st.stamp === since) break;
    for (let i = since; i < st.stamp; i++) times.push(now() - st.msSinceLast - t0);
    since = st.stamp;
  }
  let maxGap = 0;
  for (let i = 1; i < times.length; i++) maxGap = Math.max(maxGap, times[i]! - times[i - 1]!);
  return { count: times.length, firstMs: times[0] ?? 0, lastMs: times.at(-1) ?? 0, maxGapMs: maxGap };
}

/** Synthetic clicks at `at`: action returned → first event, and → quiet (150 ms). */
async function pointerClicks(what: string, pid: number, window: NativeWindow, at: { x: number; y: number }) {
  const first: number[] = [];
  const settle: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const before = await b.waitEvents(pid, 0, 0);
    await b.pointer(window, { kind: "click", x: at.x, y: at.y }, 2000);
    const t = now();
    const st = await b.waitEvents(pid, before.stamp, 2000);
    first.push(now() - st.msSinceLast - t);
    const r = await b.waitQuiet(pid, { quietMs: 150, capMs: 3000 });
    settle.push(now() - t);
    if (r.settled !== "quiet") console.log(`  ${what}: ${r.settled}`);
  }
  console.log(`  synthetic click: first event after ${fmt(first)}; action → quiet (150 ms) ${fmt(settle)}`);
}

let b: NativeBackend;
const center = (n: RawNode) => ({ x: n.frame!.x + n.frame!.w / 2, y: n.frame!.y + n.frame!.h / 2 });

const fmt = (xs: number[]) => `median ${median(xs).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;

async function main() {
  const desktop = await startDesktop();
  Object.assign(process.env, desktop.env);
  try {
    b = new (loadNative().NativeBackend)("linux");
    await b.connect(5000);

    // gtk3-widget-factory: a check button.
    const gtk = await gtkWidgetFactory(desktop);
    const gs = await b.snapshot({
      app: gtk.pid,
      screenshot: false,
      deadlineMs: 5000,
      maxNodes: 2400,
      maxDepth: 64,
    });
    const check = nodes(gs.raw.root).find((n) => n.role === "check box" && n.actions?.length)!;
    await b.watch(gtk.pid);
    const click = () => b.doAction(check.handle!, check.actions![0]!, 2000);
    const gGaps = [];
    for (let i = 0; i < RUNS; i++) gGaps.push(await eventGaps(b, gtk.pid, click));
    console.log(
      `gtk3-widget-factory toggle: ${median(gGaps.map((g) => g.count))} events, first at ${fmt(gGaps.map((g) => g.firstMs))}, last at ${fmt(gGaps.map((g) => g.lastMs))}, longest silence between events ${fmt(gGaps.map((g) => g.maxGapMs))}`,
    );
    for (const quiet of QUIETS) {
      const settle: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        await click();
        const t = now();
        const r = await b.waitQuiet(gtk.pid, { quietMs: quiet, capMs: 3000 });
        settle.push(now() - t);
        if (r.settled !== "quiet") console.log(`  gtk quiet=${quiet}: ${r.settled}`);
      }
      console.log(`  quiet ${quiet} ms: action → settled ${fmt(settle)}`);
    }
    // The same toggle by a synthetic click (X11): the action returns before the app has handled it.
    await pointerClicks("gtk3-widget-factory check button", gtk.pid, gs.window, center(check));
    await gtk.stop();

    // galculator: mode switches.
    const cal = await startApp(desktop, "galculator", [], { name: "galculator" });
    await b.watch(cal.pid);
    const snap = () =>
      b.snapshot({ app: cal.pid, screenshot: false, deadlineMs: 5000, maxNodes: 2400, maxDepth: 64 });
    // Finds the mode's menu item; the returned function switches (the action alone, timed by the caller).
    const prepare = async (mode: string) => {
      const s = await snap();
      const item = nodes(s.raw.root).find((n) => n.role === "radio menu item" && n.title === mode)!;
      return async () => {
        try {
          await b.doAction(item.handle!, item.actions![0]!, 2000);
        } finally {
          await b.release(s.handles);
        }
      };
    };
    const switchTo = async (mode: string) => (await prepare(mode))();
    let m = 0;
    const next = () => MODES[m++ % MODES.length]!;
    const cGaps = [];
    for (let i = 0; i < RUNS; i++) {
      const mode = next();
      cGaps.push(await eventGaps(b, cal.pid, await prepare(mode)));
    }
    console.log(
      `galculator mode switch: ${median(cGaps.map((g) => g.count))} events, first at ${fmt(cGaps.map((g) => g.firstMs))}, last at ${fmt(cGaps.map((g) => g.lastMs))}, longest silence between events ${fmt(cGaps.map((g) => g.maxGapMs))}`,
    );
    // Today: the fresh snapshot right after the action.
    let okNow = 0;
    const snapNow: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const mode = next();
      await switchTo(mode);
      const t = now();
      const s = await snap();
      snapNow.push(now() - t);
      if (showsMode(s.raw.root, mode)) okNow++;
      await b.release(s.handles);
      await b.waitQuiet(cal.pid, { quietMs: 300, capMs: 5000 });
    }
    console.log(`  no wait (today): snapshot ${fmt(snapNow)}, new layout complete in ${okNow}/${RUNS}`);
    for (const quiet of QUIETS) {
      let ok = 0;
      const settle: number[] = [];
      const events: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const mode = next();
        await switchTo(mode);
        const t = now();
        const r = await b.waitQuiet(cal.pid, { quietMs: quiet, capMs: 5000 });
        settle.push(now() - t);
        events.push(r.events);
        const s = await snap();
        if (showsMode(s.raw.root, mode)) ok++;
        await b.release(s.handles);
        if (r.settled !== "quiet") console.log(`  galculator quiet=${quiet}: ${r.settled}`);
        await b.waitQuiet(cal.pid, { quietMs: 300, capMs: 5000 });
      }
      console.log(
        `  quiet ${quiet} ms: action → settled ${fmt(settle)} (${median(events)} events), new layout complete in ${ok}/${RUNS}`,
      );
    }
    {
      await switchTo("Basic Mode");
      await b.waitQuiet(cal.pid, { quietMs: 300, capMs: 5000 });
      const s = await snap();
      const seven = nodes(s.raw.root).find((n) => n.role === "toggle button" && n.title === "7" && n.frame);
      if (seven) await pointerClicks("galculator 7", cal.pid, s.window, center(seven));
      else console.log("  (no button 7 in galculator's current mode)");
      await b.release(s.handles);
    }
    await cal.stop();
    await b.close();
  } finally {
    await desktop.stop();
  }
}

await main();
