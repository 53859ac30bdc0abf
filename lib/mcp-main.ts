#!/usr/bin/env node
import { MCP_OPTION_HELP, MCP_USAGE, parseMcpArgs } from "./doors/mcp/options.js";
import { runMcpServer } from "./mcp.js";
/**
 * The MCP server's entry point: `node dist/mcp-main.js [options]` (from
 * source: `node --import tsx lib/mcp-main.ts`), with the options `axsnap mcp`
 * takes (lib/doors/mcp/options.ts). Serves MCP on stdio until the client closes
 * stdin, or with --http over HTTP until SIGINT or SIGTERM; diagnostics go to
 * stderr.
 */
import { AxsnapError } from "./model/errors.js";

function usageExit(e: unknown): never {
  if (e instanceof AxsnapError) {
    console.error(`axsnap mcp: ${e.message}\n${e.hint}`);
    process.exit(e.code === "INVALID_ARGUMENT" ? 2 : 1);
  }
  // The desktop it was told to serve is not there (DESKTOP_NOT_FOUND, DESKTOP_GONE): what and what to do, no stack.
  if (e instanceof AxsnapError) {
    console.error(`axsnap mcp: ${e.code}: ${e.message}\nhint: ${e.hint}`);
    process.exit(1);
  }
  console.error("axsnap mcp:", e);
  process.exit(1);
}

const argv = process.argv.slice(2);
let help = false;
try {
  help = parseMcpArgs(argv).help;
} catch (e) {
  usageExit(e);
}
if (help) {
  process.stdout.write(`${MCP_USAGE}\n\n${MCP_OPTION_HELP.map((l) => `  ${l}`).join("\n")}\n`);
  process.exit(0);
}
runMcpServer({ argv }).then(
  // The addon's worker may keep the loop alive: the server is done when its client is.
  () => process.exit(0),
  usageExit,
);
