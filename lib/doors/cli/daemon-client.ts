/**
 * The client side of the CLI's warm process: hand a command line to it, or
 * say it cannot take it so the command runs here. Loaded on every start, so
 * it needs only node's own modules.
 *
 * The protocol (one connection per command, newline-delimited JSON):
 *   client → {"t":"run","argv":[…],"cwd":"…","env":{…},"umask":N,"input"?:{file,text|error}}
 *            or {"t":"status"} / {"t":"stop"}
 *   server → {"t":"busy"} | {"t":"own"} | {"t":"start"}, then {"t":"out"|"err","d":"…"}…, {"t":"exit","code":N}
 *   while it runs, server → {"t":"write","n":N,"path":"…","d":base64}, client → {"t":"wrote","n":N,"path":"…","error"?:"…"}
 *   and server → {"t":"trace","n":N,"dir":"…","batch":{screenshots,entries,files:[{name,d:base64}]}},
 *   client → {"t":"traced","n":N,"runId","first","last"} or {"t":"traced","n":N,"error":"…"}
 * The request carries the caller: its environment, working directory and
 * umask, and the --calls-file it names, read here beforehand (stdin
 * included). The files the command writes for the caller (--screenshot) are
 * written here, by this process, as the command asks ("write"): its
 * directory, umask and descriptors (/dev/stdout) are the caller's own.
 * Before "start" nothing has run, so any failure falls back to running the
 * command here ("own": the warm process will not run it, a launch step
 * say). After "start" it may have acted: a connection that ends without
 * "exit" is reported, never run again (that could act twice).
 *
 * Nothing is sent or read until the process at the other end is known to
 * run as this user (its peer credentials, lib/peer-uid.ts): the directory
 * check before the connect can lose a race when a directory above the
 * socket is writable by others. Another user's process there is treated as
 * a warm process that cannot take the command: it runs here.
 */
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import { peerIsOwnUser } from "../../peer-uid.js";
import { type CallerInput, readInput, writeCallerFile } from "./caller.js";
import { daemonDir, daemonDisabled, daemonKey, type Env, keyedEnv, socketPath } from "./daemon-address.js";

export type Frame =
  | { t: "busy" }
  | { t: "own" }
  | { t: "start" }
  | { t: "out"; d: string }
  | { t: "err"; d: string }
  | { t: "write"; n: number; path: string; d: string }
  | { t: "trace"; n: number; dir: string; batch: WireBatch }
  | { t: "exit"; code: number }
  | { t: "status"; pid: number; served: number; busy: boolean; startedAt: number; idleMs: number }
  | { t: "stopping"; pid: number };

/** A command handed to the warm process, with what makes it the caller's. */
export interface RunRequest {
  t: "run";
  argv: string[];
  /** The caller's working directory. */
  cwd: string;
  /** The caller's whole environment. */
  env: Record<string, string>;
  umask: number;
  /** The --calls-file the command line names, read by the caller. */
  input?: CallerInput;
}

/** A trace batch (lib/session/trace/types.ts TraceBatch) on the wire: its PNGs in base64. */
export interface WireBatch {
  screenshots: boolean;
  entries: object[];
  files: { name: string; d: string }[];
}

/** The caller's answer to a "write": the absolute path, and why it failed. */
export interface WroteReply {
  t: "wrote";
  n: number;
  path: string;
  error?: string;
}

/**
 * Commands that never go to the warm process: their own process is part of
 * what they do (mcp, launch, daemon, desktop), they need no backend (help),
 * or they are long or only file work (trace, replay).
 */
const OWN_PROCESS = new Set(["mcp", "launch", "daemon", "desktop", "help", "trace", "replay"]);

/** The global flags that take a value (args.ts VALUED_GLOBALS; not imported: this module loads on every start). */
const VALUED = new Set(["--session", "--deadline", "--desktop", "--trace", "--trace-screenshots"]);

/** The command word: the first argument that is neither a flag nor the value of a global flag before it. */
export function commandWord(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return undefined;
    if (VALUED.has(a)) i++;
    else if (!a.startsWith("-")) return a;
  }
  return undefined;
}

/** Whether this command line may be served by the warm process at all. */
export function servable(argv: string[], env: Env): boolean {
  if (daemonDisabled(env)) return false;
  const word = commandWord(argv);
  if (word === undefined || OWN_PROCESS.has(word)) return false;
  return !(argv.includes("--help") || argv.includes("-h") || argv.includes("--version"));
}

/**
 * `call --calls-file FILE`: the file, read here (stdin, /dev/stdin and a
 * relative name are this process's) before the command is handed on. The
 * last --calls-file before `--` counts, as in the grammar; the warm process
 * checks that the grammar names the same file, else the command runs here.
 */
export function callsInput(argv: string[]): CallerInput | undefined {
  if (commandWord(argv) !== "call") return undefined;
  let file: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") break;
    if (a === "--calls-file" && i + 1 < argv.length) file = argv[++i];
    else if (a.startsWith("--calls-file=")) file = a.slice("--calls-file=".length);
  }
  return file === undefined ? undefined : readInput(file);
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
    // Only the new bytes are searched for the line's end: a screenshot's frame spans many reads.
    const from = buffer.length;
    buffer += chunk;
    for (let nl = buffer.indexOf("\n", from); nl !== -1 && !done; nl = buffer.indexOf("\n")) {
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

/** A file the served command writes for this process, written here; the reply to the warm process. */
function written(f: Extract<Frame, { t: "write" }>): WroteReply {
  const w = writeCallerFile(f.path, Buffer.from(f.d, "base64"));
  return { t: "wrote", n: f.n, ...w };
}

/**
 * A trace batch the served command recorded, appended here (the caller's
 * rights, its umask): lib/session/trace/append.ts, loaded only when a command traces.
 */
async function traced(f: Extract<Frame, { t: "trace" }>): Promise<object> {
  try {
    const { appendToTrace } = await import("../../session/trace/append.js");
    const b = f.batch;
    const r = appendToTrace(f.dir, {
      screenshots: b.screenshots === true,
      entries: Array.isArray(b.entries) ? b.entries : [],
      files: (Array.isArray(b.files) ? b.files : []).map((x) => ({
        name: String(x.name),
        data: Buffer.from(String(x.d), "base64"),
      })),
    });
    return { t: "traced", n: f.n, ...r };
  } catch (e) {
    return { t: "traced", n: f.n, error: (e as Error).message };
  }
}

/**
 * Runs a command line in the warm process at `address` for this process,
 * writing what it prints to this process's stdout and stderr as it comes,
 * and the files it writes for this process here.
 */
export async function runServed(address: string, request: Omit<RunRequest, "t">): Promise<Served> {
  const { socket, listening } = await connectOwn(address);
  if (socket === undefined) return { served: false, listening };
  return new Promise((resolve) => {
    let started = false;
    socket.write(`${JSON.stringify({ t: "run", ...request })}\n`);
    readFrames(
      socket,
      (f) => {
        if (f.t === "busy" || f.t === "own") resolve({ served: false, listening: true });
        else if (f.t === "start") started = true;
        else if (f.t === "out") process.stdout.write(f.d);
        else if (f.t === "err") process.stderr.write(f.d);
        else if (f.t === "write" && started) socket.write(`${JSON.stringify(written(f))}\n`);
        else if (f.t === "trace" && started && typeof f.dir === "string" && f.batch !== null)
          // Answered in order of arrival; the warm process waits for each before it says the command exited.
          void traced(f).then((r) => socket.write(`${JSON.stringify(r)}\n`));
        else if (f.t === "exit") resolve({ served: true, code: f.code });
        return f.t === "busy" || f.t === "own" || f.t === "exit";
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
 * Its environment is only what its address is made of (keyedEnv): the
 * rest of this caller's (a token, say) is this caller's, and each command
 * it serves brings its own caller's.
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
      env: keyedEnv(process.env),
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
