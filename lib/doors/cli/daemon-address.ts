/**
 * Where the CLI's warm process listens, shared by the client (every `axsnap`
 * start, so only node:fs/os/path here) and the server (lib/doors/cli/daemon.ts).
 *
 * One warm process serves exactly the commands that would behave the same in
 * it as in a fresh process: the socket's name is a hash of the code (the
 * addon, and the CLI's file — every module of lib/ when it runs from source
 * — by size and time) and of every environment variable the library, the
 * addon, Xlib, D-Bus or Tesseract read for the whole process. Another
 * desktop, bus, state directory, locale or build gets a warm process of its
 * own; one whose code has changed since it started goes away (daemon.ts
 * checks its own address each second). Those variables are all the
 * environment a warm process has (`keyedEnv`): what a command reads of its
 * caller's environment besides them comes with the command (lib/doors/cli/caller.ts).
 *
 * The directory is the user's runtime directory ($XDG_RUNTIME_DIR/axsnap,
 * else $TMPDIR/axsnap-<uid>, /tmp by default), 0700 and owned by this user, checked with
 * lstat before every use: anyone who could open the socket could act on the
 * user's desktop. A directory that fails the check means no warm process,
 * never a weaker one.
 */
import { type Dirent, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * The variables a command's behaviour depends on, besides AXSNAP_* (all of
 * which count). Every environment read a served command can reach is one of
 * these — the library's (DISPLAY and the buses in desktop-backend.ts, the
 * store's XDG_STATE_HOME and HOME, the desktops' state in XDG_RUNTIME_DIR or
 * TMPDIR, PATH for programs, AXSNAP_NATIVE_PATH), the addon's (the buses,
 * DISPLAY, AXSNAP_*, OMP_THREAD_LIMIT, TESSDATA_PREFIX), Xlib's, GIO's — or
 * is made in the caller's environment, sent with the command (permissions'
 * XDG_SESSION_TYPE: lib/doors/cli/caller.ts). A launched app's whole environment
 * is never made here: a launch runs in the caller's own process.
 */
const KEYED = [
  "DISPLAY",
  "XAUTHORITY",
  "WAYLAND_DISPLAY",
  "DBUS_SESSION_BUS_ADDRESS",
  "AT_SPI_BUS_ADDRESS",
  "XDG_RUNTIME_DIR",
  "XDG_STATE_HOME",
  "XDG_DATA_HOME",
  "XDG_DATA_DIRS",
  "XDG_CURRENT_DESKTOP",
  "HOME",
  "PATH",
  "LANG",
  "LANGUAGE",
  "LC_ALL",
  "LC_CTYPE",
  "LC_MESSAGES",
  "TZ",
  "TMPDIR",
  "TESSDATA_PREFIX",
  "OMP_THREAD_LIMIT",
  "NODE_OPTIONS",
];

export type Env = Record<string, string | undefined>;

/** AXSNAP_DAEMON=off (or 0, no, false): every command runs in its own process. */
export function daemonDisabled(env: Env): boolean {
  const v = env.AXSNAP_DAEMON?.toLowerCase();
  return v === "off" || v === "0" || v === "no" || v === "false";
}

/** How long a warm process waits for its next command before it exits. */
export function idleMsOf(env: Env): number {
  const n = Number(env.AXSNAP_DAEMON_IDLE_MS);
  return Number.isFinite(n) && n >= 100 && n <= 86_400_000 ? Math.round(n) : 600_000;
}

/** The runtime directory for sockets, created 0700; undefined when it is not safely ours. */
export function daemonDir(env: Env): string | undefined {
  const uid = process.getuid?.() ?? 0;
  const runtime = env.XDG_RUNTIME_DIR;
  // os.tmpdir() without loading node:os (a few ms of every start): $TMPDIR, else /tmp.
  const tmp = env.TMPDIR?.startsWith("/") ? env.TMPDIR.replace(/(.)\/+$/, "$1") : "/tmp";
  const dir = runtime?.startsWith("/") ? join(runtime, "axsnap") : join(tmp, `axsnap-${uid}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = lstatSync(dir);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * Two 32-bit FNV-1a hashes (different offset bases), hex: a stable name, not
 * a secret (the directory's mode is the protection).
 */
function fnv1a(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

/** Size and modification time of a file, or "-": a rebuilt CLI or addon is another build. */
function stamp(file: string): string {
  try {
    const st = statSync(file);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return "-";
  }
}

/** Every module below `dir`, by path, size and time: the CLI run from source (lib/cli.ts under tsx). */
function treeStamps(dir: string, out: string[]): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    out.push(`${dir}:-`);
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) treeStamps(path, out);
    else if (/\.[cm]?[jt]s$/.test(e.name)) out.push(`${path}:${stamp(path)}`);
  }
}

/**
 * The code a process started from `script` runs. A bundle (dist/cli.js) is
 * one file whose imports name its chunks by their content, so its own stamp
 * says when any of them changed; from source every module is its own file,
 * loaded as it is when first imported, so each of lib/'s counts.
 */
function codeStamps(script: string): string[] {
  const out = [`cli=${script}:${stamp(script)}`];
  if (/\.[cm]?ts$/.test(script)) treeStamps(dirname(script), out);
  return out;
}

/**
 * AXSNAP_* variables that are the caller's own, read from the environment
 * sent with each command (lib/doors/cli/caller.ts), so one warm process serves
 * callers that trace to different files: AXSNAP_TRACE (the trace a command
 * appends to) and the secrets a replay reads.
 */
const PER_CALLER = /^AXSNAP_(TRACE|SECRET_.*)$/;

/** The variables a warm process keeps, and is started with: those its address is made of. */
function keyed(name: string): boolean {
  return KEYED.includes(name) || (name.startsWith("AXSNAP_") && !PER_CALLER.test(name));
}

/** The part of `env` a warm process has: no other variable of whoever started it reaches it (or its commands). */
export function keyedEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && keyed(k)) out[k] = v;
  return out;
}

/**
 * The key of a warm process: the code (`script` is the CLI file this
 * process runs; the addon is found beside it the way lib/native.ts looks
 * first) and the environment that shapes a command.
 */
export function daemonKey(env: Env, script: string): string {
  const root = dirname(dirname(script));
  const parts = [
    `uid=${process.getuid?.() ?? 0}`,
    `node=${process.execPath}:${process.version}:${process.execArgv.join(" ")}`,
    ...codeStamps(script),
    `addon=${stamp(join(root, "build", "Release", "axsnap.node"))}`,
  ];
  const names = Object.keys(env).filter(keyed).sort();
  for (const k of names) parts.push(`${k}=${env[k]}`);
  return fnv1a(parts.join("\0"));
}

export function socketPath(dir: string, key: string): string {
  return join(dir, `cli-${key}.sock`);
}
