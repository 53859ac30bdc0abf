/**
 * createMcpHttpServer: axsnap's MCP server over HTTP, from the package's
 * entry point. This module holds only the call and its types: the MCP
 * server, the SDK's HTTP transport and its adapter load when the call is
 * made, so `import "axsnap"` does not pay for them.
 */

import { useDesktop } from "../observe/agent-desktop/use.js";
import { MCP_DEFAULTS } from "./mcp/options.js";
import type { McpHttpOptions, McpHttpServer, McpToolOptions } from "./mcp/public-types.js";

export type {
  CallCounts as McpCallCounts,
  McpHttpHealth,
  McpHttpServer,
  McpHttpStatus,
} from "./mcp/public-types.js";
export type { ActionScreenshots, ReplyMode } from "./modes.js";

export interface McpHttpServerOptions extends Omit<McpHttpOptions, "settings">, McpToolOptions {}

/**
 * Serves axsnap's MCP tools over Streamable HTTP at `<url>` (path /mcp), with sessions: each
 * MCP session has its own axsnap session (latest snapshots, refs). Loopback only unless
 * `allowRemote`; every request needs `Authorization: Bearer <token>` (the returned `token`:
 * `options.token`, AXSNAP_MCP_TOKEN, or one generated and written to `tokenFile`, mode 0600).
 * Resolves once it listens; `close()` ends every session.
 */
export async function createMcpHttpServer(options: McpHttpServerOptions = {}): Promise<McpHttpServer> {
  const [{ composeMcpServer, mcpSettingsOf }, { startMcpHttpServer }] = await Promise.all([
    import("../mcp.js"),
    import("./mcp/http.js"),
  ]);
  const {
    confirmDestructive,
    actionScreenshots,
    replies,
    allowLaunchPaths,
    replyTokens,
    desktop,
    trace,
    traceDir,
    traceScreenshots,
    ...http
  } = options;
  // Before any session and its backend, as `axsnap mcp --http --desktop NAME` does.
  if (desktop !== undefined) useDesktop(desktop);
  const settings = mcpSettingsOf(
    {
      ...(confirmDestructive !== undefined ? { confirmDestructive } : {}),
      ...(actionScreenshots !== undefined ? { actionScreenshots } : {}),
      ...(replies !== undefined ? { replies } : {}),
      ...(allowLaunchPaths !== undefined ? { allowLaunchPaths } : {}),
      ...(replyTokens !== undefined ? { replyTokens } : {}),
      ...(trace !== undefined ? { trace } : {}),
      ...(traceDir !== undefined ? { traceDir } : {}),
      ...(traceScreenshots !== undefined ? { traceScreenshots } : {}),
    },
    MCP_DEFAULTS,
  );
  return startMcpHttpServer({ ...http, settings }, composeMcpServer);
}
