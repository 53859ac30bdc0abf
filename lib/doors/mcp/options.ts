/**
 * The MCP server's command-line options, parsed in one place for both entry
 * points (`axsnap mcp ...` and `node dist/mcp-main.js ...`), so docs/mcp.md's
 * `npx axsnap mcp --confirm-destructive` means what the executable means.
 * Anything else is a usage error: an option the server ignored silently
 * (`--confirm` used to be) would leave a user believing it took effect.
 */

import { invalidArgument } from "../../model/errors.js";
import { MIN_MAX_TOKENS } from "../../render/budget.js";
import {
  ACTION_SCREENSHOTS,
  type ActionScreenshots,
  DEFAULT_REPLY_TOKENS,
  REPLY_MODES,
  type ReplyMode,
} from "../modes.js";

export interface McpSettings {
  /** Destructive targets go through (the session's confirm callback says yes, and logs each on stderr). */
  confirmDestructive: boolean;
  /** When an action's reply attaches the fresh screenshot without the call asking (doors/reply.ts). */
  actionScreenshots: ActionScreenshots;
  /** What an action's reply prints of the fresh snapshot when the call does not say: its changes, or all of it. */
  replies: ReplyMode;
  /**
   * launch_app may start a program by path with any argv (a shell command is one). Without it, only
   * the listed desktop entries and bundles, by name or id: a model, or text in a window it obeys,
   * must not be able to run anything on a server started with docs/mcp.md's config.
   */
  allowLaunchPaths: boolean;
  /** Estimated tokens above which an action reply's whole window prints through the budget view; 0: never. */
  replyTokens: number;
  /** The agent's desktop the server observes and acts on (--desktop NAME; lib/observe/agent-desktop/). */
  desktop?: string;
  /**
   * Record to a trace (docs/trace.md): on stdio the session's trace directory, over HTTP the
   * directory that gets one trace per MCP session (lib/doors/mcp/trace-tools.ts names them).
   */
  trace?: string;
  /** Where start_trace writes (default $XDG_STATE_HOME/axsnap/traces): never a path the client gives. */
  traceDir?: string;
  /** Steps carry before and after screenshots (--trace-screenshots on|off; default on). */
  traceScreenshots: boolean;
}

export const MCP_DEFAULTS: McpSettings = {
  confirmDestructive: false,
  actionScreenshots: "never",
  replies: "diff",
  allowLaunchPaths: false,
  replyTokens: DEFAULT_REPLY_TOKENS,
  traceScreenshots: true,
};

export const MCP_USAGE =
  "usage: axsnap mcp [--confirm-destructive] [--action-screenshots never|auto|always] [--replies diff|full] [--reply-tokens N] [--allow-launch-paths] [--desktop NAME] [--trace PATH] [--trace-dir DIR] [--trace-screenshots on|off] [--http [HOST:]PORT [--allow-remote] [--allowed-host NAME]... [--allowed-origin ORIGIN]...]";

/** Where `--http` listens: a host (an address or a name) and a port (0: any free one). */
export interface ListenAddress {
  host: string;
  port: number;
}

/** What `axsnap mcp` parses: the server's settings, and where to serve them when not on stdio. */
export interface McpArgs extends McpSettings {
  help: boolean;
  /** Serve MCP over HTTP (Streamable HTTP) here instead of stdio. */
  http?: ListenAddress;
  /** A host that is not loopback may be listened on (the token is still required). */
  allowRemote: boolean;
  /** Host header values (NAME or NAME:PORT) accepted besides the listened address; "*" any. */
  allowedHosts: string[];
  /** Origin header values accepted besides the server's own origins. */
  allowedOrigins: string[];
}

/** One line per option, for `axsnap help mcp` and `mcp-main --help`. */
export const MCP_OPTION_HELP = [
  "--confirm-destructive           allow destructive targets (Delete, Send, ...); without it they are refused",
  "--action-screenshots MODE       attach the screenshot to action replies: never (default: only when a call",
  "                                passes screenshot: true), auto (when a surface opened or closed, the action",
  "                                was at x/y, or the tree shows nothing of it), always",
  "--replies diff|full             action replies print the changes (default) or the whole fresh snapshot",
  "--allow-launch-paths            launch_app may start any program by path, with any args (it runs what",
  "                                the model asks); without it, only listed desktop entries / bundles by name or id",
  `--reply-tokens N                a whole window longer than about N tokens prints shortened to fit them,`,
  `                                indices kept (default ${DEFAULT_REPLY_TOKENS}; 0: always whole; reply: "full" prints all)`,
  "--http [HOST:]PORT              serve MCP over HTTP (Streamable HTTP, path /mcp) instead of stdio; HOST",
  "                                default 127.0.0.1; a bearer token is required (AXSNAP_MCP_TOKEN, or one",
  "                                generated into a file only you can read, its path printed on stderr)",
  "--allow-remote                  with --http: allow a HOST that is not loopback (the token is still required)",
  "--allowed-host NAME[:PORT]      with --http: a Host header to accept besides the listened address (repeat;",
  '                                "*" accepts any); needed when listening on 0.0.0.0 or ::',
  "--allowed-origin ORIGIN         with --http: a browser Origin to accept besides the server's own (repeat)",
  "--desktop NAME                  serve the agent's desktop NAME (`axsnap desktop start NAME`): the tools",
  "                                observe, act and launch there, never on the user's screen",
  "--trace PATH                    record every tool call to the trace PATH (a .axtrace directory); with",
  "                                --http, PATH is a directory holding one trace per MCP session",
  "--trace-dir DIR                 where start_trace writes its traces (default $XDG_STATE_HOME/axsnap/traces)",
  "--trace-screenshots on|off      traced steps carry before and after screenshots (default on)",
];

/** `[HOST:]PORT`: a port alone listens on loopback; an IPv6 host is written in brackets. */
export function parseListenAddress(flag: string, value: string | undefined): ListenAddress {
  const m =
    value === undefined
      ? null
      : /^(?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):)?(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m || port > 65535)
    throw invalidArgument(
      value === undefined
        ? `${flag} needs [HOST:]PORT, e.g. 8765 or 127.0.0.1:8765`
        : `${flag} must be [HOST:]PORT (a port from 0 to 65535; an IPv6 host in brackets), got ${JSON.stringify(value)}`,
      MCP_USAGE,
    );
  const host = m[1] === undefined ? "127.0.0.1" : m[1].replace(/^\[(.*)\]$/, "$1");
  return { host, port };
}

function choiceOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[]): T {
  if (value !== undefined && (allowed as readonly string[]).includes(value)) return value as T;
  throw invalidArgument(
    value === undefined
      ? `${flag} needs a value: ${allowed.join(", ")}`
      : `${flag} must be ${allowed.join(", ")}, got ${JSON.stringify(value)}`,
    MCP_USAGE,
  );
}

function tokensOf(flag: string, value: string | undefined): number {
  const n = value !== undefined && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (n === 0 || n >= MIN_MAX_TOKENS) return n;
  throw invalidArgument(
    `${flag} must be 0 or a whole number of at least ${MIN_MAX_TOKENS}, got ${JSON.stringify(value ?? "")}`,
    MCP_USAGE,
  );
}

/** Parses the server's arguments (after `mcp`); `help` when only help was asked. INVALID_ARGUMENT otherwise. */
export function parseMcpArgs(argv: readonly string[]): McpArgs {
  const out: McpArgs = {
    ...MCP_DEFAULTS,
    help: false,
    allowRemote: false,
    allowedHosts: [],
    allowedOrigins: [],
  };
  const httpOnly: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf("=");
    const flag = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = flag === arg ? undefined : arg.slice(eq + 1);
    const next = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case "--confirm-destructive":
        if (inline !== undefined) throw invalidArgument(`${flag} takes no value`, MCP_USAGE);
        out.confirmDestructive = true;
        break;
      case "--allow-launch-paths":
        if (inline !== undefined) throw invalidArgument(`${flag} takes no value`, MCP_USAGE);
        out.allowLaunchPaths = true;
        break;
      case "--action-screenshots":
        out.actionScreenshots = choiceOf(flag, next(), ACTION_SCREENSHOTS);
        break;
      case "--replies":
        out.replies = choiceOf(flag, next(), REPLY_MODES);
        break;
      case "--reply-tokens":
        out.replyTokens = tokensOf(flag, next());
        break;
      case "--http":
        out.http = parseListenAddress(flag, next());
        break;
      case "--allow-remote":
        if (inline !== undefined) throw invalidArgument(`${flag} takes no value`, MCP_USAGE);
        out.allowRemote = true;
        httpOnly.push(flag);
        break;
      case "--allowed-host":
      case "--allowed-origin": {
        const v = next();
        if (v === undefined || v.trim() === "") throw invalidArgument(`${flag} needs a value`, MCP_USAGE);
        (flag === "--allowed-host" ? out.allowedHosts : out.allowedOrigins).push(v.trim());
        httpOnly.push(flag);
        break;
      }
      case "--desktop": {
        const name = next();
        if (name === undefined || name === "" || name.startsWith("-"))
          throw invalidArgument(`${flag} needs a desktop's name`, MCP_USAGE);
        out.desktop = name;
        break;
      }
      case "--trace":
      case "--trace-dir": {
        const path = next();
        if (path === undefined || path === "" || (inline === undefined && path.startsWith("-")))
          throw invalidArgument(`${flag} needs a path`, MCP_USAGE);
        if (flag === "--trace") out.trace = path;
        else out.traceDir = path;
        break;
      }
      case "--trace-screenshots":
        out.traceScreenshots = choiceOf(flag, next(), ["on", "off"] as const) === "on";
        break;
      case "-h":
      case "--help":
        out.help = true;
        break;
      case "--confirm":
        throw invalidArgument(
          "unknown option --confirm for the MCP server: its option is --confirm-destructive",
          MCP_USAGE,
        );
      default:
        throw invalidArgument(
          arg.startsWith("-")
            ? `unknown option ${JSON.stringify(arg)} for the MCP server`
            : `the MCP server takes no arguments, got ${JSON.stringify(arg)}`,
          MCP_USAGE,
        );
    }
  }
  if (out.http === undefined && httpOnly.length > 0)
    throw invalidArgument(
      `${httpOnly[0]} applies to the HTTP server only: add --http [HOST:]PORT`,
      MCP_USAGE,
    );
  return out;
}
