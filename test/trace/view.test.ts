/**
 * The viewer page, read as text: it makes no request, carries the trace once
 * as a JSON block that parses back to every step and snapshot, and no
 * hostile name in it can be read as markup.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readTrace } from "../../lib/session/trace/read.js";
import { stepName } from "../../lib/session/trace/show.js";
import type { ReadTrace, TraceSnapshotLine } from "../../lib/session/trace/types.js";
import { renderTraceHtml, type ViewData } from "../../lib/session/trace/view.js";
import { PAGE_SCRIPT } from "../../lib/session/trace/view-page.js";

const SAMPLE = "test/fixtures/traces/sample.axtrace";
const DATA_OPEN = '<script type="application/json" id="trace">';

function embedded(html: string): ViewData {
  const start = html.indexOf(DATA_OPEN);
  expect(start).toBeGreaterThan(0);
  const end = html.indexOf("</script>", start);
  return JSON.parse(html.slice(start + DATA_OPEN.length, end)) as ViewData;
}

describe("renderTraceHtml", () => {
  const trace = readTrace(SAMPLE);
  const html = renderTraceHtml(trace);

  it("makes no request: no http(s) anywhere, a CSP allowing only inline code and data: images", () => {
    expect(html).not.toMatch(/https?:/i);
    expect(html).toContain(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">`,
    );
    // Nothing that loads: no src or href attribute in the markup (images get theirs from the data block).
    const markup =
      html.slice(0, html.indexOf(DATA_OPEN)) + html.slice(html.indexOf("</script>", html.indexOf(DATA_OPEN)));
    expect(markup).not.toMatch(/\s(src|href)=/i);
    const files = renderTraceHtml(trace, { images: "files" });
    expect(files).toContain("img-src data: file:;");
    expect(files).not.toMatch(/https?:/i);
  });

  it("embeds the trace once, escaped, and it parses back to every step and snapshot", () => {
    expect(html.split(DATA_OPEN)).toHaveLength(2);
    const data = embedded(html);
    expect(data.runId).toBe("r7k2m9q4x");
    expect(data.steps.map((s) => s.step.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const s of data.steps) {
      const original = trace.steps.find((t) => t.n === s.step.n)!;
      expect(s.step).toEqual(original);
      expect(s.name).toBe(stepName(original, trace));
    }
    expect(Object.keys(data.snapshots).sort()).toEqual([...trace.snapshots.keys()].sort());
    for (const [id, snap] of trace.snapshots) expect(data.snapshots[id]).toEqual(snap);
    expect(data.steps.find((s) => s.step.n === 7)!.flag).toBe("refused");
    expect(data.steps.find((s) => s.step.n === 6)!.flag).toBe("uncertain");
    expect(data.steps.filter((s) => s.flag)).toHaveLength(2);
    expect(data.steps.find((s) => s.step.n === 4)!.name).toBe(
      '4 click menu item "Save As..." — opened dialog "Save As" · closed menu "File"',
    );
    expect(data.steps.find((s) => s.step.n === 7)!.name).toBe(
      '7 click push button "Print" — REFUSED NOT_ENABLED',
    );
  });

  it("never lets a hostile name read as markup", () => {
    // The fixture's window title is `</script><img src=x onerror=alert(1)> - Mousepad`, and a label holds U+2028.
    expect(JSON.stringify([...trace.snapshots.values()])).toContain("</script><img src=x onerror=");
    expect(html).not.toContain("<img");
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html).not.toMatch(/[\u2028\u2029]/);
    expect(html).not.toContain("<!--");
    // The page's own script builds nodes with textContent only.
    expect(PAGE_SCRIPT).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/,
    );
    expect(PAGE_SCRIPT).toContain("textContent");
    // The title is run id only, escaped.
    const evil = { ...trace, header: { ...trace.header, runId: '<b onclick="x">&' } };
    expect(renderTraceHtml(evil)).toContain(
      "<title>axsnap trace &lt;b onclick=&quot;x&quot;&gt;&amp;</title>",
    );
  });

  it("inlines every screenshot as a PNG data URI, byte for byte", () => {
    const data = embedded(html);
    const shots = [...trace.snapshots.values()].flatMap((s) =>
      s.shot && "file" in s.shot ? [s.shot.file] : [],
    );
    expect(shots).toHaveLength(5);
    expect(Object.keys(data.images).sort()).toEqual([...shots].sort());
    for (const file of shots) {
      const src = data.images[file]!;
      expect(src.startsWith("data:image/png;base64,")).toBe(true);
      expect(
        Buffer.from(src.slice(src.indexOf(",") + 1), "base64").equals(readFileSync(join(SAMPLE, file))),
      ).toBe(true);
    }
    // With images: "files", the page links the trace's own files.
    const files = embedded(renderTraceHtml(trace, { images: "files" }));
    expect(files.images[shots[0]!]).toBe(`file://${resolve(SAMPLE, shots[0]!)}`);
  });

  it("embeds no file from outside the trace, nor a file that is not a PNG", () => {
    const evil = (file: string): ReadTrace => {
      const snapshots = new Map<string, TraceSnapshotLine>();
      for (const [id, s] of trace.snapshots)
        snapshots.set(id, s.shot && "file" in s.shot ? { ...s, shot: { ...s.shot, file } } : s);
      return { ...trace, snapshots };
    };
    for (const file of ["../../../../../../etc/passwd", "/etc/passwd", "trace.json", "steps.jsonl", ""]) {
      const data = embedded(renderTraceHtml(evil(file)));
      expect(data.images).toEqual({});
      expect(embedded(renderTraceHtml(evil(file), { images: "files" })).images).toEqual({});
    }
  });

  it("renders a trace with no steps", () => {
    const empty = { ...trace, steps: [], snapshots: new Map() };
    const data = embedded(renderTraceHtml(empty));
    expect(data.steps).toEqual([]);
    expect(renderTraceHtml(empty)).toContain(
      '<ol id="steps" role="listbox" aria-label="Steps" tabindex="0">',
    );
  });
});
