/**
 * Counts the tool calls of MCP servers as they run: how many are in flight,
 * how many ended, and how many ended because their signal was aborted (the
 * client cancelled, or went away). The HTTP server's status route reports
 * them, and they are how a test sees a call it cancelled really stop: the
 * SDK sends no reply for an aborted request, so the end of its handler is
 * otherwise invisible.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallCounts } from "./public-types.js";

export type { CallCounts };

type Handler = (...args: unknown[]) => unknown;

export class CallTracker {
  readonly counts: CallCounts = { active: 0, done: 0, cancelled: 0 };

  /**
   * Counts every tool registered on `server` from now on. Called before the tools are
   * registered: each handler is wrapped as it is registered, whatever module registers it.
   */
  watch(server: McpServer): void {
    const register = server.registerTool.bind(server) as (...a: unknown[]) => unknown;
    const counts = this.counts;
    (server as unknown as { registerTool: (...a: unknown[]) => unknown }).registerTool = (
      name: unknown,
      config: unknown,
      handler: unknown,
    ) =>
      register(name, config, async (...args: unknown[]) => {
        // The SDK passes the request's extra (with its signal) last.
        const extra = args[args.length - 1] as { signal?: AbortSignal } | undefined;
        counts.active++;
        try {
          return await (handler as Handler)(...args);
        } finally {
          counts.active--;
          if (extra?.signal?.aborted) counts.cancelled++;
          else counts.done++;
        }
      });
  }
}
