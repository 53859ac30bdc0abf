/**
 * What the HTTP server checks before a request reaches MCP: where it may
 * listen, which Host and Origin headers it accepts (the MCP specification's
 * defence against DNS rebinding: a page whose name resolves to this machine
 * sends its own name as Host, and its origin as Origin), and the bearer
 * token, compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";

/** A token from the environment shorter than this is refused: it could be guessed. */
export const MIN_TOKEN_LENGTH = 16;

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** 127.0.0.0/8, ::1 (and its v4-mapped form) and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::";
}

/** A host as a Host header spells it: IPv6 in brackets, lower case. */
function hostName(host: string): string {
  return isIP(host) === 6 ? `[${host.toLowerCase()}]` : host.toLowerCase();
}

/** Refuses a listen address the options do not allow, before anything listens. */
export function checkListenHost(host: string, allowRemote: boolean, allowedHosts: readonly string[]): void {
  if (isLoopback(host)) return;
  if (!allowRemote)
    throw new AxsnapError(
      "POLICY_DENIED",
      `the MCP HTTP server listens on loopback only; ${JSON.stringify(host)} is not a loopback address`,
      {
        hint: "listen on 127.0.0.1 (the default) and reach it through a tunnel (ssh -L), or pass --allow-remote (allowRemote: true) to listen there: every client still needs the bearer token",
      },
    );
  if (isWildcard(host) && allowedHosts.length === 0)
    throw invalidArgument(
      `listening on ${host} (every address) needs the names clients reach the server by`,
      'pass --allowed-host NAME (allowedHosts: ["NAME"]) for each name or address clients put in the URL, or --allowed-host "*" to accept any Host header',
    );
}

/**
 * The Host header values accepted: the loopback names and the listened host at the port,
 * and each allowed host (at the port when it names none). undefined: any.
 */
export function allowedHostSet(
  host: string,
  port: number,
  allowedHosts: readonly string[],
): Set<string> | undefined {
  if (allowedHosts.includes("*")) return undefined;
  const set = new Set<string>();
  for (const name of LOOPBACK_NAMES) set.add(`${name}:${port}`);
  if (!isWildcard(host)) set.add(`${hostName(host)}:${port}`);
  for (const a of allowedHosts) {
    const h = a.toLowerCase();
    if (/^(\[[0-9a-f:.]+\]|[^:]+):\d+$/.test(h)) set.add(h);
    else set.add(`${hostName(h)}:${port}`);
  }
  return set;
}

/** Why a request's Host and Origin headers are refused (403), or undefined when they are fine. */
export function headerProblem(
  hostHeader: string | undefined,
  origin: string | undefined,
  hosts: Set<string> | undefined,
  origins: readonly string[],
): string | undefined {
  if (hosts !== undefined) {
    const h = hostHeader?.toLowerCase();
    const withPort = h === undefined ? undefined : /:\d+$/.test(h) ? h : `${h}:80`;
    if (withPort === undefined || !hosts.has(withPort))
      return `Host header ${JSON.stringify(hostHeader ?? "")} is not one this server answers to (a DNS rebinding guard): reach it by ${[...hosts][0]}, or start it with --allowed-host NAME`;
  }
  if (origin === undefined || origins.includes(origin)) return undefined;
  let own = false;
  try {
    const u = new URL(origin);
    const port = u.port || (u.protocol === "https:" ? "443" : "80");
    own =
      (u.protocol === "http:" || u.protocol === "https:") && (hosts?.has(`${u.hostname}:${port}`) ?? true);
  } catch {
    own = false;
  }
  return own
    ? undefined
    : `Origin ${JSON.stringify(origin)} is not allowed (a page of another site may not drive this desktop): start the server with --allowed-origin ${origin} if it should`;
}

const sha256 = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

/** Whether an Authorization header carries the token; constant time in the token's content and length. */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const m = authorization === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  // Hashing both sides first makes the comparison equal-length whatever was sent.
  return timingSafeEqual(sha256(m?.[1] ?? ""), sha256(token)) && m !== null;
}

/** The token: the given one (checked), AXSNAP_MCP_TOKEN, or a fresh random one. */
export function tokenOf(given: string | undefined): { token: string; generated: boolean } {
  const t = given ?? process.env.AXSNAP_MCP_TOKEN;
  if (t === undefined || t === "") return { token: randomBytes(32).toString("base64url"), generated: true };
  if (t.length < MIN_TOKEN_LENGTH || /\s/.test(t))
    throw invalidArgument(
      `the MCP HTTP token must be at least ${MIN_TOKEN_LENGTH} characters without spaces (got ${t.length} characters)`,
      "set AXSNAP_MCP_TOKEN to a long random string (e.g. `openssl rand -base64 32`), or unset it to have one generated",
    );
  return { token: t, generated: false };
}

/**
 * The directory for the token file: the user's runtime directory when there is one
 * ($XDG_RUNTIME_DIR/axsnap), else axsnap-<uid> under the temporary directory; made 0700,
 * and refused when it is a symlink or someone else's.
 */
export function runtimeDir(): string {
  const xdg = process.env.XDG_RUNTIME_DIR;
  const dir = xdg ? join(xdg, "axsnap") : join(tmpdir(), `axsnap-${process.getuid?.() ?? "user"}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid))
    throw new AxsnapError("PERMISSION_DENIED", `${dir} is not a directory of this user's`, {
      hint: "remove it, or set XDG_RUNTIME_DIR to a directory only you can write",
    });
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

/** Writes the token to a file only this user can read (0600), replacing a stale one; returns its path. */
export function writeTokenFile(token: string, port: number, dir = runtimeDir()): string {
  const path = join(dir, `mcp-http-${port}.token`);
  try {
    unlinkSync(path);
  } catch {
    // None there: the usual case.
  }
  // O_EXCL: a file (or a symlink) planted between the unlink and here is refused, not followed.
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, `${token}\n`);
  } finally {
    closeSync(fd);
  }
  return path;
}
