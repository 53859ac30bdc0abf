/**
 * The CLI's warm process: one per user, desktop, environment and code (the
 * socket name says which: lib/doors/cli/daemon-address.ts). It keeps what a fresh
 * process has to build for every command (node's loaded modules, the addon,
 * the bus connection, the app's peer connection and caches) and runs the
 * command lines clients hand it with the same code a fresh process runs
 * (runCommandLine), each with a fresh Runner and Session, so a command means
 * the same served or not; only the backend is shared, as it is for a library
 * user's long-lived process.
 *
 * It acts as its caller, or does not serve the command. Its own environment
 * is only what its address is made of (the display, the buses, HOME, XDG
 * dirs, locale, PATH, AXSNAP_*: the same for every caller it serves), so no
 * caller's variable reaches another's command. Everything else that makes a
 * process the caller's comes with each command and is used as the caller's
 * (lib/doors/cli/caller.ts): the caller's environment (permissions' session type),
 * its working directory (relative paths are resolved against it; this
 * process never changes its own, which would keep the caller's directory
 * busy), its umask (set for the command: the session directory's files),
 * and its files: a --calls-file is read by the client and sent, a
 * screenshot is sent back to the client to write. Why the client does the
 * file work rather than this process with the caller's cwd and umask: a
 * path can mean the caller's own process — /dev/stdout, /dev/stdin,
 * /proc/self/fd/N, anything linked to them — and only the caller's process
 * opens it as the caller. What cannot be done for the caller from here is
 * not served: a command line with a `launch` step (the app would be this
 * process's child, with this process's session, cwd and umask) runs in the
 * caller's own process, as does one in a deleted working directory.
 *
 * One command at a time: a client that finds it busy runs its command in
 * its own process, so a long `wait-for` never holds up another command, and
 * the process-wide umask and output can belong to the command being served.
 *
 * It goes away by itself: after its idle time, when its desktop's X server
 * or session bus no longer accepts connections, when its socket is removed
 * or replaced, when its code has changed since it started (its address is
 * no longer the one it listens at: a client of the new code would find
 * another), and on SIGTERM/SIGINT; `axsnap daemon stop` asks it.
 *
 * It hears only its own user: a connection from a process of another uid
 * (its peer credentials, lib/peer-uid.ts) is closed before a byte is read,
 * whatever let that process reach the socket.
 */
import { chmodSync, statSync, unlinkSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { dirname, isAbsolute, resolve } from "node:path";
import { unescapeAddressValue } from "../../observe/agent-desktop/bus-address.js";
import { peerIsOwnUser } from "../../peer-uid.js";
import { type Caller, type CallerInput, inputText, NotServedHere, type Written } from "./caller.js";
import type { Context, Serve } from "./context.js";
import { daemonKey, idleMsOf, socketPath } from "./daemon-address.js";
import type { Frame, RunRequest, WireBatch } from "./daemon-client.js";
import { HeldSnapshots } from "./held.js";
import { redirectOutput } from "./output.js";

/** How often the warm process checks that its desktop, its socket and its code are still there. */
const CHECK_MS = 1000;

export interface DaemonOptions {
  address: string;
  context: Context;
  /** Runs each command served: main.ts's runCommandLine and servedHere, passed in (main.ts loads this module). */
  serve: Serve;
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
    // A value that does not read back (a broken escape, bytes that are no UTF-8) is not watched.
    const path = unescapeAddressValue(fields.get("path") ?? "");
    const abstract = unescapeAddressValue(fields.get("abstract") ?? "");
    if (fields.has("path")) {
      if (path) out.push(path);
    } else if (abstract && process.platform === "linux") out.push(`\0${abstract}`);
  }
  return out;
}

function send(socket: Socket, frame: Frame): void {
  if (!socket.destroyed) socket.write(`${JSON.stringify(frame)}\n`);
}

const CALLER_GONE = "the caller went away before the file was written";

/** What appending a trace batch did, as the client answers it: the append's result, or why it failed. */
export type Traced = { runId: string; first: number; last: number } | { error: string };

/** The client's answers to "write" and "trace" frames, by number; each is answered once the connection ends. */
class Replies {
  private next = 0;
  private readonly waiting = new Map<number, { path: string; done: (w: Written) => void }>();
  private readonly tracing = new Map<number, (t: Traced) => void>();
  private gone = false;

  /** Has the client append a trace batch to `dir` (lib/session/trace/append.ts), as the caller. */
  trace(socket: Socket, dir: string, batch: WireBatch): Promise<Traced> {
    if (this.gone || socket.destroyed) return Promise.resolve({ error: CALLER_GONE });
    const n = ++this.next;
    return new Promise((done) => {
      this.tracing.set(n, done);
      send(socket, { t: "trace", n, dir, batch });
    });
  }

  /** Has the client write `data` to `path` (its name as the command line gave it). */
  write(socket: Socket, path: string, data: Uint8Array): Promise<Written> {
    if (this.gone || socket.destroyed) return Promise.resolve({ path, error: CALLER_GONE });
    const n = ++this.next;
    return new Promise((done) => {
      this.waiting.set(n, { path, done });
      const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      send(socket, { t: "write", n, path, d: bytes.toString("base64") });
    });
  }

  /** One line from the client while its command runs; false when it is no reply of ours. */
  take(line: string): boolean {
    let r: { t?: unknown; n?: unknown; path?: unknown; error?: unknown };
    try {
      r = JSON.parse(line) as typeof r;
    } catch {
      return false;
    }
    if (r.t === "traced") return this.traced(r as Record<string, unknown>);
    const waiting = typeof r.n === "number" ? this.waiting.get(r.n) : undefined;
    if (
      r.t !== "wrote" ||
      waiting === undefined ||
      typeof r.path !== "string" ||
      (r.error !== undefined && typeof r.error !== "string")
    )
      return false;
    this.waiting.delete(r.n as number);
    waiting.done(r.error === undefined ? { path: r.path } : { path: r.path, error: r.error as string });
    return true;
  }

  private traced(r: Record<string, unknown>): boolean {
    const done = typeof r.n === "number" ? this.tracing.get(r.n) : undefined;
    if (done === undefined) return false;
    const { runId, first, last, error } = r;
    if (typeof error === "string") done({ error });
    else if (typeof runId === "string" && typeof first === "number" && typeof last === "number")
      done({ runId, first, last });
    else return false;
    this.tracing.delete(r.n as number);
    return true;
  }

  close(): void {
    this.gone = true;
    for (const { path, done } of this.waiting.values()) done({ path, error: CALLER_GONE });
    this.waiting.clear();
    for (const done of this.tracing.values()) done({ error: CALLER_GONE });
    this.tracing.clear();
  }
}

/** A run request, checked field by field; undefined when it is not one. */
function runRequest(r: Record<string, unknown>): RunRequest | undefined {
  const { argv, cwd, env, umask, input } = r;
  if (r.t !== "run" || !Array.isArray(argv) || !argv.every((a) => typeof a === "string")) return undefined;
  if (typeof cwd !== "string" || !isAbsolute(cwd)) return undefined;
  if (env === null || typeof env !== "object" || Array.isArray(env)) return undefined;
  if (!Object.values(env).every((v) => typeof v === "string")) return undefined;
  if (typeof umask !== "number" || !Number.isInteger(umask) || umask < 0 || umask > 0o777) return undefined;
  if (input !== undefined) {
    const i = input as Partial<CallerInput> | null;
    if (i === null || typeof i !== "object" || typeof i.file !== "string") return undefined;
    if ((typeof i.text === "string") === (typeof i.error === "string")) return undefined;
  }
  return r as unknown as RunRequest;
}

/** The client as the caller of the command it handed over (lib/doors/cli/caller.ts). */
function servedCaller(
  request: RunRequest,
  write: (path: string, data: Uint8Array) => Promise<Written>,
  trace: (dir: string, batch: WireBatch) => Promise<Traced>,
): Caller {
  const { input } = request;
  return {
    appendTrace: async (dir, batch) => {
      const r = await trace(dir, {
        screenshots: batch.screenshots,
        entries: batch.entries,
        files: batch.files.map((f) => ({
          name: f.name,
          d: Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength).toString("base64"),
        })),
      });
      if ("error" in r) throw new Error(r.error);
      return r;
    },
    env: request.env,
    resolve: (path) => resolve(request.cwd, path),
    readText: (file) => {
      // Only what the client read for it: a file it did not read is read by the client's own process.
      if (input === undefined || input.file !== file) throw new NotServedHere();
      return inputText(input);
    },
    writeFile: write,
  };
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
  const { address, context, serve } = options;
  const idleMs = idleMsOf(process.env);
  // What its address was made of when it started, for telling when its code has changed since.
  const startEnv = { ...process.env };
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
  // The snapshots its commands printed, live: refs into them reach their elements (lib/doors/cli/held.ts).
  const held = new HeldSnapshots();

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
    let requested = false;
    const replies = new Replies();
    socket.on("close", () => replies.close());
    const onData = (chunk: string) => {
      const from = buffer.length;
      buffer += chunk;
      for (let nl = buffer.indexOf("\n", from); nl !== -1; nl = buffer.indexOf("\n")) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        // After the request, only replies to what this process asked of the client.
        if (requested) {
          if (!replies.take(line)) socket.destroy();
          continue;
        }
        requested = true;
        let request: Record<string, unknown>;
        try {
          request = JSON.parse(line) as typeof request;
        } catch {
          socket.destroy();
          return;
        }
        if (request === null || typeof request !== "object") {
          socket.destroy();
          return;
        }
        void handle(socket, request, replies);
      }
      // A client that sends no newline within a command line's worth of bytes is not ours.
      if (buffer.length > 4 * 1024 * 1024) socket.destroy();
    };
    void peerIsOwnUser(socket).then((own) => (own ? socket.on("data", onData) : socket.destroy()));
  });

  async function handle(socket: Socket, message: Record<string, unknown>, replies: Replies): Promise<void> {
    if (message.t === "status") {
      send(socket, { t: "status", pid: process.pid, served, busy, startedAt, idleMs });
      socket.end();
      return;
    }
    if (message.t === "stop") {
      send(socket, { t: "stopping", pid: process.pid });
      socket.end();
      stop();
      return;
    }
    const request = runRequest(message);
    if (request === undefined) {
      socket.destroy();
      return;
    }
    if (busy || stopping) {
      send(socket, { t: "busy" });
      socket.end();
      return;
    }
    const caller = servedCaller(
      request,
      (path, data) => replies.write(socket, path, data),
      (dir, batch) => replies.trace(socket, dir, batch),
    );
    if (!serve.servedHere(request.argv, caller)) {
      send(socket, { t: "own" });
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
    // The files the command creates itself (the session directory's) get the caller's mode bits.
    const umask = process.umask(request.umask);
    let code: number;
    try {
      code = await serve.run(request.argv, { ...context, warm: true, caller, held });
    } catch (e) {
      send(socket, { t: "err", d: `axsnap: ${e instanceof Error ? e.message : String(e)}\n` });
      code = 1;
    } finally {
      process.umask(umask);
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
      // Its code changed since it started: a client of the new code is served elsewhere, and none of the old.
      if (socketPath(dirname(address), daemonKey(startEnv, context.script)) !== address) return stop();
      if (!busy && Date.now() - lastUsed >= idleMs) return stop();
      for (const s of watched) if (!(await accepts(s))) return stop();
    } finally {
      checking = false;
    }
  }, CHECK_MS);

  if (options.warm !== undefined) await warmUp(options.warm);
  await finished;
  // Bounded: a desktop that went away must not keep this process from ending.
  await Promise.race([held.close(), new Promise((r) => setTimeout(r, 2000).unref())]);
}

/** One walk of the app the starting command named: the first walk of an app in a process is the slow one. */
async function warmUp(app: string): Promise<void> {
  try {
    const { snapshot } = await import("../../observe/desktop.js");
    const target = /^\d+$/.test(app) ? Number(app) : app;
    const snap = await snapshot({ app: target, screenshot: false, ocr: false, deadlineMs: 3000 });
    await snap.release();
  } catch {
    // Not there, or not walkable now: the command that asks for it says why.
  }
}
