import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // The native addon cannot be unloaded from a worker thread; forks isolate it.
    pool: "forks",
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
  },
});
