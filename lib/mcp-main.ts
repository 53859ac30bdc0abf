#!/usr/bin/env node
/**
 * The MCP server's entry point: `node dist/mcp-main.js [--confirm-destructive]`
 * (from source: `node --import tsx lib/mcp-main.ts`). Serves MCP on stdio
 * until the client closes stdin; diagnostics go to stderr.
 */
import { AxsnapError } from "./errors.js";
import { runMcpServer } from "./mcp.js";

runMcpServer({ argv: process.argv.slice(2) }).then(
  // The addon's worker may keep the loop alive: the server is done when its client is.
  () => process.exit(0),
  (e: unknown) => {
    if (e instanceof AxsnapError && e.code === "INVALID_ARGUMENT") {
      console.error(`axsnap mcp: ${e.message}\n${e.hint}`);
      process.exit(2);
    }
    console.error("axsnap mcp:", e);
    process.exit(1);
  },
);
