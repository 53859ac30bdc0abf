/**
 * Issue 33, item 5: every `next:` line the CLI prints runs as printed. Each
 * command that prints one (`desktop start`, `launch`, and launch as a step
 * of `call`) is run with context options (--desktop, --session into a
 * directory whose name needs quoting), and its `next:` line is then run by
 * a real shell, word for word, with `axsnap` on PATH: it must succeed, on
 * the same desktop and into the same session directory.
 */
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateRuntimeDir, requireDeps } from "../support/agent-desktop.js";
import { runCli } from "../support/cli.js";

const TIMEOUT = 120_000;
const APP = fileURLToPath(new URL("../apps/input-app.py", import.meta.url));
const TSX = import.meta.resolve("tsx");
const CLI = fileURLToPath(new URL("../../lib/cli.ts", import.meta.url));
const DESKTOP = "next-lines";
let bin: string;
let started = false;
/** What `axsnap desktop start` printed. */
let start: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  requireDeps();
  privateRuntimeDir();
  // `axsnap` as an agent's shell finds it: this checkout's CLI.
  bin = mkdtempSync(join(tmpdir(), "axsnap-next-bin-"));
  const axsnap = join(bin, "axsnap");
  writeFileSync(axsnap, `#!/bin/sh\nexec '${process.execPath}' --import '${TSX}' '${CLI}' "$@"\n`);
  chmodSync(axsnap, 0o755);
  start = await runCli(["desktop", "start", DESKTOP]);
  started = true;
}, TIMEOUT);

afterAll(async () => {
  if (started) await runCli(["desktop", "stop", DESKTOP]);
});

/** The `next:` lines of a command's output, each the command after `next: `. */
function nextLines(stdout: string): string[] {
  return [...stdout.matchAll(/^next: (.*)$/gm)].map((m) => m[1]!);
}

/** Runs a printed line with /bin/sh, as an agent pastes it into its shell. */
function sh(line: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "/bin/sh",
      ["-c", line],
      { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` }, timeout: 60_000 },
      (e, stdout, stderr) =>
        resolve({ code: e ? Number(e.code ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

describe("next: lines run as printed", () => {
  it(
    "desktop start: each next: line succeeds on that desktop",
    async () => {
      expect(start.code, start.stderr).toBe(0);
      const afterStart = nextLines(start.stdout);
      expect(afterStart.length, start.stdout).toBeGreaterThan(0);
      for (const line of afterStart) {
        const r = await sh(line);
        expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      }
    },
    TIMEOUT,
  );

  it(
    "launch --desktop --session, alone and in call: its next: line succeeds on that desktop, into that session",
    async () => {
      const session = mkdtempSync(join(tmpdir(), "axsnap next's session "));
      const launched = await runCli([
        "launch",
        APP,
        "--desktop",
        DESKTOP,
        "--session",
        session,
        "--",
        "next app",
      ]);
      expect(launched.code, launched.stderr).toBe(0);
      const [line, ...more] = nextLines(launched.stdout);
      expect(more).toEqual([]);
      expect(line).toBeDefined();
      const r = await sh(line!);
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      expect(r.stdout).toMatch(/^snapshot s[a-z0-9]{7} of axsnap-input-test/);
      // Into the session it was given: the ref it prints works for the next command there.
      const id = /^snapshot (s[a-z0-9]{7})/.exec(r.stdout)![1]!;
      expect(readdirSync(session)).toContain(`${id}.json`);

      // launch as a step of call prints the same line.
      const call = await runCli([
        "call",
        "--desktop",
        DESKTOP,
        "--session",
        session,
        "--calls",
        JSON.stringify([{ command: "launch", program: APP, args: ["next app 2"] }]),
      ]);
      expect(call.code, call.stderr).toBe(0);
      const [inCall] = nextLines(call.stdout);
      const r2 = await sh(inCall!);
      expect(r2.code, `${inCall}\n${r2.stderr}`).toBe(0);
    },
    TIMEOUT,
  );
});
