#!/usr/bin/env node
// The `axsnap` command as one file (with its lazily loaded commands in
// chunks beside it), made after tsc by `npm run build`. Why: a command's
// start is mostly Node resolving and loading modules one by one (about 60
// of them for `axsnap snapshot`); one file halves the CLI's own share of a
// start. The library (dist/index.js) and the MCP server (dist/mcp.js, which
// cli.js imports by a computed name) stay tsc's output, module per file.
//
// The chunks sit in dist/ itself, not below it: the code in them finds the
// package root as the directory above its own file (lib/native.ts), like
// every tsc-built module in dist/.
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");

// Chunks of an earlier bundle would otherwise pile up beside the new ones.
for (const name of readdirSync(dist)) if (/^cli-chunk-.*\.js(\.map)?$/.test(name)) rmSync(join(dist, name));

await build({
  entryPoints: { cli: join(root, "lib", "cli.ts") },
  outdir: dist,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Dependencies stay packages of their own: zod, the MCP SDK, node-gyp-build.
  packages: "external",
  chunkNames: "cli-chunk-[hash]",
  sourcemap: true,
  logLevel: "warning",
});
