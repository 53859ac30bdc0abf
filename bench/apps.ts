/**
 * bench/apps: the apps computer-use benchmarks judge agents on (OSWorld's LibreOffice Calc,
 * Writer and Impress, GIMP, VLC, Thunderbird, Files, Chrome), side by side, each on its own
 * headless desktop, through the public API:
 *
 *   snapshot   median of 5 snapshots (no screenshot) after one warm-up, and the slowest
 *   tokens     o200k_base tokens of the text: the tree as printed, a skeleton, and maxTokens 1500
 *   click      one click round trip on a harmless element (a cell, a menu, a paragraph, a
 *              check box), its fresh snapshot included, then Escape
 *
 * Whatever fails prints as "failed: <why>" in its cell; the other apps still run. An app that
 * needs something to expose its tree gets it here (the GTK3 VCL plugin for LibreOffice, the GTK2
 * bridge modules for GIMP, Qt's accessibility switch for VLC, a fresh profile for Thunderbird).
 *
 *   npm run bench:apps                  (all)
 *   APPS=calc,writer npm run bench:apps (some: calc, writer, impress, gimp, vlc, thunderbird,
 *                                        nautilus, chromium)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { createSession, type FindQuery, type Session, type Snapshot } from "../lib/index.js";
import { type App, chromium, type Desktop, fileUrl, startApp, startDesktop } from "../scripts/desktop.mjs";
import { makeXlsx, officeDir, startOffice } from "../test/support/office.js";

interface Started {
  app: App;
  /** The pid that owns the windows (soffice.bin for LibreOffice). */
  pid: number;
  /** Steps an agent takes before the window of interest shows (Impress's template chooser). */
  prepare?: (session: Session) => Promise<void>;
}

interface Bench {
  key: string;
  label: string;
  start: (desktop: Desktop) => Promise<Started>;
  /** Harmless click targets, tried in order; the first that matches is clicked. */
  click: FindQuery[];
}

const RUNS = 5;
const START_MS = 180_000;

/** The desktop with extra environment for one app (startApp reads desktop.env). */
function withEnv(desktop: Desktop, env: Record<string, string>): Desktop {
  return { ...desktop, env: { ...desktop.env, ...env } } as Desktop;
}

const simple = async (desktop: Desktop, command: string, args: string[], windowName?: string) => {
  const app = await startApp(desktop, command, args, {
    ...(windowName ? { windowName } : {}),
    timeoutMs: START_MS,
  });
  return { app, pid: app.pid };
};

const BENCHES: Bench[] = [
  {
    key: "calc",
    label: "LibreOffice Calc",
    start: async (desktop) => {
      const dir = officeDir();
      const file = join(dir, "budget.xlsx");
      makeXlsx(file, [2, 3]);
      return startOffice(desktop, dir, "calc", "budget.xlsx", file);
    },
    click: [{ role: "table cell", name: "A2", exact: true }],
  },
  {
    key: "writer",
    label: "LibreOffice Writer",
    start: (desktop) => startOffice(desktop, officeDir(), "writer", "Untitled 1"),
    click: [{ role: "paragraph" }],
  },
  {
    key: "impress",
    label: "LibreOffice Impress",
    start: async (desktop) => {
      const office = await startOffice(desktop, officeDir(), "impress", "Untitled 1");
      return {
        ...office,
        // A fresh profile opens the template chooser first: closed as an agent would.
        prepare: async (session) => {
          const snap = await session.snapshot({ app: office.pid, screenshot: false });
          if (!/Select a Template/.test(snap.text)) return;
          const close = await session.find(office.pid, { role: "push button", name: "Close", exact: true });
          if (close.matches[0]) await session.click(close.matches[0].ref);
        },
      };
    },
    click: [{ role: "panel", name: "Slide 1", exact: true }],
  },
  {
    key: "gimp",
    label: "GIMP",
    // GIMP 2.10 is GTK2: its tree comes through the gail and atk-bridge modules.
    start: (desktop) =>
      simple(withEnv(desktop, { GTK_MODULES: "gail:atk-bridge" }), "gimp", ["-n", "-d", "-f", "-s"]),
    click: [{ role: "menu", name: "Colors", exact: true }, { role: "menu" }],
  },
  {
    key: "vlc",
    label: "VLC",
    start: (desktop) =>
      simple(withEnv(desktop, { QT_LINUX_ACCESSIBILITY_ALWAYS_ON: "1", QT_ACCESSIBILITY: "1" }), "vlc", [
        "--no-qt-privacy-ask",
        "-I",
        "qt",
      ]),
    click: [{ role: "menu", name: "Media" }, { role: "menu" }],
  },
  {
    key: "thunderbird",
    label: "Thunderbird",
    start: (desktop) => {
      const profile = mkdtempSync(join(tmpdir(), "axsnap-tb-"));
      return simple(withEnv(desktop, { GNOME_ACCESSIBILITY: "1" }), "thunderbird", [
        "--no-remote",
        "-profile",
        profile,
      ]);
    },
    click: [{ role: "menu" }, { role: "page tab" }, { role: "push button", name: "Cancel" }],
  },
  {
    key: "nautilus",
    label: "Files (Nautilus)",
    start: (desktop) => simple(desktop, "nautilus", ["--new-window"]),
    click: [{ role: "list item" }, { role: "table cell" }, { role: "push button" }],
  },
  {
    key: "chromium",
    label: "Chromium",
    start: async (desktop) => {
      const app = await chromium(desktop, fileUrl(join(import.meta.dirname, "../test/pages/form.html")), {
        timeoutMs: START_MS,
      });
      return { app, pid: app.pid };
    },
    click: [{ role: "check box" }, { role: "push button" }],
  },
];

interface Row {
  label: string;
  start: string;
  snapshot: string;
  tree: string;
  skeleton: string;
  budget: string;
  click: string;
}

const ms = (x: number) => `${Math.round(x)} ms`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const tokens = (s: Snapshot) => String(encode(s.text).length);
const why = (e: unknown) => {
  const m = e instanceof Error ? e.message : String(e);
  const code = (e as { code?: string }).code;
  // The first line, and the app's own first words when it said why it exited.
  const lines = m.split("\n").filter((l) => l.trim() !== "");
  const said = lines.length > 1 && /exited/.test(lines[0]!) ? `: ${lines[1]!.trim().slice(0, 60)}` : "";
  return `failed: ${code ? `${code} ` : ""}${lines[0]?.slice(0, 90) ?? ""}${said}`;
};

async function cell<T>(f: () => Promise<T>, show: (t: T) => string): Promise<string> {
  try {
    return show(await f());
  } catch (e) {
    return why(e);
  }
}

async function benchOne(b: Bench): Promise<Row> {
  const row: Row = {
    label: b.label,
    start: "",
    snapshot: "",
    tree: "",
    skeleton: "",
    budget: "",
    click: "",
  };
  let desktop: Desktop | undefined;
  let started: Started | undefined;
  const session = createSession();
  try {
    desktop = await startDesktop();
    Object.assign(process.env, desktop.env);
    const t0 = performance.now();
    try {
      started = await b.start(desktop);
      row.start = ms(performance.now() - t0);
    } catch (e) {
      row.start = why(e);
      for (const k of ["snapshot", "tree", "skeleton", "budget", "click"] as const) row[k] = "-";
      return row;
    }
    const pid = started.pid;
    const opts = { app: pid, screenshot: false } as const;
    if (started.prepare) await started.prepare(session).catch(() => undefined);
    // Warm-up: the first snapshot of an app also connects to it and builds its caches.
    const warm = await session.snapshot(opts).catch((e: unknown) => e);
    if (!(warm instanceof Object && "text" in warm)) {
      row.snapshot = why(warm);
      for (const k of ["tree", "skeleton", "budget", "click"] as const) row[k] = "-";
      return row;
    }
    row.snapshot = await cell(
      async () => {
        const times: number[] = [];
        let last: Snapshot | undefined;
        for (let i = 0; i < RUNS; i++) {
          const t = performance.now();
          last = await session.snapshot(opts);
          times.push(performance.now() - t);
        }
        return { times, last: last! };
      },
      ({ times, last }) =>
        `${ms(median(times))} (max ${ms(Math.max(...times))}${last.complete ? "" : `, cut by ${last.cutBy.join(", ")}`})`,
    );
    row.tree = await cell(() => session.snapshot(opts), tokens);
    row.skeleton = await cell(() => session.snapshot({ ...opts, skeleton: true }), tokens);
    row.budget = await cell(() => session.snapshot({ ...opts, maxTokens: 1500 }), tokens);
    row.click = await cell(
      async () => {
        for (const q of b.click) {
          const found = await session.find(pid, q);
          const m = found.matches[0];
          if (!m) continue;
          const t = performance.now();
          const r = await session.click(m.ref);
          const took = performance.now() - t;
          await session.pressKey("Escape", { app: pid, snapshot: false }).catch(() => undefined);
          return `${ms(took)} ${r.channel} ${r.delivery} (${m.role} ${m.name ?? ""})`.trim();
        }
        throw new Error(`nothing to click (${b.click.map((q) => q.role).join(", ")})`);
      },
      (s) => s,
    );
    return row;
  } catch (e) {
    for (const k of ["start", "snapshot", "tree", "skeleton", "budget", "click"] as const)
      if (!row[k]) row[k] = why(e);
    return row;
  } finally {
    await session.close().catch(() => undefined);
    await started?.app.stop().catch(() => undefined);
    await desktop?.stop().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const wanted = (process.env.APPS ?? "all").split(",").map((s) => s.trim());
  const chosen = BENCHES.filter((b) => wanted.includes("all") || wanted.includes(b.key));
  const unknown = wanted.filter((w) => w !== "all" && !BENCHES.some((b) => b.key === w));
  if (unknown.length > 0)
    throw new Error(
      `APPS: unknown ${unknown.join(", ")}; one or more of ${BENCHES.map((b) => b.key).join(", ")}`,
    );
  const rows: Row[] = [];
  for (const b of chosen) {
    process.stderr.write(`bench:apps: ${b.label}...\n`);
    const row = await benchOne(b);
    process.stderr.write(`  ${JSON.stringify(row)}\n`);
    rows.push(row);
  }
  const head = [
    "app",
    "start",
    `snapshot (median of ${RUNS})`,
    "tokens: tree",
    "skeleton",
    "maxTokens 1500",
    "click round trip",
  ];
  console.log(`| ${head.join(" | ")} |`);
  console.log(`|${head.map(() => "---").join("|")}|`);
  for (const r of rows)
    console.log(`| ${[r.label, r.start, r.snapshot, r.tree, r.skeleton, r.budget, r.click].join(" | ")} |`);
}

await main();
