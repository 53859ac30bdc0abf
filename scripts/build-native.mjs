#!/usr/bin/env node
// Builds the native addon into build/Release when it is missing or older than
// its sources (a full node-gyp rebuild the first time, incremental after).
// Offline: npm's nodedir points node-gyp at the local Node headers.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const output = join(root, "build", "Release", "axsnap.node");

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (/\.(cc|h|mm)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const sourcesChanged = () =>
  Math.max(newestSource(join(root, "src-native")), statSync(join(root, "binding.gyp")).mtimeMs) >
  statSync(output).mtimeMs;

if (existsSync(output) && !sourcesChanged() && !process.argv.includes("--force")) process.exit(0);
const configured = existsSync(join(root, "build", "Makefile"));
const args = configured && !process.argv.includes("--force") ? ["build"] : ["rebuild"];
const gyp = join(root, "node_modules", ".bin", "node-gyp");
const run = spawnSync(gyp, [...args, "-j", "2"], { cwd: root, stdio: "inherit" });
process.exit(run.status ?? 1);
