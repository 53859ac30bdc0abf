/**
 * The CLI door of traces and locators (issue 34), on a headless desktop with
 * a test app of our own (test/apps/parity-app.py, put back to its first
 * state before each test), each command a child process as an agent runs it:
 *
 * - three commands in three processes with --trace (or AXSNAP_TRACE) append
 *   to one trace: one run id, one step each, door "cli", the command as the
 *   call and the text it printed as the reply;
 * - --secret keeps the typed text out of every file of the trace, also when
 *   a later process prints the field it went into;
 * - a locator TARGET acts on the element it names and prints its ref;
 *   `axsnap locate` prints the line, ref and locator, or the candidates;
 * - `trace show` prints one line a step;
 * - the same commands served by the warm process and run each in its own
 *   process give the same steps, apart from pids, times and snapshot ids.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTrace } from "../../lib/session/trace/read.js";
import type { TraceStepLine } from "../../lib/session/trace/types.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, type Json, runCli, runCliJson, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 180_000;
const APP_PY = fileURLToPath(new URL("../apps/parity-app.py", import.meta.url));
const APP = "axsnap-trace-cli-test";
const COUNT = `app=${APP} >> push button "Count"`;

let desktop: Desktop;
let app: App;
let work: string;
let state: string;
let ack: string;
let resets = 0;

/** Each command in a process of its own, in `work`, with its own session directory. */
const OWN = (): Record<string, string> => ({ XDG_STATE_HOME: state, AXSNAP_DAEMON: "off" });

async function until<T>(what: string, ms: number, probe: () => T | undefined): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Puts the app back to its first state and waits until it says so. */
async function reset(): Promise<void> {
  const n = ++resets;
  process.kill(app.pid, "SIGUSR1");
  await until(`reset ${n}`, 10_000, () => {
    try {
      return readFileSync(ack, "utf8") === String(n) ? true : undefined;
    } catch {
      return undefined;
    }
  });
}

beforeAll(async () => {
  desktop = await useDesktop();
  work = mkdtempSync(join(tmpdir(), "axsnap-cli-trace-"));
  state = join(work, "state");
  ack = join(work, "ack");
  app = await startApp(desktop, "/usr/bin/python3", [APP_PY, APP, ack], { name: APP });
}, TIMEOUT);

afterAll(async () => {
  await runCli(["daemon", "stop"], { XDG_STATE_HOME: state }).catch(() => undefined);
  app?.stop();
  await desktop?.stop();
});

function ok(r: { code: number | null; stdout: string; stderr: string }): string {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return r.stdout;
}

function refIn(text: string, re: RegExp): string {
  return `@${snapshotIdIn(text)}:e${indexIn(text, re)}`;
}

/** Every file below a directory, by path, as bytes. */
function filesBelow(dir: string): { path: string; data: Buffer }[] {
  const out: { path: string; data: Buffer }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesBelow(path));
    else out.push({ path, data: readFileSync(path) });
  }
  return out;
}

/** snapshot, click Count, type into Name: three commands, each printed text kept. */
async function threeCommands(
  trace: string,
  env: Record<string, string>,
  useEnvForLast = false,
): Promise<string[]> {
  const snap = ok(await runCli(["snapshot", "--app", APP, "--trace", trace], env, { cwd: work }));
  const click = ok(
    await runCli(["click", refIn(snap, /push button Count/), "--trace", trace], env, { cwd: work }),
  );
  const typeArgs = ["type", "abc", "--into", refIn(snap, /^\d+ text\b.*Name/)];
  const type = ok(
    await runCli(
      useEnvForLast ? typeArgs : [...typeArgs, "--trace", trace],
      useEnvForLast ? { ...env, AXSNAP_TRACE: trace } : env,
      { cwd: work },
    ),
  );
  return [snap, click, type];
}

describe("axsnap --trace on a real app", () => {
  it(
    "three commands in three processes append to one trace: one run id, three cli steps, each with the text it printed",
    async () => {
      await reset();
      // Relative: resolved in the caller's working directory; the last command names it by AXSNAP_TRACE.
      const printed = await threeCommands("three.axtrace", OWN(), true);
      const t = readTrace(join(work, "three.axtrace"));
      expect(t.truncated).toBe(false);
      expect(t.steps.map((s) => [s.door, s.call])).toEqual([
        ["cli", "snapshot"],
        ["cli", "click"],
        ["cli", "type"],
      ]);
      expect(new Set(t.steps.map((s) => s.runId))).toEqual(new Set([t.header.runId]));
      expect(new Set(t.steps.map((s) => s.pid)).size).toBe(3);
      expect(t.steps.map((s) => s.reply)).toEqual(printed);
      expect(t.steps.map((s) => s.method)).toEqual(["snapshot", "click", "typeText"]);
    },
    TIMEOUT,
  );

  it(
    "--secret keeps the typed text out of every file of the trace (type --into and set-value, warm and cold)",
    async () => {
      const SECRET = "Tr0ub4dor-zq9";
      const VALUE = "Xk7-set-secret";
      for (const env of [OWN(), { XDG_STATE_HOME: state }]) {
        const trace = join(work, `secret-${env.AXSNAP_DAEMON ?? "warm"}.axtrace`);
        const nameRef = async () =>
          refIn(
            ok(await runCli(["snapshot", "--app", APP, "--trace", trace], env, { cwd: work })),
            /^\d+ text\b.*Name/,
          );
        await reset();
        // The reply shows the field's new value to the agent (it is no secure field); the trace must not keep it.
        const typed = ok(
          await runCli(["type", SECRET, "--into", await nameRef(), "--secret", "--trace", trace], env, {
            cwd: work,
          }),
        );
        expect(typed).toContain(SECRET);
        // Emptied first: a later process does not know the first secret (that is the field mask's test, below).
        await reset();
        const set = ok(
          await runCli(["set-value", await nameRef(), VALUE, "--secret", "--trace", trace], env, {
            cwd: work,
          }),
        );
        expect(set).toContain(VALUE);
        const t = readTrace(trace);
        expect(t.steps.map((s) => s.call)).toEqual(["snapshot", "type", "snapshot", "set-value"]);
        expect(t.steps[1]!.secret?.env).toMatch(/^AXSNAP_SECRET_/);
        expect(t.steps[3]!.secret?.env).toMatch(/^AXSNAP_SECRET_/);
        const leaks = filesBelow(trace).filter((f) =>
          [SECRET, VALUE].some((x) => f.data.includes(x) || f.data.includes(Buffer.from(x, "utf16le"))),
        );
        expect(leaks.map((f) => f.path)).toEqual([]);
      }
    },
    TIMEOUT,
  );

  it(
    "--secret: a later process that prints the field the secret went into keeps it out of the trace too",
    async () => {
      await reset();
      const SECRET = "Tr0ub4dor-zq8";
      const trace = join(work, "secret-later.axtrace");
      const snap = ok(await runCli(["snapshot", "--app", APP, "--trace", trace], OWN(), { cwd: work }));
      const name = refIn(snap, /^\d+ text\b.*Name/);
      ok(await runCli(["type", SECRET, "--into", name, "--secret", "--trace", trace], OWN(), { cwd: work }));
      const after = ok(await runCli(["snapshot", "--app", APP, "--trace", trace], OWN(), { cwd: work }));
      expect(after).toContain(SECRET);
      const leaks = filesBelow(trace).filter((f) => f.data.includes(SECRET));
      expect(leaks.map((f) => f.path)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "a locator TARGET clicks the element it names and prints the ref it acted on",
    async () => {
      await reset();
      const r = await runCli(["click", COUNT, "--trace", join(work, "loc.axtrace")], OWN(), { cwd: work });
      const out = ok(r);
      expect(out).toMatch(/click @s[a-z0-9]{7}:e\d+/);
      const now = ok(await runCli(["snapshot", "--app", APP], OWN()));
      expect(now).toMatch(/count: 1/);
      const step = readTrace(join(work, "loc.axtrace")).steps.at(-1)!;
      expect(step.call).toBe("click");
      expect(step.targets?.[0]?.locator).toMatch(/push button "Count"/);
      // The JSON envelope carries the ref too.
      await reset();
      const j = await runCliJson(["click", COUNT], OWN());
      expect(j.env.ok, JSON.stringify(j.env)).toBe(true);
      expect(j.env.data.target.ref).toMatch(/^@s[a-z0-9]{7}:e\d+$/);
      expect(j.env.data.target.locator).toBe(COUNT);
    },
    TIMEOUT,
  );

  it(
    "axsnap locate prints the line, its ref and its locator, or the candidates on ELEMENT_NOT_FOUND",
    async () => {
      await reset();
      const found = ok(await runCli(["locate", COUNT], OWN()));
      expect(found).toMatch(/@s[a-z0-9]{7}:e\d+/);
      expect(found).toMatch(/push button Count/);
      expect(found).toMatch(/locator: app=axsnap-trace-cli-test >> .*push button "Count"/);
      // The ref it prints acts from a later process.
      const ref = /(@s[a-z0-9]{7}:e\d+)/.exec(found)![1]!;
      ok(await runCli(["click", ref], OWN()));

      const missing = `app=${APP} >> push button "Cont"`;
      const r = await runCli(["locate", missing, "--timeout", "1500"], OWN());
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/ELEMENT_NOT_FOUND/);
      expect(r.stderr).toMatch(/candidate: .*push button "Count".*@s[a-z0-9]{7}:e\d+/);
      const j = await runCliJson(["locate", missing, "--timeout", "1500"], OWN());
      expect(j.env.ok).toBe(false);
      expect(j.env.error.code).toBe("ELEMENT_NOT_FOUND");
      expect((j.env.error.candidates as Json[]).map((c) => c.locator).join("\n")).toMatch(
        /push button "Count"/,
      );
    },
    TIMEOUT,
  );

  it(
    "trace show prints one line a step",
    async () => {
      await reset();
      const trace = join(work, "show.axtrace");
      await threeCommands(trace, OWN());
      const t = readTrace(trace);
      const out = ok(await runCli(["trace", "show", trace], OWN()));
      expect(out).toContain(t.header.runId);
      const stepLines = out.split("\n").filter((l) => /^\s*\d+ /.test(l));
      expect(stepLines.length).toBe(t.steps.length);
      stepLines.forEach((l, i) => {
        expect(l.trim().startsWith(`${t.steps[i]!.n} `), l).toBe(true);
        expect(l).toContain(t.steps[i]!.call);
      });
    },
    TIMEOUT,
  );

  it(
    "trace view writes one page beside the trace (or --out) and prints its path; trace export writes ts and skill",
    async () => {
      await reset();
      const trace = join(work, "view.axtrace");
      ok(await runCli(["click", COUNT, "--trace", trace], OWN(), { cwd: work }));
      const runId = readTrace(trace).header.runId;
      // The default page: FILE.html beside the trace directory, even named with a trailing slash.
      const page = ok(await runCli(["trace", "view", "view.axtrace/"], OWN(), { cwd: work })).trim();
      expect(page).toBe(`${trace}.html`);
      const html = readFileSync(page, "utf8");
      expect(html).toMatch(/^<!doctype html>/i);
      expect(html).toContain(runId);
      const out = ok(await runCli(["trace", "view", trace, "--out", "p.html"], OWN(), { cwd: work })).trim();
      expect(out).toBe(join(work, "p.html"));
      expect(readFileSync(out, "utf8")).toBe(html);

      const lib = fileURLToPath(new URL("../../lib/index.ts", import.meta.url));
      const ts = ok(await runCli(["trace", "export", trace, "--to", "ts", "--import-from", lib], OWN()));
      expect(ts).toContain(`from "${lib}"`);
      expect(ts).toMatch(/push button \\?"Count\\?"/);
      const skill = ok(
        await runCli(["trace", "export", trace, "--to", "skill", "--out", "skill.md"], OWN(), { cwd: work }),
      ).trim();
      expect(skill).toBe(join(work, "skill.md"));
      expect(readFileSync(skill, "utf8")).toMatch(/push button "Count"/);
    },
    TIMEOUT,
  );

  it(
    "replay runs a trace again (exit 0), and stops with exit 1 at a drift: a secret it has no value for",
    async () => {
      await reset();
      const trace = join(work, "replay.axtrace");
      ok(await runCli(["click", COUNT, "--trace", trace], OWN(), { cwd: work }));
      await reset();
      const again = await runCliJson(["replay", trace], OWN());
      expect(again.code, JSON.stringify(again.env)).toBe(0);
      expect(again.env.ok).toBe(true);
      expect(again.env.data.replayed).toBeGreaterThanOrEqual(1);
      expect(ok(await runCli(["snapshot", "--app", APP], OWN()))).toMatch(/count: 1/);

      const secret = join(work, "replay-secret.axtrace");
      const snap = ok(await runCli(["snapshot", "--app", APP], OWN()));
      const name = refIn(snap, /^\d+ text\b.*Name/);
      ok(
        await runCli(["type", "pw-zz", "--into", name, "--secret", "--trace", secret], OWN(), { cwd: work }),
      );
      const drift = await runCliJson(["replay", secret], OWN());
      expect(drift.code).toBe(1);
      expect(drift.env.ok).toBe(false);
      expect(drift.env.data.drift.kind).toBe("secret_missing");
      const text = await runCli(["replay", secret], OWN());
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/stopped at step \d+ of \d+/);
    },
    TIMEOUT,
  );

  it(
    "the same commands served by the warm process and run each in its own process give the same steps, apart from pids and timings",
    async () => {
      const warmEnv = { XDG_STATE_HOME: state };
      ok(await runCli(["daemon", "start"], warmEnv));
      const before = (await runCliJson(["daemon", "status"], warmEnv)).env.data.served as number;
      await reset();
      await threeCommands(join(work, "warm.axtrace"), warmEnv);
      const after = (await runCliJson(["daemon", "status"], warmEnv)).env.data.served as number;
      // status itself is answered by the warm process without being served; the three commands were.
      expect(after - before).toBe(3);
      await reset();
      await threeCommands(join(work, "cold.axtrace"), OWN());

      const warm = readTrace(join(work, "warm.axtrace"));
      const cold = readTrace(join(work, "cold.axtrace"));
      expect(new Set(warm.steps.map((s) => s.pid)).size).toBe(1);
      expect(new Set(cold.steps.map((s) => s.pid)).size).toBe(3);
      expect(warm.steps.map(essence)).toEqual(cold.steps.map(essence));

      const lines = async (path: string) =>
        ok(await runCli(["trace", "show", path], OWN()))
          .split("\n")
          .filter((l) => /^\s*\d+ /.test(l))
          .map(normalised);
      expect(await lines(join(work, "warm.axtrace"))).toEqual(await lines(join(work, "cold.axtrace")));
    },
    TIMEOUT,
  );
});

/** What a step says that does not depend on the process, the clock or the snapshot ids. */
function essence(s: TraceStepLine): unknown {
  return {
    n: s.n,
    door: s.door,
    call: s.call,
    method: s.method,
    targets: s.targets?.map((t) => ({ line: t.line, locator: t.locator, role: t.role })),
    delivery: s.result?.delivery,
    action: s.result?.action,
    error: s.error?.code,
    text: s.text,
  };
}

/**
 * A `trace show` line without its time, durations, pids and snapshot ids,
 * and without the changes it names after the delivery: those are diffed
 * from the snapshot the action addressed, which differs by design. Served,
 * a ref reaches the live element of the snapshot the agent read, so the
 * changes are since that read (an earlier command's effects included, as
 * the API reports them); in a process of its own the window is observed
 * again right before acting (the reply says so), so they are only this
 * command's.
 */
function normalised(line: string): string {
  return line
    .replace(/\d{2}:\d{2}:\d{2}(\.\d+)?/g, "T")
    .replace(/\b\d+(\.\d+)? ?ms\b/g, "N ms")
    .replace(/\bs[a-z0-9]{7}\b/g, "sID")
    .replace(/\bpid \d+/g, "pid N")
    .replace(/ · .*?(?= {2}N ms$)/, "")
    .trim();
}
