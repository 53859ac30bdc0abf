/**
 * `axsnap trace export FILE --to ts` (design 4.2): a TypeScript program
 * against the public API, one statement per step. Each target is named by
 * its locator (never an index: indices change between runs), and each step
 * is followed by `session.expect` of the effect the recorded run saw, so the
 * program stops where the app no longer behaves as recorded. Secrets come
 * from the environment. Observations are left out (the program's actions
 * locate what they need), except waits.
 *
 * The program wraps its steps in an async main(): `npx tsx` compiles a .ts
 * file outside an ES module package as CommonJS, where top-level await is
 * refused.
 */
import { basename } from "node:path";
import { expectationsOf } from "./effects.js";
import type { Expectation } from "./expect.js";
import { effectWords, oneLine, type Plan, planOf } from "./steps.js";
import type { ReadTrace, TraceStepLine } from "./types.js";

export interface ExportTsOptions {
  /** The module the program imports the API from. Default "axsnap". */
  importFrom?: string;
}

/** A string literal: single-quoted when that saves escaping the double quotes of a locator. */
function q(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: such characters need JSON's escapes
  if (s.includes('"') && !/['\\\u0000-\u001f\u2028\u2029]/.test(s)) return `'${s}'`;
  return JSON.stringify(s);
}

export function exportTs(trace: ReadTrace, options: ExportTsOptions = {}): string {
  const from = options.importFrom ?? "axsnap";
  if (typeof from !== "string" || from === "") throw new TypeError("importFrom must be a module specifier");
  const doors = [...new Set(trace.steps.map((s) => s.door))].join(", ") || "no";
  const head = `// axsnap trace export ${oneLine(basename(trace.path))} --to ts · run ${oneLine(trace.header.runId)} · ${oneLine(trace.header.createdAt)} · ${trace.steps.length} steps (${doors})`;
  const body: string[] = [];
  const secrets = new Map<string, number>();
  for (const step of trace.steps) {
    const plan = planOf(trace, step);
    if (plan.kind === "act" && plan.secret !== undefined && !secrets.has(plan.secret))
      secrets.set(plan.secret, step.n);
    body.push(...stepLines(step, plan));
  }
  const out = [head, `import { createSession } from ${q(from)};`, ""];
  if (secrets.size > 0) {
    const which = [...secrets].map(([name, n]) => `${name} (step ${n})`).join(", ");
    out.push(
      `// Secrets the run typed, read from the environment: ${which}.`,
      "const secret = (name: string): string => {",
      "  const value = process.env[name];",
      '  if (value === undefined || value === "")',
      `    throw new Error(\`set \${name}: this program types it where the recorded run typed a secret\`);`,
      "  return value;",
      "};",
      "",
    );
  }
  out.push(
    "async function main(): Promise<void> {",
    "  const session = createSession();",
    "  try {",
    ...body.map((l) => `    ${l}`),
    "  } finally {",
    "    await session.close();",
    "  }",
    "}",
    "",
    "main().catch((e: unknown) => {",
    "  const err = e as { code?: string; message?: string; hint?: string };",
    '  console.error(err.code ? [err.code + ": " + err.message, "hint: " + err.hint].join("\\n") : e);',
    "  process.exitCode = 1;",
    "});",
    "",
  );
  return out.join("\n");
}

function stepLines(step: TraceStepLine, plan: Plan): string[] {
  const what = `${step.n} · ${step.door} ${oneLine(step.call, 60)}`;
  switch (plan.kind) {
    case "skip":
      return [];
    case "refused":
      return [`// ${what} · refused ${plan.code}: ${oneLine(plan.message)} (left out)`];
    case "unreplayable":
      return [
        `// ${what}`,
        `throw new Error(${q(`step ${step.n} (${step.method}) cannot be replayed: ${oneLine(plan.why)}`)});`,
      ];
    case "wait":
      return [
        `// ${what}`,
        `await session.waitFor(${appText(plan.app)}, ${JSON.stringify(plan.condition)}${plan.timeoutMs === undefined ? "" : `, { timeoutMs: ${plan.timeoutMs} }`});`,
      ];
  }
  const effect = effectWords(step);
  const lines = [`// ${what} · ${step.result?.delivery ?? "?"}${effect ? ` · ${oneLine(effect)}` : ""}`];
  if (plan.wasPoint)
    lines.push(
      `// was ${plan.wasPoint.x}/${plan.wasPoint.y} (screenshot pixels): the element recorded there`,
    );
  lines.push(callOf(plan));
  const checks = expectationsOf(step);
  if (checks.length === 0)
    lines.push(
      step.secret !== undefined
        ? "// not checked: its effect would show the secret"
        : effect === ""
          ? "// recorded no visible effect"
          : "// not checked: nothing in its effect has a locator",
    );
  for (const e of checks) lines.push(`await session.expect(${q(plan.app)}, ${expectationText(e)});`);
  return lines;
}

function callOf(p: Extract<Plan, { kind: "act" }>): string {
  const t = p.targets.map((x) => `{ locator: ${q(x.locator)} }`);
  const value = p.secret !== undefined ? `secret(${q(p.secret)})` : undefined;
  const secretOpt = p.secret !== undefined ? `secret: ${q(p.secret)}` : undefined;
  const opts = (parts: (string | undefined)[]) => {
    const kept = parts.filter((x): x is string => x !== undefined);
    return kept.length === 0 ? "" : `, { ${kept.join(", ")} }`;
  };
  switch (p.method) {
    case "click":
      return `await session.click(${t[0]}${opts([p.button === "right" ? 'button: "right"' : undefined, p.count === 2 ? "count: 2" : undefined])});`;
    case "setValue":
      return `await session.setValue(${t[0]}, ${value ?? (typeof p.value === "number" ? String(p.value) : q(String(p.value)))}${opts([secretOpt])});`;
    case "performAction":
      return `await session.performAction(${t[0]}, ${q(p.name!)});`;
    case "pressKey":
      return `await session.pressKey(${q(p.keys!)}, { app: ${q(p.app)} });`;
    case "typeText":
      return `await session.typeText(${value ?? q(p.text!)}${opts([t[0] === undefined ? `app: ${q(p.app)}` : `target: ${t[0]}`, secretOpt])});`;
    case "scroll":
      return `await session.scroll(${t[0]}, ${q(p.direction!)}, ${p.pages ?? 1});`;
    case "drag":
      return `await session.drag(${t[0]}, ${t[1]});`;
  }
}

function appText(app: string | number): string {
  return typeof app === "number" ? String(app) : q(app);
}

/** An expectation as a TypeScript object literal (strings only: a trace holds no regexes). */
function expectationText(e: Expectation): string {
  const lit = (v: unknown): string => {
    if (v instanceof RegExp) return String(v);
    if (Array.isArray(v)) return `[${v.map(lit).join(", ")}]`;
    if (v !== null && typeof v === "object")
      return `{ ${Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => `${k}: ${lit(x)}`)
        .join(", ")} }`;
    return typeof v === "string" ? q(v) : JSON.stringify(v);
  };
  return lit(e);
}
