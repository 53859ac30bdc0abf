import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The native addon cannot be unloaded from a worker thread; forks isolate it.
    pool: "forks",
    // One file at a time: the real-desktop files measure event-loop delay and
    // timing-sensitive faults, and a leak run beside them on 2 cores skews both.
    fileParallelism: false,
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    // The locator audit (issue 34): every printed element of every window a test observes is found again by its locator.
    setupFiles: ["test/support/locator-audit.ts"],
  },
});
