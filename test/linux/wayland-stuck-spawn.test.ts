/**
 * gnome-shell 43 hung in its own spawn of ibus-daemon (issue 36's CI
 * failures): the child its main thread forks runs a JavaScript child_setup
 * before its exec, and now and then hangs there; the shell, reading the
 * child's exec report, hangs with it (gdb: the main thread in
 * g_spawn_async's read). Eval answers nothing, and the hung child keeps the
 * shell's bus connection, so a second shell started after killing the first
 * exits at once: "org.gnome.Shell already exists on bus".
 *
 * Forced here, not waited for: test/native/preload/hang-fork.c, preloaded
 * into the desktop's processes, hangs the first fork of gnome-shell's main
 * thread and writes "<child pid> <shell pid>" to a marker file. Both the
 * agent's desktop (startDesktop) and the test bed (scripts/desktop.mjs) must
 * end that child and come up with the same shell, not a second one.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDesktop } from "../../lib/index.js";
import { shellEval } from "../../lib/observe/agent-desktop/wayland.js";
import { compositorPid, startDesktop as startTestDesktop } from "../../scripts/desktop.mjs";
import { privateRuntimeDir, requireDeps } from "../support/agent-desktop.js";

const TIMEOUT = 120_000;
const SHIM_SOURCE = fileURLToPath(new URL("../native/preload/hang-fork.c", import.meta.url));
let work: string;
let shim: string;

beforeAll(() => {
  requireDeps();
  privateRuntimeDir();
  work = mkdtempSync(join(tmpdir(), "axsnap-hang-fork-"));
  shim = join(work, "hang-fork.so");
  execFileSync("cc", ["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o", shim, SHIM_SOURCE]);
});

afterAll(() => {
  execFileSync("rm", ["-rf", work]);
});

/** Runs `start` with the shim preloaded into what it spawns; the marker file's path. */
async function withHungFork<T>(name: string, start: () => Promise<T>): Promise<{ value: T; marker: string }> {
  const marker = join(work, `${name}.marker`);
  const saved = {
    LD_PRELOAD: process.env.LD_PRELOAD,
    AXSNAP_TEST_HANG_FORK: process.env.AXSNAP_TEST_HANG_FORK,
  };
  process.env.LD_PRELOAD = shim;
  process.env.AXSNAP_TEST_HANG_FORK = marker;
  try {
    return { value: await start(), marker };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** The marker's "<child> <shell>": the fork the shim hung, and whose it was. */
function hung(marker: string): { child: number; shell: number } {
  expect(existsSync(marker), "the shim hung a fork of gnome-shell's").toBe(true);
  const [child, shell] = readFileSync(marker, "utf8").trim().split(" ").map(Number);
  return { child: child!, shell: shell! };
}

/** Whether `pid` is a process that still runs gnome-shell's image (a fork that never ran exec). */
function stillUnexecuted(pid: number, shellPid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === readlinkSync(`/proc/${shellPid}/exe`);
  } catch {
    return false;
  }
}

describe("a gnome-shell hung in a spawn as it starts", () => {
  it(
    "the agent's desktop ends the hung child, comes up with that same shell, and says so in its log",
    async () => {
      const { value: desk, marker } = await withHungFork("agent", () =>
        startDesktop({ name: "hung", wayland: true }),
      );
      try {
        const { child, shell } = hung(marker);
        expect(desk.pids.compositor).toBe(shell);
        expect(stillUnexecuted(child, shell)).toBe(false);
        expect(await shellEval("dbus-send", desk.env, "Main.overview.visible")).toBe("false");
        const log = readFileSync(join(dirname(desk.stateFile), "hung.log"), "utf8");
        expect(log).toContain(
          `gnome-shell's spawn of a helper hung before its exec (pid ${child}): ended it`,
        );
        expect(log).not.toContain("starting it again");
      } finally {
        await desk.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "the test bed does the same",
    async () => {
      const { value: desktop, marker } = await withHungFork("testbed", () =>
        startTestDesktop({ wayland: true }),
      );
      try {
        const { child, shell } = hung(marker);
        expect(compositorPid(desktop)).toBe(shell);
        expect(stillUnexecuted(child, shell)).toBe(false);
      } finally {
        await desktop.stop();
      }
    },
    TIMEOUT,
  );
});
