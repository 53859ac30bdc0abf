/**
 * bench/observe-loop: the observe loop of an agent (issue 11, "Speed and
 * tokens"). A scripted 10-step task on gtk3-widget-factory and one on
 * galculator (own headless desktop), each step an action through a Session,
 * and per step and in total:
 *
 *   full tok    o200k tokens of the fresh snapshot's text (`result.snapshot.text`)
 *   read tok    o200k tokens of what an agent reads (`result.text`: the diff when shorter)
 *   ratio       read / full (target over the task: ≤ 0.2)
 *   act ms      the action's wall time, fresh snapshot included
 *   settled     `result.settled` (mode and ms) where the library reports it, else n/a
 *   lines       records of the fresh snapshot / of a snapshot of the same window 1 s later,
 *               HALF-BUILT when that snapshot has ≥ 3 elements the fresh one had not, or the
 *               fresh one has ≥ 10% fewer lines: the action returned before the app had
 *               finished building what it showed; else UNSETTLED when ≥ 10% of its
 *               elements changed within that second (moved, restyled: mid-transition)
 *   after 1s    the diff from the fresh snapshot to that one: +added -removed ~changed
 *               ("-": nothing landed after the action returned)
 *
 * and per app the time of a re-snapshot of an unchanged window (snapshot again
 * without acting; median of 10, with and without a screenshot), and whether
 * those re-snapshots diff empty.
 *
 * A step whose target the snapshot the agent holds does not show makes the
 * agent look again (a full snapshot, its tokens charged to both columns: an
 * agent reading full snapshots would have had to look again too) and try once
 * more. A step the API cannot do (or that fails) is reported as such and the
 * task goes on.
 *
 *   npm run bench:observe          (npx tsx bench/observe-loop.ts)
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import {
  type ActionResult,
  AxsnapError,
  createSession,
  type Session,
  type Snapshot,
  snapshot,
} from "../lib/index.js";
import { desktopBackend } from "../lib/observe/desktop.js";
import { type App, gtkWidgetFactory, startApp, startDesktop } from "../scripts/desktop.mjs";
import { cliLoop, type DoorStep, doorTable, mcpLoop } from "./observe-doors.js";

const RESNAPSHOTS = 10;
const STEADY_AFTER_MS = 1000;
const DEADLINE_MS = 8000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tokens = (text: string) => encode(text).length;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** The index of the first line matching `re` (matched against the line without indentation), or undefined. */
function find(snap: Snapshot, re: RegExp): number | undefined {
  for (const raw of snap.text.split("\n")) {
    const line = raw.trim();
    const m = /^(\d+) /.exec(line);
    if (m && re.test(line)) return Number(m[1]);
  }
  return undefined;
}

/** One step of a task: what it does, given the snapshot the agent holds (the last one it read). */
interface Step {
  name: string;
  run(session: Session, snap: Snapshot, ref: (re: RegExp) => string): Promise<ActionResult>;
}

/** A target the current snapshot does not show: the step cannot be done from it. */
class NotShown extends Error {}

interface Row {
  n: number;
  name: string;
  outcome: string;
  actMs?: number;
  settled?: string;
  full?: number;
  read?: number;
  readIsDiff?: boolean;
  fresh?: number;
  steady?: number;
  /** Elements the 1 s later snapshot has that the fresh one had not. */
  appeared?: number;
  /** The diff from the fresh snapshot to the one 1 s later: what landed after the action returned. */
  late?: string;
  /** Tokens of a full re-look when the held snapshot did not show the target. */
  relook?: number;
  halfBuilt?: boolean;
  /** Not half-built, but ≥ 10% of its elements changed within the next second (moved, restyled: mid-transition). */
  unsettled?: boolean;
  summary?: string;
}

/** The result's settle report, when the library gives one (issue 11 §2). */
function settledOf(r: ActionResult): string {
  const s = (r as ActionResult & { settled?: { mode: string; ms: number } }).settled;
  return s ? `${s.mode} ${Math.round(s.ms)}` : "n/a";
}

/**
 * Whether an event-maintained cache could serve a re-snapshot of the
 * unchanged window: the cost of asking the event stamp (what a cache hit
 * would cost) against a walk, and how often the stamp stayed put between two
 * looks 300 ms apart with nothing done (a hit needs it unchanged).
 */
async function eventCache(pid: number): Promise<string> {
  const backend = await desktopBackend();
  await backend.watch(pid, 3000);
  const checks: number[] = [];
  let still = 0;
  const n = 10;
  for (let i = 0; i < n; i++) {
    const a = await backend.waitEvents(pid, Number.MAX_SAFE_INTEGER, 0);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = performance.now();
    const b = await backend.waitEvents(pid, Number.MAX_SAFE_INTEGER, 0);
    checks.push(performance.now() - t0);
    if (b.stamp === a.stamp) still++;
  }
  return (
    `event cache: a stamp check costs ${median(checks).toFixed(2)} ms (median, n=${n}); the stamp stayed unchanged over ` +
    `${still}/${n} idle 300 ms gaps (bounds-changed is not counted, so an unchanged stamp cannot prove frames unchanged)`
  );
}

async function task(app: App, steps: Step[]): Promise<{ rows: Row[]; resnap: string[] }> {
  const session = createSession({ deadlineMs: DEADLINE_MS, keepSnapshots: 8 });
  const resnap: string[] = [];
  try {
    // The agent's first look (full, once), then the unchanged-window re-snapshots.
    let held = await session.snapshot({ app: app.pid, screenshot: false });
    resnap.push(`first snapshot: ${held.records.length} lines, ${tokens(held.text)} tokens`);
    for (const screenshot of [false, true]) {
      const times: number[] = [];
      let empty = 0;
      let prev = await session.snapshot({ app: app.pid, screenshot });
      for (let i = 0; i < RESNAPSHOTS; i++) {
        const t0 = performance.now();
        const next = await session.snapshot({ app: app.pid, screenshot });
        times.push(performance.now() - t0);
        if (next.changesSince(prev).summary.startsWith("no changes")) empty++;
        prev = next;
      }
      resnap.push(
        `re-snapshot of the unchanged window (${screenshot ? "with" : "no"} screenshot): median ${median(times).toFixed(1)} ms ` +
          `(min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}; n=${RESNAPSHOTS}); ` +
          `${empty}/${RESNAPSHOTS} diff empty`,
      );
    }
    resnap.push(await eventCache(app.pid));
    held = await session.snapshot({ app: app.pid, screenshot: false });

    const rows: Row[] = [];
    for (const [i, step] of steps.entries()) {
      const row: Row = { n: i + 1, name: step.name, outcome: "ok" };
      rows.push(row);
      const ref = (re: RegExp) => {
        const index = find(held, re);
        if (index === undefined) throw new NotShown(`no line matches ${re}`);
        return `@${held.id}:e${index}`;
      };
      let result: ActionResult;
      const t0 = performance.now();
      try {
        try {
          result = await step.run(session, held, ref);
        } catch (e) {
          if (!(e instanceof NotShown)) throw e;
          // Not in what the agent holds: it looks again (in full) and tries once more.
          held = await session.snapshot({ app: app.pid, screenshot: false });
          row.relook = tokens(held.text);
          result = await step.run(session, held, ref);
        }
      } catch (e) {
        row.actMs = performance.now() - t0;
        row.outcome =
          e instanceof NotShown
            ? `not possible: ${e.message}`
            : e instanceof AxsnapError
              ? `refused: ${e.code}: ${e.message}`
              : `failed: ${(e as Error).message}`;
        // The agent looks again and goes on.
        held = await session.snapshot({ app: app.pid, screenshot: false });
        continue;
      }
      row.actMs = performance.now() - t0;
      row.settled = settledOf(result);
      if (result.notes.length > 0) row.outcome = `ok (${result.notes.join("; ")})`;
      if (!result.snapshot || result.text === undefined) {
        row.outcome = `no fresh snapshot: ${result.notes.join("; ")}`;
        held = await session.snapshot({ app: app.pid, screenshot: false });
        continue;
      }
      const fresh = result.snapshot;
      row.full = tokens(fresh.text) + (row.relook ?? 0);
      row.read = tokens(result.text) + (row.relook ?? 0);
      row.readIsDiff = result.text !== fresh.text;
      if (result.changes) row.summary = result.changes.summary;
      row.fresh = fresh.records.length;
      // The same window a second later, observed aside (not the session's latest, not kept).
      await sleep(STEADY_AFTER_MS);
      const later = await snapshot({ app: app.pid, screenshot: false, deadlineMs: DEADLINE_MS });
      row.steady = later.records.length;
      const after = later.changesSince(fresh);
      row.appeared = after.added.length;
      row.late =
        after.added.length + after.removed.length + after.changed.length === 0
          ? "-"
          : `+${after.added.length} -${after.removed.length} ~${after.changed.length}`;
      row.halfBuilt = row.appeared >= 3 || row.steady - row.fresh >= row.steady * 0.1;
      row.unsettled = !row.halfBuilt && after.changed.length >= row.fresh * 0.1;
      await later.release();
      held = fresh;
    }
    return { rows, resnap };
  } finally {
    await session.close();
  }
}

function pad(s: string, n: number, right = false): string {
  if (s.length >= n) return s;
  return right ? s.padStart(n) : s.padEnd(n);
}

function table(title: string, rows: Row[]): { full: number; read: number } {
  const head = [
    "#",
    "step",
    "act ms",
    "settled",
    "full tok",
    "read tok",
    "ratio",
    "reads",
    "lines fresh/1s",
    "after 1s",
    "summary / outcome",
  ];
  const widths = [2, 34, 7, 8, 8, 8, 6, 5, 19, 11, 0];
  console.log(`\n${title}`);
  console.log(head.map((h, i) => pad(h, widths[i]!, i >= 2 && i <= 6)).join("  "));
  let full = 0;
  let read = 0;
  for (const r of rows) {
    if (r.full !== undefined && r.read !== undefined) {
      full += r.full;
      read += r.read;
    }
    const lines =
      r.fresh === undefined
        ? ""
        : `${r.fresh}/${r.steady}${r.halfBuilt ? " HALF-BUILT" : r.unsettled ? " UNSETTLED" : ""}`;
    const cells = [
      String(r.n),
      r.name,
      r.actMs === undefined ? "" : r.actMs.toFixed(0),
      r.settled ?? "",
      r.full === undefined ? "" : String(r.full),
      r.read === undefined ? "" : String(r.read),
      r.full && r.read !== undefined ? (r.read / r.full).toFixed(2) : "",
      r.readIsDiff === undefined ? "" : r.readIsDiff ? "diff" : "full",
      lines,
      r.late ?? "",
      [
        r.relook !== undefined ? `looked again (${r.relook} tok)` : "",
        r.outcome === "ok" ? "" : r.outcome,
        r.summary ?? "",
      ]
        .filter(Boolean)
        .join(" | "),
    ];
    console.log(cells.map((c, i) => pad(c, widths[i]!, i >= 2 && i <= 6)).join("  "));
  }
  const ok = rows.filter((r) => r.full !== undefined);
  const half = rows.filter((r) => r.halfBuilt).map((r) => r.n);
  const unsettled = rows.filter((r) => r.unsettled).map((r) => r.n);
  console.log(
    `total over ${ok.length}/${rows.length} steps with a fresh snapshot: full ${full} tok, read ${read} tok, ` +
      `ratio ${(read / full).toFixed(3)} (target ≤ 0.2); act ms median ${median(ok.map((r) => r.actMs!)).toFixed(0)}; ` +
      `half-built: ${half.length === 0 ? "none" : `steps ${half.join(", ")}`}; ` +
      `unsettled: ${unsettled.length === 0 ? "none" : `steps ${unsettled.join(", ")}`}`,
  );
  return { full, read };
}

// ---------------------------------------------------------------------------
// the tasks

const click = (re: RegExp, name: string): Step => ({ name, run: (s, _snap, ref) => s.click(ref(re)) });

const gtkSteps: Step[] = [
  click(/^\d+ check box checkbutton, Value: off$/, "toggle a check button"),
  {
    name: "type into an entry",
    run: (s, _snap, ref) =>
      s.typeText(" typed", { target: ref(/^\d+ text \(settable, string\) Value: entry$/) }),
  },
  click(/^\d+ radio button radiobutton, Value: off$/, "select a radio button"),
  {
    name: "set a spin button to 42",
    run: (s, _snap, ref) => s.setValue(ref(/^\d+ spin button \(settable, float\) Value: /), 42),
  },
  {
    name: "set a slider to 75",
    run: (s, _snap, ref) => s.setValue(ref(/^\d+ slider \(settable, float\) Value: 50$/), 75),
  },
  click(/^\d+ page tab \(selectable\) page 2$/, "select a notebook tab"),
  click(/^\d+ toggle button Menu, Value: off$/, "open the Menu popover"),
  click(/^\d+ check box Slide Pages, Value: off$/, "pick Slide Pages in the popover"),
  click(/^\d+ radio button Page 2, Value: off$/, "switch to Page 2 (mode switch)"),
  click(/^\d+ radio button Page 1, Value: off$/, "back to Page 1 (mode switch)"),
];

const button = (label: string) => new RegExp(`^\\d+ toggle button ${label.replace(/[+*/]/g, "\\$&")}, `);
const galcSteps: Step[] = [
  click(button("7"), "click 7"),
  click(button("+"), "click +"),
  click(button("5"), "click 5"),
  click(button("="), "click = (12)"),
  { name: "press key Escape (AC)", run: (s, snap) => s.pressKey("Escape", { app: snap.app.pid }) },
  click(button("9"), "click 9"),
  click(button("*"), "click *"),
  click(button("3"), "click 3"),
  click(/^\d+ menu \(selectable\) View$/, "open the View menu"),
  click(/^\d+ radio menu item \(selectable\) Paper Mode, Value: off$/, "pick Paper Mode (mode switch)"),
];

// The same tasks as the doors take them (bench/observe-doors.ts).
const press = (label: RegExp, name: string): DoorStep => ({
  name,
  target: label,
  tool: "click",
  cli: ["click", "{ref}"],
});
const gtkDoorSteps: DoorStep[] = [
  press(/^check box checkbutton, Value: off$/, "toggle a check button"),
  {
    name: "type into an entry",
    target: /^text \(settable, string\) Value: entry$/,
    tool: "type_text",
    args: { text: " typed" },
    cli: ["type", " typed", "--into", "{ref}"],
  },
  press(/^radio button radiobutton, Value: off$/, "select a radio button"),
  {
    name: "set a spin button to 42",
    target: /^spin button \(settable, float\) Value: /,
    tool: "set_value",
    args: { value: 42 },
    cli: ["set-value", "{ref}", "42", "--number"],
  },
  {
    name: "set a slider to 75",
    target: /^slider \(settable, float\) Value: 50$/,
    tool: "set_value",
    args: { value: 75 },
    cli: ["set-value", "{ref}", "75", "--number"],
  },
  press(/^page tab \(selectable\) page 2$/, "select a notebook tab"),
  press(/^toggle button Menu, Value: off$/, "open the Menu popover"),
  press(/^check box Slide Pages, Value: off$/, "pick Slide Pages in the popover"),
  press(/^radio button Page 2, Value: off$/, "switch to Page 2 (mode switch)"),
  press(/^radio button Page 1, Value: off$/, "back to Page 1 (mode switch)"),
];
const galcKey = (label: string) => new RegExp(`^toggle button ${label.replace(/[+*/]/g, "\\$&")}, `);
const galcDoorSteps: DoorStep[] = [
  press(galcKey("7"), "click 7"),
  press(galcKey("+"), "click +"),
  press(galcKey("5"), "click 5"),
  press(galcKey("="), "click = (12)"),
  {
    name: "press key Escape (AC)",
    tool: "press_key",
    args: { key: "Escape" },
    cli: ["press", "Escape", "--app", "{app}"],
  },
  press(galcKey("9"), "click 9"),
  press(galcKey("*"), "click *"),
  press(galcKey("3"), "click 3"),
  press(/^menu \(selectable\) View$/, "open the View menu"),
  press(/^radio menu item \(selectable\) Paper Mode, Value: off$/, "pick Paper Mode (mode switch)"),
];

/** Each door's loop before (the full-state convention) and after (the defaults), each on a fresh app. */
async function doors(start: () => Promise<App>, steps: DoorStep[], title: string) {
  const env = desktop.env as Record<string, string>;
  const run = async <T>(f: (pid: number) => Promise<T>) => {
    const app = await start();
    try {
      return await f(app.pid);
    } finally {
      await app.stop();
    }
  };
  const mcpBefore = await run((pid) =>
    mcpLoop(pid, steps, ["--replies", "full", "--action-screenshots", "always"], env),
  );
  const mcpAfter = await run((pid) => mcpLoop(pid, steps, [], env));
  const cliBefore = await run((pid) => cliLoop(pid, steps, ["--full"], env));
  const cliAfter = await run((pid) => cliLoop(pid, steps, [], env));
  return () => {
    const m = doorTable(`${title} through MCP (SDK client, stdio)`, mcpBefore, mcpAfter);
    const c = doorTable(`${title} through the CLI (a process per command)`, cliBefore, cliAfter);
    const refusals = [...cliBefore, ...cliAfter].flatMap((r) => r.refusals);
    return { m, c, ambiguous: refusals.filter((code) => code === "AMBIGUOUS_TARGET").length };
  };
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
try {
  console.log(`bench/observe-loop: o200k tokens; ${new Date().toISOString()}`);
  const gtk = await gtkWidgetFactory(desktop);
  const g = await task(gtk, gtkSteps);
  await gtk.stop();
  const galc = await startApp(desktop, "galculator", [], { name: "galculator" });
  const c = await task(galc, galcSteps);
  await galc.stop();

  const gtkDoors = await doors(() => gtkWidgetFactory(desktop), gtkDoorSteps, "gtk3-widget-factory");
  const galcDoors = await doors(
    () => startApp(desktop, "galculator", [], { name: "galculator" }),
    galcDoorSteps,
    "galculator",
  );

  const a = table("gtk3-widget-factory", g.rows);
  for (const line of g.resnap) console.log(`  ${line}`);
  const b = table("galculator", c.rows);
  for (const line of c.resnap) console.log(`  ${line}`);
  const full = a.full + b.full;
  const read = a.read + b.read;
  console.log(
    `\nboth tasks: full ${full} tok, read ${read} tok, ratio ${(read / full).toFixed(3)} (target ≤ 0.2): ${
      read / full <= 0.2 ? "met" : "NOT met"
    }`,
  );
  const gd = gtkDoors();
  galcDoors();
  const ratio = gd.m.after / gd.m.before;
  console.log(
    `\ngtk3-widget-factory loop through MCP: ${gd.m.after} tok after vs ${gd.m.before} before, ratio ${ratio.toFixed(3)} (target ≤ 0.1): ${ratio <= 0.1 ? "met" : "NOT met"}`,
  );
  const cliRatio = gd.c.after / gd.c.before;
  console.log(
    `gtk3-widget-factory loop through the CLI: ${gd.c.after} tok after vs ${gd.c.before} before, ratio ${cliRatio.toFixed(3)} (target ≤ 0.3), AMBIGUOUS_TARGET refusals ${gd.ambiguous} (target 0): ${cliRatio <= 0.3 && gd.ambiguous === 0 ? "met" : "NOT met"}`,
  );
} finally {
  await desktop.stop();
}
