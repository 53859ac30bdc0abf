#!/usr/bin/env node
// npm run prebuildify: the N-API prebuild of this platform,
// prebuilds/<platform>-<arch>/axsnap.node, made by `prebuildify --napi --strip`
// (a full node-gyp rebuild, then strip --strip-all), and beside it the tiny
// addon axsnap_peer.so (binding.gyp's second target, for the CLI client:
// prebuildify copies a build's .so files along). It runs in a staging copy
// of binding.gyp and src-native/ under the system temp directory, so the
// developer build in build/ (unstripped, used by the tests and valgrind) is
// left alone; prebuildify itself would rebuild build/ and move its binary away.
//
//   node scripts/prebuildify.mjs              always rebuild
//   node scripts/prebuildify.mjs --if-stale   only when the prebuild is missing
//                                             or older than binding.gyp or a
//                                             source in src-native/ (npm pack)
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dir = join(root, "prebuilds", `${process.platform}-${process.arch}`);
const shown = `prebuilds/${process.platform}-${process.arch}`;

function newestSource(path) {
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(child));
    else if (/\.(cc|h|mm)$/.test(entry.name)) newest = Math.max(newest, statSync(child).mtimeMs);
  }
  return newest;
}

/** The tiny addon for the CLI client (lib/peer-uid.ts). */
const PEER = "axsnap_peer.so";
const prebuilt = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".node")) : []);

if (process.argv.includes("--if-stale")) {
  const [existing] = prebuilt();
  const sources = Math.max(newestSource(join(root, "src-native")), statSync(join(root, "binding.gyp")).mtimeMs);
  if (existing && existsSync(join(dir, PEER)) && statSync(join(dir, existing)).mtimeMs >= sources) {
    console.error(`prebuildify: ${shown}/${existing} is newer than its sources; kept`);
    process.exit(0);
  }
}

// The headers of the running Node (N-API: any Node >= 20 loads the result).
// Node's own copy, when installed beside it, keeps the build offline;
// otherwise node-gyp downloads them for this version.
const nodePrefix = join(dirname(process.execPath), "..");
const stage = mkdtempSync(join(tmpdir(), "axsnap-prebuildify-"));
try {
  for (const entry of ["binding.gyp", "package.json", "src-native"])
    cpSync(join(root, entry), join(stage, entry), { recursive: true });
  // node-addon-api's headers (binding.gyp asks require()) and node-gyp come from here.
  symlinkSync(join(root, "node_modules"), join(stage, "node_modules"), "dir");
  const started = Date.now();
  const run = spawnSync(
    join(root, "node_modules", ".bin", "prebuildify"),
    ["--napi", "--strip", "--target", process.versions.node, "--out", root, stage],
    {
      cwd: stage,
      stdio: "inherit",
      // node-gyp runs make with JOBS jobs (prebuildify alone compiles one file at a time).
      env: {
        ...process.env,
        JOBS: process.env.JOBS ?? String(availableParallelism()),
        ...(process.env.npm_config_nodedir || !existsSync(join(nodePrefix, "include", "node", "node_api.h"))
          ? {}
          : { npm_config_nodedir: nodePrefix }),
      },
    },
  );
  if (run.status !== 0) {
    console.error(`prebuildify: failed (${run.error?.message ?? `exit ${run.status}`}); the native build needs the
Debian packages g++ make python3 pkg-config libglib2.0-dev libx11-dev libxtst-dev libxext-dev zlib1g-dev`);
    process.exitCode = 1;
  } else if (prebuilt().length === 0 || !existsSync(join(dir, PEER))) {
    console.error(`prebuildify: no .node file or no ${PEER} in ${shown} after the build`);
    process.exitCode = 1;
  } else {
    console.error(`prebuildify: ${shown}/${[...prebuilt(), PEER].join(", ")} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
} finally {
  // process.exit() would skip this; failures above set exitCode instead.
  rmSync(stage, { recursive: true, force: true });
}
