// The /proc readers behind window pids and process liveness, read after the
// process exited (CI once lost a test worker to std::ifstream's throw from
// such a read: "basic_filebuf::underflow error reading the file: No such process").
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");
const work = mkdtempSync(join(tmpdir(), "axsnap-procfiles-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.runIf(process.platform === "linux")("reading /proc of a process that exits", () => {
  it("fails as false, without an exception, on a descriptor opened while the process lived", () => {
    const bin = join(work, "proc_files_check");
    const build = spawnSync(
      "c++",
      [
        "-std=c++17",
        "-Wall",
        "-Wextra",
        "-Werror",
        "test/native/proc/proc_files_check.cc",
        "src-native/linux/proc_files.cc",
        "src-native/linux/process_life.cc",
        "src-native/linux/x11_clients.cc",
        "-lX11",
        "-ldl",
        "-o",
        bin,
      ],
      { cwd: root, encoding: "utf8" },
    );
    expect(build.stderr).toBe("");
    expect(build.status).toBe(0);
    const run = spawnSync(bin, { encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("all checks passed");
    expect(run.status).toBe(0);
  }, 60_000);
});
