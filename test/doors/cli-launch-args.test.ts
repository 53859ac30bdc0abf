/**
 * The command line's grammar for starting apps (lib/doors/cli/args.ts): `launch
 * PROGRAM [-- ARGS]`, where everything after `--` is the program's, and
 * `apps --launchable`; the same as steps of `axsnap call`.
 */
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../lib/doors/cli/args.js";
import { UsageError } from "../../lib/doors/cli/grammar.js";

function step(argv: string[]) {
  const inv = parseCommandLine(argv);
  if (inv.kind !== "run") throw new Error(`not a run: ${inv.kind}`);
  return inv;
}

describe("axsnap launch", () => {
  it("takes PROGRAM, and after -- the program's own arguments, flags included", () => {
    const inv = step(["launch", "/bin/sleep", "--deadline", "1500", "--", "60", "--json"]);
    expect(inv.step).toMatchObject({ command: "launch", program: "/bin/sleep", deadlineMs: 1500 });
    expect(inv.step.launchArgs).toEqual(["60", "--json"]);
    expect(inv.globals.json).toBe(false);
  });

  it("needs PROGRAM, and takes one", () => {
    expect(() => parseCommandLine(["launch"])).toThrow(UsageError);
    expect(() => parseCommandLine(["launch", "a", "b"])).toThrow(/too many arguments/);
  });

  it("apps --launchable", () => {
    expect(step(["apps", "--launchable"]).step.launchable).toBe(true);
    expect(step(["apps"]).step.launchable).toBeUndefined();
  });

  it("is a step of call, with args as a list", () => {
    const inv = parseCommandLine([
      "call",
      "--calls",
      JSON.stringify([
        { command: "launch", program: "galculator", args: ["-h"] },
        { command: "apps", launchable: true },
      ]),
    ]);
    if (inv.kind !== "call") throw new Error("not a call");
    expect(inv.steps[0]).toMatchObject({ command: "launch", program: "galculator", launchArgs: ["-h"] });
    expect(inv.steps[1]).toMatchObject({ command: "apps", launchable: true });
    expect(() =>
      parseCommandLine([
        "call",
        "--calls",
        JSON.stringify([{ command: "launch", program: "x", args: "a b" }]),
      ]),
    ).toThrow(/args must be an array/);
  });
});
