/**
 * The Wayland placement rule (src-native/linux/wayland_frames.h): which
 * compositor rectangle a native Wayland window's AT-SPI coordinates start
 * at. Pure C++, built with g++ and run here (test/native/wayland_frames_test.cc).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";

it("buffer origin for GTK3 and Chromium, frame origin for GTK4, hidden widgets untouched", () => {
  const dir = mkdtempSync(join(tmpdir(), "axsnap-wlrule-"));
  try {
    const bin = join(dir, "rule");
    execFileSync("g++", ["-std=c++17", "-Wall", "-Werror", "test/native/wayland_frames_test.cc", "-o", bin]);
    expect(execFileSync(bin, { encoding: "utf8" })).toBe("ok\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
