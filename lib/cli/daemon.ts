/**
 * The CLI's warm process: one per user, desktop and environment (the socket
 * name says which: lib/cli/daemon-address.ts). It keeps what a fresh process
 * has to build for every command (node's loaded modules, the addon, the bus
 * connection, the app's peer connection and caches) and runs the command
 * lines clients hand it with the same code a fresh process runs
 * (runCommandLine), each with a fresh Runner and Session, so a command means
 * the same served or not; only the backend is shared, as it is for a library
 * user's long-lived process.
 *
 * One command at a time: a client that finds it busy runs its command in
 * its own process, so a long `wait-for` never holds up another command, and
 * the process-wide working directory and output can belong to the command
 * being served.
 *
 * It goes away by itself: after its idle time, when its desktop's X server
 * or session bus no longer accepts connections, when its socket is removed
 * or replaced, and on SIGTERM/SIGINT; `axsnap daemon stop` asks it.
 *
 * It hears only its own user: a connection from a process of another uid
 * (its peer credentials, lib/peer-uid.ts) is closed before a byte is read,
 * whatever let that process reach the socket.
 */
import { chmodSync, statSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { peerIsOwnUser } from "../peer-uid.js";
import type { Context, RunCommandLine } from "./context.js";
import { idleMsOf } from "./daemon-address.js";
import type { Frame } from "./daemon-client.js";
import { redirectOutput } from "./output.js";

/** How often the warm process checks that its desktop and its socket are still there. */
const CHECK_MS = 1000;

export interface DaemonOptions {
  address: string;
  context: Context;
  /** Runs each command served: main.ts's runCommandLine, passed in (main.ts loads this module). */
  run: RunCommandLine;
  /** An app to walk once at the start, so the first command served finds it warm too. */
  warm?: string;
}

/** Whether something accepts connections at a Unix socket (`\0…` is Linux's abstract namespace). */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.on("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });
}

/** The sockets this environment's desktop lives on: the local X display's and the session bus's. */
export function desktopSockets(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  const display = /^:(\d+)(\.\d+)?$/.exec(env.DISPLAY ?? "");
  if (display) out.push(`/tmp/.X11-unix/X${display[1]}`);
  const bus = env.DBUS_SESSION_BUS_ADDRESS ?? "";
  // The first unix address of the list: path=… or abstract=….
  const m = /(?:^|;)unix:([^;]*)/.exec(bus);
  if (m) {
    const fields = new Map(m[1]!.split(",").map((kv) => kv.split("=", 2) as [string, string]));
    const path = fields.get("path");
    const abstract = fields.get("abstract");
    if (path) out.push(decodeURIComponent(path));
    else if (abstract && process.platform === "linux") out.push(`\0${decodeURIComponent(abstract)}`);
  }
  return out;
}

function send(socket: Socket, frame: Frame): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(frame)}\n`);
}

/** Listens at `address`; resolves false when another warm process already answers there. */
async function listen(server: Server, address: string): Promise<boolean> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      server.once("error", resolve);
      server.listen(address, () => {
        server.off("error", resolve);
        resolve(undefined);
      });
    });
    if (error === undefined) return true;
    if (error.code !== "EADDRINUSE") throw error;
    if (await accepts(address)) return false;
    // A socket left by a warm process that was killed: nobody answers at it.
    try {
      unlinkSync(address);
    } catch {
      // Gone already (another warm process starting at the same time took it).
    }
  }
  return false;
}

/** Serves commands until it is stopped or has nothing to serve; resolves when it has closed. */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { address, context, run } = options;
  const idleMs = idleMsOf(process.env);
  const startedAt = Date.now();
  let served = 0;
  let busy = false;
  let stopping = false;
  let lastUsed = Date.now();
  let timer: NodeJS.Timeout | undefined;
  let ino: number | undefined;
  /** The connection of the command being served. */
  let serving: Socket | undefined;
  const busyWith = (socket: Socket) => serving === socket;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });

  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    // A decoder keeps a character split across two reads whole (text to type in any script).
    socket.setEncoding("utf8");
    // A connection that says nothing is not a client of ours; it must not keep this process alive.
    socket.setTimeout(10_000, () => {
      if (!busyWith(socket)) socket.destroy();
    });
    let buffer = "";
    const onData = (chunk: string) => {
      buffer += chunk;
      const nl = buffer.indexOf("\n");
      if (nl === -1) {
        // A client that sends no newline within a command line's worth of bytes is not ours.
        if (buffer.length > 4 * 1024 * 1024) socket.destroy();
        return;
      }
      socket.off("data", onData);
      let request: { t?: string; argv?: unknown; cwd?: unknown };
      try {
        request = JSON.parse(buffer.slice(0, nl)) as typeof request;
      } catch {
        socket.destroy();
        return;
      }
      void handle(socket, request);
    };
    void peerIsOwnUser(socket).then((own) => (own ? socket.on("data", onData) : socket.destroy()));
  });

  async function handle(
    socket: Socket,
    request: { t?: string; argv?: unknown; cwd?: unknown },
  ): Promise<void> {
    if (request.t === "status") {
      send(socket, { t: "status", pid: process.pid, served, busy, startedAt, idleMs });
      socket.end();
      return;
    }
    if (request.t === "stop") {
      send(socket, { t: "stopping", pid: process.pid });
      socket.end();
      stop();
      return;
    }
    const argv = request.argv;
    const cwd = request.cwd;
    if (
      request.t !== "run" ||
      !Array.isArray(argv) ||
      !argv.every((a) => typeof a === "string") ||
      typeof cwd !== "string"
    ) {
      socket.destroy();
      return;
    }
    if (busy || stopping) {
      send(socket, { t: "busy" });
      socket.end();
      return;
    }
    busy = true;
    serving = socket;
    socket.setTimeout(0);
    send(socket, { t: "start" });
    const restore = redirectOutput({
      out: (d) => send(socket, { t: "out", d }),
      err: (d) => send(socket, { t: "err", d }),
    });
    let code: number;
    try {
      // Relative paths in the command line (--screenshot FILE, --calls-file) are the client's.
      process.chdir(cwd);
      code = await run(argv as string[], { ...context, warm: true });
    } catch (e) {
      send(socket, { t: "err", d: `axsnap: ${e instanceof Error ? e.message : String(e)}\n` });
      code = 1;
    } finally {
      restore();
    }
    send(socket, { t: "exit", code });
    socket.end();
    served++;
    lastUsed = Date.now();
    busy = false;
    serving = undefined;
    if (stopping) close();
  }

  let closed = false;
  function close(): void {
    if (closed) return;
    closed = true;
    clearInterval(timer);
    server.close(() => finish());
    // server.close waits for every open connection: a client that lingers must not keep this process.
    for (const s of sockets) s.destroy();
    try {
      // Only our own socket: a newer warm process may have taken the name.
      if (statSync(address).ino === ino) unlinkSync(address);
    } catch {
      // Gone already.
    }
  }
  function stop(): void {
    stopping = true;
    if (!busy) close();
  }

  if (!(await listen(server, address))) return;
  chmodSync(address, 0o600);
  ino = statSync(address).ino;
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, stop);

  const watched = desktopSockets(process.env);
  let checking = false;
  timer = setInterval(async () => {
    if (checking || stopping) return;
    checking = true;
    try {
      let mine = false;
      try {
        mine = statSync(address).ino === ino;
      } catch {
        mine = false;
      }
      if (!mine) return stop();
      if (!busy && Date.now() - lastUsed >= idleMs) return stop();
      for (const s of watched) if (!(await accepts(s))) return stop();
    } finally {
      checking = false;
    }
  }, CHECK_MS);

  if (options.warm !== undefined) await warmUp(options.warm);
  await finished;
}

/** One walk of the app the starting command named: the first walk of an app in a process is the slow one. */
async function warmUp(app: string): Promise<void> {
  try {
    const { snapshot } = await import("../desktop.js");
    const target = /^\d+$/.test(app) ? Number(app) : app;
    const snap = await snapshot({ app: target, screenshot: false, ocr: false, deadlineMs: 3000 });
    await snap.release();
  } catch {
    // Not there, or not walkable now: the command that asks for it says why.
  }
}
