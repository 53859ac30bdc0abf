/**
 * The trace viewer in a real browser, read through axsnap itself: the page
 * `trace view` writes for the sample trace, opened in Chromium under Xvfb.
 * What an agent (or a person with a screen reader) gets from it: the steps
 * as a list box's items named as the trace names them, the selection that
 * the keys move, the acted line marked in the text, the target outlined over
 * its screenshot at its frame; and what it looks like: the outline's and the
 * refusal's colours in a screenshot of the window.
 *
 * Chromium's AT-SPI mapping the page relies on (content/test/data/
 * accessibility/*-expected-auralinux.txt, and seen here): role=listbox is a
 * "list box", role=option a "list item" (selectable, selected), a named
 * role=img a named "image", and <mark aria-label> a named "static".
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type FindMatch, type Session } from "../../lib/index.js";
import { readTrace } from "../../lib/session/trace/read.js";
import { stepName } from "../../lib/session/trace/show.js";
import type { ReadTrace, TraceSnapshotLine } from "../../lib/session/trace/types.js";
import { renderTraceHtml } from "../../lib/session/trace/view.js";
import { OUTLINE_COLOUR, REFUSED_COLOUR, UNCERTAIN_COLOUR } from "../../lib/session/trace/view-page.js";
import { type App, chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { decodePng, type Image, pixel } from "../support/png.js";

const TIMEOUT = 120_000;
const WEB = "chromium";
const SAMPLE = "test/fixtures/traces/sample.axtrace";

let desktop: Desktop;
let app: App;
let session: Session;
let trace: ReadTrace;

beforeAll(async () => {
  desktop = await useDesktop();
  trace = readTrace(SAMPLE);
  const page = join(desktop.tmpDir, "sample-trace.html");
  writeFileSync(page, renderTraceHtml(trace));
  // Opened on step 4 (the click on "Save As..."), as a link to a step would.
  app = await chromium(desktop, `${fileUrl(page)}#step-4`, { windowName: "axsnap trace" });
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await app?.stop();
  await desktop?.stop();
});

/** Observes until `test` holds (web content and its updates arrive a moment later); bounded. */
async function until<T>(what: string, read: () => Promise<T>, test: (v: T) => boolean): Promise<T> {
  const end = Date.now() + 30_000;
  for (;;) {
    const v = await read();
    if (test(v)) return v;
    if (Date.now() > end)
      throw new Error(`${what} never held; last:\n${JSON.stringify(v, null, 1).slice(0, 4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The selected state, as the line prints it: `list item (selected) 4 click …`. */
const isSelected = (m: FindMatch) => /^list item \([^)]*\bselected\b/.test(m.line);
const options = () => session.find(WEB, { role: "list item" }).then((r) => r.matches);
const selectedName = (ms: FindMatch[]) => ms.find((m) => isSelected(m))?.name;
const named = (step: number) => stepName(trace.steps.find((s) => s.n === step)!, trace);

/** Waits until step `n` is the selected option and the main pane shows it. */
async function selected(n: number): Promise<FindMatch[]> {
  const ms = await until(`step ${n} selected`, options, (ms) => selectedName(ms) === named(n));
  await until(
    `step ${n}'s heading`,
    () => session.find(WEB, { role: "heading", name: named(n), exact: true }).then((r) => r.total),
    (t) => t === 1,
  );
  return ms;
}

/** An element's frame: window-relative points, or screen points (what the screenshot's contract maps). */
function frameOf(m: FindMatch, where: "window" | "screen" = "window") {
  const f = where === "screen" ? m.record.screenFrame : m.record.frame;
  if (!f) throw new Error(`${m.line} has no frame`);
  return f;
}

async function one(query: Parameters<Session["find"]>[1]): Promise<FindMatch> {
  const r = await session.find(WEB, query);
  if (r.total !== 1) throw new Error(`expected one ${r.query}, found ${r.total}:\n${r.text}`);
  return r.matches[0]!;
}

/** The outline's frame against the image it sits on, in the page's pixels, from the shot's own numbers. */
async function expectOutline(
  snapshot: string,
  target: { line: string; frame?: { x: number; y: number; w: number; h: number } },
) {
  const snap = trace.snapshots.get(snapshot) as TraceSnapshotLine & {
    shot: { pixelWidth: number; scale: number };
  };
  const title = snap.window?.title ?? "";
  const image = frameOf(await one({ role: "image", name: `Before screenshot: ${title}`, exact: true }));
  const outline = frameOf(await one({ role: "image", name: `target: ${target.line}`, exact: true }));
  // The page shows the shot at window points (pixelWidth / scale wide); frames are window points × the shot's scale.
  const shown = image.w / snap.shot.pixelWidth;
  const k = snap.shot.scale * shown;
  const f = target.frame!;
  expect(Math.abs(outline.x - image.x - f.x * k)).toBeLessThanOrEqual(3);
  expect(Math.abs(outline.y - image.y - f.y * k)).toBeLessThanOrEqual(3);
  expect(Math.abs(outline.w - f.w * k)).toBeLessThanOrEqual(3);
  expect(Math.abs(outline.h - f.h * k)).toBeLessThanOrEqual(3);
  return { image, outline };
}

function hex(c: string): [number, number, number] {
  return [1, 3, 5].map((i) => Number.parseInt(c.slice(i, i + 2), 16)) as [number, number, number];
}

function near(img: Image, x: number, y: number, c: [number, number, number]): boolean {
  const [r, g, b] = pixel(img, Math.round(x), Math.round(y));
  return Math.abs(r - c[0]) <= 12 && Math.abs(g - c[1]) <= 12 && Math.abs(b - c[2]) <= 12;
}

describe("trace view in Chromium, read through axsnap", () => {
  it(
    "lists every step as a list box item named as the trace names it, the linked step selected",
    async () => {
      const ms = await selected(4);
      expect(ms.map((m) => m.name)).toEqual(trace.steps.map((s) => stepName(s, trace)));
      expect(ms.filter((m) => isSelected(m)).map((m) => m.name)).toEqual([named(4)]);
      for (const m of ms) expect(m.ancestors.some((a) => a.startsWith('list box "Steps"'))).toBe(true);
      expect(ms.map((m) => m.name).filter((n) => /REFUSED|UNCERTAIN/.test(n ?? ""))).toEqual([
        '6 click push button "Cancel" — UNCERTAIN · closed dialog "Save As"',
        '7 click push button "Print" — REFUSED NOT_ENABLED',
      ]);
      // The hostile title is text: no image of its own appeared, and it reads as written.
      expect(ms[0]!.name).toBe('1 snapshot window "</script><img src=x onerror=alert(1)> - Mousepad"');
      const images = await session.find(WEB, { role: "image" });
      expect(images.matches.map((m) => m.name?.replace(/:.*/, ""))).toEqual([
        "Before screenshot",
        "target",
        "After screenshot",
      ]);
    },
    TIMEOUT,
  );

  it(
    "marks the acted line in the text the agent saw, and outlines the target over its screenshot at its frame",
    async () => {
      await selected(4);
      const step = trace.steps.find((s) => s.n === 4)!;
      const target = step.targets![0]!;
      const mark = await one({ role: "static", name: `acted line ${target.index}`, exact: true });
      expect(mark.ancestors.at(-1)).toBe(`section "Snapshot ${step.before}"`);
      const text = await one({ role: "static", name: `${target.index} ${target.line}`, exact: true });
      expect(text.ancestors.at(-1)).toBe(`static "acted line ${target.index}"`);
      await expectOutline(step.before!, target);
    },
    TIMEOUT,
  );

  it(
    "shows the outline in its colour along its edges, and the refused and uncertain rows in theirs",
    async () => {
      await selected(4);
      const step = trace.steps.find((s) => s.n === 4)!;
      const outline = frameOf(
        await one({ role: "image", name: `target: ${step.targets![0]!.line}`, exact: true }),
        "screen",
      );
      const refused = frameOf(await one({ role: "list item", name: "REFUSED" }), "screen");
      const uncertain = frameOf(await one({ role: "list item", name: "UNCERTAIN" }), "screen");
      const snap = await session.snapshot({ app: WEB, screenshot: true });
      const shot = snap.screenshot!;
      const img = decodePng(shot.data);
      const px = (x: number, y: number) => ({
        x: (x - shot.windowOrigin.x) * shot.scale,
        y: (y - shot.windowOrigin.y) * shot.scale,
      });
      const colour = hex(OUTLINE_COLOUR);
      // The border is 3 px inside the outline's frame: sample 1 px in from each edge, all along it.
      const o = { ...px(outline.x, outline.y), w: outline.w * shot.scale, h: outline.h * shot.scale };
      const edges: [number, number][] = [];
      for (let t = 0.05; t <= 0.95; t += 0.05) {
        edges.push([o.x + t * o.w, o.y + 1], [o.x + t * o.w, o.y + o.h - 2]);
        edges.push([o.x + 1, o.y + t * o.h], [o.x + o.w - 2, o.y + t * o.h]);
      }
      const on = edges.filter(([x, y]) => near(img, x, y, colour));
      expect(on.length / edges.length).toBeGreaterThanOrEqual(0.95);
      // Inside, the screenshot shows through (a menu item drawn in its own colour), not the outline's.
      expect(near(img, o.x + o.w / 2, o.y + o.h / 2, colour)).toBe(false);
      // Each flagged row: its 8 px strip on the left, top to bottom.
      for (const [row, c] of [
        [refused, REFUSED_COLOUR],
        [uncertain, UNCERTAIN_COLOUR],
      ] as const) {
        const r = { ...px(row.x, row.y), h: row.h * shot.scale };
        const strip: [number, number][] = [];
        for (let t = 0.1; t <= 0.9; t += 0.1) strip.push([r.x + 3, r.y + t * r.h]);
        expect(strip.filter(([x, y]) => near(img, x, y, hex(c)))).toHaveLength(strip.length);
      }
      // A row that is neither has no strip.
      const plain = frameOf(await one({ role: "list item", name: named(3), exact: true }), "screen");
      const p = px(plain.x, plain.y + plain.h / 2);
      expect(
        near(img, p.x + 3, p.y, hex(REFUSED_COLOUR)) || near(img, p.x + 3, p.y, hex(UNCERTAIN_COLOUR)),
      ).toBe(false);
      writeFileSync(join(desktop.tmpDir, "trace-viewer.png"), shot.data);
    },
    TIMEOUT,
  );

  it(
    "moves the selection with Down, j, k, End and Home, and shows the selected step",
    async () => {
      await selected(4);
      await session.pressKey("Down", { app: WEB });
      await selected(5);
      // Step 5 typed a secret into the dialog: its shot is at scale 2, drawn at window points.
      const step5 = trace.steps.find((s) => s.n === 5)!;
      await expectOutline(step5.before!, step5.targets![0]!);
      await one({ role: "static", name: `acted line ${step5.targets![0]!.index}`, exact: true });
      await session.pressKey("j", { app: WEB });
      await selected(6);
      await session.pressKey("k", { app: WEB });
      await selected(5);
      await session.pressKey("End", { app: WEB });
      await selected(8);
      await session.pressKey("Home", { app: WEB });
      const ms = await selected(1);
      expect(ms.filter((m) => isSelected(m))).toHaveLength(1);
      // Step 1 is an observation: no target to outline, only the snapshot it saw.
      const images = await session.find(WEB, { role: "image" });
      expect(images.matches.map((m) => m.name)).toEqual([
        `Seen screenshot: ${trace.snapshots.get(trace.steps[0]!.after!)!.window!.title}`,
      ]);
    },
    TIMEOUT,
  );
});
