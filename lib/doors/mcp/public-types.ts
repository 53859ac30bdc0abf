/**
 * The MCP doors' types that the package's entry point exports, kept free of
 * the SDK's types: a consumer whose compiler checks our .d.ts files with an
 * ES lib and Node's types (no DOM) must never reach the SDK's declarations,
 * which name fetch's `HeadersInit`. Only this module and options.ts may be
 * imported by lib/doors/mcp-http.ts's types.
 */
import type { DesktopRef } from "../../observe/agent-desktop/use.js";
import type { McpSettings } from "./options.js";

export interface CallCounts {
  /** Tool calls whose handler is running now. */
  active: number;
  /** Tool calls that ended with a result. */
  done: number;
  /** Tool calls that ended after their signal was aborted (no reply is sent for those). */
  cancelled: number;
}

/** The tools' settings a caller of either server may give (the fields of McpSettings, optional). */
export interface McpToolOptions {
  /** Let destructive targets through (the session's confirm callback says yes). Default false. */
  confirmDestructive?: McpSettings["confirmDestructive"];
  /** When action replies attach the fresh screenshot without the call asking. Default "never". */
  actionScreenshots?: McpSettings["actionScreenshots"];
  /** What action replies print of the fresh snapshot when the call does not say. Default "diff". */
  replies?: McpSettings["replies"];
  /** launch_app may start programs by path, with any args. Default false: listed entries by name or id only. */
  allowLaunchPaths?: McpSettings["allowLaunchPaths"];
  /** Estimated tokens above which an action reply's whole window prints shortened (0: never). Default 500. */
  replyTokens?: McpSettings["replyTokens"];
  /**
   * The agent's desktop to serve (its name, or startDesktop's handle; `--desktop NAME`): every tool
   * observes and acts there, and launch_app starts apps there. Default: this process's DISPLAY and bus.
   */
  desktop?: DesktopRef;
  /**
   * Record every tool call (docs/trace.md): over stdio to this trace directory; over HTTP this
   * directory gets one trace per MCP session, `<yyyymmdd-hhmmss>-<session id 8>.axtrace`.
   */
  trace?: string;
  /** Where the start_trace tool writes (default $XDG_STATE_HOME/axsnap/traces). */
  traceDir?: string;
  /** Traced steps carry before and after screenshots. Default true. */
  traceScreenshots?: boolean;
}

export interface McpHttpOptions {
  /** The address to listen on. Default 127.0.0.1; one that is not loopback needs allowRemote. */
  host?: string;
  /** The port; 0 (the default) takes a free one (see the server's `port`). */
  port?: number;
  /** Listen on a host that is not loopback. Default false. The token is required either way. */
  allowRemote?: boolean;
  /** Host header values (NAME or NAME:PORT) accepted besides loopback and the listened host; "*": any. */
  allowedHosts?: readonly string[];
  /** Origin header values accepted besides the server's own origins. */
  allowedOrigins?: readonly string[];
  /**
   * The bearer token clients send (`Authorization: Bearer <token>`), at least 16 characters.
   * Default AXSNAP_MCP_TOKEN, else a random one generated now and written to a file only this
   * user can read (the server's `tokenFile`).
   */
  token?: string;
  /** The tools' settings, as `axsnap mcp` takes them. Default: the stdio server's defaults. */
  settings: McpSettings;
  /** Bytes of one request body. Default 4 MB (REQUEST_LIMIT_BYTES, as one stdio line). */
  maxBodyBytes?: number;
  /** Sessions at once. Default 64. */
  maxSessions?: number;
  /** Milliseconds without a request after which a session is closed. Default 30 minutes. */
  idleSessionMs?: number;
  /**
   * Milliseconds a client has to send a request's headers, from its connection's start (or its
   * previous request's end); past them it is answered 408 and its connection closed. Default 10 000.
   */
  headersTimeoutMs?: number;
  /**
   * Connections open at once; past them a new connection is closed as it is accepted (one log line
   * per 10 s says how many). Default 512.
   */
  maxConnections?: number;
  /** Where the server says what it does (sessions, refusals), one line each. Default stderr. */
  log?: (line: string) => void;
}

export interface McpHttpHealth {
  ok: true;
  /** MCP sessions open now. */
  sessions: number;
  /** Seconds since the server started listening. */
  uptime: number;
}

export interface McpHttpStatus extends McpHttpHealth {
  calls: CallCounts;
  maxSessions: number;
  maxBodyBytes: number;
}

export interface McpHttpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:8765/mcp. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** The bearer token clients must send. */
  readonly token: string;
  /** Where the generated token was written (0600); undefined when the token was given. */
  readonly tokenFile: string | undefined;
  /** What GET /status answers. */
  status(): McpHttpStatus;
  /** Ends every session (their axsnap sessions closed), stops listening, removes the token file. */
  close(): Promise<void>;
}
