/**
 * `trace show` over the sample trace: the header line and one line a step,
 * refusals and uncertain deliveries named as such, hostile names kept on
 * their line.
 */
import { appendFileSync, cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readTrace } from "../../lib/session/trace/read.js";
import { showTrace } from "../../lib/session/trace/show.js";

const SAMPLE = "test/fixtures/traces/sample.axtrace";

describe("showTrace", () => {
  it("prints a header line, then one line a step in the issue's shape", () => {
    const lines = showTrace(readTrace(SAMPLE)).split("\n");
    expect(lines).toHaveLength(1 + 8);
    expect(lines[0]).toMatch(
      /^run r7k2m9q4x · 8 steps · 2 processes \(mcp, cli\) · 5 screenshots \(1 withheld: secret\) · [\d.]+ KB · started 2025-06-01T12:00:00\.900Z$/,
    );
    expect(lines[4]).toBe(
      '4 12:00:02.900 mcp click  menu item "Save As..."  delivered_unverified · opened dialog "Save As" · closed menu "File"  655 ms',
    );
    expect(lines[1]).toBe(
      '1 12:00:01.000 mcp snapshot  window "</script><img src=x onerror=alert(1)> - Mousepad"  204 ms',
    );
    expect(lines[5]).toBe(
      '5 12:00:04.700 cli typeText  text "Name"  delivered_verified · changed text (editable) Name, Value: «secret»  612 ms',
    );
    expect(lines[8]).toBe(
      '8 12:00:08.600 mcp click  check box "Word wrap"  delivered_verified · changed check box (checked) Word wrap  702 ms',
    );
  });

  it("names a refusal REFUSED with its code and an uncertain delivery UNCERTAIN", () => {
    const lines = showTrace(readTrace(SAMPLE)).split("\n");
    expect(lines[7]).toBe('7 12:00:07.400 mcp click  push button "Print"  REFUSED NOT_ENABLED  38 ms');
    expect(lines[6]).toBe(
      '6 12:00:05.800 cli click  push button "Cancel"  UNCERTAIN · closed dialog "Save As"  1096 ms',
    );
    expect(lines.filter((l) => l.includes("REFUSED"))).toHaveLength(1);
    expect(lines.filter((l) => l.includes("UNCERTAIN"))).toHaveLength(1);
  });

  it("keeps a hostile name on its line: U+2028, quotes and >> escaped", () => {
    const out = showTrace(readTrace(SAMPLE));
    expect(out).not.toMatch(/[\u2028\u2029]/);
    expect(out.split("\n")[2]).toBe(
      '2 12:00:01.500 mcp find  label "Ready >> \\"quoted\\" \\u2028 next" (+1)  read lines 8, 6  41 ms',
    );
  });

  it("says truncated when the last line was cut short", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "axsnap-show-")), "cut.axtrace");
    cpSync(SAMPLE, dir, { recursive: true });
    appendFileSync(join(dir, "steps.jsonl"), '{"kind":"step","n":9,"runI');
    const trace = readTrace(dir);
    const [header, ...steps] = showTrace(trace).split("\n");
    expect(header).toMatch(/ · truncated \(the last line was cut short and skipped\)$/);
    expect(steps).toHaveLength(8);
  });

  it("orders steps by when they started, since n is the order they finished", () => {
    const trace = readTrace(SAMPLE);
    // Two concurrent MCP calls: step 4 started first but finished after step 5.
    const [s4, s5] = [trace.steps[3]!, trace.steps[4]!];
    const swapped = {
      ...trace,
      steps: trace.steps.map((s) => (s === s4 ? { ...s, n: 5 } : s === s5 ? { ...s, n: 4 } : s)),
    };
    const lines = showTrace(swapped).split("\n");
    expect(lines[4]).toMatch(/^5 12:00:02\.900 mcp click {2}menu item "Save As\.\.\."/);
    expect(lines[5]).toMatch(/^4 12:00:04\.700 cli typeText/);
  });

  it("prints a header alone for a trace with no steps", () => {
    const trace = { ...readTrace(SAMPLE), steps: [], snapshots: new Map() };
    expect(showTrace(trace)).toMatch(/^run r7k2m9q4x · 0 steps · 0 processes · 0 screenshots · /);
  });
});
