/**
 * bench/trace-overhead: what recording a trace costs an agent's loop (issue
 * 34, docs/trace.md). The observe loop of bench/observe-loop.ts on
 * gtk3-widget-factory (10 actions, each on a fresh app, own headless
 * desktop), run with tracing off, on without screenshots, and on with
 * screenshots, in alternating rounds so that a loaded machine slows all three
 * alike. Prints per step the median act ms of each mode side by side, the
 * ratio traced/untraced over all steps (target ≤ 1.10 without screenshots),
 * the recorder's own cost (timings.traceMs) and the bytes per step on disk.
 *
 *   npm run bench:trace          (npx tsx bench/trace-overhead.ts [rounds])
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ActionResult, createSession, readTrace, type Session, type Snapshot } from "../lib/index.js";
import { gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";

const ROUNDS = Number(process.argv[2] ?? 3);
const DEADLINE_MS = 8000;

type Mode = "off" | "on, no shots" | "on, shots";
const MODES: Mode[] = ["off", "on, no shots", "on, shots"];

interface Step {
  name: string;
  run(session: Session, ref: (re: RegExp) => string): Promise<ActionResult>;
}

const click = (re: RegExp, name: string): Step => ({ name, run: (s, ref) => s.click(ref(re)) });

// The gtk3-widget-factory task of bench/observe-loop.ts.
const steps: Step[] = [
  click(/^\d+ check box checkbutton, Value: off$/, "toggle a check button"),
  {
    name: "type into an entry",
    run: (s, ref) => s.typeText(" typed", { target: ref(/^\d+ text \(settable, string\) Value: entry$/) }),
  },
  click(/^\d+ radio button radiobutton, Value: off$/, "select a radio button"),
  {
    name: "set a spin button to 42",
    run: (s, ref) => s.setValue(ref(/^\d+ spin button \(settable, float\) Value: /), 42),
  },
  {
    name: "set a slider to 75",
    run: (s, ref) => s.setValue(ref(/^\d+ slider \(settable, float\) Value: 50$/), 75),
  },
  click(/^\d+ page tab \(selectable\) page 2$/, "select a notebook tab"),
  click(/^\d+ toggle button Menu, Value: off$/, "open the Menu popover"),
  click(/^\d+ check box Slide Pages, Value: off$/, "pick Slide Pages in the popover"),
  click(/^\d+ radio button Page 2, Value: off$/, "switch to Page 2 (mode switch)"),
  click(/^\d+ radio button Page 1, Value: off$/, "back to Page 1 (mode switch)"),
];

const median = (xs: number[]) => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

function lineOf(snap: Snapshot, re: RegExp): number | undefined {
  for (const raw of snap.text.split("\n")) {
    const line = raw.trim();
    const m = /^(\d+) /.exec(line);
    if (m && re.test(line)) return Number(m[1]);
  }
  return undefined;
}

function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return n;
}

interface Run {
  ms: (number | undefined)[];
  traceMs: number[];
  bytes?: number;
  steps?: number;
  failed: string[];
}

async function loop(pid: number, mode: Mode, dir: string): Promise<Run> {
  const path = join(dir, `${mode.replace(/\W+/g, "-")}-${Date.now()}.axtrace`);
  const session = createSession({
    deadlineMs: DEADLINE_MS,
    keepSnapshots: 8,
    ...(mode === "off" ? {} : { trace: { path, screenshots: mode === "on, shots" } }),
  });
  const run: Run = { ms: [], traceMs: [], failed: [] };
  try {
    let held = await session.snapshot({ app: pid, screenshot: false });
    for (const step of steps) {
      const ref = (re: RegExp) => {
        const i = lineOf(held, re);
        if (i === undefined) throw new Error(`no line matches ${re}`);
        return `@${held.id}:e${i}`;
      };
      const t0 = performance.now();
      try {
        const r = await step.run(session, ref);
        run.ms.push(performance.now() - t0);
        held = r.snapshot ?? (await session.snapshot({ app: pid, screenshot: false }));
      } catch (e) {
        run.ms.push(undefined);
        run.failed.push(`${step.name}: ${(e as Error).message}`);
        held = await session.snapshot({ app: pid, screenshot: false });
      }
    }
  } finally {
    await session.close();
  }
  if (mode !== "off") {
    const trace = readTrace(path);
    run.traceMs = trace.steps.map((s) => s.timings.traceMs ?? 0);
    run.bytes = bytesUnder(path);
    run.steps = trace.steps.length;
  }
  return run;
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
const dir = mkdtempSync(join(tmpdir(), "axsnap-bench-trace-"));
try {
  console.log(
    `bench/trace-overhead: gtk3-widget-factory, ${steps.length} actions, ${ROUNDS} rounds; ${new Date().toISOString()}`,
  );
  const runs = new Map<Mode, Run[]>(MODES.map((m) => [m, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of MODES) {
      // A fresh app each time: every mode starts from the same widget states.
      const app = await gtkWidgetFactory(desktop);
      try {
        runs.get(mode)!.push(await loop(app.pid, mode, dir));
      } finally {
        await app.stop();
      }
    }
  }
  const perStep = (mode: Mode, i: number) =>
    median(runs.get(mode)!.flatMap((r) => (r.ms[i] === undefined ? [] : [r.ms[i]!])));
  console.log(
    `\n${"#".padEnd(3)}${"step".padEnd(34)}${MODES.map((m) => m.padStart(14)).join("")}   (median act ms)`,
  );
  steps.forEach((s, i) => {
    console.log(
      `${String(i + 1).padEnd(3)}${s.name.padEnd(34)}${MODES.map((m) => perStep(m, i).toFixed(0).padStart(14)).join("")}`,
    );
  });
  const all = (mode: Mode) =>
    runs.get(mode)!.flatMap((r) => r.ms.filter((x): x is number => x !== undefined));
  const off = median(all("off"));
  for (const mode of MODES) {
    const rs = runs.get(mode)!;
    const bytes = rs.reduce((n, r) => n + (r.bytes ?? 0), 0);
    const count = rs.reduce((n, r) => n + (r.steps ?? 0), 0);
    const traceMs = rs.flatMap((r) => r.traceMs);
    const acted = rs.reduce((n, r) => n + r.ms.reduce<number>((m, x) => m + (x ?? 0), 0), 0);
    const own = traceMs.reduce((n, x) => n + x, 0);
    console.log(
      `${mode.padEnd(14)} median ${median(all(mode)).toFixed(1)} ms/step` +
        (mode === "off"
          ? ""
          : `, ratio ${(median(all(mode)) / off).toFixed(3)}${mode === "on, no shots" ? " (target ≤ 1.10)" : ""}` +
            `, traceMs median ${median(traceMs).toFixed(2)} (max ${Math.max(...traceMs).toFixed(2)}; ` +
            `${((100 * own) / acted).toFixed(2)}% of the act time)` +
            `, ${count > 0 ? Math.round(bytes / count) : 0} bytes/step (${count} steps incl. the first snapshot)`),
    );
    const failed = rs.flatMap((r) => r.failed);
    if (failed.length > 0) console.log(`  failed: ${failed.join("; ")}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await desktop.stop();
}
