/**
 * The MCP server's command-line options, parsed in one place for both entry
 * points (`axsnap mcp ...` and `node dist/mcp-main.js ...`), so the README's
 * `npx axsnap mcp --confirm-destructive` means what the executable means.
 * Anything else is a usage error: an option the server ignored silently
 * (`--confirm` used to be) would leave a user believing it took effect.
 */

import {
  ACTION_SCREENSHOTS,
  type ActionScreenshots,
  DEFAULT_REPLY_TOKENS,
  REPLY_MODES,
  type ReplyMode,
} from "../doors/modes.js";
import { invalidArgument } from "../errors.js";
import { MIN_MAX_TOKENS } from "../render/budget.js";

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
   * must not be able to run anything on a server started with the README's config.
   */
  allowLaunchPaths: boolean;
  /** Estimated tokens above which an action reply's whole window prints through the budget view; 0: never. */
  replyTokens: number;
  /** The agent's desktop the server observes and acts on (--desktop NAME; lib/agent-desktop/). */
  desktop?: string;
}

export const MCP_DEFAULTS: McpSettings = {
  confirmDestructive: false,
  actionScreenshots: "never",
  replies: "diff",
  allowLaunchPaths: false,
  replyTokens: DEFAULT_REPLY_TOKENS,
};

export const MCP_USAGE =
  "usage: axsnap mcp [--confirm-destructive] [--action-screenshots never|auto|always] [--replies diff|full] [--reply-tokens N] [--allow-launch-paths] [--desktop NAME]";

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
  "--desktop NAME                  serve the agent's desktop NAME (`axsnap desktop start NAME`): the tools",
  "                                observe, act and launch there, never on the user's screen",
];

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
export function parseMcpArgs(argv: readonly string[]): McpSettings & { help: boolean } {
  const out = { ...MCP_DEFAULTS, help: false };
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
      case "--desktop": {
        const name = next();
        if (name === undefined || name === "" || name.startsWith("-"))
          throw invalidArgument(`${flag} needs a desktop's name`, MCP_USAGE);
        out.desktop = name;
        break;
      }
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
  return out;
}
