/**
 * When is a desktop's process gone? Not when /proc first shows it as a
 * zombie: a process whose main thread has exited while another of its
 * threads still runs is listed "Z", yet its files stay open until that
 * thread ends. CI saw this once: a Wayland desktop's stop returned, every
 * process of it "gone", and /proc/net/unix still listed its wayland-0
 * (gnome-shell's main thread had ended, some of its 12 threads not yet).
 *
 * test/native/procs/zombie-leader.c makes that state and holds it: it
 * listens on a unix socket, starts a thread that never ends, and ends its
 * main thread.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { isAlive, processId, terminate } from "../../lib/observe/agent-desktop/processes.js";
import { until } from "../support/agent-desktop.js";

const SOURCE = fileURLToPath(new URL("../native/procs/zombie-leader.c", import.meta.url));
let work: string;
let program: string;

beforeAll(() => {
  if (process.platform !== "linux") throw new Error("this test reads Linux's /proc");
  work = mkdtempSync(join(tmpdir(), "axsnap-zombie-leader-"));
  program = join(work, "zombie-leader");
  execFileSync("cc", ["-Wall", "-Werror", "-pthread", "-o", program, SOURCE]);
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

const listed = (path: string) =>
  readFileSync("/proc/net/unix", "utf8")
    .split("\n")
    .some((line) => line.trim().split(/\s+/)[7] === path);

const stateOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
};

it("a process listed as a zombie while one of its threads runs is alive until that thread ends, its socket with it", async () => {
  const socket = join(work, "held.sock");
  const child = spawn(program, [socket], { stdio: "ignore" });
  try {
    expect(
      await until(() => listed(socket) && stateOf(child.pid!) === "Z", 5000),
      "the main thread ended",
    ).toBe(true);
    const id = processId(child.pid!);
    expect(id, "its socket is still open").toBeDefined();
    expect(isAlive(id)).toBe(true);
    expect(await terminate([id!], 500)).toEqual([]);
    expect(listed(socket)).toBe(false);
  } finally {
    child.kill("SIGKILL");
  }
});

it("a zombie whose threads have all ended is gone, though its parent has not reaped it yet", async () => {
  // A parent that never waits: its child, once exited, stays a zombie with no thread left.
  const parent = spawn(
    "python3",
    [
      "-c",
      "import os, sys, time\np = os.fork()\nif p == 0: os._exit(0)\nprint(p, flush=True)\ntime.sleep(30)",
    ],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  try {
    const pid = await new Promise<number>((resolve) =>
      parent.stdout!.once("data", (d) => resolve(Number(String(d)))),
    );
    expect(await until(() => stateOf(pid) === "Z", 5000)).toBe(true);
    expect(processId(pid)).toBeUndefined();
  } finally {
    parent.kill("SIGKILL");
  }
});
