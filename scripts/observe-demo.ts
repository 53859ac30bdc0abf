/**
 * Prints what an agent reads after acting, for docs/observe.md: a real
 * gtk3-widget-factory on a headless desktop, one radio button clicked (the
 * result's diff text, how the app settled, what opened), then a combo box
 * opened (the list it opened, read whole) and an item picked from it.
 *
 *   npx tsx scripts/observe-demo.ts
 */
import type { ActionResult, Snapshot } from "../lib/index.js";
import { createSession } from "../lib/index.js";
import { gtkWidgetFactory, startDesktop } from "./desktop.mjs";

function indexOf(snap: Snapshot, re: RegExp): number {
  for (const raw of snap.text.split("\n")) {
    const m = /^(\d+) /.exec(raw.trim());
    if (m && re.test(raw.trim())) return Number(m[1]);
  }
  throw new Error(`no line matches ${re}:\n${snap.text}`);
}

function show(label: string, r: ActionResult): void {
  const windows = (ws: ActionResult["opened"]) =>
    ws === undefined ? "unknown" : `[${ws.map((w) => `${w.kind} "${w.title}"`).join(", ")}]`;
  console.log(`// ${label}`);
  console.log(
    `// delivery: ${r.delivery}, settled: ${r.settled?.mode} after ${r.settled?.ms} ms (${r.settled?.events} events), opened: ${windows(r.opened)}, closed: ${windows(r.closed)}`,
  );
  for (const n of r.notes) console.log(`// note: ${n}`);
  console.log(r.text);
  console.log();
}

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
const session = createSession();
try {
  const app = await gtkWidgetFactory(desktop);
  const snap = await session.snapshot({ app: app.pid, screenshot: false });
  console.log(`// the first snapshot: ${snap.records.length} lines\n`);
  const radio = await session.click(indexOf(snap, /^\d+ radio button radiobutton, Value: off/));
  show("click a radio button", radio);
  const combo = await session.click(indexOf(radio.snapshot!, /^\d+ combo box Left$/));
  show("click a combo box", combo);
  const picked = await session.click(indexOf(combo.snapshot!, /^\d+ menu item /));
  show("pick the first item of its list", picked);
} finally {
  await session.close();
  await desktop.stop();
}
