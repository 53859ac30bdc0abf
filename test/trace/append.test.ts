/**
 * Issue 34 (WP-A): appending to one trace directory from several processes
 * under a lock file. Steps are numbered 1, 2, … once each across processes,
 * under one run id; a writer killed mid-line leaves a partial last line that
 * the reader skips; a lock left by a killed writer is taken over once stale;
 * a door scope joins the reply text the agent read to its step.
 */
import { spawn } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadNative } from "../../lib/native.js";
import { createSession } from "../../lib/session/session.js";
import { appendToTrace } from "../../lib/session/trace/append.js";
import { inDoorCall } from "../../lib/session/trace/door.js";
import { readTrace } from "../../lib/session/trace/read.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function traceDir(): string {
  const d = mkdtempSync(join(tmpdir(), "axsnap-append-"));
  dirs.push(d);
  return join(d, "run.axtrace");
}

const TSX = import.meta.resolve("tsx");
const CHILD = new URL("../support/trace-appender.ts", import.meta.url).pathname;

function child(dir: string, count: number, tag: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", TSX, CHILD, dir, String(count), tag], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    p.on("error", reject);
    p.on("exit", (code) => resolve(code ?? -1));
  });
}

const step = (i: number) => ({
  kind: "step",
  pid: process.pid,
  door: "api",
  call: "click",
  args: { i },
  method: "click",
  startedAt: Date.now(),
  timings: { ms: 1 },
});

describe("appendToTrace", () => {
  it("numbers 4 processes × 50 appends 1..200, once each, under one run id", {
    timeout: 120_000,
  }, async () => {
    const dir = traceDir();
    const codes = await Promise.all(["a", "b", "c", "d"].map((tag) => child(dir, 50, tag)));
    expect(codes).toEqual([0, 0, 0, 0]);
    const trace = readTrace(dir);
    expect(trace.truncated).toBe(false);
    expect(trace.steps.map((s) => s.n)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(trace.steps.map((s) => s.runId))).toEqual(new Set([trace.header.runId]));
    // Each process's own steps stay in its order.
    for (const tag of ["a", "b", "c", "d"]) {
      const mine = trace.steps.filter((s) => s.args.tag === tag).map((s) => s.args.i);
      expect(mine).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
    expect(existsSync(join(dir, "lock"))).toBe(false);
  });

  it("skips a partial last line, and the next writer starts a clean line", () => {
    const dir = traceDir();
    appendToTrace(dir, { screenshots: false, entries: [step(1), step(2)], files: [] });
    // A writer killed mid-line.
    appendFileSync(join(dir, "steps.jsonl"), '{"kind":"step","n":3,"runId":"r');
    const cut = readTrace(dir);
    expect(cut.truncated).toBe(true);
    expect(cut.steps.map((s) => s.n)).toEqual([1, 2]);
    const r = appendToTrace(dir, { screenshots: false, entries: [step(3)], files: [] });
    expect(r).toMatchObject({ first: 3, last: 3 });
    const after = readTrace(dir);
    expect(after.truncated).toBe(false);
    expect(after.steps.map((s) => s.n)).toEqual([1, 2, 3]);
  });

  it("takes over a stale lock, and gives up on a live one after 2 s", () => {
    const dir = traceDir();
    mkdirSync(dir, { recursive: true });
    closeSync(openSync(join(dir, "lock"), "wx"));
    const old = (Date.now() - 20_000) / 1000;
    utimesSync(join(dir, "lock"), old, old);
    const r = appendToTrace(dir, { screenshots: false, entries: [step(1)], files: [] });
    expect(r).toMatchObject({ first: 1, last: 1 });
    expect(existsSync(join(dir, "lock"))).toBe(false);

    closeSync(openSync(join(dir, "lock"), "wx"));
    const t0 = Date.now();
    let err: unknown;
    try {
      appendToTrace(dir, { screenshots: false, entries: [step(2)], files: [] });
    } catch (e) {
      err = e;
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(err).toMatchObject({ code: "TIMEOUT" });
    expect(readTrace(dir).steps).toHaveLength(1);
  });

  it("refuses to append to a trace of another version", () => {
    const dir = traceDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "trace.json"),
      JSON.stringify({
        format: "axsnap-trace",
        version: 2,
        runId: "rzzzzzzzz",
        createdAt: "",
        axsnap: "9",
        platform: "linux",
        screenshots: false,
      }),
    );
    expect(() => appendToTrace(dir, { screenshots: false, entries: [step(1)], files: [] })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", hint: expect.stringMatching(/start a new trace/) }),
    );
  });

  it("writes a screenshot once: the same snapshot's file again is skipped", () => {
    const dir = traceDir();
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1]);
    appendToTrace(dir, {
      screenshots: true,
      entries: [],
      files: [{ name: "shots/s2345678.png", data: png }],
    });
    appendToTrace(dir, {
      screenshots: true,
      entries: [],
      files: [{ name: "shots/s2345678.png", data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 2]) }],
    });
    expect([...readFileSync(join(dir, "shots", "s2345678.png"))]).toEqual([...png]);
  });
});

describe("inDoorCall", () => {
  it("joins the door's reply text to the step, with the door's call and args", async () => {
    const native = loadNative();
    const frame = { x: 100, y: 100, w: 800, h: 600 };
    const b = new native.NativeBackend("fake", {
      apps: [
        {
          name: "Editor",
          pid: 77,
          windows: [
            {
              title: "W",
              frame,
              root: {
                role: "frame",
                title: "W",
                frame,
                children: [
                  {
                    role: "push button",
                    title: "OK",
                    actions: ["click"],
                    frame: { x: 120, y: 120, w: 80, h: 20 },
                  },
                ],
              },
            },
          ],
        },
      ],
    });
    const dir = traceDir();
    const s = createSession({ backend: b, trace: { path: dir, screenshots: false } });
    try {
      await inDoorCall(
        { door: "cli", call: "snapshot", args: { app: "Editor" } },
        async () => {
          const snap = await s.snapshot({ app: "Editor", screenshot: false });
          return { text: snap.text };
        },
        (out) => out.text,
      );
      // The reply is known only when the scope ends: the step waits for it.
      const reply = await inDoorCall(
        { door: "cli", call: "click", args: { target: "1" } },
        async () => {
          const r = await s.click(1, { snapshot: false });
          return `clicked: ${r.delivery}`;
        },
        (text) => text,
      );
      await s.trace.stop();
      const steps = readTrace(dir).steps;
      expect(steps).toHaveLength(2);
      expect(steps[0]).toMatchObject({
        door: "cli",
        call: "snapshot",
        method: "snapshot",
        args: { app: "Editor" },
      });
      expect(steps[0]!.reply).toContain("push button OK");
      expect(steps[1]).toMatchObject({
        door: "cli",
        call: "click",
        method: "click",
        args: { target: "1" },
        reply,
      });
    } finally {
      await s.close();
      await b.close();
    }
  });
});
