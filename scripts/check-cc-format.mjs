#!/usr/bin/env node
// Checks (or with --fix, applies) the committed .clang-format on every C, C++
// and Objective-C++ source the project tracks: src-native/ and test/native/.
// Part of `npm run lint`. Needs clang-format 16 (scripts/install-deps.sh
// installs it); AXSNAP_CLANG_FORMAT names another binary.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tool = process.env.AXSNAP_CLANG_FORMAT || "clang-format-16";
const listed = spawnSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "src-native", "test/native"], {
  cwd: root,
  encoding: "utf8",
});
if (listed.status !== 0) {
  console.error(`check-cc-format: git ls-files failed: ${listed.stderr}`);
  process.exit(1);
}
const files = listed.stdout.split("\n").filter((f) => /\.(c|cc|h|mm)$/.test(f));
const fix = process.argv.includes("--fix");
const run = spawnSync(tool, fix ? ["-i", ...files] : ["--dry-run", "--Werror", ...files], {
  cwd: root,
  encoding: "utf8",
});
if (run.error) {
  console.error(`check-cc-format: cannot run ${tool} (${run.error.message}); install it with scripts/install-deps.sh`);
  process.exit(1);
}
if (run.status !== 0) {
  process.stderr.write(run.stderr);
  console.error(`check-cc-format: ${tool} would reformat the files above; run: node scripts/check-cc-format.mjs --fix`);
  process.exit(1);
}
console.log(`check-cc-format: ${files.length} files formatted as .clang-format says`);
