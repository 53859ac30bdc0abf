/**
 * Export (issue 34, design 4.1-4.3), from hand-made traces that follow
 * lib/session/trace/types.ts: the checks each step gets from its recorded result,
 * the TypeScript program (one statement per step, targets by locator, a
 * check after each, secrets from the environment; it type-checks against
 * the public API) and the Markdown procedure for a model.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { expectationsOf } from "../../lib/session/trace/effects.js";
import { exportSkill } from "../../lib/session/trace/export-skill.js";
import { exportTs } from "../../lib/session/trace/export-ts.js";
import { readTrace } from "../../lib/session/trace/read.js";
import { traceHeaderSchema, traceLineSchema } from "../../lib/session/trace/schema.js";
import type { TraceStepLine } from "../../lib/session/trace/types.js";

const run = promisify(execFile);
const base = readTrace("test/fixtures/traces/drift-base.axtrace");
const mixed = readTrace("test/fixtures/traces/export-mixed.axtrace");
const W = 'app=axsnap-drift-test >> window="axsnap drift"';
const stepOf = (n: number, trace = base) => trace.steps.find((s) => s.n === n)!;
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A step of the base run with its result replaced, for the rules one at a time. */
function withResult(
  n: number,
  result: Partial<NonNullable<TraceStepLine["result"]>>,
  extra: Partial<TraceStepLine> = {},
) {
  const s = stepOf(n);
  return { ...s, ...extra, result: { ...s.result!, ...result } } as TraceStepLine;
}

describe("the fixtures", () => {
  it("follow the trace format (lib/session/trace/schema.ts), as a recorder writes it", () => {
    for (const t of [base, mixed]) {
      expect(traceHeaderSchema.safeParse(t.header).success).toBe(true);
      for (const line of [...t.snapshots.values(), ...t.steps]) {
        const parsed = traceLineSchema.safeParse(line);
        expect(parsed.success, `${t.path}: ${parsed.error?.message ?? ""}`).toBe(true);
      }
    }
  });
});

describe("expectationsOf", () => {
  it("a window opened or closed gives that window", () => {
    expect(expectationsOf(stepOf(5))).toEqual([
      { window: { title: "Details", kind: "dialog" }, opened: true },
    ]);
    expect(expectationsOf(stepOf(6))).toEqual([
      { window: { title: "Details", kind: "dialog" }, closed: true },
    ]);
  });

  it("the target's own change gives its value; typed text gives what the field must contain", () => {
    expect(expectationsOf(stepOf(2))).toEqual([
      { locator: `${W} >> check box "Subscribe"`, states: { has: ["checked"] }, value: "on" },
    ]);
    expect(expectationsOf(stepOf(3))).toEqual([
      { locator: `${W} >> text "Name:"`, value: { contains: "Ada" } },
    ]);
  });

  it("states gained and lost are the difference from the recorded target, focus left out", () => {
    const s = withResult(2, {
      changes: [
        {
          kind: "changed",
          line: "check box Subscribe, checked",
          locator: `${W} >> check box "Subscribe"`,
          fields: ["states"],
          states: ["checked", "focused"],
          target: true,
        },
      ],
    });
    s.targets = [{ ...s.targets![0]!, states: ["armed"] }];
    expect(expectationsOf(s)).toEqual([
      { locator: `${W} >> check box "Subscribe"`, states: { has: ["checked"], lacks: ["armed"] } },
    ]);
    // Unchecked: the recorder leaves the empty list out, which still means the state went.
    const unchecked = withResult(2, {
      changes: [
        {
          kind: "changed",
          line: "check box Subscribe",
          locator: `${W} >> check box "Subscribe"`,
          fields: ["states"],
          target: true,
        },
      ],
    });
    unchecked.targets = [{ ...unchecked.targets![0]!, states: ["checked", "focused"] }];
    expect(expectationsOf(unchecked)).toEqual([
      { locator: `${W} >> check box "Subscribe"`, states: { lacks: ["checked"] } },
    ]);
  });

  it("another element renamed gives its new locator, present", () => {
    expect(expectationsOf(stepOf(4))).toEqual([
      { locator: `${W} >> label "Status: saved Ada"`, present: true },
    ]);
  });

  it("an element added gives present; moves and resizes give nothing; no change gives nothing", () => {
    const added = withResult(4, {
      changes: [{ kind: "added", line: "label Done", locator: `${W} >> label "Done"` }],
    });
    expect(expectationsOf(added)).toEqual([{ locator: `${W} >> label "Done"`, present: true }]);
    const moved = withResult(4, {
      changes: [
        {
          kind: "changed",
          line: "push button Save",
          locator: `${W} >> push button "Save"`,
          fields: ["moved", "resized"],
        },
      ],
    });
    expect(expectationsOf(moved)).toEqual([]);
    expect(expectationsOf(withResult(4, { changes: [] }))).toEqual([]);
  });

  it("never a check from a secret, and at most three", () => {
    expect(expectationsOf(stepOf(1, mixed))).toEqual([]);
    const many = withResult(4, {
      opened: [
        { title: "A", kind: "dialog" },
        { title: "B", kind: "dialog" },
        { title: "C", kind: "window" },
        { title: "D", kind: "dialog" },
      ],
    });
    expect(expectationsOf(many)).toHaveLength(3);
  });
});

describe("exportTs", () => {
  const program = exportTs(base, { importFrom: "axsnap" });

  it("writes one statement per step, each target by its locator and a check after it", () => {
    expect(program).toMatch(
      /^\/\/ axsnap trace export drift-base\.axtrace --to ts · run rdrift0001 · .* · 6 steps \(api\)$/m,
    );
    expect(program).toContain('import { createSession } from "axsnap";');
    const calls = program.split("\n").filter((l) => /^\s+await session\.(click|typeText)\(/.test(l));
    expect(calls.map((l) => l.trim())).toEqual([
      `await session.click({ locator: '${W} >> check box "Subscribe"' });`,
      `await session.typeText("Ada", { target: { locator: '${W} >> text "Name:"' } });`,
      `await session.click({ locator: '${W} >> push button "Save"' });`,
      `await session.click({ locator: '${W} >> push button "Details"' });`,
      `await session.click({ locator: 'app=axsnap-drift-test >> window:dialog="Details" >> push button "Close"' });`,
    ]);
    // The observation (step 1) is left out; every action is followed by its check.
    expect(program).not.toMatch(/session\.snapshot/);
    expect(program).toContain(
      `await session.expect("axsnap-drift-test", { locator: '${W} >> label "Status: saved Ada"', present: true });`,
    );
    expect(program).toContain(
      'await session.expect("axsnap-drift-test", { window: { title: "Details", kind: "dialog" }, opened: true });',
    );
    expect(program.match(/await session\.expect\(/g)).toHaveLength(5);
    expect(program).not.toMatch(/^await /m); // no top-level await: tsx runs a plain .ts as CommonJS
  });

  it("reads secrets from the environment, comments refusals, clicks the element under a point or throws", () => {
    const p = exportTs(mixed, { importFrom: "../lib/index.js" });
    expect(p).toContain('import { createSession } from "../lib/index.js";');
    expect(p).toContain(
      `await session.typeText(secret("AXSNAP_SECRET_1"), { target: { locator: '${W} >> text "Name:"' }, secret: "AXSNAP_SECRET_1" });`,
    );
    expect(p).toMatch(/throw new Error\(`set \$\{name\}: /);
    expect(p).not.toContain("«secret»");
    expect(p).toMatch(/^\s+\/\/ 2 · mcp click_element · refused NOT_ENABLED: .* \(left out\)$/m);
    expect(p).toContain('await session.pressKey("ctrl+s", { app: "axsnap-drift-test" });');
    expect(p).toMatch(
      /\/\/ was 120\/160 .*\n\s+await session\.click\(\{ locator: '.*push button "Details"' \}\);/,
    );
    expect(p).toContain(
      'throw new Error("step 5 (clickAt) cannot be replayed: clickAt at 5/5 hit no element the trace recorded");',
    );
    expect(p).toContain(
      'await session.waitFor("axsnap-drift-test", {"window":"Details"}, { timeoutMs: 5000 });',
    );
    expect(p).not.toMatch(/session\.find\(/);
    expect(p).toContain("// recorded no visible effect");
  });

  it("keeps hostile names out of the code: a line break in a name cannot end a comment", () => {
    const hostile = structuredClone(base);
    hostile.steps = hostile.steps.map((s) => (s.n === 4 ? { ...s, call: "click\nprocess.exit(3)//" } : s));
    const p = exportTs(hostile);
    expect(p).not.toMatch(/^\s*process\.exit\(3\)/m);
  });

  it("type-checks against the public API (tsc, axsnap mapped to lib/index.ts)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "axsnap-export-"));
    dirs.push(dir);
    const repo = resolve(".");
    writeFileSync(join(dir, "base.ts"), program);
    writeFileSync(join(dir, "mixed.ts"), exportTs(mixed));
    // An ES module project, as a user's would be for this import.
    writeFileSync(join(dir, "package.json"), '{"type":"module"}\n');
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        extends: join(repo, "tsconfig.json"),
        compilerOptions: {
          typeRoots: [join(repo, "node_modules/@types")],
          paths: { axsnap: [join(repo, "lib/index.ts")] },
        },
        include: [],
        files: ["base.ts", "mixed.ts"],
      }),
    );
    const out = await run(join(repo, "node_modules/.bin/tsc"), ["-p", join(dir, "tsconfig.json")], {
      timeout: 170_000,
    }).catch((e: { stdout: string; code: number }) => e);
    expect("code" in out ? out.stdout : "").toBe("");
  }, 180_000);
});

describe("exportSkill", () => {
  const skill = exportSkill(base);

  it("has front matter a model can index: name, description, recorded", () => {
    const front = /^---\n([\s\S]*?)\n---\n/.exec(skill)?.[1];
    expect(front).toBeDefined();
    expect(front).toMatch(/^name: axsnap-drift-test-details$/m);
    expect(front).toMatch(
      /^description: "5 steps in axsnap-drift-test: click check box \\"Subscribe\\", type into text \\"Name:\\", click push button \\"Save\\", open Details, click push button \\"Close\\""$/m,
    );
    expect(front).toMatch(/^recorded: "run rdrift0001 · axsnap 0\.1\.0 · linux · /m);
  });

  it("says what must be open, the steps one line each with locator and expectation, and what to do on drift", () => {
    expect(skill).toMatch(
      /## Preconditions\n\n- The app `axsnap-drift-test` is running\.\n- Its window "axsnap drift" is open/,
    );
    expect(skill).toMatch(/## Secrets\n\nNone\./);
    const steps = skill.split("## Steps\n\n")[1]!.split("\n\n")[0]!.split("\n");
    expect(steps).toEqual([
      `1. Click \`${W} >> check box "Subscribe"\`. Expect: check box "Subscribe" checked, value "on".`,
      `2. Type "Ada" into \`${W} >> text "Name:"\`. Expect: text "Name:" value contains "Ada".`,
      `3. Click \`${W} >> push button "Save"\`. Expect: label "Status: saved Ada" present.`,
      `4. Click \`${W} >> push button "Details"\`. Expect: dialog "Details" opened.`,
      '5. Click `app=axsnap-drift-test >> window:dialog="Details" >> push button "Close"`. Expect: dialog "Details" closed.',
    ]);
    const differs = skill.split("## If it differs\n")[1]!;
    expect(differs).toMatch(/ELEMENT_NOT_FOUND/);
    expect(differs).toMatch(/AMBIGUOUS_TARGET/);
    expect(differs).toMatch(/Do not guess by index/);
  });

  it("names secrets by their variable, never their value", () => {
    const s = exportSkill(mixed);
    expect(s).toMatch(/## Secrets\n\n- `AXSNAP_SECRET_1`: step 1 types it\. Ask the user/);
    expect(s).toMatch(
      /^1\. Type the secret `AXSNAP_SECRET_1` into .* Expect: not checked \(it would show the secret\)\.$/m,
    );
    expect(s).not.toContain("«secret»");
  });
});
