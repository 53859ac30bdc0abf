#!/usr/bin/env node
// Builds the native addon into build/Release when it is missing or older than
// its sources (a full node-gyp rebuild the first time, incremental after).
// Offline: npm's nodedir points node-gyp at the local Node headers.
//
// --macfake builds the test-only addon of test/native/macfake instead: the
// macOS backend compiled against the fake CoreFoundation/AX layer (never
// shipped; Linux only, where the real frameworks do not exist).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const macfake = process.argv.includes("--macfake");
const force = process.argv.includes("--force");
if (macfake && process.platform === "darwin") {
  console.log("build-native: the fake-CF test addon is built on Linux only");
  process.exit(0);
}
const projectDir = macfake ? join(root, "test", "native", "macfake") : root;
const output = join(projectDir, "build", "Release", macfake ? "axsnap_macfake.node" : "axsnap.node");
const sourceDirs = macfake ? [join(root, "src-native"), projectDir] : [join(root, "src-native")];

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "build") newest = Math.max(newest, newestSource(path));
    } else if (/\.(cc|h|mm)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const sourcesChanged = () =>
  Math.max(...sourceDirs.map(newestSource), statSync(join(projectDir, "binding.gyp")).mtimeMs) >
  statSync(output).mtimeMs;

if (existsSync(output) && !sourcesChanged() && !force) process.exit(0);
const configured = existsSync(join(projectDir, "build", "Makefile"));
const args = configured && !force ? ["build"] : ["rebuild"];
const gyp = join(root, "node_modules", ".bin", "node-gyp");
const run = spawnSync(gyp, [...args, "-j", "2"], { cwd: projectDir, stdio: "inherit" });
process.exit(run.status ?? 1);
