/**
 * Issue 33, item 7, on a real desktop: OCR on small UI text. An xmessage
 * window (no accessibility tree) shows a message and two buttons in the
 * 6x13 "fixed" font inside oval borders; read at 1x, Tesseract found the
 * message and neither button. Small windows and regions are scaled up before
 * recognition, so the buttons read as lines of their own, and a click on the
 * "Keep" line presses Keep (xmessage -print writes the pressed button's
 * label and exits). A number drawn small reads exactly as drawn, or its line
 * is marked unsure: never a confident misreading ("1,234.50" came back as
 * "234.50", unmarked).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../lib/session/session.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { runCli } from "../support/cli.js";
import { startDrawnText } from "../support/drawn-text.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let session: Session;
let drawnNumber: App;

beforeAll(async () => {
  desktop = await useDesktop();
  drawnNumber = await startDrawnText(desktop, {
    title: "axsnap small number",
    x: 600,
    y: 20,
    width: 200,
    height: 50,
    lines: [{ text: "Total: 1,234.50", x: 10, y: 30, size: 11 }],
  });
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await drawnNumber?.stop();
  await desktop?.stop();
});

/** An OCR line as printed: its text, and whether it is marked unsure. */
interface Printed {
  index: number;
  text: string;
  unsure: boolean;
}
const OCR_LINE = /^\t*(\d+) text \(ocr(, unsure)?\) (.*)$/;
const ocrLines = (text: string): Printed[] =>
  text.split("\n").flatMap((l) => {
    const m = OCR_LINE.exec(l);
    return m ? [{ index: Number(m[1]), unsure: m[2] !== undefined, text: m[3]! }] : [];
  });

async function xmessage(args: string[], y: number): Promise<App> {
  return startApp(desktop, "xmessage", ["-geometry", `+20+${y}`, ...args], { windowClass: "Xmessage" });
}

/** The number's lines read exactly as drawn or marked unsure, and at least one line shows digits. */
function expectNumberReadOrMarked(text: string): void {
  const numeric = ocrLines(text).filter((l) => /\d/.test(l.text));
  expect(numeric.length, text).toBeGreaterThan(0);
  for (const l of numeric) expect(l.text.includes("1,234.50") || l.unsure, text).toBe(true);
}

describe("small text read off the pixels", () => {
  it(
    "reads xmessage's Keep and Discard buttons as lines of their own, each inside its button",
    async () => {
      const msg = await xmessage(["-buttons", "Keep,Discard", "some message"], 400);
      try {
        const snap = await session.snapshot({ app: msg.pid });
        const lines = ocrLines(snap.text);
        const texts = lines.map((l) => l.text);
        expect(texts, snap.text).toContain("Keep");
        expect(texts, snap.text).toContain("Discard");
        expect(texts.join(" "), snap.text).toMatch(/some message/i);
        // Frames in window points, mapped back from the scaled image: Keep left of Discard, both below
        // the message, inside the window.
        const frame = (t: string) => snap.records.find((r) => r.ocr !== undefined && r.title === t)!.frame!;
        const keep = frame("Keep");
        const discard = frame("Discard");
        const win = snap.window.frame;
        expect(keep.x + keep.w, snap.text).toBeLessThanOrEqual(discard.x + 1);
        for (const f of [keep, discard]) {
          expect(f.x).toBeGreaterThanOrEqual(0);
          expect(f.y).toBeGreaterThan(win.h / 3);
          expect(f.x + f.w).toBeLessThanOrEqual(win.w);
          expect(f.y + f.h).toBeLessThanOrEqual(win.h);
          expect(f.h).toBeLessThan(win.h / 2);
        }
      } finally {
        await msg.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a click on the Keep line presses Keep (xmessage -print says which button)",
    async () => {
      const msg = await xmessage(["-print", "-buttons", "Keep,Discard", "some message"], 500);
      try {
        const snap = await session.snapshot({ app: msg.pid });
        const keep = ocrLines(snap.text).find((l) => l.text === "Keep");
        expect(keep, snap.text).toBeDefined();
        await session.click(keep!.index);
        const until = Date.now() + 10_000;
        while (!msg.output().includes("Keep") && Date.now() < until) await sleep(50);
        expect(msg.output()).toMatch(/^Keep$/m);
        expect(msg.output()).not.toMatch(/Discard/);
      } finally {
        await msg.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "the CLI prints the buttons too",
    async () => {
      const msg = await xmessage(["-buttons", "Keep,Discard", "some message"], 600);
      try {
        const r = await runCli(["snapshot", "--app", String(msg.pid)], desktop.env);
        expect(r.code, r.stderr).toBe(0);
        const texts = ocrLines(r.stdout).map((l) => l.text);
        expect(texts, r.stdout).toEqual(expect.arrayContaining(["Keep", "Discard"]));
      } finally {
        await msg.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a number in xmessage's small font reads exactly, or its line is marked unsure",
    async () => {
      const msg = await xmessage(["-buttons", "OK", "Total: 1,234.50"], 700);
      try {
        const snap = await session.snapshot({ app: msg.pid, screenshot: false });
        expectNumberReadOrMarked(snap.text);
      } finally {
        await msg.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a number drawn at 11 px in a GTK drawing area reads exactly, or its line is marked unsure",
    async () => {
      const snap = await session.snapshot({ app: drawnNumber.pid, screenshot: false });
      expect(snap.timings.ocrRuns).toBe(1);
      expectNumberReadOrMarked(snap.text);
    },
    TIMEOUT,
  );
});
