/**
 * Issue 34 (design 1.5): a secret never enters a trace, across processes.
 * The process that typed it writes the field's mask (its locator, never the
 * secret) into the trace directory; every recorder appending to that trace,
 * in any process, masks that field's printed value in the snapshots it
 * writes, in targets' and changes' values and in diff and reply lines, and
 * withholds those snapshots' screenshots. The second process never saw the
 * secret: only the mask tells it what to hide.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { createSession, type Session } from "../../lib/session/session.js";
import { appendToTrace } from "../../lib/session/trace/append.js";
import { inDoorCall } from "../../lib/session/trace/door.js";
import { readTrace } from "../../lib/session/trace/read.js";
import { traceLineSchema, traceMasksSchema } from "../../lib/session/trace/schema.js";
import type { TraceStepLine } from "../../lib/session/trace/types.js";
import { secretDesktop, tokenIndex } from "../support/secret-desktop.js";

const native = loadNative();
const dirs: string[] = [];
const open: { b: NativeBackend; s: Session }[] = [];

function traceDir(): string {
  const d = mkdtempSync(join(tmpdir(), "axsnap-secret-"));
  dirs.push(d);
  return join(d, "run.axtrace");
}

function setup(path: string, token: string) {
  const b = new native.NativeBackend("fake", secretDesktop(token));
  const s = createSession({ backend: b, deadlineMs: 2000, trace: path });
  open.push({ b, s });
  return { b, s };
}

afterEach(async () => {
  for (const { b, s } of open.splice(0)) {
    await s.close();
    await b.close();
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Every file under the trace directory, as bytes, that holds `needle` (PNGs included). */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (readFileSync(p).includes(Buffer.from(needle))) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** Session A of the trace: types the secret into the Token field, and ends (as a CLI command would). */
async function typeSecret(path: string, secret: string): Promise<void> {
  const { b, s } = setup(path, "");
  const snap = await s.snapshot({ app: "Vault" });
  await s.typeText(secret, { target: tokenIndex(snap.text), secret: true });
  open.splice(
    open.findIndex((o) => o.s === s),
    1,
  );
  await s.close();
  await b.close();
}

const TSX = import.meta.resolve("tsx");
const CHILD = new URL("../support/trace-secret-child.ts", import.meta.url).pathname;

function child(dir: string, role: "type" | "look", value: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", TSX, CHILD, dir, role, value], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    p.on("error", reject);
    p.on("exit", (code) => resolve(code ?? -1));
  });
}

describe("a secret typed in one process", () => {
  it("is masked by a later session's recorder: its field's line, targets, changes, diff and reply, and no shot", async () => {
    const path = traceDir();
    await typeSecret(path, "hunter2");

    // Session B never saw the secret; its app shows the field's value.
    const { s } = setup(path, "hunter2");
    const snap = await s.snapshot({ app: "Vault" });
    expect(snap.text).toContain("Token, Value: hunter2");
    const token = tokenIndex(snap.text);
    const typed = await inDoorCall(
      { door: "cli", call: "type", args: { text: "!", into: `@${snap.id}:e${token}` } },
      () => s.typeText("!", { target: token }),
      (r) => `type: ${r.delivery}\n${r.text}`,
    );
    expect(typed.changes!.text).toContain("Value: hunter2!");
    await s.trace.stop();

    expect(filesHolding(path, "hunter2")).toEqual([]);
    const raw = readFileSync(join(path, "steps.jsonl"), "utf8");
    for (const line of raw.split("\n").filter(Boolean)) traceLineSchema.parse(JSON.parse(line));
    const trace = readTrace(path);
    const seen = trace.snapshots.get(snap.id)!;
    expect(seen.text).toContain("Token, Value: «secret»");
    expect(seen.text).toContain("User, Value: ada");
    expect(seen.shot).toEqual({ withheld: "secret" });
    const step = trace.steps.find((x) => x.method === "typeText" && x.door === "cli") as TraceStepLine;
    expect(step.targets![0]).toMatchObject({ index: token, value: "Value: «secret»" });
    expect(step.targets![0]!.line).toContain("Value: «secret»");
    expect(step.result!.changesText).toContain("Token, Value: «secret»");
    expect(step.result!.changes![0]).toMatchObject({ kind: "changed", value: "Value: «secret»" });
    expect(step.reply).toContain("Token, Value: «secret»");
    expect(trace.snapshots.get(step.after!)!.shot).toEqual({ withheld: "secret" });
  });

  it("writes the field's mask to the trace directory, never the secret; another OS process masks by it", {
    timeout: 60_000,
  }, async () => {
    const path = traceDir();
    expect(await child(path, "type", "hunter2")).toBe(0);
    const masks = traceMasksSchema.parse(JSON.parse(readFileSync(join(path, "secrets.json"), "utf8")));
    expect(masks).toEqual({
      masks: [
        {
          locator: 'app=Vault >> window="Sign in" >> text "Token"',
          app: "Vault",
          window: { title: "Sign in", kind: "window" },
        },
      ],
    });
    // The app kept the secret upper-cased: the process looking at it cannot know the string, only the field.
    expect(await child(path, "look", "HUNTER2")).toBe(0);
    expect(filesHolding(path, "hunter2")).toEqual([]);
    expect(filesHolding(path, "HUNTER2")).toEqual([]);
    const trace = readTrace(path);
    const last = trace.steps.at(-1)!;
    expect(last.pid).not.toBe(trace.steps[0]!.pid);
    const looked = trace.snapshots.get(last.after!)!;
    expect(looked.text).toContain("Token, Value: «secret»");
    expect(looked.shot).toEqual({ withheld: "secret" });
  });

  it("reaches the trace through a sink that forwards batches as JSON (the warm process's), with no field of its own", async () => {
    const path = traceDir();
    const b = new native.NativeBackend("fake", secretDesktop(""));
    // As the warm process sends a batch to its client: entries as JSON, files as base64, nothing else.
    const sink = {
      append: (batch: {
        screenshots: boolean;
        entries: object[];
        files: { name: string; data: Uint8Array }[];
      }) =>
        appendToTrace(path, {
          screenshots: batch.screenshots,
          entries: JSON.parse(JSON.stringify(batch.entries)),
          files: batch.files.map((f) => ({
            name: f.name,
            data: Buffer.from(Buffer.from(f.data).toString("base64"), "base64"),
          })),
        }),
    };
    const s = createSession({ backend: b, deadlineMs: 2000, trace: { path, sink } });
    open.push({ b, s });
    const snap = await s.snapshot({ app: "Vault" });
    await s.typeText("hunter2", { target: tokenIndex(snap.text), secret: true });
    await s.trace.stop();
    expect(readFileSync(join(path, "secrets.json"), "utf8")).toContain('text \\"Token\\"');
    expect(readFileSync(join(path, "steps.jsonl"), "utf8")).not.toContain('"kind":"mask"');

    const later = setup(path, "hunter2");
    await later.s.snapshot({ app: "Vault" });
    await later.s.trace.stop();
    expect(filesHolding(path, "hunter2")).toEqual([]);
  });

  it("stays masked in the same process when the app transforms the value", async () => {
    const path = traceDir();
    const { b, s } = setup(path, "");
    const snap = await s.snapshot({ app: "Vault", screenshot: false });
    await s.typeText("hunter2", { target: tokenIndex(snap.text), secret: true });
    await b.fakeReplace(secretDesktop("HUNTER2"));
    const later = await s.snapshot({ app: "Vault" });
    expect(later.text).toContain("Token, Value: HUNTER2");
    await s.trace.stop();
    expect(filesHolding(path, "HUNTER2")).toEqual([]);
    const line = readTrace(path).snapshots.get(later.id)!;
    expect(line.text).toContain("Token, Value: «secret»");
    expect(line.shot).toEqual({ withheld: "secret" });
  });

  it("leaves another app's field of the same shape alone", async () => {
    const path = traceDir();
    await typeSecret(path, "hunter2");
    const b = new native.NativeBackend("fake", {
      apps: [{ ...secretDesktop("visible").apps[0]!, name: "Other", pid: 92 }],
    });
    const s = createSession({ backend: b, deadlineMs: 2000, trace: path });
    open.push({ b, s });
    const snap = await s.snapshot({ app: "Other" });
    await s.trace.stop();
    const line = readTrace(path).snapshots.get(snap.id)!;
    expect(line.text).toContain("Token, Value: visible");
    expect(line.shot).toMatchObject({ file: `shots/${snap.id}.png` });
  });
});
