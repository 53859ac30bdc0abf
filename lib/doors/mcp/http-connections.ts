/**
 * How long and how many of the server's connections a client may hold. A
 * client needs no token to open a connection, so what it costs the server
 * (a descriptor, a parser, buffers) must be bounded before anything is
 * authenticated: the headers within a timeout (then 408 and the socket
 * destroyed), at most a number of connections at once (past it a new one is
 * closed as it is accepted), and a request refused before its body is read
 * closes its connection (lib/doors/mcp/http.ts) rather than draining what the
 * client sends.
 */
import type { Server, ServerOptions } from "node:http";
import type { Duplex } from "node:stream";
import { invalidArgument } from "../../model/errors.js";

/** A request's headers must have arrived this long after its connection opened (or its previous request ended). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** A whole request, body included; only a client with the token gets as far as a body. */
export const REQUEST_TIMEOUT_MS = 300_000;
/** An idle connection between two requests (a client with the token: refusals close theirs). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Connections open at once, by default: 64 sessions with a stream and a call or two each, and room. */
export const DEFAULT_MAX_CONNECTIONS = 512;
/** One log line per this long at most about connections closed past the cap: a flood writes no flood. */
const DROP_LOG_EVERY_MS = 10_000;

export interface ConnectionLimits {
  headersTimeoutMs: number;
  maxConnections: number;
}

/** The limits the options give, checked (INVALID_ARGUMENT) before anything listens. */
export function connectionLimits(options: {
  headersTimeoutMs?: number | undefined;
  maxConnections?: number | undefined;
}): ConnectionLimits {
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  if (!Number.isInteger(headersTimeoutMs) || headersTimeoutMs < 1 || headersTimeoutMs > REQUEST_TIMEOUT_MS)
    throw invalidArgument(
      `headersTimeoutMs must be a whole number of milliseconds from 1 to ${REQUEST_TIMEOUT_MS}, got ${String(headersTimeoutMs)}`,
    );
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  if (!Number.isInteger(maxConnections) || maxConnections < 1)
    throw invalidArgument(`maxConnections must be a whole number from 1, got ${String(maxConnections)}`);
  return { headersTimeoutMs, maxConnections };
}

/** node:http's options for those limits (createServer's first argument). */
export function serverOptions(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // How often node looks for connections past their timeouts (its default, 30 s, would let a
    // 10 s header timeout run to 40 s): a quarter of the timeout, within 0.1 to 1 s.
    connectionsCheckingInterval: Math.min(1000, Math.max(100, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/** The cap on connections, and the answer to a client's error that lets go of its socket. */
export function guardConnections(http: Server, limits: ConnectionLimits, log: (line: string) => void): void {
  http.maxConnections = limits.maxConnections;
  let dropped = 0;
  let loggedAt = Number.NEGATIVE_INFINITY;
  http.on("drop", () => {
    dropped++;
    const now = performance.now();
    if (now - loggedAt < DROP_LOG_EVERY_MS) return;
    loggedAt = now;
    log(
      `axsnap mcp: closed ${dropped} new connection${dropped === 1 ? "" : "s"}: at most ${limits.maxConnections} connections at once (maxConnections); still serving`,
    );
    dropped = 0;
  });
  // A client's error (headers too slow, a malformed request, a reset) is that client's, never the
  // server's end. The answer is written, then the socket destroyed: end() alone would leave the
  // descriptor to a client that never closes its side (node:http's sockets allow half-open).
  http.on("clientError", (e: NodeJS.ErrnoException, socket: Duplex) => {
    if (socket.writable && !responseStarted(socket))
      socket.write(`HTTP/1.1 ${statusOf(e)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    socket.destroy();
  });
}

function statusOf(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return "408 Request Timeout";
    case "HPE_HEADER_OVERFLOW":
      return "431 Request Header Fields Too Large";
    default:
      return "400 Bad Request";
  }
}

/**
 * Whether a response is under way on the socket (a pipelined request failed while an earlier
 * one's answer streams): a status line written into it would corrupt that answer. node:http's
 * own clientError default asks the same of the socket's current message.
 */
function responseStarted(socket: Duplex): boolean {
  const message = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return message?.headersSent === true;
}
