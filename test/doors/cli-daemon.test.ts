/**
 * The CLI's warm process (lib/doors/cli/daemon.ts) on a real headless desktop with
 * gtk3-widget-factory, every command a child process as an agent runs it.
 * Each test has its own session directory (XDG_STATE_HOME), so its own warm
 * process: the environment is part of the warm process's address.
 *
 * What it must keep: a served command means what the same command means in
 * its own process (text, refs across both, exit status, relative paths); a
 * busy warm process never holds up another command; a warm process that dies
 * mid-command is reported as "may have acted", never run twice; it leaves no
 * process behind (idle time, `daemon stop`, its desktop gone); a runtime
 * directory others can open is never used.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Desktop, gtkWidgetFactory, startDesktop } from "../../scripts/desktop.mjs";
import { type CliRun, indexIn, type Json, runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";
const REPO = fileURLToPath(new URL("../..", import.meta.url));

let desktop: Desktop;
/** Warm processes the tests started, stopped at the end whatever happened. */
const pids = new Set<number>();

beforeAll(async () => {
  desktop = await useDesktop();
  await gtkWidgetFactory(desktop);
}, TIMEOUT);

afterAll(async () => {
  for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
  await desktop?.stop();
});

/** An environment of its own: a fresh session directory, so a warm process of its own. */
function ownEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "axsnap-daemon-")), ...extra };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function status(env: Record<string, string>, entry?: string): Promise<Json> {
  const r = await runCliJson(["daemon", "status"], env, entry === undefined ? {} : { entry });
  expect(r.code, r.stderr).toBe(0);
  if (r.env.data.pid) pids.add(r.env.data.pid);
  return r.env.data;
}

/** Polls (bounded) until `probe` gives a value; the last value when time runs out. */
async function until<T>(
  what: string,
  ms: number,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const running = (env: Record<string, string>, entry?: string) =>
  until("a warm process answers", 20_000, async () => {
    const s = await status(env, entry);
    return s.running ? s : undefined;
  });

const gone = (pid: number, ms = 15_000) =>
  until(`process ${pid} exits`, ms, () => (alive(pid) ? undefined : true));

/** The snapshot's lines without its header (the id differs from one snapshot to the next). */
const body = (r: CliRun) => r.stdout.split("\n").slice(1).join("\n");

/** A command the warm process serves for a while: a wait for a text the app never shows. */
function longWait(env: Record<string, string>, ms: number): { child: ChildProcess; done: Promise<CliRun> } {
  let child!: ChildProcess;
  const done = new Promise<CliRun>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const t0 = performance.now();
    child = spawn(
      process.execPath,
      [
        "--import",
        import.meta.resolve("tsx"),
        "lib/cli.ts",
        "wait",
        "--app",
        GTK,
        "--text",
        "no such text anywhere 7f3k",
        "--timeout",
        String(ms),
      ],
      { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
    );
    child.stdout?.on("data", (d: Buffer) => out.push(d));
    child.stderr?.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString(),
        stderr: Buffer.concat(err).toString(),
        ms: performance.now() - t0,
      }),
    );
  });
  return { child, done };
}

describe("the CLI's warm process", () => {
  it(
    "the first command runs in its own process and starts one; later commands are served by it, meaning the same",
    async () => {
      const env = ownEnv();
      expect((await status(env)).running).toBe(false);
      const first = await runCli(["snapshot", "--app", GTK], env);
      expect(first.code, first.stderr).toBe(0);
      const warm = await running(env);
      const before = warm.served;

      const served = await runCli(["snapshot", "--app", GTK], env);
      expect(served.code, served.stderr).toBe(0);
      expect((await status(env)).served).toBe(before + 1);
      // The same lines as the command in its own process printed (the app did not change in between).
      expect(body(served)).toBe(body(first));
      expect(served.stdout).toMatch(/^snapshot s[a-z0-9]{7} of gtk3-widget-factory \(pid \d+\); refs: /);

      // A ref printed by a served command works in a process of its own, and the other way round.
      const id = /^snapshot (s[a-z0-9]{7})/.exec(served.stdout)![1];
      const radio = indexIn(served.stdout, /^\d+ radio button Page 2, Value: off$/);
      const own = await runCliJson(["click", `@${id}:e${radio}`, "--no-snapshot"], {
        ...env,
        AXSNAP_DAEMON: "off",
      });
      expect(own.code, own.stdout).toBe(0);
      expect((await status(env)).served).toBe(before + 1);
      const ownSnap = await runCli(["snapshot", "--app", GTK], { ...env, AXSNAP_DAEMON: "off" });
      const ownId = /^snapshot (s[a-z0-9]{7})/.exec(ownSnap.stdout)![1];
      const page1 = indexIn(ownSnap.stdout, /^\d+ radio button Page 1, Value: off$/);
      const servedClick = await runCliJson(["click", `@${ownId}:e${page1}`], env);
      expect(servedClick.code, servedClick.stdout).toBe(0);
      expect(servedClick.env.ok).toBe(true);
      expect((await status(env)).served).toBe(before + 2);

      // Errors keep their exit status and their stream: a usage error (2, stderr), an axsnap error (1).
      const usage = await runCli(["snapshot", "--app", GTK, "--max-nodes", "0"], env);
      expect(usage.code).toBe(2);
      expect(usage.stdout).toBe("");
      expect(usage.stderr).toMatch(/^axsnap: /);
      const missing = await runCli(["snapshot", "--app", "no-such-app-9q"], env);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/APP_NOT_FOUND/);
      expect((await status(env)).served).toBe(before + 4);

      const stop = await runCli(["daemon", "stop"], env);
      expect(stop.stdout).toBe(`stopped warm process ${warm.pid}\n`);
      await gone(warm.pid);
    },
    TIMEOUT,
  );

  it(
    "relative paths are the caller's, and input from stdin (-) is read by the caller and served",
    async () => {
      const env = ownEnv();
      await runCli(["daemon", "start"], env);
      const warm = await running(env);
      const dir = mkdtempSync(join(tmpdir(), "axsnap-daemon-cwd-"));
      const shot = await runCli(["snapshot", "--app", GTK, "--screenshot", "shot.png"], env, { cwd: dir });
      expect(shot.code, shot.stderr).toBe(0);
      expect((await status(env)).served).toBe(warm.served + 1);
      expect(statSync(join(dir, "shot.png")).size).toBeGreaterThan(1000);

      const calls = JSON.stringify([{ command: "snapshot", app: GTK }]);
      const piped = await runCli(["call", "--calls-file", "-"], env, { input: calls });
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stdout).toMatch(/\[step 1: snapshot\]/);
      expect((await status(env)).served).toBe(warm.served + 2);
      await runCli(["daemon", "stop"], env);
      await gone(warm.pid);
    },
    TIMEOUT,
  );

  it(
    "a busy warm process never holds up another command: it runs in its own process meanwhile",
    async () => {
      const env = ownEnv();
      await runCli(["daemon", "start"], env);
      const warm = await running(env);
      const wait = longWait(env, 6000);
      await until("the wait is being served", 20_000, async () =>
        (await status(env)).busy ? true : undefined,
      );
      const other = await runCli(["snapshot", "--app", GTK], env);
      expect(other.code, other.stderr).toBe(0);
      // Still serving the wait: the snapshot did not queue behind it.
      const meanwhile = await status(env);
      expect(meanwhile.busy).toBe(true);
      expect(meanwhile.served).toBe(warm.served);
      const waited = await wait.done;
      expect(waited.code).toBe(1);
      expect(waited.stderr).toMatch(/TIMEOUT/);
      expect((await status(env)).served).toBe(warm.served + 1);
      await runCli(["daemon", "stop"], env);
      await gone(warm.pid);
    },
    TIMEOUT,
  );

  it(
    "a warm process killed during a command: the caller is told it may have acted, and the next command starts a new one",
    async () => {
      const env = ownEnv();
      await runCli(["daemon", "start"], env);
      const warm = await running(env);
      const wait = longWait(env, 20_000);
      await until("the wait is being served", 20_000, async () =>
        (await status(env)).busy ? true : undefined,
      );
      process.kill(warm.pid, "SIGKILL");
      const lost = await wait.done;
      expect(lost.code).toBe(1);
      expect(lost.stderr).toMatch(
        /^axsnap: INTERNAL: the warm process ended during the command; it may have acted/,
      );
      expect(lost.stderr).toMatch(/delivery delivery_uncertain, retry unsafe/);
      expect(lost.ms).toBeLessThan(15_000);

      // Its socket is left behind; the next command finds nobody there, runs itself and starts a new one.
      const next = await runCli(["snapshot", "--app", GTK], env);
      expect(next.code, next.stderr).toBe(0);
      const fresh = await running(env);
      expect(fresh.pid).not.toBe(warm.pid);
      await runCli(["daemon", "stop"], env);
      await gone(fresh.pid);
    },
    TIMEOUT,
  );

  it(
    "leaves no process behind: it exits after its idle time, and when its desktop goes away",
    async () => {
      // Long enough for a loaded machine's `daemon status` (a tsx start each) to see it before it goes.
      const idle = ownEnv({ AXSNAP_DAEMON_IDLE_MS: "4000" });
      await runCli(["snapshot", "--app", GTK], idle);
      const a = await running(idle);
      await gone(a.pid);
      expect((await status(idle)).running).toBe(false);

      // A second desktop: its warm process goes when the desktop stops, long before its idle time.
      const other = await startDesktop();
      try {
        const env = { ...other.env, ...ownEnv() };
        const started = await runCli(["daemon", "start"], env);
        expect(started.code, started.stderr).toBe(0);
        const b = await running(env);
        expect(b.idleMs).toBe(600_000);
        const socket = (await runCliJson(["daemon", "status"], env)).env.data.socket as string;
        await other.stop();
        await gone(b.pid);
        expect(existsSync(socket)).toBe(false);
      } finally {
        await other.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "commands started together with no warm process: each runs, and one warm process is left, not one each",
    async () => {
      const env = ownEnv();
      const runs = await Promise.all([1, 2, 3, 4].map(() => runCli(["snapshot", "--app", GTK], env)));
      for (const r of runs) expect(r.code, r.stderr).toBe(0);
      const warm = await running(env);
      // Every warm process this environment started: the losers find the winner listening and exit.
      const mine = () =>
        readdirSync("/proc")
          .filter((d) => /^\d+$/.test(d))
          .filter((d) => {
            try {
              const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8");
              const environ = readFileSync(`/proc/${d}/environ`, "utf8");
              return (
                cmd.includes("\0daemon\0run") && environ.includes(`XDG_STATE_HOME=${env.XDG_STATE_HOME}\0`)
              );
            } catch {
              return false;
            }
          })
          .map(Number);
      expect(
        await until("one warm process left", 20_000, () => (mine().length === 1 ? mine() : undefined)),
      ).toEqual([warm.pid]);
      await runCli(["daemon", "stop"], env);
      await gone(warm.pid);
      expect(mine()).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "hostile clients on its socket (not JSON, no newline, wrong fields) are cut off; it serves the next command",
    async () => {
      const env = ownEnv();
      await runCli(["daemon", "start"], env);
      const warm = await running(env);
      const socket = (await runCliJson(["daemon", "status"], env)).env.data.socket as string;
      const send = (data: string) =>
        new Promise<string>((resolve) => {
          const c = connect(socket);
          let got = "";
          c.on("connect", () => c.write(data));
          c.on("data", (d) => {
            got += d.toString();
          });
          c.on("error", () => resolve(got));
          c.on("close", () => resolve(got));
        });
      expect(await send("not json\n")).toBe("");
      expect(await send(`${JSON.stringify({ t: "run", argv: [1, 2], cwd: "/" })}\n`)).toBe("");
      expect(await send(`${JSON.stringify({ t: "run", argv: ["snapshot"] })}\n`)).toBe("");
      expect(await send("x".repeat(5 * 1024 * 1024))).toBe("");
      const after = await runCli(["snapshot", "--app", GTK], env);
      expect(after.code, after.stderr).toBe(0);
      const now = await status(env);
      expect(now.pid).toBe(warm.pid);
      expect(now.served).toBe(warm.served + 1);

      // A command line longer than one read (about 100 KB of 2- and 3-byte characters) arrives whole:
      // the refusal counts its characters.
      const name = "中文ü".repeat(13_000);
      const found = await runCli(["find", "--app", GTK, "--name", name], env);
      expect(found.stderr).toMatch(/^axsnap: INVALID_ARGUMENT: the name is 39000 characters, over the limit/);
      expect((await status(env)).served).toBe(warm.served + 2);

      // A request whose bytes arrive in two reads split inside a character: the character arrives whole.
      const request = Buffer.from(
        `${JSON.stringify({ t: "run", argv: ["find", "--app", GTK, "--name", "中文ü"], cwd: "/", env: process.env, umask: 0o22 })}\n`,
      );
      const cut = request.indexOf(Buffer.from("中")) + 1;
      const reply = await new Promise<string>((resolve) => {
        const c = connect(socket);
        let got = "";
        c.on("connect", () => {
          c.write(request.subarray(0, cut));
          setTimeout(() => c.write(request.subarray(cut)), 200);
        });
        c.on("data", (d) => {
          got += d.toString();
        });
        c.on("close", () => resolve(got));
      });
      const out = reply
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { t: string; d?: string })
        .filter((f) => f.t === "out")
        .map((f) => f.d)
        .join("");
      expect(out).toMatch(/^find name "中文ü" in snapshot/);

      // A client that connects and says nothing does not keep it from stopping.
      const silent = connect(socket);
      await new Promise((r) => silent.on("connect", r));
      await runCli(["daemon", "stop"], env);
      await gone(warm.pid);
      silent.destroy();
    },
    TIMEOUT,
  );

  it(
    "started from source, it never serves code other than its caller's: after a library file is edited the next command prints what the new code prints, and the old warm process goes away",
    async () => {
      // A copy of the package to edit: its source, package.json and addon; the dependencies linked.
      const root = mkdtempSync(join(tmpdir(), "axsnap-daemon-src-"));
      cpSync(join(REPO, "lib"), join(root, "lib"), { recursive: true });
      copyFileSync(join(REPO, "package.json"), join(root, "package.json"));
      mkdirSync(join(root, "build", "Release"), { recursive: true });
      copyFileSync(
        join(REPO, "build", "Release", "axsnap.node"),
        join(root, "build", "Release", "axsnap.node"),
      );
      symlinkSync(join(REPO, "node_modules"), join(root, "node_modules"));
      const entry = join(root, "lib", "cli.ts");
      const env = ownEnv({ XDG_SESSION_TYPE: "" });

      const first = await runCli(["permissions"], env, { entry });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/^session unknown/m);
      const warm = await running(env, entry);
      const served = await runCli(["permissions"], env, { entry });
      expect(served.stdout).toBe(first.stdout);
      expect((await status(env, entry)).served).toBe(warm.served + 1);

      // The library's own code: how the session type is read (lib/observe/linux-checks.ts).
      const file = join(root, "lib", "observe", "linux-checks.ts");
      const source = readFileSync(file, "utf8");
      const edited = source.replace(
        /if \(type === "x11"\) return "x11";\n {2}return "unknown";/,
        'if (type === "x11") return "x11";\n  return "unknown-edited" as "unknown";',
      );
      expect(edited).not.toBe(source);
      writeFileSync(file, edited);

      const own = await runCli(["permissions"], { ...env, AXSNAP_DAEMON: "off" }, { entry });
      expect(own.stdout).toMatch(/^session unknown-edited/m);
      const next = await runCli(["permissions"], env, { entry });
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toBe(own.stdout);
      // The warm process of the old code goes away by itself (its idle time is 10 minutes).
      await gone(warm.pid, 10_000);
      const fresh = await running(env, entry);
      expect(fresh.pid).not.toBe(warm.pid);
      await runCli(["daemon", "stop"], env, { entry });
      await gone(fresh.pid);
    },
    TIMEOUT,
  );

  it(
    "a runtime directory others can open is never used: commands run in their own process",
    async () => {
      const runtime = mkdtempSync(join(tmpdir(), "axsnap-daemon-rt-"));
      chmodSync(runtime, 0o700);
      mkdirSync(join(runtime, "axsnap"), { mode: 0o777 });
      chmodSync(join(runtime, "axsnap"), 0o777);
      const env = ownEnv({ XDG_RUNTIME_DIR: runtime });
      const snap = await runCli(["snapshot", "--app", GTK], env);
      expect(snap.code, snap.stderr).toBe(0);
      const start = await runCliJson(["daemon", "start"], env);
      expect(start.code).toBe(2);
      expect(start.env.error.code).toBe("INVALID_ARGUMENT");
      expect(start.env.error.message).toMatch(/mode 0700/);
      await new Promise((r) => setTimeout(r, 1500));
      expect(readdirSync(join(runtime, "axsnap"))).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "AXSNAP_DAEMON=off: every command runs in its own process and none is started",
    async () => {
      const env = ownEnv({ AXSNAP_DAEMON: "off" });
      const snap = await runCli(["snapshot", "--app", GTK], env);
      expect(snap.code, snap.stderr).toBe(0);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await status(env)).running).toBe(false);
      const start = await runCliJson(["daemon", "start"], env);
      expect(start.code).toBe(2);
      expect(start.env.error.hint).toMatch(/unset AXSNAP_DAEMON/);
    },
    TIMEOUT,
  );
});
