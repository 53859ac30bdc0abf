/**
 * A child process of test/trace/append.test.ts: appends `count` one-step
 * batches to the trace at argv[2], as a CLI command or a warm process would.
 */
import { appendToTrace } from "../../lib/session/trace/append.js";

const [dir, count, tag] = process.argv.slice(2);
for (let i = 0; i < Number(count); i++) {
  appendToTrace(dir!, {
    screenshots: false,
    entries: [
      {
        kind: "step",
        pid: process.pid,
        door: "cli",
        call: "click",
        args: { tag, i },
        method: "click",
        startedAt: Date.now(),
        timings: { ms: 0 },
      },
    ],
    files: [],
  });
}
