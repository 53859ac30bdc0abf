/**
 * The client side of the CLI's warm process: hand a command line to it, or
 * say it cannot take it so the command runs here. Loaded on every start, so
 * it needs only node's own modules.
 *
 * The protocol (one connection per command, newline-delimited JSON):
 *   client → {"t":"run","argv":[…],"cwd":"…"}   or {"t":"status"} / {"t":"stop"}
 *   server → {"t":"busy"} | {"t":"start"}, then {"t":"out"|"err","d":"…"}…, {"t":"exit","code":N}
 * Before "start" nothing has run, so any failure falls back to running the
 * command here. After "start" it may have acted: a connection that ends
 * without "exit" is reported, never run again (that could act twice).
 *
 * Nothing is sent or read until the process at the other end is known to
 * run as this user (its peer credentials, lib/peer-uid.ts): the directory
 * check before the connect can lose a race when a directory above the
 * socket is writable by others. Another user's process there is treated as
 * a warm process that cannot take the command: it runs here.
 */
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import { peerIsOwnUser } from "../peer-uid.js";
import { daemonDir, daemonDisabled, daemonKey, type Env, socketPath } from "./daemon-address.js";

export type Frame =
  | { t: "busy" }
  | { t: "start" }
  | { t: "out"; d: string }
  | { t: "err"; d: string }
  | { t: "exit"; code: number }
  | { t: "status"; pid: number; served: number; busy: boolean; startedAt: number; idleMs: number }
  | { t: "stopping"; pid: number };

/**
 * Commands that never go to the warm process: their own process is part of
 * what they do (mcp, launch, daemon, desktop), or they need no backend (help).
 */
const OWN_PROCESS = new Set(["mcp", "launch", "daemon", "desktop", "help"]);

/** The command word: the first argument that is neither a flag nor the value of a global flag before it. */
export function commandWord(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return undefined;
    if (a === "--session" || a === "--deadline" || a === "--desktop") i++;
    else if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/** Whether this command line may be served by the warm process at all. */
export function servable(argv: string[], env: Env): boolean {
  if (daemonDisabled(env)) return false;
  const word = commandWord(argv);
  if (word === undefined || OWN_PROCESS.has(word)) return false;
  if (argv.includes("--help") || argv.includes("-h") || argv.includes("--version")) return false;
  // `-` reads this process's stdin (--calls-file -, --text-file -), which the warm process cannot see.
  return !argv.includes("-");
}

/** The socket of this environment's warm process, or undefined when the runtime directory is not safe. */
export function addressOf(env: Env, script: string): string | undefined {
  const dir = daemonDir(env);
  if (dir === undefined) return undefined;
  const path = socketPath(dir, daemonKey(env, script));
  // A Unix socket's path has to fit sun_path: 108 bytes on Linux, 104 on macOS (a long $TMPDIR there).
  return Buffer.byteLength(path) < 104 ? path : undefined;
}

/** Reads frames off a socket until it ends; `onFrame` returning true stops reading. */
function readFrames(socket: Socket, onFrame: (f: Frame) => boolean | undefined, onEnd: () => void): void {
  let buffer = "";
  let done = false;
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf("\n"); nl !== -1 && !done; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let frame: Frame;
      try {
        frame = JSON.parse(line) as Frame;
      } catch {
        continue;
      }
      if (onFrame(frame)) {
        done = true;
        socket.destroy();
      }
    }
  });
  socket.on("error", () => undefined);
  socket.on("close", () => {
    if (!done) onEnd();
  });
}

/**
 * Connects to the warm process at `address`: the socket once the process at
 * the other end is this user's, before a byte goes either way; else none,
 * and whether anything was listening there (another user's process counts:
 * a warm process of ours could not listen there either).
 */
function connectOwn(address: string): Promise<{ socket?: Socket; listening: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(address);
    let connected = false;
    socket.on("error", () => undefined);
    socket.on("close", () => resolve({ listening: connected }));
    socket.on("connect", async () => {
      connected = true;
      if (await peerIsOwnUser(socket)) return resolve({ socket, listening: true });
      resolve({ listening: true });
      socket.destroy();
    });
  });
}

/** What became of a command handed to the warm process. */
export type Served =
  /** Nothing ran there (none listening, busy, refused): run it here. */
  | { served: false; listening: boolean }
  | { served: true; code: number }
  /** It started there and the connection ended before its exit status: it may have acted. */
  | { served: true; lost: true };

/**
 * Runs `argv` in the warm process at `address`, writing what it prints to
 * this process's stdout and stderr as it comes.
 */
export async function runServed(address: string, argv: string[], cwd: string): Promise<Served> {
  const { socket, listening } = await connectOwn(address);
  if (socket === undefined) return { served: false, listening };
  return new Promise((resolve) => {
    let started = false;
    socket.write(`${JSON.stringify({ t: "run", argv, cwd })}\n`);
    readFrames(
      socket,
      (f) => {
        if (f.t === "busy") resolve({ served: false, listening: true });
        else if (f.t === "start") started = true;
        else if (f.t === "out") process.stdout.write(f.d);
        else if (f.t === "err") process.stderr.write(f.d);
        else if (f.t === "exit") resolve({ served: true, code: f.code });
        return f.t === "busy" || f.t === "exit";
      },
      () => resolve(started ? { served: true, lost: true } : { served: false, listening: true }),
    );
  });
}

/** Asks the warm process at `address` one control question; undefined when none answers. */
export async function askDaemon(address: string, t: "status" | "stop"): Promise<Frame | undefined> {
  const { socket } = await connectOwn(address);
  if (socket === undefined) return undefined;
  return new Promise((resolve) => {
    socket.write(`${JSON.stringify({ t })}\n`);
    readFrames(
      socket,
      (f) => {
        resolve(f);
        return true;
      },
      () => resolve(undefined),
    );
  });
}

/**
 * Starts a warm process for this environment, detached and unreferenced:
 * this command does not wait for it. `warm` names an app it walks once at
 * its start (the first walk of an app in a process is the slow one).
 * Its own stdio is closed; it says what it does through `daemon status`.
 */
export async function spawnDaemon(script: string, warm?: string): Promise<void> {
  const args = [...process.execArgv, script, "daemon", "run", ...(warm === undefined ? [] : [warm])];
  try {
    // Loaded here, not on every start: node:child_process is a few ms of a command that never spawns.
    const { spawn } = await import("node:child_process");
    const child = spawn(process.execPath, args, {
      detached: true,
      stdio: "ignore",
      // The package root: not the caller's directory, which it would keep busy for its whole life.
      cwd: dirname(dirname(script)),
      env: process.env,
    });
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // Without a warm process every command still runs, in its own process.
  }
}

/** The app a command line names with --app, for the warm process to walk once when it starts. */
export function appWord(argv: string[]): string | undefined {
  const i = argv.indexOf("--app");
  return i !== -1 && i + 1 < argv.length ? argv[i + 1] : undefined;
}
