/**
 * Issue 20 on a Chromium page: labelled buttons drawn on a <canvas> (test/pages/canvas.html), which the
 * accessibility tree knows only as a `canvas` element with no text. In auto the canvas is a self-drawn
 * region (lib/observe/ocr/plan.ts: about a quarter of the window), so its pixels are read, and only its: the
 * page's DOM text and Chromium's own chrome keep their tree lines. The drawn labels print as
 * `text (ocr)` lines under the canvas; clicking one hits its drawn button (the page titles itself with
 * what was clicked) 20 of 20 times; a label redrawn between the snapshot and the click (the page's DOM
 * button "Relabel", pressed through the tree) is STALE_REF with nothing sent.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../lib/index.js";
import { createSession, type Session } from "../../lib/session/session.js";
import { type App, chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";
import { accuracy, wordsOf } from "../support/drawn-text.js";
import { indexOf } from "../support/lines.js";
import { useDesktop } from "../support/linux.js";
import { rejects } from "../support/rejects.js";

const PAGE = "test/pages/canvas.html";
const TIMEOUT = 120_000;

/** The labels the page draws, as its script lists them: the words a reader should find. */
const LABELS = [...fs.readFileSync(PAGE, "utf8").matchAll(/\{ text: "([^"]+)"/g)].map((m) => m[1]!);
/** The boxed (clickable) ones. */
const BUTTONS = [...fs.readFileSync(PAGE, "utf8").matchAll(/\{ text: "([^"]+)",[^}]*box: true/g)].map(
  (m) => m[1]!,
);

let desktop: Desktop;
let app: App;
let session: Session;

const ocrLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => /^\t*\d+ text \(ocr(?:, unsure)?\) /.test(l))
    .map((l) => l.replace(/^\t*\d+ text \(ocr(?:, unsure)?\) /, ""));

/** Snapshots with a fresh session until the canvas reads `label`, bounded: the page draws on its own time. */
async function untilCanvasReads(label: string): Promise<Snapshot> {
  const end = Date.now() + 15_000;
  for (;;) {
    const snap = await createSession().snapshot({ app: app.pid, screenshot: false });
    if (ocrLines(snap.text).includes(label)) return snap;
    if (Date.now() > end) throw new Error(`the canvas never read "${label}":\n${snap.text}`);
  }
}

beforeAll(async () => {
  desktop = await useDesktop();
  app = await chromium(desktop, fileUrl(PAGE), { windowName: "axsnap canvas" });
  session = createSession();
  // The window is listed before its page is built: wait for the page's DOM button, then for the drawing.
  await session.waitFor(
    app.pid,
    { element: { role: "push button", name: "Relabel" } },
    { timeoutMs: 20_000, snapshot: { screenshot: false } },
  );
  await untilCanvasReads("Play");
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await app?.stop();
  await desktop?.stop();
});

describe("a Chromium canvas", () => {
  it(
    "auto reads the canvas only, its labels nested under it, with word recall and precision ≥ 95%",
    async () => {
      const snap = await session.snapshot({ app: app.pid, screenshot: false });
      expect(snap.timings.ocrRuns).toBe(1);
      const expected = LABELS.flatMap(wordsOf);
      const got = ocrLines(snap.text).flatMap(wordsOf);
      const a = accuracy(expected, got);
      console.log(
        `canvas page: recall ${a.recall.toFixed(3)}, precision ${a.precision.toFixed(3)}, ocr ${snap.timings.ocrMs?.toFixed(0)} ms`,
      );
      expect(a.recall, snap.text).toBeGreaterThanOrEqual(0.95);
      expect(a.precision, snap.text).toBeGreaterThanOrEqual(0.95);
      // Every OCR line sits under the canvas, one tab deeper, after it and before the next tree line.
      const block = /^(\t*)\d+ canvas\n((?:\1\t\d+ text \(ocr(?:, unsure)?\) .*\n?)+)/m.exec(snap.text);
      expect(block, snap.text).not.toBeNull();
      expect(ocrLines(block![2]!)).toEqual(ocrLines(snap.text));
      // The DOM button keeps its tree line and is not read again.
      expect(snap.text).toMatch(/^\t*\d+ push button Relabel$/m);
      expect(ocrLines(snap.text)).not.toContain("Relabel");
    },
    TIMEOUT,
  );

  it(
    "a click on a drawn button's line hits it 20 of 20 times",
    async () => {
      let hits = 0;
      for (let n = 1; n <= 20; n++) {
        const label = BUTTONS[n % BUTTONS.length]!;
        const snap = await session.snapshot({ app: app.pid, screenshot: false });
        const index = snap.records.findIndex((r) => r.ocr !== undefined && r.title === label);
        expect(index, `"${label}" in\n${snap.text}`).toBeGreaterThan(0);
        const result = await session.click(index);
        expect(result.delivery).toBe("delivered_unverified");
        // The title is the page's: read it after the click has settled, wherever the result's snapshot stands.
        const title = (await createSession().snapshot({ app: app.pid, screenshot: false, ocr: false })).window
          .title;
        if (title === `clicked ${label} ${n} - Chromium`) hits++;
        else throw new Error(`click ${n} on "${label}": the window is titled "${title}"`);
      }
      expect(hits).toBe(20);
    },
    TIMEOUT,
  );

  it(
    "a label redrawn between the snapshot and the click is STALE_REF, and nothing reaches the page",
    async () => {
      const snap = await session.snapshot({ app: app.pid, screenshot: false });
      const play = snap.records.find((r) => r.ocr !== undefined && r.title === "Play");
      expect(play, snap.text).toBeDefined();
      // The page's own DOM button, pressed through the tree by another session: the redraw is the page's.
      const other = createSession();
      const view = await other.snapshot({ app: app.pid, screenshot: false, ocr: false });
      await other.click(indexOf(view, /^push button Relabel$/));
      await untilCanvasReads("yalP");
      const before = (await createSession().snapshot({ app: app.pid, screenshot: false, ocr: false })).window
        .title;
      const e = await rejects(session.click(play!.index));
      expect(e.code, e.message).toBe("STALE_REF");
      expect(e.message).toMatch(/the pointer was moved there and nothing else was sent/);
      expect(e.message).toContain('its place reads "yalP"');
      const after = (await createSession().snapshot({ app: app.pid, screenshot: false, ocr: false })).window
        .title;
      expect(after).toBe(before);
      // Back as it was; a new snapshot's line clicks again.
      const again = await other.snapshot({ app: app.pid, screenshot: false, ocr: false });
      await other.click(indexOf(again, /^push button Relabel$/));
      await untilCanvasReads("Play");
      await other.close();
    },
    TIMEOUT,
  );
});
