/**
 * The warm process acts as its caller (issue 31, items 5 and 6): every
 * command the CLI has, run both ways — handed to the warm process, and in a
 * process of its own (AXSNAP_DAEMON=off) — on a real headless desktop with a
 * test app of our own (test/apps/parity-app.py) put back to the same state
 * before each run, must print the same, exit the same, and leave the same
 * files with the same modes. Only what differs between any two runs is
 * normalised: snapshot ids, milliseconds, how many change events a settle
 * counted, and, for `launch`, the new app's pid.
 *
 * Each run goes through `sh -c 'umask …; cd …; exec node CLI …'`, so the
 * caller's umask, working directory (even a deleted one), standard streams
 * and environment are its own, as an agent's shell would have them; the
 * warm process is started by another caller, with another umask and a
 * variable of its own. The CLI is this checkout's, bundled (a tsx start per
 * command would cost half a second each, and tsx cannot start in a deleted
 * working directory).
 */
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { askDaemon } from "../../lib/doors/cli/daemon-client.js";
import { COMMANDS } from "../../lib/doors/cli/grammar.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { bundleCli, type CliBundle } from "../support/cli-bundle.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 120_000;
const APP_PY = fileURLToPath(new URL("../apps/parity-app.py", import.meta.url));
const APP = "axsnap-parity-test";
/** The umask of every caller here; the warm process is started under another (022). */
const UMASK = 0o027;

let desktop: Desktop;
let app: App;
let cli: CliBundle;
let work: string;
/** The session directory (XDG_STATE_HOME) of both ways: the same warm process all along. */
let state: string;
let ack: string;
let resets = 0;
let socket: string;
let daemonPid: number;
/** Apps started by `launch` rows, stopped at the end whatever happened. */
const launched = new Set<number>();

type Way = "served" | "own";

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** The files the run left in its working directory: name → mode and, for a PNG, its size in pixels. */
  files: Record<string, { mode: string; png?: string }>;
}

interface RunOptions {
  cwd?: string;
  umask?: number;
  input?: string;
  env?: Record<string, string>;
  /** Start in a working directory that has been deleted. */
  goneCwd?: boolean;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until<T>(what: string, ms: number, probe: () => T | undefined | Promise<T | undefined>) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function pngSize(bytes: Buffer): string | undefined {
  if (bytes.length < 24 || bytes.readUInt32BE(0) !== 0x89504e47) return undefined;
  return `${bytes.readUInt32BE(16)}x${bytes.readUInt32BE(20)}`;
}

function filesIn(dir: string): Run["files"] {
  const out: Run["files"] = {};
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    const png = pngSize(readFileSync(path));
    out[name] = { mode: (statSync(path).mode & 0o777).toString(8), ...(png ? { png } : {}) };
  }
  return out;
}

/**
 * One CLI run, `way`, as a shell would start it: its own umask, directory,
 * environment, and stdin and stdout that are pipes (node's "pipe" is a
 * socket, which /dev/stdout cannot be opened on); its exit status through
 * a file, since the pipeline's is cat's.
 */
function run(way: Way, args: string[], o: RunOptions = {}): Promise<Run> {
  const cwd = o.cwd ?? work;
  const status = join(work, "status");
  rmSync(status, { force: true });
  const script = [
    `umask ${(o.umask ?? UMASK).toString(8).padStart(4, "0")}`,
    'cd "$0" || exit 97',
    ...(o.goneCwd ? ['rmdir "$0" || exit 98'] : []),
    `${o.input === undefined ? "" : "cat | "}{ "$@"; echo $? > "${status}"; } | cat`,
    `exit "$(cat "${status}")"`,
  ].join("\n");
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", ["-c", script, cwd, process.execPath, cli.entry, ...args], {
      env: {
        ...process.env,
        XDG_STATE_HOME: state,
        ...(way === "own" ? { AXSNAP_DAEMON: "off" } : {}),
        ...o.env,
      },
      stdio: [o.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (o.input !== undefined) child.stdin?.end(o.input);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (d: Buffer) => out.push(d));
    child.stderr?.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve({
          code,
          stdout: Buffer.concat(out),
          stderr: Buffer.concat(err).toString("utf8"),
          files: o.goneCwd ? {} : filesIn(cwd),
        });
      } catch (e) {
        reject(e);
      }
    });
  });
}

async function served(): Promise<number> {
  const f = await askDaemon(socket, "status");
  if (f?.t !== "status") throw new Error("the warm process does not answer");
  return f.served;
}

/** Puts the app back to its first state (test/apps/parity-app.py) and waits until it says so. */
async function reset(): Promise<void> {
  const n = ++resets;
  process.kill(app.pid, "SIGUSR1");
  await until(`reset ${n} of the app`, 10_000, () => {
    try {
      return readFileSync(ack, "utf8") === String(n) ? true : undefined;
    } catch {
      return undefined;
    }
  });
}

/** Snapshot ids where the CLI prints them: headers, refs, "stored as", "since", --of, JSON, stored files. */
const IDS = /(?:snapshot |@|as |since |--of |"snapshotId":"|"foundAs":"@|\/)(s[a-z0-9]{7})\b/g;

/** What legitimately differs between two runs of one command: snapshot ids, milliseconds, event counts. */
function normal(text: string): string {
  let out = text;
  for (const id of new Set([...text.matchAll(IDS)].map((m) => m[1]!)))
    if (id !== "snapshot") out = out.replace(new RegExp(`\\b${id}\\b`, "g"), "s•id");
  return out
    .replace(/\b\d+ ms\b/g, "• ms")
    .replace(/\(\d+ change events?\)/g, "(• change events)")
    .replace(/"(ms|settledMs|waitedMs|elapsedMs)":\d+/g, '"$1":•')
    .replace(/"(events|changeEvents)":\d+/g, '"$1":•');
}

const snapshotId = (out: string) => {
  const m = /^snapshot (s[a-z0-9]{7})\b/.exec(out);
  if (!m) throw new Error(`no snapshot id in:\n${out}`);
  return m[1]!;
};

/** A launched app's pid, from `launch`'s line or a call's step; stopped at the end. */
function launchedPid(out: string): number {
  const m = /started \S+(?: from \S+)?: pid (\d+)/.exec(out);
  if (!m) throw new Error(`no started app in:\n${out}`);
  const pid = Number(m[1]);
  launched.add(pid);
  return pid;
}

function stop(pid: number): void {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    // Gone already.
  }
}

beforeAll(async () => {
  desktop = await useDesktop();
  work = mkdtempSync(join(tmpdir(), "axsnap-parity-"));
  state = join(work, "state");
  ack = join(work, "ack");
  mkdirSync(state);
  app = await startApp(desktop, "/usr/bin/python3", [APP_PY, APP, ack], { name: APP });
  cli = await bundleCli("parity");
  // Another caller starts the warm process: another umask, and a variable only it has.
  const started = await run("served", ["daemon", "start", "--json"], {
    umask: 0o022,
    env: { PARITY_FIRST_CALLER: "first-caller-secret" },
  });
  expect(started.code, started.stderr).toBe(0);
  const data = JSON.parse(started.stdout.toString()).data;
  socket = data.socket;
  daemonPid = data.pid;
}, TIMEOUT);

afterAll(async () => {
  if (socket) await askDaemon(socket, "stop");
  if (daemonPid && alive(daemonPid)) process.kill(daemonPid, "SIGKILL");
  for (const pid of launched) stop(pid);
  cli?.remove();
  await desktop?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Row {
  /** The test's name: the command line, in words. */
  name: string;
  /** The COMMANDS entry it covers ("--version" for the flag). */
  command: string;
  /** The command line; `id` is the snapshot taken first, when `snapshot` says to take one. */
  args: (id: string) => string[];
  /** Take a snapshot first, the same way, with these arguments after `snapshot --app APP`. */
  snapshot?: string[];
  /** Whether the warm process serves it (else both ways run in a process of their own). */
  served: boolean;
  /** Its exit status, both ways: a row whose command fails both ways the same proves nothing. */
  code?: number;
  /** What its output must show, both ways. */
  shows?: RegExp;
  input?: string;
  env?: Record<string, string>;
  goneCwd?: boolean;
  /** Files it must leave in its working directory, both ways. */
  files?: string[];
  /** The part of the output that is the same both ways, when the rest differs by nature. */
  compare?: (out: string) => string;
  /** Runs after each way (stops what the command started). */
  after?: (r: Run) => void;
}

const CALLS = JSON.stringify([
  { command: "snapshot", app: APP },
  { command: "click", target: 1 },
]);
const LAUNCH_ARGS = ["--", APP_PY, "axsnap-parity-launched"];

const ROWS: Row[] = [
  { name: "apps", command: "apps", args: () => ["apps"], served: true, shows: /axsnap-parity-test\tpid \d+/ },
  {
    name: "apps --launchable",
    command: "apps",
    args: () => ["apps", "--launchable"],
    served: true,
    shows: /\.desktop\t/,
  },
  {
    name: "launch a program by path",
    command: "launch",
    args: () => ["launch", "/usr/bin/python3", ...LAUNCH_ARGS],
    served: false,
    shows: /^started axsnap-parity-launched: pid \d+/,
    compare: (out) => out.replace(/(pid |--app )\d+/g, "$1•"),
    after: (r) => stop(launchedPid(r.stdout.toString())),
  },
  {
    name: "snapshot",
    command: "snapshot",
    args: () => ["snapshot", "--app", APP],
    served: true,
    shows: /^\t1 check box Option, Value: off$/m,
  },
  {
    name: "snapshot --json",
    command: "snapshot",
    args: () => ["snapshot", "--app", APP, "--json"],
    served: true,
    shows: /"ok":true/,
  },
  {
    name: "snapshot --screenshot shot.png (relative to the caller's directory, with the caller's umask)",
    command: "snapshot",
    args: () => ["snapshot", "--app", APP, "--screenshot", "shot.png"],
    served: true,
    files: ["shot.png"],
  },
  {
    name: "snapshot --screenshot /dev/stdout (the caller's stdout)",
    command: "snapshot",
    args: () => ["snapshot", "--app", APP, "--screenshot", "/dev/stdout"],
    served: true,
    shows: /^\x89PNG/,
    // The picture itself may differ (a blinking caret): its size in pixels may not.
    compare: (out) =>
      out.replace(/^\x89PNG[\s\S]*?IEND\xaeB`\x82/, (png) => `<png ${pngSize(Buffer.from(png, "latin1"))}>`),
  },
  {
    name: "snapshot in a deleted working directory",
    command: "snapshot",
    args: () => ["snapshot", "--app", APP],
    served: false,
    goneCwd: true,
    shows: /check box Option/,
  },
  {
    name: "find --role",
    command: "find",
    args: () => ["find", "--app", APP, "--role", "push button"],
    served: true,
    shows: /push button Count/,
  },
  {
    name: "click",
    command: "click",
    snapshot: [],
    args: (id) => ["click", `@${id}:e1`],
    served: true,
    shows: /check box Option, Value: on \[changed/,
  },
  {
    name: "click --screenshot (the fresh snapshot's picture)",
    command: "click",
    snapshot: [],
    args: (id) => ["click", `@${id}:e1`, "--screenshot", "after.png"],
    served: true,
    files: ["after.png"],
  },
  {
    name: "double-click",
    command: "double-click",
    snapshot: [],
    args: (id) => ["double-click", `@${id}:e2`],
    served: true,
    shows: /label count: 2/,
  },
  {
    name: "right-click",
    command: "right-click",
    snapshot: [],
    args: (id) => ["right-click", `@${id}:e2`],
    served: true,
    shows: /^click @s[a-z0-9]{7}:e2: /,
  },
  {
    name: "type --into",
    command: "type",
    snapshot: [],
    args: (id) => ["type", "hello", "--into", `@${id}:e4`],
    served: true,
    shows: /hello/,
  },
  {
    name: "set-value --number",
    command: "set-value",
    snapshot: [],
    args: (id) => ["set-value", `@${id}:e5`, "7", "--number"],
    served: true,
    shows: /Amount, Value: 7/,
  },
  {
    name: "press where focus is",
    command: "press",
    args: () => ["press", "x", "--app", APP],
    served: true,
    shows: /Name, Value: x|text \(settable, string\) Name/,
  },
  {
    name: "scroll",
    command: "scroll",
    snapshot: [],
    args: (id) => ["scroll", `@${id}:e6`, "down"],
    served: true,
    shows: /Row 2\d/,
  },
  {
    name: "drag",
    command: "drag",
    snapshot: [],
    args: (id) => ["drag", `@${id}:e9`, `@${id}:e4`],
    served: true,
    shows: /^drag /,
  },
  {
    name: "perform-action",
    command: "perform-action",
    snapshot: [],
    args: (id) => ["perform-action", `@${id}:e2`, "click"],
    served: true,
    shows: /label count: 1/,
  },
  {
    name: "click-at",
    command: "click-at",
    snapshot: ["--screenshot", "pixels.png"],
    args: (id) => ["click-at", "25", "20", "--of", id],
    served: true,
    files: ["pixels.png"],
    shows: /check box Option, Value: on/,
  },
  {
    name: "resolve",
    command: "resolve",
    snapshot: [],
    args: (id) => ["resolve", `@${id}:e2`],
    served: true,
    shows: /push button "Count", reached/,
  },
  {
    name: "locate",
    command: "locate",
    args: () => ["locate", `app=${APP} >> push button "Count"`],
    served: true,
    shows: /locator: app=axsnap-parity-test >> push button "Count"/,
  },
  {
    name: "windows",
    command: "windows",
    args: () => ["windows", "--app", APP],
    served: true,
    shows: /axsnap-parity-test/,
  },
  {
    name: "wait --text",
    command: "wait",
    args: () => ["wait", "--app", APP, "--text", "count: 0"],
    served: true,
    shows: /^met /,
  },
  {
    name: "permissions",
    command: "permissions",
    args: () => ["permissions"],
    served: true,
    shows: /^session unknown/m,
    env: { XDG_SESSION_TYPE: "" },
  },
  {
    name: "permissions with the caller's XDG_SESSION_TYPE=wayland",
    command: "permissions",
    args: () => ["permissions"],
    served: true,
    shows: /^session wayland/m,
    env: { XDG_SESSION_TYPE: "wayland" },
  },
  {
    name: "call --calls",
    command: "call",
    args: () => ["call", "--calls", CALLS],
    served: true,
    shows: /\[step 2: click\]/,
  },
  {
    name: "call --calls-file (relative to the caller's directory)",
    command: "call",
    args: () => ["call", "--calls-file", "calls.json"],
    served: true,
    shows: /\[step 2: click\]/,
    files: ["calls.json"],
  },
  {
    name: "call --calls-file /dev/stdin (the caller's stdin)",
    command: "call",
    args: () => ["call", "--calls-file", "/dev/stdin"],
    input: CALLS,
    served: true,
    shows: /\[step 2: click\]/,
  },
  {
    name: "call --calls-file - (the caller's stdin)",
    command: "call",
    args: () => ["call", "--calls-file", "-"],
    input: CALLS,
    served: true,
    shows: /\[step 2: click\]/,
  },
  {
    name: "call with a launch step (runs in the caller's own process)",
    command: "call",
    args: () => [
      "call",
      "--calls",
      JSON.stringify([{ command: "launch", program: "/usr/bin/python3", args: LAUNCH_ARGS.slice(1) }]),
    ],
    served: false,
    shows: /\[step 1: launch\]\nstarted axsnap-parity-launched/,
    compare: (out) => out.replace(/(pid |--app )\d+/g, "$1•"),
    after: (r) => stop(launchedPid(r.stdout.toString())),
  },
  {
    name: "mcp (initialize)",
    command: "mcp",
    args: () => ["mcp"],
    input: `${JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-03-26",
        capabilities: {},
        clientInfo: { name: "parity", version: "1" },
      },
    })}\n`,
    served: false,
    shows: /"serverInfo":\{"name":"axsnap"/,
  },
  {
    name: "daemon status (about the warm process itself: only its exit status is the same)",
    command: "daemon",
    args: () => ["daemon", "status"],
    served: false,
    compare: () => "",
  },
  {
    name: "desktop list",
    command: "desktop",
    args: () => ["desktop", "list"],
    served: false,
    shows: /desktops/,
  },
  {
    name: "trace show (no such trace)",
    command: "trace",
    args: () => ["trace", "show", "none.axtrace"],
    served: false,
    code: 2,
    shows: /no trace at .*none\.axtrace/,
  },
  {
    name: "replay (no such trace)",
    command: "replay",
    args: () => ["replay", "none.axtrace"],
    served: false,
    code: 2,
    shows: /no trace at .*none\.axtrace/,
  },
  { name: "help", command: "help", args: () => ["help"], served: false, shows: /snapshot/ },
  { name: "--version", command: "--version", args: () => ["--version"], served: false, shows: /^\d+\.\d+/ },
  {
    name: "a usage error",
    command: "snapshot",
    args: () => ["snapshot", "--app", APP, "--max-nodes", "0"],
    served: true,
    code: 2,
  },
  {
    name: "an axsnap error, --json",
    command: "snapshot",
    args: () => ["snapshot", "--app", "no-such-app-parity", "--json"],
    served: true,
    code: 1,
    shows: /APP_NOT_FOUND/,
  },
];

/** One way of one row: the app put back, the snapshot it needs, the command; its run and how many were served. */
async function runRow(row: Row, way: Way): Promise<{ run: Run; served: number }> {
  const dir = join(work, "cwd");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  if (row.files?.includes("calls.json")) writeFileSync(join(dir, "calls.json"), CALLS);
  if (row.goneCwd) mkdirSync(join(dir, "gone"));
  await reset();
  const before = await served();
  let id = "";
  if (row.snapshot) {
    // In a process of its own both ways: the warm process holds the live elements of the snapshots
    // it prints (lib/doors/cli/held.ts), so a ref into one means more to it than to a process of its own
    // (cli-twins.test.ts); into this one, the ref is found by its stored identity by both.
    const snap = await run("own", ["snapshot", "--app", APP, ...row.snapshot], { cwd: dir });
    expect(snap.code, snap.stderr).toBe(0);
    id = snapshotId(snap.stdout.toString());
  }
  const r = await run(way, row.args(id), {
    cwd: row.goneCwd ? join(dir, "gone") : dir,
    ...(row.goneCwd ? { goneCwd: true } : {}),
    ...(row.input === undefined ? {} : { input: row.input }),
    ...(row.env ? { env: row.env } : {}),
  });
  row.after?.(r);
  return { run: r, served: (await served()) - before };
}

describe("every CLI command, served by the warm process and in its own process", () => {
  it("the table covers every command the CLI has", () => {
    const covered = new Set(ROWS.map((r) => r.command));
    expect(Object.keys(COMMANDS).filter((c) => !covered.has(c))).toEqual([]);
  });

  for (const row of ROWS)
    it(
      row.name,
      async () => {
        const a = await runRow(row, "served");
        const b = await runRow(row, "own");
        const expected = row.served ? 1 : 0;
        expect(a.served, "commands the warm process served").toBe(expected);
        expect(b.served, "commands the warm process served for AXSNAP_DAEMON=off").toBe(0);
        const outA = a.run.stdout.toString("latin1");
        const outB = b.run.stdout.toString("latin1");
        const code = row.code ?? 0;
        expect(b.run.code, b.run.stderr).toBe(code);
        expect(a.run.code, a.run.stderr).toBe(code);
        if (row.shows) {
          expect(outB + b.run.stderr).toMatch(row.shows);
          expect(outA + a.run.stderr).toMatch(row.shows);
        }
        const same = row.compare ?? ((s: string) => s);
        expect(normal(same(outA))).toBe(normal(same(outB)));
        expect(normal(same(a.run.stderr))).toBe(normal(same(b.run.stderr)));
        expect(a.run.files).toEqual(b.run.files);
        for (const f of row.files ?? []) expect(Object.keys(b.run.files)).toContain(f);
      },
      TIMEOUT,
    );
});

describe("the warm process never lends a caller another caller's environment", () => {
  it(
    "an app a served `call` launches gets this caller's environment, working directory and umask, not those of the caller that started the warm process",
    async () => {
      const dir = join(work, "launch-cwd");
      mkdirSync(dir, { recursive: true });
      const calls = [{ command: "launch", program: "/usr/bin/python3", args: [APP_PY, "axsnap-parity-env"] }];
      const r = await run("served", ["call", "--calls", JSON.stringify(calls)], {
        cwd: dir,
        env: { PARITY_CALLER: "this-caller-secret" },
      });
      expect(r.code, r.stderr).toBe(0);
      const pid = launchedPid(r.stdout.toString());
      try {
        const environ = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
        expect(environ).toContain("PARITY_CALLER=this-caller-secret");
        expect(environ.filter((e) => e.startsWith("PARITY_FIRST_CALLER="))).toEqual([]);
        expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(dir);
        expect(/^Umask:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]).toBe("0027");
      } finally {
        stop(pid);
      }
    },
    TIMEOUT,
  );

  it(
    "the warm process itself holds no variable of the caller that started it beyond those its address is made of",
    async () => {
      const environ = readFileSync(`/proc/${daemonPid}/environ`, "latin1").split("\0");
      expect(environ.filter((e) => e.startsWith("PARITY_FIRST_CALLER="))).toEqual([]);
      // What it does hold is what makes its address: the desktop it serves, for one.
      expect(environ).toContain(`DISPLAY=${desktop.display}`);
    },
    TIMEOUT,
  );
});
