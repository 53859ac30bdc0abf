/**
 * The CLI's warm process and another user (issue 31, item 8): a command goes
 * only to a warm process of this user, and a warm process serves only this
 * user, whatever the socket's path looked like when it was checked.
 *
 * Two real users on real sockets: the tests run as root (as CI does) and play
 * the other user as `nobody` (uid 65534) in child processes. The race the
 * directory check loses when $XDG_RUNTIME_DIR is writable by others (a
 * misconfiguration) is forced at the step: a hook in the victim's process
 * lets `nobody` swap the socket directory right after the victim's lstat
 * passed, as an attacker winning the race would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { type CliRun, runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 120_000;
const NOBODY = 65534;
/** A command whose text an attacker wants, aimed at an app that is not there (no input reaches the desktop). */
const VICTIM = ["type", "--app", "no-such-app-7f3k", "the secret 4711"];

let desktop: Desktop;
const children = new Set<ChildProcess>();
const dirs: string[] = [];

beforeAll(async () => {
  if (process.getuid?.() !== 0)
    throw new Error("these tests need root: they play a second user (nobody) against the CLI's warm process");
  desktop = await useDesktop();
  // An app on the desktop: the accessibility registry answers, and the victim's command is refused the same each time.
  await gtkWidgetFactory(desktop);
}, TIMEOUT);

afterEach(async () => {
  for (const c of children) c.kill("SIGKILL");
  children.clear();
});

afterAll(async () => {
  await desktop?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/**
 * A node process as `nobody` running `code` (an ES module given inline: the
 * test's files are not readable by that user); resolves once it prints "ready".
 */
async function asNobody(
  code: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; out: () => string; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
    uid: NOBODY,
    gid: NOBODY,
    cwd: "/",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let out = "";
  let err = "";
  const exited = new Promise((resolve) => child.on("exit", resolve));
  child.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`nobody's process is not ready: ${out}${err}`)), 20_000);
    child.stdout!.on("data", () => {
      if (out.includes("ready\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`nobody's process exited ${code}: ${out}${err}`));
    });
  });
  return { child, out: () => out, exited };
}

/**
 * Nobody's fake warm process: listens at SOCKET, prints every byte a client
 * sends ("got" lines, JSON-quoted), and answers any request with forged output
 * and exit status 0, or a forged status.
 */
const FAKE_WARM_PROCESS = `
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createServer } from "node:net";
mkdirSync(dirname(process.env.SOCKET), { recursive: true, mode: 0o700 });
const server = createServer((c) => {
  let got = "";
  c.on("data", (d) => {
    got += d.toString();
    process.stdout.write("got " + JSON.stringify(d.toString()) + "\\n");
    if (!got.includes("\\n")) return;
    const frames = got.includes('"t":"status"')
      ? [{ t: "status", pid: 4242, served: 99, busy: false, startedAt: Date.now(), idleMs: 600000 }]
      : [{ t: "start" }, { t: "out", d: "FORGED by nobody\\n" }, { t: "exit", code: 0 }];
    c.end(frames.map((f) => JSON.stringify(f) + "\\n").join(""));
  });
  c.on("error", () => {});
});
server.listen(process.env.SOCKET, () => process.stdout.write("ready\\n"));
`;

/**
 * Loaded into the victim's process (NODE_OPTIONS=--import): right after the
 * victim's lstat of RACE_DIR has returned (its check passed), nobody moves
 * that directory aside and puts its own in its place, the state in which an
 * attacker has won the race between the check and the connect.
 */
const RACE_HOOK = `
import fs from "node:fs";
import { execFileSync } from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
const dir = process.env.RACE_DIR;
const theirs = process.env.RACE_THEIRS;
const lstatSync = fs.lstatSync;
let done = process.env.RACE_SWAP !== "1";
// Only this process: a warm process it starts must not swap again.
delete process.env.RACE_SWAP;
fs.lstatSync = function (path, ...rest) {
  const st = lstatSync.call(this, path, ...rest);
  if (!done && path === dir) {
    done = true;
    execFileSync("setpriv", ["--reuid=${NOBODY}", "--regid=${NOBODY}", "--clear-groups", "--",
      "sh", "-c", 'mv "$1" "$1.moved" && mv "$2" "$1"', "sh", dir, theirs]);
  }
  return st;
};
syncBuiltinESMExports();
`;

/** A run without its duration, to compare two runs of one command. */
const comparable = (r: CliRun) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr });

describe("the warm process and another user", () => {
  it(
    "a command is never sent to another user's process at the socket's path: it runs here, as with AXSNAP_DAEMON=off",
    async () => {
      // The misconfiguration: a runtime directory everyone may write in, without the sticky bit.
      const runtime = tempDir("axsnap-peer-rt-");
      chmodSync(runtime, 0o777);
      const ours = join(runtime, "axsnap");
      const theirs = join(runtime, "nobodys");
      const hook = join(tempDir("axsnap-peer-hook-"), "race.mjs");
      writeFileSync(hook, RACE_HOOK);
      const env = {
        XDG_RUNTIME_DIR: runtime,
        XDG_STATE_HOME: tempDir("axsnap-peer-state-"),
        NODE_OPTIONS: `--import=${pathToFileURL(hook).href}`,
        RACE_DIR: ours,
        RACE_THEIRS: theirs,
        // A warm process this environment starts, if any, goes soon after.
        AXSNAP_DAEMON_IDLE_MS: "2000",
      };
      // The socket the victim's command goes to (the hook is idle without RACE_SWAP).
      const status = await runCliJson(["daemon", "status"], env);
      expect(status.code, status.stderr).toBe(0);
      expect(status.env.data.running).toBe(false);
      const socket = status.env.data.socket as string;
      expect(socket.startsWith(`${ours}/`)).toBe(true);

      // Nobody listens at the same name in a directory of its own, ready to swap it in.
      const fake = await asNobody(FAKE_WARM_PROCESS, { SOCKET: join(theirs, basename(socket)) });

      const victim = await runCli(VICTIM, { ...env, RACE_SWAP: "1" });
      // The hook did swap: the path the victim checked is nobody's directory now.
      expect(existsSync(`${ours}.moved`)).toBe(true);
      // Nothing reached nobody's process, and nothing it made up was printed.
      expect(fake.out()).toBe("ready\n");
      expect(victim.stdout).not.toContain("FORGED");
      // The command ran in the victim's own process: the same as with the warm process off.
      const own = await runCli(VICTIM, { ...env, AXSNAP_DAEMON: "off" });
      expect(own.stderr).toMatch(/^axsnap: APP_NOT_FOUND/);
      expect(comparable(victim)).toEqual(comparable(own));

      // `daemon status` does not report nobody's process as this user's warm process.
      renameSync(ours, theirs);
      renameSync(`${ours}.moved`, ours);
      const seen = await runCliJson(["daemon", "status"], { ...env, RACE_SWAP: "1" });
      expect(seen.code, seen.stderr).toBe(0);
      expect(fake.out()).toBe("ready\n");
      expect(seen.env.data.running).toBe(false);
      expect(seen.env.data.pid).toBeUndefined();
    },
    TIMEOUT,
  );

  it(
    "a warm process serves no client of another user: no command, no status, no stop",
    async () => {
      const runtime = tempDir("axsnap-peer-rt-");
      const env = { XDG_RUNTIME_DIR: runtime, XDG_STATE_HOME: tempDir("axsnap-peer-state-") };
      const started = await runCliJson(["daemon", "start"], env);
      expect(started.code, started.stderr).toBe(0);
      const warm = started.env.data;
      try {
        // A misconfiguration that lets nobody reach the socket (its directory and the socket opened up).
        const dir = join(runtime, "axsnap");
        chmodSync(runtime, 0o711);
        chmodSync(dir, 0o711);
        chmodSync(warm.socket, 0o666);
        /** Nobody connects, sends one request line and prints what it got until the connection ends. */
        const ask = async (request: object): Promise<string> => {
          const client = await asNobody(
            `import { connect } from "node:net";
            process.stdout.write("ready\\n");
            const c = connect(process.env.SOCKET);
            let got = "";
            c.on("connect", () => c.write(process.env.REQUEST + "\\n"));
            c.on("data", (d) => { got += d.toString(); });
            c.on("error", () => {});
            c.on("close", () => process.stdout.write("got " + JSON.stringify(got) + "\\n"));`,
            { SOCKET: warm.socket, REQUEST: JSON.stringify(request) },
          );
          await client.exited;
          return client.out().replace(/^ready\n/, "");
        };
        expect(await ask({ t: "status" })).toBe('got ""\n');
        expect(await ask({ t: "run", argv: VICTIM, cwd: "/" })).toBe('got ""\n');
        expect(await ask({ t: "stop" })).toBe('got ""\n');

        chmodSync(dir, 0o700);
        const after = await runCliJson(["daemon", "status"], env);
        expect(after.code, after.stderr).toBe(0);
        expect(after.env.data).toMatchObject({ running: true, pid: warm.pid, served: warm.served });
      } finally {
        chmodSync(join(runtime, "axsnap"), 0o700);
        await runCli(["daemon", "stop"], env);
        try {
          process.kill(warm.pid, "SIGKILL");
        } catch {
          // Stopped already.
        }
      }
    },
    TIMEOUT,
  );
});
