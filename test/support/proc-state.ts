/** A process's state letter from /proc/PID/stat (R, S, T stopped, Z, ...); "" once the pid is gone. */
import { readFileSync } from "node:fs";

export function processState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "";
  } catch {
    return "";
  }
}
