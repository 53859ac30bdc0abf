// Runs the macOS compile check (scripts/check-macos.mjs): src-native/mac/
// compiles for Linux (syntax) and, with every other source binding.gyp lists
// for macOS (core/, fake/, and napi/ with its AXSNAP_MAC branches), as
// arm64/x86_64 Mach-O objects against the macOS headers; and every must-fail
// sample in test/macos-check/ is rejected.
// Linux only: on a Mac the real SDK build (.github/workflows/macos.yml) is the check.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const mustFailDir = join(root, "test", "macos-check", "must-fail");
const napiFiles = readdirSync(join(root, "src-native", "napi")).filter((name) => name.endsWith(".cc")).length;

/** Target names each must-fail sample applies to (all when it has no `// targets:` line). */
function expectedRejections(target: string): number {
  return readdirSync(mustFailDir)
    .filter((name) => /\.(cc|mm)$/.test(name))
    .filter((name) => {
      const only = readFileSync(join(mustFailDir, name), "utf8").match(/^\/\/ targets: (.+)$/m)?.[1];
      return only === undefined || only.trim().split(/\s+/).includes(target);
    }).length;
}

describe.skipIf(process.platform !== "linux")("macOS compile check", () => {
  it("compiles src-native/mac for every target, the N-API layer for darwin, and rejects every must-fail sample", () => {
    const run = spawnSync(process.execPath, [join(root, "scripts", "check-macos.mjs")], {
      cwd: root,
      encoding: "utf8",
      // About 90 compiles (35 per darwin target): about a minute on an idle 2-CPU machine, four when it is busy.
      timeout: 480_000,
    });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.error, output).toBeUndefined();
    expect(run.status, output).toBe(0);

    const summaries = new Map<string, Record<string, string>>();
    for (const line of run.stdout.split("\n")) {
      const match = line.match(/^check-macos: (target=\S+(?: \S+=\S+)*)$/);
      if (!match?.[1]) continue;
      const fields = Object.fromEntries(match[1].split(" ").map((kv) => kv.split("=") as [string, string]));
      summaries.set(fields.target!, fields);
    }
    expect([...summaries.keys()].sort()).toEqual(["darwin-arm64", "darwin-x86_64", "linux"]);

    for (const [target, fields] of summaries) {
      const want = expectedRejections(target);
      expect(want, target).toBeGreaterThan(0);
      expect(fields["must-fail"], target).toBe(`${want}/${want}`);
      const [ok, total] = fields.sources!.split("/");
      expect(Number(total), target).toBeGreaterThan(0);
      expect(ok, target).toBe(total);
      const [passed, passTotal] = fields["must-pass"]!.split("/");
      expect(passed, target).toBe(passTotal);
      // The macOS addon's N-API files, AXSNAP_MAC branches included, compile only where the Mac headers are.
      if (target.startsWith("darwin")) expect(fields.napi, target).toBe(`${napiFiles}/${napiFiles}`);
      else expect(fields.napi, target).toBeUndefined();
    }
    expect(napiFiles).toBeGreaterThanOrEqual(8);
    // The availability samples only bite on darwin targets; make sure they are there.
    expect(expectedRejections("darwin-arm64")).toBeGreaterThan(expectedRejections("linux"));
  }, 480_000);
});
