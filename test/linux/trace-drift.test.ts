/**
 * Replay against an app that drifted (issue 34, design 4.5), on a real
 * desktop. The base run of test/apps/drift-app.py is recorded through the
 * API (check Subscribe, type "Ada" into Name, Save, Details, Close), then
 * replayed against a fresh instance of each variant: a renamed button stops
 * the replay at its step with the renamed one as the closest candidate, a
 * second button of the same name makes it ambiguous, rows reordered and a
 * window moved do not matter (locators, not indices or pixels), and a
 * button that does nothing is an `effect` drift with the recorded and the
 * actual changes. The exported program runs with `npx tsx` against the
 * base app. Every report is printed, for the closing note.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession } from "../../lib/index.js";
import { expectationsOf } from "../../lib/session/trace/effects.js";
import { exportTs } from "../../lib/session/trace/export-ts.js";
import { readTrace } from "../../lib/session/trace/read.js";
import { type ReplayReport, replayText, replayTrace } from "../../lib/session/trace/replay.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const run = promisify(execFile);
const NAME = "axsnap-drift-test";
const W = `app=${NAME} >> window="axsnap drift"`;
const STEP_MS = 6000;
let desktop: Desktop;
let dir: string;
let trace: string;
const apps: App[] = [];

async function drift(variant: string): Promise<App> {
  const app = await startApp(desktop, "/usr/bin/python3", ["test/apps/drift-app.py", "--variant", variant], {
    name: NAME,
    windowName: "axsnap drift",
    timeoutMs: 20_000,
  });
  apps.push(app);
  return app;
}

async function replayOn(variant: string): Promise<ReplayReport> {
  const app = await drift(variant);
  try {
    const report = await replayTrace(trace, { stepTimeoutMs: STEP_MS });
    console.log(
      `--- replay against --variant ${variant}\n${replayText(report)}\n${JSON.stringify(report, null, 2)}`,
    );
    return report;
  } finally {
    await app.stop();
  }
}

beforeAll(async () => {
  desktop = await useDesktop();
  dir = mkdtempSync(join(tmpdir(), "axsnap-drift-"));
  trace = join(dir, "base.axtrace");
  const app = await drift("base");
  const session = createSession({ trace: { path: trace, screenshots: false } });
  try {
    await session.snapshot({ app: NAME });
    await session.click({ locator: `${W} >> check box "Subscribe"` });
    await session.typeText("Ada", { target: { locator: `${W} >> text "Name:"` } });
    await session.click({ locator: `${W} >> push button "Save"` });
    await session.click({ locator: `${W} >> push button "Details"` });
    await session.click({ locator: `app=${NAME} >> window:dialog="Details" >> push button "Close"` });
  } finally {
    await session.close();
    await app.stop();
  }
}, 120_000);

afterAll(async () => {
  for (const a of apps) await a.stop().catch(() => undefined);
  await desktop?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("replay on a drifting app", () => {
  it("the recorded run gives one check per action: value, contents, the status line, the dialog opened and closed", () => {
    const t = readTrace(trace);
    const actions = t.steps.filter((s) => s.method === "click" || s.method === "typeText");
    expect(actions.map((s) => expectationsOf(s))).toEqual([
      [{ locator: `${W} >> check box "Subscribe"`, states: { has: ["checked"] }, value: "on" }],
      [{ locator: `${W} >> text "Name:"`, value: { contains: "Ada" } }],
      [{ locator: `${W} >> label "Status: saved Ada"`, present: true }],
      [{ window: { title: "Details", kind: "dialog" }, opened: true }],
      [{ window: { title: "Details", kind: "dialog" }, closed: true }],
    ]);
  });

  it("base: every step again, every effect seen", async () => {
    const r = await replayOn("base");
    expect(r.ok, replayText(r)).toBe(true);
    expect(r.replayed).toBe(5);
  }, 120_000);

  it("renamed: stops at the Save step, ELEMENT_NOT_FOUND, the renamed button first among the candidates", async () => {
    const r = await replayOn("renamed");
    const save = readTrace(trace).steps.find((s) => s.targets?.[0]?.name === "Save")!;
    expect(r.ok).toBe(false);
    expect(r.drift).toMatchObject({
      step: save.n,
      kind: "not_found",
      locator: `${W} >> push button "Save"`,
      error: { code: "ELEMENT_NOT_FOUND" },
      recorded: { line: "push button Save", ancestors: ['panel "Actions"'] },
    });
    expect(r.drift!.now!.candidates![0]!.locator).toBe(`${W} >> push button "Store"`);
    expect(r.replayed).toBe(2);
    expect(replayText(r).split("\n").at(-1)).toBe(`stopped at step ${save.n} of ${r.steps}`);
  }, 120_000);

  it("duplicate: AMBIGUOUS_TARGET with both matches, each with the frame that tells it apart", async () => {
    const r = await replayOn("duplicate");
    expect(r.drift).toMatchObject({ kind: "ambiguous", error: { code: "AMBIGUOUS_TARGET" } });
    expect(r.drift!.now!.matches!.map((m) => m.locator)).toEqual([
      `${W} >> panel "Actions" >> push button "Save"`,
      `${W} >> panel "More" >> push button "Save"`,
    ]);
  }, 120_000);

  it("reordered: buttons inserted above and the order reversed change nothing", async () => {
    const r = await replayOn("reordered");
    expect(r.ok, replayText(r)).toBe(true);
    expect(r.replayed).toBe(5);
  }, 120_000);

  it("moved: a window moved and resized changes nothing", async () => {
    const r = await replayOn("moved");
    expect(r.ok, replayText(r)).toBe(true);
    expect(r.replayed).toBe(5);
  }, 120_000);

  it("noeffect: Save does nothing, an effect drift with the recorded and the actual changes", async () => {
    const r = await replayOn("noeffect");
    expect(r.drift).toMatchObject({
      kind: "effect",
      locator: `${W} >> push button "Save"`,
      error: { code: "EFFECT_NOT_SEEN" },
    });
    expect(r.drift!.recorded!.changes).toMatch(/label Status: saved Ada \[changed: name\]/);
    expect(r.drift!.now!.changes).not.toMatch(/Status: saved/);
    const text = replayText(r);
    expect(text).toMatch(/recorded changes:\n.*\n[\s\S]*actual changes:/);
  }, 120_000);

  it("late: a Save the app enables 1.5 s after the name changed is tried again until it is enabled", async () => {
    const r = await replayOn("late");
    expect(r.ok, replayText(r)).toBe(true);
    const save = r.results.find((x) => x.effects.some((e) => e.includes("Status: saved Ada")));
    // Refused NOT_ENABLED (nothing sent) at first, then clicked once enabled: the step took the app's delay.
    expect(save?.ms).toBeGreaterThan(1000);
  }, 120_000);

  it("session.expect says what it waited for and what is there, with the last observation", async () => {
    const app = await drift("base");
    const session = createSession();
    try {
      const opened = await session
        .expect(NAME, { window: { title: "Details", kind: "dialog" }, opened: true }, { timeoutMs: 1500 })
        .catch((e: unknown) => e);
      expect(opened).toMatchObject({ code: "EFFECT_NOT_SEEN" });
      const e1 = opened as { message: string; observed?: { window: { title: string } } };
      expect(e1.message).toMatch(
        /^expected dialog "Details" to open; waited \d+ ms \(\d+ looks\), and the app's windows are: window "axsnap drift"$/,
      );
      expect(e1.observed?.window.title).toBe("axsnap drift");
      const checked = await session
        .expect(NAME, { locator: `${W} >> check box "Subscribe"`, value: "on" }, { timeoutMs: 1500 })
        .catch((e: unknown) => e);
      expect(checked).toMatchObject({ code: "EFFECT_NOT_SEEN" });
      expect((checked as Error).message).toMatch(
        /to read value "on".*it reads: \d+ check box Subscribe, Value: off$/,
      );
      const ok = await session.expect(NAME, { locator: `${W} >> label "Status: idle"`, present: true });
      expect(ok.snapshot.text).toMatch(/label Status: idle/);
    } finally {
      await session.close();
      await app.stop();
    }
  }, 120_000);

  /** Runs the exported program against a fresh instance of the variant: its exit code and stderr. */
  async function exported(variant: string): Promise<{ code: number; stderr: string }> {
    const app = await drift(variant);
    try {
      const file = join(dir, "base.ts");
      writeFileSync(join(dir, "package.json"), '{"type":"module"}\n');
      writeFileSync(file, exportTs(readTrace(trace), { importFrom: resolve("lib/index.ts") }));
      const out = await run(resolve("node_modules/.bin/tsx"), [file], {
        env: { ...process.env, ...desktop.env },
        timeout: 90_000,
      }).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (e: { stderr: string; code: number }) => ({ code: e.code, stderr: e.stderr }),
      );
      console.log(`--- exported program against --variant ${variant}\n${JSON.stringify(out)}`);
      return out;
    } finally {
      await app.stop();
    }
  }

  it("the exported program runs with npx tsx against the base app", async () => {
    expect(await exported("base")).toEqual({ code: 0, stderr: "" });
  }, 120_000);

  it("the exported program stops with ELEMENT_NOT_FOUND against the renamed app", async () => {
    const out = await exported("renamed");
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^ELEMENT_NOT_FOUND: no element matches push button "Save"/);
  }, 120_000);
});
