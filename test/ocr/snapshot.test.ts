/**
 * Issue 20, above the OCR seam, on the fake backend (whose recognizeText
 * answers from the world's `ocr` lines and logs each run): the thin-tree
 * rule in a real observation, the lines in the snapshot with records and
 * refs, a click on one (at its centre, after its text is read there again),
 * a line redrawn between the snapshot and the click (STALE_REF, nothing
 * sent), refusals of what an OCR line cannot take, the destructive words on
 * recognised text, a machine without an engine, and bad options.
 */
import { describe, expect, it } from "vitest";
import type { Session } from "../../lib/session/session.js";
import { useFakeSessions } from "../support/editor.js";
import { rejects } from "../support/rejects.js";

/** The error `p` rejects with, after checking its code. */
async function refused(p: Promise<unknown>, code: string) {
  const e = await rejects(p);
  expect(e.code, e.message).toBe(code);
  return e;
}

const sessions = useFakeSessions();
const FRAME = { x: 100, y: 100, w: 400, h: 300 };
const lines = (next = "Next") => [
  { text: "Play", frame: { x: 20, y: 20, w: 40, h: 14 }, confidence: 0.9 },
  { text: next, frame: { x: 200, y: 20, w: 40, h: 14 }, confidence: 0.9 },
  { text: "Delete all", frame: { x: 20, y: 80, w: 80, h: 14 }, confidence: 0.9 },
];
const player = (ocr = lines(), children: object[] = [], window: object = {}) => ({
  apps: [
    {
      name: "Player",
      pid: 42,
      focused: true,
      windows: [
        {
          title: "Player",
          frame: FRAME,
          focused: true,
          ocr,
          root: { role: "frame", title: "Player", frame: FRAME, children },
          ...window,
        },
      ],
    },
  ],
});
const ocrRuns = (log: string[]) => log.filter((e) => e.startsWith("ocr ")).length;
const indexOf = (text: string, line: string) =>
  Number(new RegExp(`^\\t*(\\d+) text \\(ocr\\) ${line}$`, "m").exec(text)?.[1]);

async function look(s: Session) {
  return s.snapshot({ app: "Player", screenshot: false });
}

describe("ocr in a snapshot", () => {
  it("auto reads a window whose tree names nothing: its lines print as text (ocr), in reading order", async () => {
    const { b, s } = sessions.open(player());
    const snap = await look(s);
    expect(snap.text.split("\n").slice(2)).toEqual([
      "0 frame Player",
      "\t1 text (ocr) Play",
      "\t2 text (ocr) Next",
      "\t3 text (ocr) Delete all",
    ]);
    expect(snap.timings).toMatchObject({ ocrRuns: 1 });
    expect(snap.records[1]).toMatchObject({
      title: "Play",
      ocr: { confidence: 0.9 },
      frame: { x: 20, y: 20, w: 40, h: 14 },
    });
    expect(ocrRuns(b.fakeLog())).toBe(1);
  });

  it("auto reads nothing of a window whose tree names its content; false reads nothing; true reads it", async () => {
    const named = ["Open", "Save", "Quit"].map((t, i) => ({
      role: "push button",
      title: t,
      actions: ["click"],
      frame: { x: 120, y: 120 + i * 30, w: 80, h: 20 },
    }));
    const { b, s } = sessions.open(player(lines(), named));
    expect((await look(s)).timings.ocrRuns).toBe(0);
    expect((await s.snapshot({ app: "Player", screenshot: false, ocr: false })).timings.ocrRuns).toBe(0);
    expect(ocrRuns(b.fakeLog())).toBe(0);
    const asked = await s.snapshot({ app: "Player", screenshot: false, ocr: true });
    expect(asked.timings.ocrRuns).toBe(1);
    // The named buttons are painted out before reading: their text is on their own lines.
    expect(b.fakeLog().filter((e) => e.startsWith("ocr "))).toEqual(["ocr 42 regions=0 blanks=3"]);
  });

  it("bad ocr options are INVALID_ARGUMENT with a hint", async () => {
    const { s } = sessions.open(player());
    for (const bad of [{ ocr: "on" }, { ocr: 1 }, { ocrLanguages: "eng" }, { ocrLanguages: ["../../etc"] }])
      await refused(s.snapshot({ app: "Player", ...(bad as object) }), "INVALID_ARGUMENT");
  });

  it("without an engine: auto prints the tree with a note saying what to install; ocr: true is OCR_UNAVAILABLE", async () => {
    const { s } = sessions.open({ ...player(), ocrUnavailable: true });
    const snap = await look(s);
    expect(snap.text).toMatch(/^0 frame Player$/m);
    expect(snap.text).toMatch(/\(the text in its pixels was not read: .*apt-get install tesseract-ocr/);
    const e = await refused(s.snapshot({ app: "Player", screenshot: false, ocr: true }), "OCR_UNAVAILABLE");
    // The backend's own hint (the fake one stands for Linux without Tesseract), said once.
    expect(e.hint).toBe(
      "install Tesseract: apt-get install tesseract-ocr tesseract-ocr-eng (tesseract-ocr-chi-sim for Chinese)",
    );
    expect(e.message).not.toContain("apt-get");
    expect(snap.text.match(/apt-get/g)).toHaveLength(1);
  });

  it("a capture that fails: the tree prints whole, with a note saying the pixels were not read and why", async () => {
    const quit = {
      role: "push button",
      title: "Quit",
      actions: ["click"],
      frame: { x: 20, y: 250, w: 60, h: 20 },
    };
    const { b, s } = sessions.open(player(lines(), [quit], { captureFails: true }));
    for (const ocr of ["auto", true] as const) {
      const snap = await s.snapshot({ app: "Player", screenshot: false, ocr });
      expect(snap.text.split("\n").slice(2, 4)).toEqual(["0 frame Player", "\t1 push button Quit"]);
      expect(snap.text).toMatch(
        /\(the text in its pixels was not read: fake: the window could not be captured\)/,
      );
      expect(snap.text).not.toMatch(/\(ocr\)/);
      expect(snap.timings.ocrRuns).toBe(1);
      // The line printed is still one to act on: the failed read left the records as walked.
      expect(snap.records[1]?.title).toBe("Quit");
    }
    expect(ocrRuns(b.fakeLog())).toBe(2);
  });
});

describe("acting on an ocr line", () => {
  it("a click goes to the line's centre after its text is read there again", async () => {
    const { b, s } = sessions.open(player());
    const snap = await look(s);
    const i = indexOf(snap.text, "Next");
    const result = await s.click(i);
    expect(result).toMatchObject({ channel: "synthetic", delivery: "delivered_unverified" });
    const log = b.fakeLog();
    const reread = log.findIndex((e) => /^ocr 42 regions=1 blanks=0 singleLine/.test(e));
    const click = log.findIndex((e) => e.startsWith("pointer click 320,127"));
    expect(reread, log.join("\n")).toBeGreaterThan(-1);
    expect(click, log.join("\n")).toBeGreaterThan(reread);
  });

  it("a line redrawn since the snapshot is STALE_REF: read again with the pointer there, nothing pressed", async () => {
    const { b, s } = sessions.open(player());
    const snap = await look(s);
    await b.fakeReplace(player(lines("Pause")));
    const e = await refused(s.click(indexOf(snap.text, "Next")), "STALE_REF");
    expect(e.message).toMatch(
      /read "Next" in snapshot .*its place reads "Pause"; the pointer was moved there and nothing else was sent/,
    );
    expect(b.fakeLog().filter((l) => l.startsWith("pointer"))).toEqual([
      "pointer move 320,127 button=1 count=1",
    ]);
  });

  it("a destructive line needs confirm; values, typing and named actions are refused with a hint", async () => {
    const { b, s } = sessions.open(player());
    const snap = await look(s);
    await refused(s.click(indexOf(snap.text, "Delete all")), "POLICY_DENIED");
    const play = indexOf(snap.text, "Play");
    const set = await refused(s.setValue(play, "x"), "ACTION_NOT_SUPPORTED");
    expect(set.hint).toMatch(/click it .* then type without a target/);
    await refused(s.typeText("x", { target: play }), "ACTION_NOT_SUPPORTED");
    await refused(s.performAction(play, "click"), "ACTION_NOT_SUPPORTED");
    expect(b.fakeLog().filter((l) => /^(pointer|type|keys|action)/.test(l))).toEqual([]);
  });
});
