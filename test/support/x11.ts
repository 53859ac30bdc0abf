/**
 * X server faults for the real-desktop tests: a fake X server that accepts
 * connections and never answers, the desktop's Xvfb pid (to stop it), and a
 * restart of Xvfb on the same display number.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import type { Desktop } from "../../scripts/desktop.mjs";

/** A Unix socket at /tmp/.X11-unix/X<n> that accepts clients and never says a word. */
export async function silentXServer(): Promise<{ display: string; close(): Promise<void> }> {
  fs.mkdirSync("/tmp/.X11-unix", { recursive: true, mode: 0o1777 });
  let n = 600;
  while (fs.existsSync(`/tmp/.X11-unix/X${n}`) || fs.existsSync(`/tmp/.X${n}-lock`)) n++;
  const path = `/tmp/.X11-unix/X${n}`;
  const held: net.Socket[] = [];
  const server = net.createServer((socket) => {
    held.push(socket); // read nothing back, write nothing: the client waits for its setup reply
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, resolve);
  });
  server.unref();
  return {
    display: `:${n}`,
    close: async () => {
      for (const s of held) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(path, { force: true });
    },
  };
}

/** The pid of the desktop's X server (scripts/desktop.mjs keeps its child process). */
export function xvfbPid(desktop: Desktop): number {
  const pid = (desktop as unknown as { _xvfb?: { pid?: number } })._xvfb?.pid;
  if (!pid) throw new Error("the desktop has no Xvfb pid");
  return pid;
}

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (predicate()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return predicate();
}

function pidAlive(pid: number): boolean {
  try {
    const state = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
    return state !== undefined && state !== "Z";
  } catch {
    return false;
  }
}

/**
 * Ends the desktop's Xvfb and starts a new one on the same display number.
 * The new server carries the desktop's environment (and so its cleanup
 * marker): desktop.stop() ends it like the first one.
 */
export async function restartXvfb(desktop: Desktop): Promise<void> {
  const old = xvfbPid(desktop);
  const n = desktop.display.slice(1);
  process.kill(old, "SIGTERM");
  if (!(await waitFor(() => !pidAlive(old), 5000))) process.kill(old, "SIGKILL");
  await waitFor(() => !fs.existsSync(`/tmp/.X11-unix/X${n}`), 2000);
  const xvfb = spawn(
    "Xvfb",
    [
      desktop.display,
      "-screen",
      "0",
      `${desktop.width}x${desktop.height}x24`,
      "-nolisten",
      "tcp",
      "-noreset",
    ],
    { env: desktop.env, detached: true, stdio: "ignore" },
  );
  xvfb.unref();
  (desktop as unknown as { _xvfb: unknown })._xvfb = xvfb;
  const up = await waitFor(() => fs.existsSync(`/tmp/.X11-unix/X${n}`), 10_000);
  if (!up) throw new Error(`Xvfb did not come back on ${desktop.display}`);
  // The socket file appears when the server listens; give it a moment to accept.
  await new Promise((r) => setTimeout(r, 300));
}
