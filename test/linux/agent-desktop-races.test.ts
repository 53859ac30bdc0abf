/**
 * The agent's desktop's name and bus under pressure (issue 31 §10): two
 * `axsnap desktop start` of one name at once, forced deterministically (the
 * first is stopped by AXSNAP_TEST_STOP_AT=desktop-claimed right after it
 * claimed the name, before anything of its desktop runs, and the second runs
 * to its end meanwhile); a claim whose starter died there; and a runtime
 * directory whose path holds bytes a D-Bus address must escape (a space, a
 * comma, a semicolon, "=", "%", a quote, a non-ASCII letter). After each, no
 * process of the name (Xvfb, dbus-daemon, what the bus started) runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, startDesktop } from "../../lib/index.js";
import { privateRuntimeDir, requireDeps, running, until } from "../support/agent-desktop.js";
import { type CliRun, runCli, runCliJson } from "../support/cli.js";
import { processState } from "../support/proc-state.js";

const TIMEOUT = 90_000;
const TSX = import.meta.resolve("tsx");
const CLI = fileURLToPath(new URL("../../lib/cli.ts", import.meta.url));
const children: ChildProcess[] = [];
const names: string[] = [];

let runtime: string;

beforeAll(() => {
  requireDeps();
  runtime = privateRuntimeDir();
});

/** The desktops `axsnap desktop list --json` shows of that name. */
async function listed(name: string): Promise<{ name: string; state: string; display: string }[]> {
  const list = await runCliJson(["desktop", "list"]);
  return list.env.data.desktops.filter((d: { name: string }) => d.name === name);
}

/** Every running process of a desktop of that name (its marker is NAME-<hex>), with its program name. */
function ofName(name: string): { pid: number; comm: string }[] {
  const needle = `\0AXSNAP_AGENT_DESKTOP=${name}-`;
  const out: { pid: number; comm: string }[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (`\0${readFileSync(`/proc/${e}/environ`, "latin1")}`.includes(needle) && running(Number(e)))
        out.push({ pid: Number(e), comm: readFileSync(`/proc/${e}/comm`, "utf8").trim() });
    } catch {}
  }
  return out;
}

afterEach(async () => {
  for (const c of children.splice(0)) {
    c.kill("SIGKILL");
  }
  // Whatever a failed test left is ended here, and named: the test failed on it too.
  const left = names.splice(0).flatMap(ofName);
  for (const p of left) process.kill(p.pid, "SIGKILL");
  expect(left, "processes of the test's desktops left running").toEqual([]);
});

/** `axsnap desktop start NAME --json`, stopped (SIGSTOP) where it has just claimed the name. */
async function startStoppedAtClaim(name: string): Promise<{ child: ChildProcess; done: Promise<CliRun> }> {
  const child = spawn(process.execPath, ["--import", TSX, CLI, "desktop", "start", name, "--json"], {
    env: { ...process.env, AXSNAP_TEST_STOP_AT: "desktop-claimed" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const done = new Promise<CliRun>((resolve) =>
    child.on("exit", (code) => resolve({ code, stdout, stderr, ms: 0 })),
  );
  const stopped = await until(() => processState(child.pid!) === "T", 30_000);
  expect(stopped, `the first start never reached the claim:\n${stdout}${stderr}`).toBe(true);
  return { child, done };
}

describe("two starts of one name", () => {
  it(
    "the second, run while the first has claimed the name and started nothing, is DESKTOP_EXISTS (being started); the first runs, and after stop nothing of the name runs",
    async () => {
      const name = "race";
      names.push(name);
      const first = await startStoppedAtClaim(name);
      // The claim is whole as soon as it exists: who is starting the desktop, nothing half written.
      const claim = JSON.parse(readFileSync(join(runtime, "axsnap", "desktops", `${name}.json`), "utf8"));
      expect(claim).toMatchObject({ name, status: "starting", owner: { pid: first.child.pid } });

      const second = await runCliJson(["desktop", "start", name]);
      expect(second.code, second.stdout).toBe(1);
      expect(second.env.error.code).toBe("DESKTOP_EXISTS");
      expect(second.env.error.message).toMatch(new RegExp(`being started by pid ${first.child.pid}`));
      expect(second.env.error.hint).toMatch(/axsnap desktop list/);
      const text = await runCli(["desktop", "start", name]);
      expect(text.code).toBe(1);
      expect(text.stderr).toMatch(/DESKTOP_EXISTS/);
      // The library says the same: the claim is the name's, whoever asks.
      const api = await startDesktop({ name }).catch((e: unknown) => e);
      expect(api).toBeInstanceOf(AxsnapError);
      expect(api).toMatchObject({ code: "DESKTOP_EXISTS" });
      // Nothing of the name runs but the stopped starter: the refused ones started nothing.
      expect(ofName(name)).toEqual([]);

      first.child.kill("SIGCONT");
      const r = await first.done;
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const started = JSON.parse(r.stdout).data as { display: string; pids: { xvfb: number } };

      expect(await listed(name)).toEqual([
        expect.objectContaining({ name, state: "running", display: started.display }),
      ]);
      const ours = ofName(name);
      expect(ours.map((p) => p.comm)).toEqual(expect.arrayContaining(["Xvfb", "dbus-daemon"]));
      expect(ours.filter((p) => p.comm === "Xvfb")).toEqual([{ pid: started.pids.xvfb, comm: "Xvfb" }]);

      const stop = await runCli(["desktop", "stop", name]);
      expect(stop.code, stop.stderr).toBe(0);
      expect(ofName(name)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "a claim whose starter died right after claiming does not hold the name: the next start takes it",
    async () => {
      const name = "died-claiming";
      names.push(name);
      const first = await startStoppedAtClaim(name);
      first.child.kill("SIGKILL");
      await first.done;

      const next = await runCliJson(["desktop", "start", name]);
      expect(next.code, next.stdout).toBe(0);
      expect(await listed(name)).toEqual([
        expect.objectContaining({ name, state: "running", display: next.env.data.display }),
      ]);
      expect((await runCli(["desktop", "stop", name])).code).toBe(0);
      expect(ofName(name)).toEqual([]);
    },
    TIMEOUT,
  );
});

describe("a runtime directory a D-Bus address must escape", () => {
  it(
    "XDG_RUNTIME_DIR with a space, a comma, a semicolon, '=', '%', a quote and 'é': start, a command on it, env, stop",
    async () => {
      const name = "odd";
      names.push(name);
      const runtime = join(mkdtempSync(join(tmpdir(), "axsnap-adr-")), "a b,c;d=e%f'é");
      mkdirSync(runtime, { mode: 0o700 });
      const env = { XDG_RUNTIME_DIR: runtime };

      const start = await runCliJson(["desktop", "start", name], env);
      expect(start.code, start.stdout).toBe(0);
      const bus = start.env.data.busAddress as string;
      // Every byte outside the D-Bus spec's optionally-escaped set is %-hex escaped.
      expect(bus).toMatch(/^unix:path=[-0-9A-Za-z_/.\\*%]+(,[a-z]+=[-0-9A-Za-z_/.\\*%]+)*$/);
      expect(bus).toContain("a%20b%2cc%3bd%3de%25f%27%c3%a9");

      // A command on it: the AT-SPI registry over its bus answers (the desktop has no apps yet).
      const apps = await runCliJson(["apps", "--desktop", name], env);
      expect(apps.code, apps.stdout).toBe(0);
      expect(apps.env.data.apps).toEqual([]);

      // The bus answers at the address `desktop env` exports, eval'd by a shell.
      const shell = spawn(
        "/bin/sh",
        [
          "-c",
          `eval "$(node --import ${JSON.stringify(TSX)} ${JSON.stringify(CLI)} desktop env ${name})" && dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetId`,
        ],
        { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      shell.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
      });
      shell.stderr!.on("data", (d: Buffer) => {
        out += d.toString();
      });
      expect(await new Promise((r) => shell.on("exit", r)), out).toBe(0);
      expect(out).toMatch(/string "[0-9a-f]{32}"/);

      const stop = await runCli(["desktop", "stop", name], env);
      expect(stop.code, stop.stderr).toBe(0);
      expect(ofName(name)).toEqual([]);
      expect(readdirSync(join(runtime, "axsnap", "desktops")).filter((f) => f.startsWith(name))).toEqual([]);
    },
    TIMEOUT,
  );
});
