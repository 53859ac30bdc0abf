/**
 * This checkout's CLI bundled as `npm run build` bundles it (scripts/bundle-cli.mjs),
 * for tests that run many commands: a tsx start costs about half a second
 * per command, and tsx itself cannot start in a deleted working directory.
 */
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

export interface CliBundle {
  /** The bundle's entry: run it as `node ENTRY ARGS…`. */
  entry: string;
  /** Deletes the bundle and its chunks. */
  remove(): void;
}

/**
 * Bundles lib/cli.ts into build/ (git-ignored, one level below the root, where
 * the CLI finds package.json and the addon), named after `tag` and this process,
 * and the MCP server as build/mcp.js beside it (`axsnap mcp` imports mcp.js
 * beside the CLI's entry, as dist/cli.js imports dist/mcp.js).
 */
export async function bundleCli(tag: string): Promise<CliBundle> {
  const name = `${tag}-cli-${process.pid}`;
  const out = join(REPO, "build");
  await build({
    entryPoints: { [name]: join(REPO, "lib", "cli.ts"), mcp: join(REPO, "lib", "mcp.ts") },
    outdir: out,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    chunkNames: `${name}-chunk-[hash]`,
    logLevel: "warning",
  });
  return {
    entry: join(out, `${name}.js`),
    remove: () => {
      for (const file of readdirSync(out))
        if (file.startsWith(name) || file === "mcp.js") rmSync(join(out, file), { force: true });
    },
  };
}
