/**
 * Replay's refusals that need no desktop (design 4.4): a secret missing
 * from the callback and the environment stops the replay before anything
 * is sent; a step that cannot be done again (a pixel click that hit no
 * recorded element) is an `unreplayable` drift; the text report ends with
 * where it stopped. The drifts an app causes are tested on a real desktop
 * in test/linux/trace-drift.test.ts.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Session } from "../../lib/session/session.js";
import { type ReplayReport, replayText, replayTrace } from "../../lib/session/trace/replay.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A session that fails the test if the replay touches it: these drifts come before anything is sent. */
function untouchable(): { session: Session; calls: string[] } {
  const calls: string[] = [];
  const session = new Proxy(
    {},
    {
      get: (_t, prop) => {
        if (prop === "then") return undefined;
        return (..._args: unknown[]) => {
          calls.push(String(prop));
          throw new Error(`the replay called session.${String(prop)}`);
        };
      },
    },
  ) as Session;
  return { session, calls };
}

describe("replay before anything is sent", () => {
  it("a missing secret is a secret_missing drift at its step; nothing reaches the session", async () => {
    const { session, calls } = untouchable();
    const report = await replayTrace("test/fixtures/traces/export-mixed.axtrace", {
      session,
      secrets: () => undefined,
    });
    expect(calls).toEqual([]);
    expect(report).toMatchObject({
      ok: false,
      runId: "rmixed0002",
      steps: 8,
      replayed: 0,
      drift: { step: 1, call: "type_text", kind: "secret_missing" },
    });
    expect(report.drift!.error!.message).toMatch(/set AXSNAP_SECRET_1 .*nothing was sent/);
    expect(replayText(report).split("\n").at(-1)).toBe("stopped at step 1 of 8");
    console.log(replayText(report));
  });

  it("a pixel click that hit no recorded element is unreplayable; with continueOnDrift every drift is listed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "axsnap-replay-"));
    dirs.push(dir);
    const path = join(dir, "pixels.axtrace");
    cpSync("test/fixtures/traces/export-mixed.axtrace", path, { recursive: true });
    // Only the two pixel steps' lines: a click at an element, and one at nothing.
    const lines = readFileSync(join(path, "steps.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l !== "" && (l.includes('"kind": "snapshot"') || /"method": "clickAt"/.test(l)))
      .filter((l) => !l.includes('"x": 120'));
    writeFileSync(join(path, "steps.jsonl"), `${lines.join("\n")}\n`);
    const { session, calls } = untouchable();
    const report: ReplayReport = await replayTrace(path, { session, continueOnDrift: true });
    expect(calls).toEqual([]);
    expect(report.drift).toMatchObject({ step: 5, kind: "unreplayable" });
    expect(report.drift!.error!.message).toMatch(/clickAt at 5\/5 hit no element the trace recorded/);
    expect(report.drifts).toHaveLength(1);
    expect(report.results).toEqual([expect.objectContaining({ step: 5, ok: false, effects: [] })]);
  });

  it("refuses a step timeout out of range before reading anything", async () => {
    await expect(
      replayTrace("test/fixtures/traces/drift-base.axtrace", { stepTimeoutMs: 5 }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});
