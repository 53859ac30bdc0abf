/**
 * Support for the agent's desktop tests: a private runtime directory (so
 * the state files and warm processes are this file's own), the X readings of
 * a desktop taken with xdotool, xprop and xwininfo, and /proc checks that a
 * desktop's processes are gone.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processId } from "../../lib/observe/agent-desktop/processes.js";

/** Gives this process (and the CLIs it runs) a runtime directory of its own, 0700. */
export function privateRuntimeDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "axsnap-agent-desktop-test-"));
  process.env.XDG_RUNTIME_DIR = dir;
  return dir;
}

export function requireDeps(): void {
  if (process.platform !== "linux")
    throw new Error("the agent's desktop tests need Linux (Xvfb, D-Bus, AT-SPI)");
  try {
    execFileSync("bash", ["scripts/install-deps.sh", "--check"], { stdio: "pipe" });
  } catch (e) {
    throw new Error(
      `packages for the real-desktop tests are missing; run scripts/install-deps.sh\n${String((e as { stdout?: Buffer }).stdout ?? e)}`,
    );
  }
}

/** Runs an X client on `display`; its stdout. Fails loudly. */
export function x(display: string, file: string, args: string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { env: { ...process.env, DISPLAY: display }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${file} ${args.join(" ")} on ${display}: ${error.message}\n${stderr}`));
        else resolve(String(stdout));
      },
    );
  });
}

export interface Readings {
  /** XQueryPointer: where the pointer is, and the window under it. */
  pointer: { x: number; y: number; window: string };
  /** XGetInputFocus. */
  focus: string;
  /** The window manager's _NET_ACTIVE_WINDOW. */
  active: string;
  /** _NET_CLIENT_LIST_STACKING, bottom to top. */
  stacking: string;
  /** XQueryTree of the root, bottom to top: every top-level window's id. */
  tree: string[];
}

/** The pointer, focus and stacking of a desktop, read through X. */
export async function readings(display: string): Promise<Readings> {
  const [loc, focus, active, stacking, tree] = await Promise.all([
    x(display, "xdotool", ["getmouselocation", "--shell"]),
    x(display, "xdotool", ["getwindowfocus"]),
    x(display, "xprop", ["-root", "-notype", "_NET_ACTIVE_WINDOW"]),
    x(display, "xprop", ["-root", "-notype", "_NET_CLIENT_LIST_STACKING"]),
    x(display, "xwininfo", ["-root", "-children"]),
  ]);
  const field = (k: string) => new RegExp(`^${k}=(\\S+)$`, "m").exec(loc)?.[1] ?? "";
  return {
    pointer: { x: Number(field("X")), y: Number(field("Y")), window: field("WINDOW") },
    focus: focus.trim(),
    active: active.replace(/^.*?:\s*/, "").trim(),
    stacking: stacking.replace(/^.*?:\s*/, "").trim(),
    tree: [...tree.matchAll(/^\s+(0x[0-9a-f]+) /gm)].map((m) => m[1]!),
  };
}

/** Whether that pid runs: a zombie counts as gone once none of its threads runs (processes.ts processId). */
export function running(pid: number): boolean {
  return processId(pid) !== undefined;
}

/** Every live process but this one whose environment mentions `text` (a desktop's runtime directory is in its bus address). */
export function processesMentioning(text: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${e}/environ`, "latin1").includes(text) && running(Number(e)))
        out.push(Number(e));
    } catch {}
  }
  return out;
}

/** Processes whose environment carries the desktop's marker. */
export function marked(id: string): number[] {
  const needle = `\0AXSNAP_AGENT_DESKTOP=${id}\0`;
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (`\0${readFileSync(`/proc/${e}/environ`, "latin1")}`.includes(needle) && running(Number(e)))
        out.push(Number(e));
    } catch {}
  }
  return out;
}

export async function until(test: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await test()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
