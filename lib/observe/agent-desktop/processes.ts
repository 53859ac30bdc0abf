/**
 * The desktop's processes as /proc shows them: alive or not (by pid and
 * start time, so a reused pid is not taken for ours), every process whose
 * environment carries the desktop's marker (what the bus activated, what was
 * launched into it), and their ending, TERM first and KILL after.
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { MARKER, type ProcessId } from "./state.js";

interface Stat {
  state: string;
  ppid: number;
  pgid: number;
  start: string;
}

function statOf(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ")".
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: rest[0]!, ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19]! };
}

/**
 * The process as it runs now, or undefined when there is none. A zombie is
 * gone once none of its threads runs: /proc lists a process as "Z" as soon
 * as its main thread has exited, while its other threads (and its open
 * files, a Wayland socket among them) may still be there.
 */
export function processId(pid: number): ProcessId | undefined {
  const st = statOf(pid);
  if (!st || st.state === "X" || (st.state === "Z" && threadsOf(pid) <= 1)) return undefined;
  return { pid, start: st.start };
}

/** /proc/PID/status's thread count; 0 when it cannot be read. */
function threadsOf(pid: number): number {
  try {
    return Number(/^Threads:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** True while that very process (same pid, same start time) runs. */
export function isAlive(p: ProcessId | undefined): boolean {
  if (!p || !(p.pid > 0)) return false;
  return processId(p.pid)?.start === p.start;
}

/** Every process of this user whose environment has MARKER=id, except this one. */
export function markedProcesses(id: string): ProcessId[] {
  if (id === "") return [];
  const needle = `\0${MARKER}=${id}\0`;
  const found: ProcessId[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, "latin1");
    } catch {
      continue;
    }
    if (!`\0${environ}`.includes(needle)) continue;
    const p = processId(pid);
    if (p) found.push(p);
  }
  return found;
}

/** Clock ticks per second of /proc's start times: USER_HZ, 100 on every Linux ABI Node runs on. */
const USER_HZ = 100;

/**
 * Children of `parent` that were forked at least `minAgeMs` ago and have
 * not run exec yet (they still run the parent's program): a child
 * that hangs there hangs a parent that waits for its exec, as GLib's spawn
 * does. Ending such a child lets the parent go on.
 */
export function unexecutedChildren(parent: number, minAgeMs: number): ProcessId[] {
  const image = (pid: number | string) => {
    try {
      return readlinkSync(`/proc/${pid}/exe`);
    } catch {
      return undefined;
    }
  };
  const own = image(parent);
  if (own === undefined) return [];
  let uptimeTicks: number;
  let entries: string[];
  try {
    uptimeTicks = Number.parseFloat(readFileSync("/proc/uptime", "utf8")) * USER_HZ;
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const found: ProcessId[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const st = statOf(Number(entry));
    if (!st || st.ppid !== parent || st.state === "Z" || image(entry) !== own) continue;
    if (((uptimeTicks - Number(st.start)) * 1000) / USER_HZ >= minAgeMs)
      found.push({ pid: Number(entry), start: st.start });
  }
  return found;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {}
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** TERM, up to `graceMs` for them to go, then KILL; resolves with those still there after that (none, normally). */
export async function terminate(processes: ProcessId[], graceMs = 2000): Promise<ProcessId[]> {
  const left = () => processes.filter(isAlive);
  for (const p of left()) signal(p.pid, "SIGTERM");
  const until = Date.now() + graceMs;
  while (left().length > 0 && Date.now() < until) await sleep(25);
  for (const p of left()) signal(p.pid, "SIGKILL");
  const killedBy = Date.now() + 2000;
  while (left().length > 0 && Date.now() < killedBy) await sleep(25);
  return left();
}

/** KILL at once, without waiting: for process exit, where nothing asynchronous runs any more. */
export function killNow(processes: ProcessId[]): void {
  for (const p of processes) if (isAlive(p)) signal(p.pid, "SIGKILL");
}
