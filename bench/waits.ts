/**
 * bench/waits: what pending waitFor calls cost an agent's actions, on a
 * running gtk3-widget-factory (own headless desktop).
 *
 * Part 1: with N never-true waits pending on the app (N = 0, 1, 3, 10, 20),
 * CLICKS clicks on a check button by its ref, each with deadlineMs 2000 (the
 * fresh snapshot included, as an agent calls it): their latency (median and
 * max) and how many were refused, by code.
 *
 * Part 2: N never-true waits (N = 10, 40) with timeoutMs 2000, started
 * together: how far past timeoutMs each one settled (median and max); the
 * library promises at most 250 ms.
 *
 *   npx tsx bench/waits.ts          (CLICKS=6 by default; ROWS=0,1,3,10,20 the waits pending per row)
 */
import { setMaxListeners } from "node:events";
import { AxsnapError, createSession } from "../lib/index.js";
import { gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";
import { median } from "./getitems_floor.js";

const CLICKS = Number(process.env.CLICKS ?? 6);
const DEADLINE_MS = 2000;
const TIMEOUT_MS = 2000;
const NEVER = { text: "no line ever prints this 7f3a9c" };

const now = () => performance.now();

/** The enabled check button's index (its line says only its value). */
function warmBox(text: string): number {
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => /^\d+ check box checkbutton, Value: (on|off)$/.test(l));
  if (!line) throw new Error(`no check button:\n${text}`);
  return Number.parseInt(line, 10);
}
const ms = (x: number) => `${Math.round(x)} ms`;

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
try {
  const gtk = await gtkWidgetFactory(desktop);
  const app = gtk.pid;
  const session = createSession({ deadlineMs: 5000 });

  // Warm-up: the first click and snapshots of a fresh app are slower.
  const warm = await session.snapshot({ app, screenshot: false });
  await session.click(warmBox(warm.text), { deadlineMs: 10_000 });
  await session.click(warmBox(warm.text), { deadlineMs: 10_000 });
  // For scale: one walk of the window (what each wait's observation costs the worker).
  const walks: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = now();
    await session.snapshot({ app, screenshot: false });
    walks.push(now() - t0);
  }
  console.log(`one snapshot without screenshot: ${ms(median(walks))} (median of 5)`);
  console.log(
    `gtk3-widget-factory; node ${process.version}, ${process.platform}-${process.arch}; clicks with deadlineMs ${DEADLINE_MS}, ${CLICKS} per row\n`,
  );
  const widths = [12, 14, 12, 28];
  const row = (cells: string[]) => console.log(cells.map((c, i) => c.padStart(widths[i]!)).join("  "));
  row(["waits pending", "click median", "click max", "refused"]);
  for (const n of (process.env.ROWS ?? "0,1,3,10,20").split(",").map(Number)) {
    const stop = new AbortController();
    setMaxListeners(100, stop.signal);
    const waits = Array.from({ length: n }, () =>
      session.waitFor(app, NEVER, { timeoutMs: 600_000, signal: stop.signal }).catch(() => undefined),
    );
    // Every wait is in its loop (observed once, waiting for events) before the clicks start.
    await new Promise((r) => setTimeout(r, n === 0 ? 0 : 1500));
    const snap = await session.snapshot({ app, screenshot: false, deadlineMs: 30_000 });
    const box = { index: warmBox(snap.text) };
    const times: number[] = [];
    const refused = new Map<string, number>();
    for (let i = 0; i < CLICKS; i++) {
      const t0 = now();
      try {
        // A bare index: the latest snapshot of the app (each click's fresh snapshot is the next latest).
        await session.click(box.index, { deadlineMs: DEADLINE_MS });
      } catch (e) {
        const code = e instanceof AxsnapError ? e.code : String(e);
        refused.set(code, (refused.get(code) ?? 0) + 1);
        if (process.env.VERBOSE) console.log(`    ${code}: ${(e as Error).message}`);
      }
      times.push(now() - t0);
    }
    stop.abort();
    await Promise.all(waits);
    row([
      String(n),
      ms(median(times)),
      ms(Math.max(...times)),
      [...refused].map(([c, k]) => `${k}× ${c}`).join(", ") || "none",
    ]);
  }

  console.log(`\nnever-true waits started together, timeoutMs ${TIMEOUT_MS}: settled past timeoutMs`);
  row(["waits", "median past", "max past", "outcomes"]);
  for (const n of [10, 40]) {
    const past: number[] = [];
    const outcomes = new Map<string, number>();
    await Promise.all(
      Array.from({ length: n }, async () => {
        const t0 = now();
        try {
          await session.waitFor(app, NEVER, { timeoutMs: TIMEOUT_MS });
          outcomes.set("met", (outcomes.get("met") ?? 0) + 1);
        } catch (e) {
          const code = e instanceof AxsnapError ? e.code : String(e);
          outcomes.set(code, (outcomes.get(code) ?? 0) + 1);
        }
        past.push(now() - t0 - TIMEOUT_MS);
      }),
    );
    row([
      String(n),
      ms(median(past)),
      ms(Math.max(...past)),
      [...outcomes].map(([c, k]) => `${k}× ${c}`).join(", "),
    ]);
  }
  await session.close();
  await gtk.stop();
} finally {
  await desktop.stop();
}
