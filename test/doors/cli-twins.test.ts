/**
 * Refs to elements with twins (same role and name: gtk3-widget-factory's four
 * "checkbutton" check boxes, its two unnamed spin buttons) through the CLI,
 * each command a child process as an agent runs it, on a real headless desktop.
 *
 * The warm process (lib/doors/cli/daemon.ts) keeps the live elements of the
 * snapshots it printed, per session directory: a ref into one of those
 * reaches exactly the element printed on its line, as the library's does.
 * A process that has no live element (AXSNAP_DAEMON=off, or the warm process
 * gone) finds the element by its stored identity as before, and refuses a
 * twin honestly (AMBIGUOUS_TARGET, nothing sent), with a hint that names
 * something that fits the action it was asked to do.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { indexIn, type Json, runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";

let desktop: Desktop;
/** Its own session directory, so a warm process of its own (the environment is part of its address). */
let env: Record<string, string>;
/** The same session directory, every command in its own process. */
let cold: Record<string, string>;
let warmPid: number | undefined;

beforeAll(async () => {
  desktop = await useDesktop();
  await gtkWidgetFactory(desktop);
  env = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "axsnap-twins-")) };
  cold = { ...env, AXSNAP_DAEMON: "off" };
  const started = await runCliJson(["daemon", "start"], env);
  expect(started.code, started.stdout).toBe(0);
  warmPid = started.env.data.pid;
  expect(warmPid).toBeGreaterThan(0);
}, TIMEOUT);

afterAll(async () => {
  await runCli(["daemon", "stop"], env).catch(() => undefined);
  if (warmPid !== undefined)
    try {
      process.kill(warmPid, "SIGKILL");
    } catch {
      // Stopped already.
    }
  await desktop?.stop();
});

const served = async (): Promise<number> => (await runCliJson(["daemon", "status"], env)).env.data.served;

/** The check boxes named "checkbutton" (enabled or not), in the order printed: index and value. */
function checkbuttons(text: string): { index: number; value: string }[] {
  return text
    .split("\n")
    .map((l) => /^\s*(\d+) check box (?:\(disabled\) )?checkbutton, Value: (\w+)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ index: Number(m[1]), value: m[2]! }));
}

/** The n-th (0-based) line matching `re`: its index. */
function nthIndex(text: string, re: RegExp, n: number): number {
  const found = text
    .split("\n")
    .map((l) => /^\s*(\d+) (.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && re.test(m[2]!));
  if (!found[n]) throw new Error(`no line ${n} matching ${re} in:\n${text}`);
  return Number(found[n]![1]);
}

async function snapshot(e: Record<string, string>): Promise<{ id: string; text: string }> {
  const r = await runCliJson(["snapshot", "--app", GTK], e);
  expect(r.code, r.stdout).toBe(0);
  return { id: r.env.data.snapshotId, text: r.env.data.text };
}

describe("a ref to one of several identical check boxes", () => {
  it(
    "through the warm process, clicks exactly the one printed on its line",
    async () => {
      const before = await snapshot(env);
      const values = checkbuttons(before.text);
      expect(values.length).toBeGreaterThanOrEqual(3);
      // The 2nd enabled "checkbutton": a twin of the others by role and name.
      const second = nthIndex(before.text, /^check box checkbutton, Value: /, 1);
      const count = await served();
      const click = await runCliJson(["click", `@${before.id}:e${second}`], env);
      expect(click.code, JSON.stringify(click.env)).toBe(0);
      expect(click.env.ok).toBe(true);
      // Served by the warm process (not a process of its own).
      expect(await served()).toBe(count + 1);
      // Reached by its live element: nothing was found again.
      expect(click.env.data.target).toEqual({
        ref: `@${before.id}:e${second}`,
        snapshotId: before.id,
        index: second,
      });
      const after = checkbuttons((await snapshot(cold)).text);
      const toggle = (v: string) => (v === "on" ? "off" : "on");
      // That one toggled, and none of its twins.
      expect(after).toEqual(values.map((c) => (c.index === second ? { ...c, value: toggle(c.value) } : c)));
      // Back as it was, the same way.
      const again = await snapshot(env);
      const back = await runCliJson(["click", `@${again.id}:e${second}`], env);
      expect(back.code, JSON.stringify(back.env)).toBe(0);
      expect(checkbuttons((await snapshot(cold)).text)).toEqual(values);
    },
    TIMEOUT,
  );

  it(
    "in a process without its live element, is refused (AMBIGUOUS_TARGET), nothing sent, with a hint that fits the action",
    async () => {
      const snap = await snapshot(env);
      const values = checkbuttons(snap.text);
      const second = nthIndex(snap.text, /^check box checkbutton, Value: /, 1);
      const click = await runCliJson(["click", `@${snap.id}:e${second}`], cold);
      expect(click.code).toBe(1);
      expect(click.env.error).toMatchObject({
        code: "AMBIGUOUS_TARGET",
        delivery: "not_delivered",
        retry: "safe",
      });
      expect(click.env.error.message).toMatch(/was not proven unique/);
      // A click may go by its pixels.
      expect(click.env.error.hint).toMatch(/click-at/);
      expect(click.env.error.hint).toMatch(/axsnap call/);

      // A value is not set by a click: the hint for set-value names no click-at.
      const spin = indexIn(snap.text, /^\d+ spin button \(settable, float\) Value: /);
      const set = await runCliJson(["set-value", `@${snap.id}:e${spin}`, "42", "--number"], cold);
      expect(set.code).toBe(1);
      expect(set.env.error.code).toBe("AMBIGUOUS_TARGET");
      expect(set.env.error.hint).not.toMatch(/click-at/);
      expect(set.env.error.hint).toMatch(/set-value/);
      // Nothing was sent.
      const now = await snapshot(cold);
      expect(checkbuttons(now.text)).toEqual(values);
      const spinLine = (t: string) =>
        t
          .split("\n")
          .find((l) => l.trim().startsWith(`${spin} `))
          ?.trim();
      expect(spinLine(now.text)).toBe(spinLine(snap.text));
    },
    TIMEOUT,
  );

  it(
    "set-value on a twin spin button through the warm process sets that one",
    async () => {
      const snap = await snapshot(env);
      const spins = (t: string) =>
        t
          .split("\n")
          .map((l) => /^\s*\d+ spin button \(settable, float\) Value: (\S+)$/.exec(l)?.[1])
          .filter((v): v is string => v !== undefined);
      const was = spins(snap.text);
      expect(was.length).toBe(1);
      // Its twin (same role, no name) is the disabled one printed after it.
      expect(snap.text).toMatch(/\d+ spin button \(disabled, settable, float\) Value: /);
      const first = nthIndex(snap.text, /^spin button \(settable, float\) Value: /, 0);
      const set = await runCliJson(["set-value", `@${snap.id}:e${first}`, "42", "--number"], env);
      expect(set.code, JSON.stringify(set.env)).toBe(0);
      expect(spins((await snapshot(cold)).text)).toEqual(["42"]);
      const back = await runCliJson(["set-value", `@${snap.id}:e${first}`, was[0]!, "--number"], env);
      expect(back.code, JSON.stringify(back.env as Json)).toBe(0);
    },
    TIMEOUT,
  );
});
