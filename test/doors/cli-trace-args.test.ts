/**
 * The command line's grammar for issue 34 (no desktop): --trace and
 * --trace-screenshots on every command, --secret on type and set-value, a
 * locator wherever a TARGET is taken (told apart from refs and indices), the
 * locate command, and the trace and replay command lines, which run in the
 * caller's own process.
 */
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../lib/doors/cli/args.js";
import { ownCaller } from "../../lib/doors/cli/caller.js";
import { keyedEnv } from "../../lib/doors/cli/daemon-address.js";
import { commandWord, servable } from "../../lib/doors/cli/daemon-client.js";
import { UsageError } from "../../lib/doors/cli/grammar.js";
import { servedHere } from "../../lib/doors/cli/main.js";

const LOC = 'app=mousepad >> window:dialog="Save As" >> push button "Save"';

function run(argv: string[]) {
  const inv = parseCommandLine(argv);
  if (inv.kind !== "run") throw new Error(`not a run: ${inv.kind}`);
  return inv;
}

function usage(argv: string[]): UsageError {
  try {
    parseCommandLine(argv);
  } catch (e) {
    if (e instanceof UsageError) return e;
    throw e;
  }
  throw new Error(`accepted: ${argv.join(" ")}`);
}

describe("--trace and --trace-screenshots", () => {
  it("are global: any command takes them, before or after the command word", () => {
    const a = run(["--trace", "run.axtrace", "snapshot", "--app", "x"]);
    expect(a.globals.trace).toBe("run.axtrace");
    expect(a.globals.traceScreenshots).toBeUndefined();
    const b = run(["click", "@s8f3k2p9:e3", "--trace", "t", "--trace-screenshots", "off"]);
    expect(b.globals.trace).toBe("t");
    expect(b.globals.traceScreenshots).toBe(false);
    expect(run(["press", "Return", "--app", "x", "--trace-screenshots", "on"]).globals.traceScreenshots).toBe(
      true,
    );
  });

  it("refuses a bad value", () => {
    expect(usage(["snapshot", "--app", "x", "--trace", ""]).message).toMatch(/--trace needs/);
    expect(usage(["snapshot", "--app", "x", "--trace-screenshots", "maybe"]).message).toMatch(
      /--trace-screenshots must be on or off/,
    );
  });

  it("a global flag's value is never the command word, for the grammar and for the warm process's client", () => {
    expect(run(["--trace", "click", "snapshot", "--app", "x"]).step.command).toBe("snapshot");
    expect(commandWord(["--trace", "click", "snapshot"])).toBe("snapshot");
    expect(commandWord(["--trace-screenshots", "off", "snapshot"])).toBe("snapshot");
  });

  it("AXSNAP_TRACE is the caller's, not part of which warm process serves it", () => {
    expect(keyedEnv({ AXSNAP_TRACE: "/tmp/x.axtrace", AXSNAP_DAEMON: "on" })).toEqual({
      AXSNAP_DAEMON: "on",
    });
  });
});

describe("--secret", () => {
  it("type and set-value take it", () => {
    expect(run(["type", "hunter2", "--into", "@s8f3k2p9:e3", "--secret"]).step.secret).toBe(true);
    expect(run(["set-value", "@s8f3k2p9:e3", "hunter2", "--secret"]).step.secret).toBe(true);
    expect(run(["type", "x", "--app", "a"]).step.secret).toBeUndefined();
  });
  it("other commands do not", () => {
    expect(usage(["click", "@s8f3k2p9:e3", "--secret"]).message).toMatch(/--secret/);
  });
  it("a step of call takes it too", () => {
    const inv = parseCommandLine([
      "call",
      "--calls",
      JSON.stringify([{ command: "type", text: "pw", into: 2, secret: true }]),
    ]);
    if (inv.kind !== "call") throw new Error(inv.kind);
    expect(inv.steps[0]!.secret).toBe(true);
  });
});

describe("a locator wherever a TARGET is taken", () => {
  it("click, set-value, type --into, drag, resolve and snapshot --root take one", () => {
    expect(run(["click", LOC]).step.target).toEqual({ locator: LOC });
    expect(run(["set-value", LOC, "v"]).step.target).toEqual({ locator: LOC });
    expect(run(["type", "t", "--into", LOC]).step.into).toEqual({ locator: LOC });
    const d = run(["drag", LOC, "@s8f3k2p9:e3"]).step;
    expect(d.from).toEqual({ locator: LOC });
    expect(d.to).toBe("@s8f3k2p9:e3");
    expect(run(["resolve", LOC]).step.target).toEqual({ locator: LOC });
    expect(run(["snapshot", "--root", LOC]).step.root).toEqual({ locator: LOC });
  });

  it("refs and indices keep their meaning", () => {
    expect(run(["click", "@s8f3k2p9:e12"]).step.target).toBe("@s8f3k2p9:e12");
    const inv = parseCommandLine(["call", "--calls", JSON.stringify([{ command: "click", target: 4 }])]);
    if (inv.kind !== "call") throw new Error(inv.kind);
    expect(inv.steps[0]!.target).toBe(4);
    expect(usage(["click", "12"]).message).toMatch(/bare index/);
    expect(usage(["click", "e12"]).message).toMatch(/does not say which snapshot/);
    expect(usage(["click", "@s8f3:e1"]).message).toMatch(/ref like @s8f3k2p9:e12/);
  });

  it("a bad locator is INVALID_ARGUMENT with the caret under the fault", () => {
    const e = usage(["click", 'app=x >> push button "Save']);
    expect(e.message).toMatch(/unterminated string/);
    expect(e.message).toMatch(/\n\s+app=x >> push button "Save\n\s+\^/);
  });

  it("--locate-timeout goes with the actions", () => {
    expect(run(["click", LOC, "--locate-timeout", "2500"]).step.locateTimeoutMs).toBe(2500);
    expect(usage(["click", LOC, "--locate-timeout", "0"]).message).toMatch(/--locate-timeout/);
  });
});

describe("axsnap locate", () => {
  it("takes a locator, --timeout and --app", () => {
    const s = run(["locate", LOC, "--timeout", "1500"]).step;
    expect(s.locator).toBe(LOC);
    expect(s.timeoutMs).toBe(1500);
    expect(run(["locate", 'push button "Save"', "--app", "mousepad"]).step.app).toBe("mousepad");
  });
  it("refuses a ref or a bad locator", () => {
    expect(usage(["locate", "@s8f3k2p9:e3"]).message).toMatch(/a locator/);
    expect(usage(["locate", 'app=x >> "']).message).toMatch(/\^/);
    expect(usage(["locate"]).message).toMatch(/needs LOCATOR/);
  });
});

describe("trace and replay command lines", () => {
  it("trace show|view|export", () => {
    const show = parseCommandLine(["trace", "show", "run.axtrace"]);
    expect(show).toMatchObject({ kind: "trace", action: "show", file: "run.axtrace" });
    expect(parseCommandLine(["trace", "view", "r", "--out", "p.html"])).toMatchObject({
      kind: "trace",
      action: "view",
      out: "p.html",
    });
    expect(
      parseCommandLine(["trace", "export", "r", "--to", "ts", "--import-from", "../lib/index.ts"]),
    ).toMatchObject({ kind: "trace", action: "export", to: "ts", importFrom: "../lib/index.ts" });
    expect(() => parseCommandLine(["trace", "export", "r"])).toThrow(/--to ts\|skill/);
    expect(() => parseCommandLine(["trace", "export", "r", "--to", "py"])).toThrow(/ts or skill/);
    expect(() => parseCommandLine(["trace", "frob", "r"])).toThrow(/show, view or export/);
    expect(() => parseCommandLine(["trace", "show"])).toThrow(/FILE/);
    expect(() => parseCommandLine(["trace", "show", "r", "--to", "ts"])).toThrow(/--to/);
  });

  it("replay", () => {
    expect(
      parseCommandLine(["replay", "r", "--continue-on-drift", "--step-timeout", "4000", "--json"]),
    ).toMatchObject({ kind: "replay", file: "r", continueOnDrift: true, stepTimeoutMs: 4000 });
    expect(() => parseCommandLine(["replay"])).toThrow(/FILE/);
  });

  it("run in the caller's own process, never the warm one", () => {
    const caller = ownCaller();
    expect(servedHere(["trace", "show", "r"], caller)).toBe(false);
    expect(servedHere(["replay", "r"], caller)).toBe(false);
    expect(servable(["trace", "show", "r"], {})).toBe(false);
    expect(servable(["replay", "r"], {})).toBe(false);
    expect(servedHere(["locate", LOC], caller)).toBe(true);
    expect(servedHere(["click", LOC, "--trace", "t"], caller)).toBe(true);
  });
});
