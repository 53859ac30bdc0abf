#!/usr/bin/env node
/**
 * The MCP server from a source checkout, from any working directory:
 * `node /path/to/axsnap/scripts/mcp-source.mjs [--confirm-destructive]`.
 * `node --import tsx lib/mcp-main.ts` resolves tsx from the directory the
 * client starts it in, where there is none; this file resolves it from the
 * checkout it sits in, registers it, then runs lib/mcp-main.ts (which reads
 * its arguments from process.argv, as from `node dist/mcp-main.js`).
 */
import { register } from "tsx/esm/api";

register();
await import("../lib/mcp-main.ts");
