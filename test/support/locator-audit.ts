/**
 * The locator audit (issue 34, design 2.6), a vitest setup file: every
 * window snapshot a test creates is collected, and after the test, outside
 * any timed section, every record its text printed must be found again, and
 * alone, by its own printed locator (`record.locator`). Pure over the same
 * observation, so it is deterministic and needs no desktop time; a failure
 * names the test, the app, the line and the locator.
 *
 * Bounds, so it stays cheap in every file: at most MAX_SNAPSHOTS snapshots
 * per test (the first ones), and at most MAX_RECORDS records per snapshot,
 * spread evenly over it (AXSNAP_LOCATOR_AUDIT=all lifts both;
 * AXSNAP_LOCATOR_AUDIT=off turns it off).
 */
import { appendFileSync } from "node:fs";
import { afterAll, afterEach, beforeEach, expect } from "vitest";
import { collapsedInto } from "../../lib/observe/collapsed.js";
import type { Snapshot } from "../../lib/observe/snapshot.js";
import { onSnapshotCreated } from "../../lib/observe/test-hooks.js";
import { printedLineOf } from "../../lib/session/find.js";
import { parseLocator } from "../../lib/session/locator/grammar.js";
import { matchLocator } from "../../lib/session/locator/match.js";

const mode = process.env.AXSNAP_LOCATOR_AUDIT ?? "on";
const all = mode === "all";
const MAX_SNAPSHOTS = all ? Number.POSITIVE_INFINITY : 60;
const MAX_RECORDS = all ? Number.POSITIVE_INFINITY : 400;

const seen: Snapshot[] = [];
let skipped = 0;
/** Snapshots left out by the per-test cap, across the file. */
let capped = 0;

/** What the audit cost across the file, for measuring (AXSNAP_LOCATOR_AUDIT_REPORT=FILE appends it there at exit). */
const cost = { snapshots: 0, records: 0, ms: 0 };

/** The records to check: every printed one, or MAX_RECORDS of them spread evenly. */
function sample(snap: Snapshot): number[] {
  const printed = snap.records.filter((r) => collapsedInto(snap, r.index) === undefined).map((r) => r.index);
  if (printed.length <= MAX_RECORDS) return printed;
  const step = printed.length / MAX_RECORDS;
  return Array.from({ length: MAX_RECORDS }, (_, i) => printed[Math.floor(i * step)]!);
}

/** The failures in one snapshot: a record its locator does not find alone. */
export function auditSnapshot(snap: Snapshot): string[] {
  const root = snap.records[0];
  // A subtree snapshot: its records have no locator (uniqueness in the window cannot be shown there).
  if (root === undefined || root.pathRoot !== "window" || root.path.length !== 0) return [];
  const out: string[] = [];
  for (const i of sample(snap)) {
    const record = snap.records[i]!;
    const where = `${snap.app.name}, window "${snap.window.title}" (${snap.style}), line ${i} "${printedLineOf(snap, i)}"`;
    const printed = record.locator;
    if (printed === undefined) {
      out.push(`${where}: no locator (role ${record.roleText || record.role})`);
      continue;
    }
    let found: number[];
    try {
      found = matchLocator(snap, parseLocator(printed)).map((r) => r.index);
    } catch (e) {
      out.push(`${where}: ${printed} does not parse: ${(e as Error).message}`);
      continue;
    }
    if (found.length !== 1 || found[0] !== i) out.push(`${where}: ${printed} finds [${found.join(", ")}]`);
    cost.records++;
  }
  cost.snapshots++;
  return out;
}

if (mode !== "off") {
  onSnapshotCreated((snap) => {
    if (seen.length < MAX_SNAPSHOTS) seen.push(snap);
    else skipped++;
  });

  beforeEach(() => {
    seen.length = 0;
    skipped = 0;
  });

  afterEach((context) => {
    capped += skipped;
    const t0 = performance.now();
    const snaps = seen.splice(0);
    const failures = snaps.flatMap(auditSnapshot);
    cost.ms += performance.now() - t0;
    if (failures.length > 0)
      expect.fail(
        `locator audit, test "${context.task.name}": ${failures.length} printed element(s) not found again alone by their locator:\n${failures.slice(0, 20).join("\n")}`,
      );
  });

  const report = process.env.AXSNAP_LOCATOR_AUDIT_REPORT;
  let file = "";
  beforeEach((context) => {
    file = context.task.file.name;
  });
  if (report)
    afterAll(() => {
      appendFileSync(
        report,
        `${file}: ${cost.snapshots} snapshots, ${cost.records} records, ${cost.ms.toFixed(0)} ms, ${capped} past the cap\n`,
      );
    });
}
