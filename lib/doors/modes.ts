/**
 * The reply and screenshot modes of action replies, without anything else:
 * the command-line parsers (lib/doors/mcp/options.ts, lib/doors/cli/args.ts) load this
 * before any command runs, so it stays free of imports.
 */

/** "diff": the changes (default); "full": the whole fresh snapshot, as replies were before. */
export type ReplyMode = "diff" | "full";
export const REPLY_MODES: readonly ReplyMode[] = ["diff", "full"];

/**
 * When an MCP action reply attaches the fresh snapshot's screenshot without the call asking:
 * "never", "auto" (doors/reply.ts `screenshotWanted`), "always".
 */
export type ActionScreenshots = "never" | "auto" | "always";
export const ACTION_SCREENSHOTS: readonly ActionScreenshots[] = ["never", "auto", "always"];

/** The reply budget the doors default to: a whole gtk3-widget-factory page is about 1,100–1,500 tokens. */
export const DEFAULT_REPLY_TOKENS = 500;
