/**
 * bench/cli-startup: what one `axsnap` command costs from the shell (issue 19, "Costs"), beside what
 * node itself costs to start and what the snapshot costs inside the library. One run, one headless
 * desktop with gtk3-widget-factory, the built CLI (dist/cli.js: run `npm run build` first), medians
 * of RUNS runs each, taken round-robin so a load spike on the machine hits every row alike:
 *
 *   node -e 0                  node's own start and exit: the floor
 *   axsnap --version           the CLI's start: what it loads before it can answer anything
 *   usage error                a refused command line (exit 2)
 *   addon + connect            a process that loads the addon and connects to the bus, nothing else
 *   addon + connect + walk     the same, then one walk of the window: the first walk of a process is
 *                              cold (the app's peer connection and bulk cache), about twice a warm one
 *   snapshot, own process      the whole command run in its own process (AXSNAP_DAEMON=off): start,
 *                              connect, find the app, walk, render, store
 *   axsnap snapshot --app …    the command as users run it: handed to the warm process of this
 *                              desktop (lib/doors/cli/daemon.ts), started by the untimed first round
 *   in-process snapshot        snapshot() in this process, backend warm: the library's own share
 *
 * The rows between say where a command's time goes: node's start, the CLI's modules, the addon and
 * the bus, the cold walk (which the CLI starts while its modules load: lib/observe/desktop-backend.ts), and
 * what is left (rendering once with cold code, storing, printing).
 *
 * Target: the snapshot command ≤ 2× `node -e 0`.
 *
 *   npm run bench:cli          (RUNS=15; CLI=/other/dist/cli.js compares another build)
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";
import { median } from "./getitems_floor.js";

const RUNS = Math.max(1, Number(process.env.RUNS ?? 15));
const root = join(import.meta.dirname, "..");
const cli = process.env.CLI ?? join(root, "dist", "cli.js");
if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\` first`);

const desktop = await startDesktop();
const app = await gtkWidgetFactory(desktop);
const state = mkdtempSync(join(tmpdir(), "axsnap-bench-cli-"));
const env = { ...process.env, ...desktop.env, XDG_STATE_HOME: state };
// The in-process row runs in this process: the addon must find the desktop's bus.
Object.assign(process.env, desktop.env);
const { snapshot } = (await import(join(root, "dist", "index.js"))) as typeof import("../lib/index.js");

interface Row {
  label: string;
  /** Milliseconds of one run. */
  once: () => Promise<number>;
  samples: number[];
}

/** One child process, from spawn to exit; a run whose exit status is not `status` stops the bench. */
function timed(args: string[], status: number, extra: Record<string, string> = {}): () => Promise<number> {
  return async () => {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, { env: { ...env, ...extra }, encoding: "utf8" });
    const ms = performance.now() - t;
    if (r.status !== status)
      throw new Error(`node ${args.join(" ")} exited ${r.status}, not ${status}: ${r.stderr || r.stdout}`);
    return ms;
  };
}

/** A fresh process running `code` (an ES module) against the built library in dist/. */
function script(code: string): () => Promise<number> {
  return timed(["--input-type=module", "-e", code], 0);
}
const dist = join(root, "dist");
const connectOnly = `import { desktopBackend } from ${JSON.stringify(join(dist, "desktop-backend.js"))}; await desktopBackend();`;
const connectAndWalk = `import { desktopBackend } from ${JSON.stringify(join(dist, "desktop-backend.js"))};
import { walkRequestOrUndefined } from ${JSON.stringify(join(dist, "observe-request.js"))};
const b = await desktopBackend();
await b.snapshot({ ...walkRequestOrUndefined({ app: "gtk3-widget-factory", screenshot: false }), deadlineMs: 5000 });`;

const rows: Row[] = [
  { label: "node -e 0", once: timed(["-e", "0"], 0), samples: [] },
  { label: "axsnap --version", once: timed([cli, "--version"], 0), samples: [] },
  { label: "usage error (snapshot --bogus)", once: timed([cli, "snapshot", "--bogus"], 2), samples: [] },
  { label: "addon + connect (no walk)", once: script(connectOnly), samples: [] },
  { label: "addon + connect + first walk", once: script(connectAndWalk), samples: [] },
  {
    label: "axsnap snapshot, own process (DAEMON=off)",
    once: timed([cli, "snapshot", "--app", "gtk3-widget-factory"], 0, { AXSNAP_DAEMON: "off" }),
    samples: [],
  },
  {
    label: "axsnap snapshot --app gtk3-widget-factory",
    once: timed([cli, "snapshot", "--app", "gtk3-widget-factory"], 0),
    samples: [],
  },
  {
    label: "in-process snapshot (library, warm)",
    once: async () => {
      const t = performance.now();
      const snap = await snapshot({ app: "gtk3-widget-factory", screenshot: false });
      const ms = performance.now() - t;
      snap.release();
      return ms;
    },
    samples: [],
  },
];

let served = 0;
try {
  // One untimed round: the page cache, the bus and the app's caches are warm for every row alike, and the
  // first default snapshot has started the warm process; wait until it answers so every timed run is served.
  for (const row of rows) await row.once();
  for (let i = 0; i < 200; i++) {
    if (
      spawnSync(process.execPath, [cli, "daemon", "status"], { env, encoding: "utf8" }).stdout.startsWith(
        "warm",
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  for (let i = 0; i < RUNS; i++) for (const row of rows) row.samples.push(await row.once());
  const status = spawnSync(process.execPath, [cli, "daemon", "status", "--json"], { env, encoding: "utf8" });
  served = (JSON.parse(status.stdout) as { data: { served?: number } }).data.served ?? 0;
} finally {
  spawnSync(process.execPath, [cli, "daemon", "stop"], { env });
  await app.stop();
  await desktop.stop();
  rmSync(state, { recursive: true, force: true });
}

const floor = median(rows[0]!.samples);
const fmt = (x: number) => `${x.toFixed(1)} ms`;
console.log(`bench:cli  built CLI ${cli}, ${RUNS} runs each (round-robin), node ${process.version}\n`);
console.log(`${"".padEnd(44)}${"median".padStart(10)}${"min".padStart(10)}${"× node -e 0".padStart(14)}`);
for (const row of rows) {
  const m = median(row.samples);
  console.log(
    `${row.label.padEnd(44)}${fmt(m).padStart(10)}${fmt(Math.min(...row.samples)).padStart(10)}${`${(m / floor).toFixed(2)}×`.padStart(14)}`,
  );
}
// Served: the timed usage errors and default snapshots (${RUNS} each); --version is never sent (no command word).
console.log(
  `\nthe warm process served ${served} of the ${2 * RUNS} timed commands sent to it (usage error, default snapshot)`,
);
const cmd = median(rows.find((r) => r.label.startsWith("axsnap snapshot --app"))!.samples);
console.log(
  `\ntarget: snapshot command ≤ 2× node -e 0 (${fmt(2 * floor)}): ${fmt(cmd)} → ${cmd <= 2 * floor ? "met" : "NOT met"}`,
);
