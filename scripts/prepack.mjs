#!/usr/bin/env node
// npm's prepack hook (npm pack, npm publish, installs from git): puts in the
// package what an installed axsnap needs and the git tree does not hold.
//   1. dist/: emptied, then `npm run build` (tsc: the JavaScript and the .d.ts).
//   2. prebuilds/<platform>-<arch>/axsnap.node: `prebuildify --napi --strip`
//      (scripts/prebuildify.mjs) when it is missing or older than its sources,
//      so packing twice does not compile twice.
// Fails loudly when a step fails, so a tarball without them is never made.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

function run(what, cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`prepack: ${what} failed (${result.error?.message ?? `exit ${result.status}`})`);
    process.exit(1);
  }
}

rmSync(join(root, "dist"), { recursive: true, force: true });
// npm sets npm_execpath for its scripts; "npm" on PATH otherwise.
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];
run("npm run build", npm[0], [...npm.slice(1), "run", "build"]);
run("the prebuild", process.execPath, [join(root, "scripts", "prebuildify.mjs"), "--if-stale"]);
