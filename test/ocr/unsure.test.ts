/**
 * Issue 33, item 7: a line read off the pixels with a word of low confidence
 * is marked `unsure` on its line (tree style `text (ocr, unsure)`, the
 * record's `ocr.unsure`, the --json line facts' states), its text exactly as
 * read; a word holding a digit is held to a higher bar. On the fake backend,
 * whose OCR lines carry a confidence and no words (as Vision's), and on the
 * rule itself with Tesseract-like words.
 */
import { describe, expect, it } from "vitest";
import { isUnsure, NUMBER_SURE, WORD_SURE } from "../../lib/observe/ocr/unsure.js";
import { useFakeSessions } from "../support/editor.js";

const sessions = useFakeSessions();
const FRAME = { x: 100, y: 100, w: 400, h: 300 };
const world = (ocr: object[]) => ({
  apps: [
    {
      name: "Till",
      pid: 42,
      focused: true,
      windows: [
        {
          title: "Till",
          frame: FRAME,
          focused: true,
          ocr,
          root: { role: "frame", title: "Till", frame: FRAME },
        },
      ],
    },
  ],
});

describe("unsure OCR lines", () => {
  it("marks a line below the bar on its line and record, keeps its text as read, leaves sure lines alone", async () => {
    const { s } = sessions.open(
      world([
        { text: "Keep", frame: { x: 20, y: 20, w: 40, h: 14 }, confidence: 0.85 },
        { text: "Total: 1,234,50", frame: { x: 20, y: 60, w: 120, h: 14 }, confidence: 0.85 },
        { text: "Disc4rd", frame: { x: 20, y: 100, w: 60, h: 14 }, confidence: 0.95 },
        { text: "smudge", frame: { x: 20, y: 140, w: 60, h: 14 }, confidence: 0.5 },
      ]),
    );
    const snap = await s.snapshot({ app: "Till", screenshot: false });
    expect(snap.text.split("\n").slice(2)).toEqual([
      "0 frame Till",
      "\t1 text (ocr) Keep",
      "\t2 text (ocr, unsure) Total: 1,234,50",
      "\t3 text (ocr) Disc4rd",
      "\t4 text (ocr, unsure) smudge",
    ]);
    expect(snap.records[2]).toMatchObject({
      title: "Total: 1,234,50",
      ocr: { confidence: 0.85, unsure: true },
    });
    expect(snap.records[1]!.ocr).not.toHaveProperty("unsure");
  });

  it("judges each word: a number below its bar marks a line whose other words are sure", () => {
    const line = (words: [string, number][]) => ({
      text: words.map((w) => w[0]).join(" "),
      confidence: 0.95,
      words: words.map(([text, confidence]) => ({ text, confidence })),
    });
    expect(
      isUnsure(
        line([
          ["Total:", 0.96],
          ["1,234.50", 0.73],
        ]),
      ),
    ).toBe(true);
    expect(
      isUnsure(
        line([
          ["Total:", 0.96],
          ["1,234.50", NUMBER_SURE],
        ]),
      ),
    ).toBe(false);
    expect(
      isUnsure(
        line([
          ["some", 0.57],
          ["message", 0.91],
        ]),
      ),
    ).toBe(true);
    expect(isUnsure(line([["Discard", 0.84]]))).toBe(false);
    expect(isUnsure(line([["Discard", WORD_SURE - 0.01]]))).toBe(true);
    // No words (an engine that reads whole lines): the line's own confidence.
    expect(isUnsure({ text: "12 files", confidence: 0.85 })).toBe(true);
    expect(isUnsure({ text: "files", confidence: 0.85 })).toBe(false);
  });
});
