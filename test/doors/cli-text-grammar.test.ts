/**
 * Issue 33, item 5, in the command line's grammar (lib/doors/cli/args.ts): a
 * documented way to type a newline and a tab (`--escapes`, reading TEXT the
 * way values print), and `axsnap call` taking the same keys as the options
 * its commands' help lists (kebab-case as typed, or camelCase), `number`
 * and `escapes` included. The real newline reaching a real app is
 * test/linux/cli-text.test.ts.
 */
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../lib/doors/cli/args.js";
import { COMMANDS, type Step, UsageError } from "../../lib/doors/cli/grammar.js";
import { helpText } from "../../lib/doors/cli/help.js";

function step(argv: string[]): Step {
  const inv = parseCommandLine(argv);
  if (inv.kind !== "run") throw new Error(`not a run: ${inv.kind}`);
  return inv.step;
}

function calls(steps: object[]): Step[] {
  const inv = parseCommandLine(["call", "--calls", JSON.stringify(steps)]);
  if (inv.kind !== "call") throw new Error(`not a call: ${inv.kind}`);
  return inv.steps;
}

const REF = "@s8f3k2p9:e12";

describe("type --escapes", () => {
  it("reads \\n as a newline, \\t as a tab, \\\\ as a backslash; without it TEXT is typed as given", () => {
    expect(step(["type", "a\\nb\\tc\\\\nd", "--into", REF, "--escapes"]).text).toBe("a\nb\tc\\nd");
    expect(step(["type", "a\\nb", "--into", REF]).text).toBe("a\\nb");
    expect(step(["set-value", REF, "x\\ny", "--escapes"]).value).toBe("x\ny");
  });

  it("refuses any other escape, so nothing is typed that the agent did not mean", () => {
    expect(() => step(["type", "a\\qb", "--into", REF, "--escapes"])).toThrow(UsageError);
    expect(() => step(["type", "a\\qb", "--into", REF, "--escapes"])).toThrow(/\\q/);
    expect(() => step(["type", "ends\\", "--into", REF, "--escapes"])).toThrow(UsageError);
  });

  it("is a key of call too", () => {
    const [typed, set] = calls([
      { command: "type", text: "a\\nb", into: 3, escapes: true },
      { command: "set-value", target: 4, value: "1\\t2", escapes: true },
    ]);
    expect(typed!.text).toBe("a\nb");
    expect(set!.value).toBe("1\t2");
  });

  it("is in the help of type and set-value", () => {
    expect(helpText("type")).toContain("--escapes");
    expect(helpText("set-value")).toContain("--escapes");
  });
});

describe("call takes the options as keys", () => {
  it('takes "number": true, before or after the value', () => {
    const [a, b] = calls([
      { command: "set-value", target: 3, value: "42", number: true },
      { command: "set-value", number: true, target: 3, value: "7.5" },
    ]);
    expect(a!.value).toBe(42);
    expect(b!.value).toBe(7.5);
    expect(() => calls([{ command: "set-value", target: 3, value: "x", number: true }])).toThrow(
      /VALUE must be a number/,
    );
  });

  /** The options `axsnap COMMAND --help` lists, without the process-wide ones (--json, --session, --confirm, --desktop, --help). */
  function optionsInHelp(command: string): { flag: string; switch: boolean }[] {
    const out: { flag: string; switch: boolean }[] = [];
    for (const line of helpText(command).split("\n")) {
      const m = /^ {2}(?:-h, )?--([a-z-]+)( \S+)?/.exec(line);
      if (
        !m ||
        [
          "json",
          "session",
          "confirm",
          "desktop",
          "trace",
          "trace-screenshots",
          "help",
          "calls",
          "calls-file",
        ].includes(m[1]!)
      )
        continue;
      out.push({ flag: m[1]!, switch: m[2] === undefined || m[2].startsWith(" ") === false });
    }
    return out;
  }

  it("takes every option of every command's help as a key, as typed and in camelCase", () => {
    const camel = (f: string) => f.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    let checked = 0;
    for (const command of Object.keys(COMMANDS)) {
      if (["call", "mcp", "help", "daemon", "desktop", "trace", "replay"].includes(command)) continue;
      for (const { flag } of optionsInHelp(command))
        for (const key of new Set([flag, camel(flag)])) {
          // Any value: a wrong one may be refused, but never as an unknown key.
          for (const value of [true, "1"]) {
            try {
              calls([{ command, [key]: value }]);
            } catch (e) {
              expect(String((e as Error).message), `${command} ${key}`).not.toMatch(/unknown key/);
            }
          }
          checked++;
        }
    }
    expect(checked).toBeGreaterThan(60);
  });

  it("refuses a key the command's help does not list", () => {
    expect(() => calls([{ command: "click", target: 1, number: true }])).toThrow(/unknown key "number"/);
    expect(() => calls([{ command: "snapshot", app: "x", escapes: true }])).toThrow(/unknown key "escapes"/);
  });
});

describe("options that would mean nothing", () => {
  it("resolve refuses --full and --no-snapshot: it never acts, so it takes no fresh snapshot to shape", () => {
    expect(() => step(["resolve", REF, "--full"])).toThrow(UsageError);
    expect(() => step(["resolve", REF, "--no-snapshot"])).toThrow(UsageError);
    expect(step(["resolve", REF]).target).toBe(REF);
  });
});
