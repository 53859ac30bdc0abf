/**
 * Counts the tool calls of MCP servers as they run: how many are in flight,
 * how many ended, and how many ended because their signal was aborted (the
 * client cancelled, or went away). The HTTP server's status route reports
 * them, and they are how a test sees a call it cancelled really stop: the
 * SDK sends no reply for an aborted request, so the end of its handler is
 * otherwise invisible.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { inDoorCall } from "../../session/trace/door.js";
import type { CallCounts } from "./public-types.js";

export type { CallCounts };

type Handler = (...args: unknown[]) => unknown;

/** What a trace prints in place of a secret (docs/trace.md#secrets). */
const SECRET_MASK = "«secret»";

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

/** The text blocks of a tool's answer, as the agent reads them. */
function replyTextOf(result: unknown): string | undefined {
  const content = (result as { content?: { type: string; text?: string }[] } | undefined)?.content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((c) => (c.type === "text" && typeof c.text === "string" ? [c.text] : []));
  return texts.length > 0 ? texts.join("\n") : undefined;
}

/** A call's arguments as a trace keeps them: with secret: true, the text or value is never among them. */
function doorArgs(input: Record<string, unknown>): Record<string, unknown> {
  const args = { ...input };
  if (args.secret === true) for (const key of ["text", "value"]) if (key in args) args[key] = SECRET_MASK;
  return args;
}

/** The tool calls of each server still running (their door calls not yet ended). */
const running = new WeakMap<McpServer, Set<Promise<unknown>>>();

/**
 * Resolves once the calls `server` was running have ended (its close aborts them), or after
 * `capMs`: its session may close only then, or a traced call in flight would end after its
 * trace stopped, and its step be lost.
 */
export async function callsEnded(server: McpServer, capMs = 5000): Promise<void> {
  const calls = [...(running.get(server) ?? [])];
  if (calls.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const cap = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, capMs);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(calls), cap]);
  clearTimeout(timer);
}

/**
 * Runs every tool registered on `server` from now on inside its door call
 * (lib/session/trace/door.ts), so that a traced session writes each step with door
 * "mcp", the tool's name, its arguments and the reply text the agent read.
 * Wrapped here, once, as the tools are registered: no tool can miss it.
 */
export function traceDoor(server: McpServer): void {
  const calls = new Set<Promise<unknown>>();
  running.set(server, calls);
  const register = server.registerTool.bind(server) as (...a: unknown[]) => unknown;
  (server as unknown as { registerTool: (...a: unknown[]) => unknown }).registerTool = (
    name: unknown,
    config: unknown,
    handler: unknown,
  ) =>
    register(name, config, (...args: unknown[]) => {
      // A tool with an input schema gets (args, extra); one without, (extra) alone.
      const input = args.length > 1 && typeof args[0] === "object" && args[0] !== null ? args[0] : {};
      const call = inDoorCall(
        { door: "mcp", call: String(name), args: doorArgs(input as Record<string, unknown>) },
        async () => (handler as Handler)(...args),
        replyTextOf,
      );
      calls.add(call);
      void call.finally(() => calls.delete(call)).catch(() => undefined);
      return call;
    });
}
