/**
 * The MCP server over HTTP: the SDK's Streamable HTTP transport
 * (StreamableHTTPServerTransport) on node:http, one endpoint (/mcp), with
 * sessions. Each MCP session (its Mcp-Session-Id) has its own MCP server and
 * axsnap session, composed by the caller exactly as stdio composes its one
 * (lib/mcp.ts composeMcpServer): the same tools and the same replies. A
 * session ends on DELETE, after it was idle too long, or when the server
 * closes; its axsnap session is closed with it.
 *
 * Before a request reaches MCP (lib/doors/mcp/http-guard.ts): its Host and Origin
 * are checked (403), then the bearer token (401, WWW-Authenticate: Bearer);
 * nothing of a refused request is read past its headers, and its connection
 * is closed with the answer. What a client may hold before that (a header
 * timeout, a cap on connections) is lib/doors/mcp/http-connections.ts's. Then its body, read
 * here, not by the SDK, so that every refusal is the one stdio gives: over
 * the limit is 413, not JSON is -32700, not JSON-RPC 2.0 is -32600, params
 * that do not fit is -32602, each a JSON-RPC error with the request's id
 * when it has one; one line on the log each, and the server serves on.
 *
 * A client that goes away while its call runs (its connection closes before
 * the answer was written) cancels the call: the server delivers MCP's own
 * notifications/cancelled for it to the session, whose handler's
 * AbortSignal then aborts the axsnap call (ABORTED, nothing more sent).
 *
 * GET /healthz answers without the token: { ok, sessions, uptime }, for a
 * scheduler's probe. GET /status, with the token, adds the tool calls'
 * counts and the limits.
 */
import { randomUUID } from "node:crypto";
import { unlinkSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, isInitializeRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { Session } from "../../session/session.js";
import { CallTracker, callsEnded } from "./calls.js";
import { envelopeProblem, type Id, idOf, paramsProblem, printable } from "./envelope.js";
import { connectionLimits, guardConnections, serverOptions } from "./http-connections.js";
import {
  allowedHostSet,
  bearerMatches,
  checkListenHost,
  headerProblem,
  isLoopback,
  tokenOf,
  writeTokenFile,
} from "./http-guard.js";
import { REQUEST_LIMIT_BYTES, TEXT_LIMIT } from "./limits.js";
import type { McpSettings } from "./options.js";
import type { McpHttpHealth, McpHttpOptions, McpHttpServer } from "./public-types.js";
import { traceDirReady, traceName } from "./trace-tools.js";

/** The MCP endpoint's path. */
export const MCP_HTTP_PATH = "/mcp";
/** Sessions at once, by default; an initialize past them is answered 503. */
export const DEFAULT_MAX_SESSIONS = 64;
/** A session with no request for this long is closed, by default. */
export const DEFAULT_IDLE_SESSION_MS = 30 * 60_000;

/** What composes one MCP session's server and axsnap session (lib/mcp.ts composeMcpServer). */
export type McpComposer = (
  settings: McpSettings,
  tracker: CallTracker,
) => { server: McpServer; session: Session };

interface Entry {
  id: string | undefined;
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  session: Session;
  lastSeen: number;
  /** HTTP requests of the session still open (a GET stream, a call running). */
  open: number;
  closed: boolean;
}

const OVERSIZED_HINT = `send at most the limit in one request body; a text to type or set is at most ${TEXT_LIMIT} characters: type a longer one in several type_text calls`;

/** Starts listening; resolves when it does. Refused (typed) before anything listens when the options are wrong. */
export async function startMcpHttpServer(
  options: McpHttpOptions,
  compose: McpComposer,
): Promise<McpHttpServer> {
  const host = options.host ?? "127.0.0.1";
  const wantPort = options.port ?? 0;
  if (!Number.isInteger(wantPort) || wantPort < 0 || wantPort > 65535)
    throw invalidArgument(`port must be a whole number from 0 to 65535, got ${String(wantPort)}`);
  const allowedHosts = [...(options.allowedHosts ?? [])];
  checkListenHost(host, options.allowRemote === true, allowedHosts);
  const { token, generated } = tokenOf(options.token);
  const limit = options.maxBodyBytes ?? REQUEST_LIMIT_BYTES;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.idleSessionMs ?? DEFAULT_IDLE_SESSION_MS;
  const limits = connectionLimits(options);
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const origins = options.allowedOrigins ?? [];
  // Refused before anything listens, not at each session's start.
  if (options.settings.trace !== undefined) traceDirReady(options.settings.trace, "--trace");
  const tracker = new CallTracker();
  const sessions = new Map<string, Entry>();
  /** Sessions whose initialize is being answered: not in `sessions` until it succeeds. */
  const starting = new Set<Entry>();
  let started = 0;
  let hosts: Set<string> | undefined;
  let closing = false;

  const health = (): McpHttpHealth => ({
    ok: true,
    sessions: sessions.size,
    uptime: Math.round((performance.now() - started) / 1000),
  });

  const endEntry = async (e: Entry, why: string): Promise<void> => {
    if (e.closed) return;
    e.closed = true;
    starting.delete(e);
    if (e.id !== undefined && sessions.get(e.id) === e) {
      sessions.delete(e.id);
      log(`axsnap mcp: session ${e.id} ended (${why}); ${sessions.size} open`);
    }
    // The server's close aborts its calls still running; then the session's snapshots go.
    await e.server.close().catch(() => undefined);
    // Its calls in flight end (their steps written to its trace) before the session closes.
    await callsEnded(e.server);
    await e.session.close().catch(() => undefined);
  };

  /**
   * --trace DIR: one trace per MCP session, begun before its initialize is answered (so its
   * first call is in it) and ended with it (endEntry closes the session, which stops it).
   * A trace that cannot start is logged; the session is served untraced.
   */
  const startTrace = async (e: Entry, id: string): Promise<void> => {
    const dir = options.settings.trace;
    if (dir === undefined) return;
    const path = join(dir, traceName(id));
    try {
      await e.session.trace.start({ path, screenshots: options.settings.traceScreenshots });
      log(`axsnap mcp: session ${id} traced to ${path}`);
    } catch (err) {
      log(
        `axsnap mcp: session ${id}: its trace ${path} did not start: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  };

  const newEntry = (): Entry => {
    const { server, session } = compose(options.settings, tracker);
    const entry: Entry = {
      id: undefined,
      server,
      session,
      lastSeen: performance.now(),
      open: 0,
      closed: false,
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: async (id) => {
          entry.id = id;
          starting.delete(entry);
          sessions.set(id, entry);
          log(`axsnap mcp: session ${id} opened; ${sessions.size} open`);
          await startTrace(entry, id);
        },
      }),
    };
    // Set before connect: the SDK chains its own close after this one.
    entry.transport.onclose = () => void endEntry(entry, "closed");
    starting.add(entry);
    return entry;
  };

  /**
   * Cancels the request when its connection closes before its answer was written: the SDK's
   * own cancellation, delivered as if the client had sent it.
   */
  const cancelOnHangUp = (e: Entry, res: ServerResponse, message: JSONRPCMessage) => {
    if (!("method" in message) || !("id" in message)) return;
    const id = message.id;
    res.on("close", () => {
      if (res.writableFinished || e.closed) return;
      log(
        `axsnap mcp: session ${e.id}: request ${JSON.stringify(id)} (${printable(message.method)}) cancelled: its client went away`,
      );
      e.transport.onmessage?.({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: "the client's connection closed before the answer" },
      });
    });
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    // Every answer before the token is checked, and every refusal, closes its connection: a
    // client without the token keeps no connection past its answer, and no body it trickles is read.
    if (path === "/healthz" && (req.method === "GET" || req.method === "HEAD")) {
      res.setHeader("Connection", "close");
      return json(res, 200, health(), req.method === "HEAD");
    }
    const problem = headerProblem(req.headers.host, header(req, "origin"), hosts, origins);
    if (problem !== undefined) {
      res.setHeader("Connection", "close");
      log(`axsnap mcp: refused ${req.method} ${printable(path)}: ${problem}`);
      return rpcError(res, 403, null, -32000, `Forbidden: ${problem}`);
    }
    const auth = header(req, "authorization");
    if (!bearerMatches(auth, token)) {
      res.setHeader("Connection", "close");
      log(
        `axsnap mcp: refused ${req.method} ${printable(path)}: ${auth === undefined ? "no" : "a wrong"} bearer token`,
      );
      const challenge =
        auth === undefined ? 'Bearer realm="axsnap"' : 'Bearer realm="axsnap", error="invalid_token"';
      return rpcError(
        res,
        401,
        null,
        -32001,
        `Unauthorized: ${auth === undefined ? "send" : "the token is wrong; send"} "Authorization: Bearer <token>" with the token the server printed (its token file) or AXSNAP_MCP_TOKEN`,
        undefined,
        { "WWW-Authenticate": challenge },
      );
    }
    if (path === "/status" && req.method === "GET")
      return json(res, 200, { ...health(), calls: { ...tracker.counts }, maxSessions, maxBodyBytes: limit });
    if (path !== MCP_HTTP_PATH) {
      res.setHeader("Connection", "close");
      return rpcError(res, 404, null, -32000, `Not found: the MCP endpoint is ${MCP_HTTP_PATH}`);
    }
    if (req.method === "POST") return post(req, res);
    if (req.method === "GET" || req.method === "DELETE") {
      const e = sessionOf(req, res);
      if (e === undefined) return;
      return withEntry(e, () => e.transport.handleRequest(req, res));
    }
    res.setHeader("Allow", "GET, POST, DELETE");
    res.setHeader("Connection", "close");
    return rpcError(
      res,
      405,
      null,
      -32000,
      "Method not allowed: POST a message, GET a stream, DELETE a session",
    );
  };

  const withEntry = async (e: Entry, run: () => Promise<void>): Promise<void> => {
    e.open++;
    e.lastSeen = performance.now();
    try {
      await run();
    } finally {
      e.open--;
      e.lastSeen = performance.now();
    }
  };

  /** The session a request names; answers 400 or 404 itself when there is none. */
  const sessionOf = (req: IncomingMessage, res: ServerResponse, id: Id = null): Entry | undefined => {
    const sid = header(req, "mcp-session-id");
    if (sid === undefined) {
      rpcError(res, 400, id, -32000, "Bad Request: send the Mcp-Session-Id the initialize answer gave");
      return undefined;
    }
    const e = sessions.get(sid);
    if (e === undefined) rpcError(res, 404, id, -32001, "Session not found: initialize a new session");
    return e;
  };

  const post = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req, limit);
    if (!body.ok) {
      const size = body.bytes === undefined ? `more than ${limit} bytes` : `${body.bytes} bytes`;
      log(`axsnap mcp: refused a request body of ${size}, over the limit of ${limit}; still serving`);
      res.setHeader("Connection", "close");
      return rpcError(
        res,
        413,
        null,
        ErrorCode.InvalidRequest,
        `request too large: ${size}, over the limit of ${limit}`,
        {
          code: "INVALID_ARGUMENT",
          limitBytes: limit,
          ...(body.bytes === undefined ? {} : { bytes: body.bytes }),
          hint: OVERSIZED_HINT,
          delivery: "not_delivered",
          retry: "safe",
        },
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(body.text);
    } catch (e) {
      log(`axsnap mcp: a request body of ${Buffer.byteLength(body.text)} bytes is not JSON; still serving`);
      return rpcError(res, 400, null, ErrorCode.ParseError, `parse error: ${(e as Error).message}`);
    }
    const problem = envelopeProblem(value, "a request");
    if (problem !== undefined) {
      const id = idOf(value);
      log(`axsnap mcp: invalid request${id === null ? "" : ` ${JSON.stringify(id)}`}: ${problem}`);
      return rpcError(res, 400, id, ErrorCode.InvalidRequest, `invalid request: ${problem}`);
    }
    const message = value as JSONRPCMessage;
    const bad = "method" in message && "id" in message ? paramsProblem(message) : undefined;
    if (bad !== undefined) {
      const id = (message as { id: string | number }).id;
      log(
        `axsnap mcp: invalid params in request ${JSON.stringify(id)} (${printable((message as { method: string }).method)}): ${bad}`,
      );
      return rpcError(res, 400, id, ErrorCode.InvalidParams, `invalid params: ${bad}`);
    }
    if (header(req, "mcp-session-id") === undefined && isInitializeRequest(message)) {
      if (closing || sessions.size + starting.size >= maxSessions) {
        log(`axsnap mcp: refused a new session: ${maxSessions} are open`);
        return rpcError(
          res,
          503,
          idOf(message),
          -32000,
          `Service unavailable: ${maxSessions} sessions are open; close one (DELETE) or try later`,
        );
      }
      const e = newEntry();
      try {
        await e.server.connect(e.transport);
        await withEntry(e, () => e.transport.handleRequest(req, res, message));
      } finally {
        // An initialize the transport refused made no session: nothing else will end this one.
        if (e.id === undefined) await endEntry(e, "its initialize was refused");
      }
      return;
    }
    const e = sessionOf(req, res, idOf(message));
    if (e === undefined) return;
    cancelOnHangUp(e, res, message);
    return withEntry(e, () => e.transport.handleRequest(req, res, message));
  };

  const http: Server = createServer(serverOptions(limits), (req, res) => {
    handle(req, res).catch((e: unknown) => {
      log(
        `axsnap mcp: ${req.method} ${printable(req.url ?? "")} failed: ${e instanceof Error ? e.message : String(e)}; still serving`,
      );
      if (!res.headersSent) rpcError(res, 500, null, ErrorCode.InternalError, "internal error");
      else res.destroy();
    });
  });
  guardConnections(http, limits, log);
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) =>
      reject(
        e.code === "EADDRINUSE"
          ? invalidArgument(
              `port ${wantPort} on ${host} is in use`,
              "pick another port, or 0 for any free one",
            )
          : new AxsnapError("INVALID_ARGUMENT", `cannot listen on ${host}:${wantPort}: ${e.message}`, {
              hint: "pick an address of this machine and a free port",
              cause: e,
            }),
      );
    http.once("error", onError);
    http.listen(wantPort, host, () => {
      http.off("error", onError);
      resolve();
    });
  });
  started = performance.now();
  const port = (http.address() as AddressInfo).port;
  hosts = allowedHostSet(host, port, allowedHosts);
  let tokenFile: string | undefined;
  try {
    tokenFile = generated ? writeTokenFile(token, port) : undefined;
  } catch (e) {
    http.close();
    throw e;
  }
  const urlHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}${MCP_HTTP_PATH}`;
  log(
    `axsnap mcp: serving MCP (Streamable HTTP) on ${url}${isLoopback(host) ? " (loopback only)" : ` (listening on ${host})`}; bearer token ${tokenFile ? `in ${tokenFile}` : "from AXSNAP_MCP_TOKEN"}; health at /healthz`,
  );

  const sweep = setInterval(
    () => {
      const now = performance.now();
      for (const e of sessions.values())
        if (e.open === 0 && now - e.lastSeen > idleMs) void e.transport.close();
    },
    Math.max(1000, Math.min(60_000, idleMs / 4)),
  );
  sweep.unref();

  return {
    url,
    host,
    port,
    token,
    tokenFile,
    status: () => ({ ...health(), calls: { ...tracker.counts }, maxSessions, maxBodyBytes: limit }),
    close: async () => {
      if (closing) return;
      closing = true;
      clearInterval(sweep);
      const closed = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.all([...sessions.values(), ...starting].map((e) => e.transport.close()));
      http.closeAllConnections();
      await closed;
      if (tokenFile !== undefined)
        try {
          unlinkSync(tokenFile);
        } catch {
          // Gone already: nothing to remove.
        }
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function json(res: ServerResponse, status: number, body: unknown, headOnly = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
  res.end(headOnly ? undefined : text);
}

function rpcError(
  res: ServerResponse,
  status: number,
  id: Id,
  code: number,
  message: string,
  data?: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  json(res, status, { jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } });
}

/**
 * A request body as text, at most `limit` bytes. A declared length over it is refused unread;
 * otherwise reading stops once more than the limit arrived, and the rest is drained unkept so
 * the client reads the refusal rather than a reset.
 */
function readBody(
  req: IncomingMessage,
  limit: number,
): Promise<{ ok: true; text: string } | { ok: false; bytes?: number }> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve({ ok: false, bytes: declared });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let over = false;
    req.on("data", (c: Buffer) => {
      if (over) return;
      bytes += c.length;
      if (bytes > limit) {
        over = true;
        chunks.length = 0;
        resolve({ ok: false });
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => {
      if (!over) resolve({ ok: true, text: Buffer.concat(chunks).toString("utf8") });
    });
    req.on("error", reject);
    // A client gone before its body ended: nothing will be answered.
    req.on("close", () => {
      if (!req.complete && !over) reject(new Error("the client went away before its request body ended"));
    });
  });
}
