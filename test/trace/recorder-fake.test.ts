/**
 * Issue 34 (WP-A): the one recorder behind the Session, on the fake backend.
 * Every action and observation is one step line (door "api" outside a door
 * scope), targets carry their printed line and locator, a refusal is an error
 * step, a secret never reaches the trace, screenshots are recorded but the
 * caller gets only what it asked for, and stop() drains every queued write.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { createSession, type Session, type SessionOptions } from "../../lib/session/session.js";
import { inDoorCall } from "../../lib/session/trace/door.js";
import { readTrace as readTraceOnly } from "../../lib/session/trace/read.js";
import { traceHeaderSchema, traceLineSchema } from "../../lib/session/trace/schema.js";
import type { TraceStepLine } from "../../lib/session/trace/types.js";

const native = loadNative();
const frame = { x: 100, y: 100, w: 800, h: 600 };
const dirs: string[] = [];
const open: { b: NativeBackend; s: Session }[] = [];

function desktop(value = "x") {
  return {
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
                  role: "panel",
                  title: "Actions",
                  frame: { x: 110, y: 110, w: 300, h: 200 },
                  children: [
                    {
                      role: "push button",
                      title: "Save",
                      actions: ["click"],
                      frame: { x: 120, y: 120, w: 200, h: 20 },
                    },
                    {
                      role: "text",
                      title: "Name",
                      settable: true,
                      valueType: "string",
                      value,
                      frame: { x: 120, y: 150, w: 200, h: 20 },
                    },
                  ],
                },
                {
                  role: "push button",
                  title: "Save",
                  actions: ["click"],
                  frame: { x: 120, y: 400, w: 200, h: 20 },
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

function traceDir(): string {
  const d = mkdtempSync(join(tmpdir(), "axsnap-rec-"));
  dirs.push(d);
  return join(d, "run.axtrace");
}

function setup(trace: NonNullable<SessionOptions["trace"]>) {
  const b = new native.NativeBackend("fake", desktop());
  const s = createSession({ backend: b, deadlineMs: 2000, trace });
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

/** The trace read back, every line checked against the format's schema first. */
function readTrace(path: string) {
  traceHeaderSchema.parse(JSON.parse(readFileSync(join(path, "trace.json"), "utf8")));
  for (const line of readFileSync(join(path, "steps.jsonl"), "utf8").split("\n").filter(Boolean))
    traceLineSchema.parse(JSON.parse(line));
  return readTraceOnly(path);
}

const stepsOf = (path: string): TraceStepLine[] => readTrace(path).steps;

describe("the recorder", () => {
  it("writes one step line per action and observation, with targets, locators and results", async () => {
    const path = traceDir();
    const { s } = setup({ path, screenshots: false });
    // With a screenshot (the default): the pixel step below clicks in it.
    const snap = await s.snapshot({ app: "Editor" });
    const found = await s.find("Editor", { role: "push button" });
    await s.clickAt(130, 25, { of: snap });
    const click = await s.click(2);
    const set = await s.setValue(3, "Ada");
    await s.typeText("bc", { target: 3 });
    await s.pressKey("ctrl+a");
    const status = await s.trace.stop();
    expect(status).toMatchObject({ path, steps: 7, screenshots: false });

    const trace = readTrace(path);
    expect(trace.truncated).toBe(false);
    expect(trace.header).toMatchObject({ format: "axsnap-trace", version: 1, screenshots: false });
    expect(status!.runId).toBe(trace.header.runId);
    const steps = trace.steps;
    expect(steps.map((x) => x.method)).toEqual([
      "snapshot",
      "find",
      "clickAt",
      "click",
      "setValue",
      "typeText",
      "pressKey",
    ]);
    expect(steps.map((x) => x.n)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    for (const step of steps) {
      expect(step).toMatchObject({ kind: "step", door: "api", runId: trace.header.runId, pid: process.pid });
      expect(step.call).toBe(step.method);
      expect(step.timings.traceMs).toBeGreaterThanOrEqual(0);
      expect(trace.snapshots.has(step.after!)).toBe(true);
    }
    const [obs, find, at, clicked, setv, typed, keys] = steps as [TraceStepLine, ...TraceStepLine[]];
    expect(obs!.after).toBe(snap.id);
    expect(trace.snapshots.get(snap.id)).toMatchObject({
      kind: "snapshot",
      app: { name: "Editor", pid: 77 },
      window: { title: "W", kind: "window" },
      style: "tree",
      complete: true,
      text: snap.text,
    });
    expect(find!.read).toEqual(found.matches.map((m) => m.index));

    // The first Save is told apart from the second by its panel.
    expect(clicked!.before).toBe(at!.after);
    expect(clicked!.after).toBe(click.snapshot!.id);
    expect(clicked!.targets).toEqual([
      expect.objectContaining({
        snapshot: at!.after,
        index: 2,
        line: "push button Save",
        role: "push button",
        roleText: "push button",
        name: "Save",
        ancestors: ['panel "Actions"'],
        locator: 'app=Editor >> window="W" >> panel "Actions" >> push button "Save"',
        frame: { x: 20, y: 20, w: 200, h: 20 },
      }),
    ]);
    expect(clicked!.result).toMatchObject({
      action: "click",
      delivery: click.delivery,
      retry: click.retry,
      channel: click.channel,
    });

    expect(setv!.args).toMatchObject({ value: "Ada" });
    expect(setv!.targets![0]).toMatchObject({
      value: "Value: x",
      locator: 'app=Editor >> window="W" >> text "Name"',
    });
    expect(setv!.result!.changes).toEqual([
      expect.objectContaining({
        kind: "changed",
        line: "text (settable, string) Name, Value: Ada",
        locator: 'app=Editor >> window="W" >> text "Name"',
        fields: ["value"],
        value: "Value: Ada",
        target: true,
      }),
    ]);
    expect(setv!.result!.changesText).toBe(set.changes!.text);
    expect(typed!.text).toBe("bc");
    expect(keys!.keys).toBe("ctrl+a");
    expect(keys!.before).toBe(typed!.after);
    expect(at!.point).toEqual({ x: 130, y: 25 });
    expect(at!.targets![0]).toMatchObject({
      line: "push button Save",
      locator: expect.stringContaining("panel"),
    });
  });

  it("records a refusal as an error step, and a target it could not address by its ref", async () => {
    const path = traceDir();
    const { s } = setup({ path, screenshots: false });
    await s.snapshot({ app: "Editor", screenshot: false });
    await expect(s.performAction(2, "fly")).rejects.toMatchObject({ code: "ACTION_NOT_SUPPORTED" });
    await expect(s.click("@s2345678:e2")).rejects.toMatchObject({ code: "SNAPSHOT_NOT_FOUND" });
    const locator = 'app=Editor >> window="W" >> push button "Nope"';
    await expect(s.click({ locator, timeoutMs: 200 })).rejects.toBeInstanceOf(Error);
    await s.trace.stop();
    const [, refused, stale, ...rest] = stepsOf(path);
    // One step: the click that never ran, named by its locator (its locating is part of it).
    expect(rest.map((x) => x.method)).toEqual(["click"]);
    expect(rest[0]).toMatchObject({
      args: { target: locator },
      targets: [{ index: -1, line: "", locator }],
      error: { code: expect.any(String) },
    });
    expect(refused).toMatchObject({
      method: "performAction",
      args: { name: "fly" },
      error: { code: "ACTION_NOT_SUPPORTED", delivery: "not_delivered", retry: "safe" },
    });
    expect(refused!.result).toBeUndefined();
    expect(refused!.error!.hint).not.toBe("");
    expect(refused!.targets![0]).toMatchObject({ index: 2, line: "push button Save" });
    expect(stale).toMatchObject({
      method: "click",
      args: { target: "@s2345678:e2" },
      error: { code: "SNAPSHOT_NOT_FOUND" },
      targets: [{ snapshot: "s2345678", index: 2 }],
    });
  });

  it("never writes a secret: args, snapshot texts, diff, notes and reply say «secret», and its shot is withheld", async () => {
    const path = traceDir();
    const { s } = setup({ path });
    await s.snapshot({ app: "Editor", screenshot: false });
    const result = await inDoorCall(
      { door: "mcp", call: "set_value", args: { element_index: 3, value: "hunter2", secret: true } },
      () => s.setValue(3, "hunter2", { secret: true }),
      (r) => `set_value 3: ${r.delivery}\n${r.text}`,
    );
    // The caller still sees what the app shows.
    expect(result.snapshot!.text).toContain("Value: hunter2");
    await s.typeText("-tok3n", { target: 3, secret: "MY_TOKEN" });
    await s.snapshot({ app: "Editor" });
    await s.trace.stop();

    const raw = readFileSync(join(path, "steps.jsonl"), "utf8");
    expect(raw).not.toContain("hunter2");
    expect(raw).not.toContain("tok3n");
    const trace = readTrace(path);
    const [, set, typed, seen] = trace.steps as TraceStepLine[];
    expect(set).toMatchObject({
      door: "mcp",
      call: "set_value",
      method: "setValue",
      args: { element_index: 3, value: "«secret»", secret: true },
      secret: { env: `AXSNAP_SECRET_${set!.n}` },
    });
    expect(set!.reply).toBe(
      `set_value 3: delivered_verified\n${result.text!.replaceAll("hunter2", "«secret»")}`,
    );
    expect(set!.result!.changesText).toContain("Value: «secret»");
    expect(set!.result!.changes![0]).toMatchObject({ value: "Value: «secret»" });
    const after = trace.snapshots.get(set!.after!)!;
    expect(after.text).toContain("Value: «secret»");
    expect(after.shot).toEqual({ withheld: "secret" });
    expect(existsSync(join(path, "shots", `${set!.after}.png`))).toBe(false);
    expect(typed).toMatchObject({
      text: "«secret»",
      args: { text: "«secret»" },
      secret: { env: "MY_TOKEN" },
    });
    // The field a secret went into is masked whole (its mask, secret-mask.test.ts), not secret by secret.
    expect(trace.snapshots.get(seen!.after!)!.text).toContain("Name, Value: «secret»\n");
  });

  it("records screenshots but gives callers only the ones they asked for", async () => {
    const path = traceDir();
    const { s } = setup(path);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const first = await s.click(2);
    expect(first.snapshot!.screenshot).toBeUndefined();
    // The fresh snapshot's own options stay the caller's: the next action on it asks for no screenshot either.
    const second = await s.click(2);
    expect(second.snapshot!.screenshot).toBeUndefined();
    const asked = await s.click(2, { snapshot: { screenshot: true } });
    expect(asked.snapshot!.screenshot?.format).toBe("png");
    await s.trace.stop();

    const trace = readTrace(path);
    expect(trace.header.screenshots).toBe(true);
    expect(trace.snapshots.get(snap.id)!.shot).toBeUndefined();
    for (const r of [first, second, asked]) {
      const line = trace.snapshots.get(r.snapshot!.id)!;
      expect(line.shot).toMatchObject({ file: `shots/${r.snapshot!.id}.png`, pixelWidth: 800, scale: 1 });
      const png = readFileSync(join(path, "shots", `${r.snapshot!.id}.png`));
      expect([...png.subarray(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
    }
    expect(readdirSync(join(path, "shots")).length).toBe(3);
    // A step's after shot is the next step's before shot: one file, one snapshot line.
    expect(trace.steps[2]!.before).toBe(first.snapshot!.id);
    const ids = readFileSync(join(path, "steps.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.startsWith('{"kind":"snapshot"'))
      .map((l) => JSON.parse(l).id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("stop() drains every queued write; a stopped session records nothing more", async () => {
    const path = traceDir();
    const { s } = setup({ path, screenshots: false });
    await s.snapshot({ app: "Editor", screenshot: false });
    const clicks = [s.click(2, { snapshot: false })];
    await Promise.all(clicks);
    const status = await s.trace.stop();
    expect(status).toMatchObject({ steps: 2 });
    expect(stepsOf(path).map((x) => x.method)).toEqual(["snapshot", "click"]);
    expect(s.trace.status).toBeUndefined();
    await s.snapshot({ app: "Editor", screenshot: false });
    expect(stepsOf(path)).toHaveLength(2);
    // Started again: the same run, numbered on.
    await s.trace.start({ path, screenshots: false });
    await s.snapshot({ app: "Editor", screenshot: false });
    await s.close();
    const again = readTrace(path);
    expect(again.steps.map((x) => x.n)).toEqual([1, 2, 3]);
    expect(new Set(again.steps.map((x) => x.runId)).size).toBe(1);
  });
});
