/**
 * `axsnap trace export FILE --to skill` (design 4.3): the run as a Markdown
 * procedure a model reads and follows again (the Record & Replay shape):
 * what must be open first, which secrets to ask for, one line per step (the
 * verb, the element by its locator, what should happen), and what to do
 * when the app differs: find the element by its locator, and stop rather
 * than guess.
 */
import { describeExpectation, expectationsOf, shortLocator } from "./effects.js";
import { oneLine, type Plan, planOf } from "./steps.js";
import type { ReadTrace, TraceStepLine } from "./types.js";

export function exportSkill(trace: ReadTrace): string {
  const planned = trace.steps.map((step) => ({ step, plan: planOf(trace, step) }));
  const acts = planned.filter(
    (p) => p.plan.kind === "act" || p.plan.kind === "wait" || p.plan.kind === "unreplayable",
  );
  const apps = [...new Set(planned.flatMap(({ plan }) => (plan.kind === "act" ? [plan.app] : [])))];
  const dialogs = [
    ...new Set(
      trace.steps.flatMap((s) =>
        (s.result?.opened ?? []).flatMap((o) =>
          o.title !== undefined && o.kind !== "menu" && o.kind !== "popup" ? [o.title] : [],
        ),
      ),
    ),
  ];
  const name = slug([apps[0] ?? "app", ...dialogs].join(" ")) || "axsnap-procedure";
  const verbs = acts.map(({ step, plan }) => shortVerb(step, plan));
  const description = `${acts.length} steps in ${apps.join(", ") || "an app"}: ${verbs.join(", ")}`;
  const h = trace.header;
  const out: string[] = [
    "---",
    `name: ${name}`,
    `description: ${JSON.stringify(oneLine(description, 400))}`,
    `recorded: ${JSON.stringify(`run ${h.runId} · axsnap ${h.axsnap} · ${h.platform} · ${h.createdAt}`)}`,
    "---",
    "",
    `# ${name}`,
    "",
    `${oneLine(description, 400)}.`,
    "",
    "Each step names its element by a locator (`axsnap locate LOCATOR`, or `locator` in the MCP tools): never by a snapshot index, which changes between runs.",
    "",
    "## Preconditions",
    "",
  ];
  for (const app of apps) out.push(`- The app \`${oneLine(app)}\` is running.`);
  const first = firstWindow(trace);
  if (first)
    out.push(
      `- Its ${first.kind} ${JSON.stringify(oneLine(first.title ?? ""))} is open (step 1 acts in it).`,
    );
  if (apps.length === 0 && !first) out.push("- None recorded.");
  out.push("", "## Secrets", "");
  const secrets = planned.flatMap(({ step, plan }) =>
    plan.kind === "act" && plan.secret !== undefined ? [{ n: step.n, env: plan.secret }] : [],
  );
  if (secrets.length === 0) out.push("None.");
  else {
    for (const s of secrets)
      out.push(
        `- \`${s.env}\`: step ${s.n} types it. Ask the user for it when you need it; never write it down or repeat it.`,
      );
  }
  out.push("", "## Steps", "");
  let i = 0;
  for (const { step, plan } of planned) {
    if (plan.kind === "skip") continue;
    if (plan.kind === "refused") continue;
    i++;
    out.push(`${i}. ${stepLine(step, plan)}`);
  }
  if (i === 0) out.push("No actions were recorded.");
  out.push(
    "",
    "## If it differs",
    "",
    "- Before each step, find its element: `find_elements` (MCP) or `axsnap locate 'LOCATOR'` (CLI) with the step's locator.",
    "- If nothing matches (ELEMENT_NOT_FOUND) or several elements match (AMBIGUOUS_TARGET), stop and report the error with the candidates it lists. Do not guess by index or by position.",
    "- If a step's expected effect does not appear, stop and report what you see instead; do not repeat the step.",
    "- A refused step (NOT_ENABLED) may be waiting on the step before it: take a new snapshot and try once more, then stop.",
    "",
  );
  return out.join("\n");
}

function stepLine(step: TraceStepLine, plan: Exclude<Plan, { kind: "skip" | "refused" }>): string {
  if (plan.kind === "unreplayable")
    return `${step.method} (cannot be done again: ${oneLine(plan.why)}). Stop here and ask the user.`;
  if (plan.kind === "wait")
    return `Wait until ${oneLine(JSON.stringify(plan.condition))} in \`${plan.app}\`.`;
  const where = (k: number) => (plan.targets[k] ? ` ${code(plan.targets[k].locator)}` : "");
  let verb: string;
  switch (plan.method) {
    case "click":
      verb = `${plan.count === 2 ? "Double-click" : plan.button === "right" ? "Right-click" : "Click"}${where(0)}`;
      break;
    case "setValue":
      verb = `Set${where(0)} to ${plan.secret !== undefined ? `the secret \`${plan.secret}\`` : JSON.stringify(oneLine(String(plan.value)))}`;
      break;
    case "performAction":
      verb = `Perform ${JSON.stringify(plan.name)} on${where(0)}`;
      break;
    case "pressKey":
      verb = `Press \`${oneLine(plan.keys!)}\` in \`${plan.app}\``;
      break;
    case "typeText":
      verb = `Type ${plan.secret !== undefined ? `the secret \`${plan.secret}\`` : JSON.stringify(oneLine(plan.text!, 200))}${plan.targets[0] ? ` into${where(0)}` : ` in \`${plan.app}\``}`;
      break;
    case "scroll":
      verb = `Scroll${where(0)} ${plan.direction} ${plan.pages} page(s)`;
      break;
    case "drag":
      verb = `Drag${where(0)} onto${where(1)}`;
      break;
  }
  const checks = expectationsOf(step).map((e) => oneLine(describeExpectation(e)));
  const expect =
    checks.length > 0
      ? checks.join("; ")
      : plan.secret !== undefined
        ? "not checked (it would show the secret)"
        : "no visible change";
  return `${verb}. Expect: ${expect}.`;
}

function shortVerb(step: TraceStepLine, plan: Plan): string {
  if (plan.kind !== "act") return step.method;
  const opened = step.result?.opened?.find(
    (o) => o.title !== undefined && o.kind !== "menu" && o.kind !== "popup",
  );
  if (opened) return `open ${oneLine(opened.title!, 40)}`;
  const el = plan.targets[0] ? ` ${shortLocator(plan.targets[0].locator)}` : "";
  const words: Record<string, string> = {
    click: "click",
    setValue: "set",
    performAction: "perform",
    pressKey: `press ${plan.keys ?? ""}`,
    typeText: "type into",
    scroll: "scroll",
    drag: "drag",
  };
  return oneLine(`${words[plan.method]}${plan.method === "pressKey" ? "" : el}`, 60);
}

function firstWindow(trace: ReadTrace): { kind: string; title?: string } | undefined {
  for (const s of trace.steps) {
    if (s.error) continue;
    const id = s.before ?? s.after;
    const w = id === undefined ? undefined : trace.snapshots.get(id)?.window;
    if (w) return { kind: w.kind, ...(w.title === undefined ? {} : { title: w.title }) };
  }
  return undefined;
}

/** Inline code that holds any text: a backtick inside needs a longer fence. */
function code(s: string): string {
  const t = oneLine(s, 400);
  return t.includes("`") ? `\`\` ${t} \`\`` : `\`${t}\``;
}

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
}
