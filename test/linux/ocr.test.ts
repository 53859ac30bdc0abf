/**
 * Issue 20 on a real desktop: text from pixels in snapshots, through the
 * library, the CLI and MCP. gtk3-widget-factory reads nothing in auto; a GTK
 * DrawingArea that draws its labels (test/apps/drawn-text.py) and an xterm
 * (no accessibility tree at all) are read, their lines printed as
 * `text (ocr)` with refs; clicking a drawn button's OCR line hits it 20 of
 * 20 times (the app titles its window with what was clicked); a label
 * redrawn between the snapshot and the click is STALE_REF and nothing is
 * sent. A window of Chinese labels reads them with ocrLanguages ["chi_sim"]
 * (and clicks one after reading it again in Chinese), and prints no Chinese
 * when Chinese is not asked for.
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../lib/session/session.js";
import { type App, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { runCli } from "../support/cli.js";
import { accuracy, CHINESE, PLAYER, startDrawnText, wordsOf } from "../support/drawn-text.js";
import { useDesktop } from "../support/linux.js";
import { useMcpClients } from "../support/mcp.js";
import { rejects } from "../support/rejects.js";

let desktop: Desktop;
let gtk: App;
let drawn: App;
let xterm: App;
let chinese: App;
let session: Session;
const connect = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
  drawn = await startDrawnText(desktop, { ...PLAYER, x: 700, y: 300 });
  xterm = await startApp(
    desktop,
    "xterm",
    [
      "-title",
      "axsnap ocr xterm",
      "-geometry",
      "60x8+20+700",
      "-e",
      "sh",
      "-c",
      `printf '%s\\n' ${XTERM_TEXT.map((l) => `'${l}'`).join(" ")}; sleep 600`,
    ],
    { name: "xterm", windowClass: "XTerm", timeoutMs: 20_000 },
  );
  chinese = await startDrawnText(desktop, CHINESE);
  session = createSession();
}, 90_000);

afterAll(async () => {
  await session?.close();
  await chinese?.stop();
  await xterm?.stop();
  await drawn?.stop();
  await gtk?.stop();
  await desktop?.stop();
});

/** What the xterm prints: its default font is the 6x13 bitmap "fixed". */
const XTERM_TEXT = ["axsnap reads this terminal", "the quick brown fox jumps over the lazy dog"];

const ocrLines = (text: string) =>
  text
    .split("\n")
    .filter((l) => /^\t*\d+ text \(ocr(?:, unsure)?\) /.test(l))
    .map((l) => l.replace(/^\t*\d+ text \(ocr(?:, unsure)?\) /, ""));

describe("ocr auto on real windows", () => {
  it("reads nothing of gtk3-widget-factory: its tree names its content", async () => {
    const snap = await session.snapshot({ app: gtk.pid, screenshot: false });
    expect(snap.timings.ocrRuns).toBe(0);
    expect(ocrLines(snap.text)).toEqual([]);
  });

  it("reads the drawing area's labels, nested under it, with word recall and precision ≥ 95%", async () => {
    const snap = await session.snapshot({ app: drawn.pid, screenshot: false });
    expect(snap.timings.ocrRuns).toBe(1);
    const expected = PLAYER.lines.flatMap((l) => wordsOf(l.text));
    const got = ocrLines(snap.text).flatMap(wordsOf);
    const a = accuracy(expected, got);
    expect(a.recall, snap.text).toBeGreaterThanOrEqual(0.95);
    expect(a.precision, snap.text).toBeGreaterThanOrEqual(0.95);
    // Under the drawing area, one tab deeper than it.
    expect(snap.text).toMatch(/^(\t*)\d+ drawing area\n\1\t\d+ text \(ocr(?:, unsure)?\) /m);
  });

  it("reads an xterm, which has no accessibility tree, with word recall and precision ≥ 95%", async () => {
    const snap = await session.snapshot({ app: xterm.pid, screenshot: false });
    expect(snap.text).toMatch(/^0 frame axsnap ocr xterm$/m);
    expect(ocrLines(snap.text).join(" ")).toMatch(/axsnap reads this terminal/);
    const a = accuracy(XTERM_TEXT.flatMap(wordsOf), ocrLines(snap.text).flatMap(wordsOf));
    expect(a.recall, snap.text).toBeGreaterThanOrEqual(0.95);
    expect(a.precision, snap.text).toBeGreaterThanOrEqual(0.95);
  });
});

describe("ocr languages", () => {
  const han = /\p{Script=Han}/u;
  // The recogniser may space the characters of a Chinese word apart.
  const joined = (text: string) => ocrLines(text).map((l) => l.replace(/\s+/g, ""));

  it("reads a Chinese label with ocrLanguages chi_sim (tesseract-ocr-chi-sim, installed by scripts/install-deps.sh)", async () => {
    const s = createSession();
    const snap = await s.snapshot({ app: chinese.pid, screenshot: false, ocrLanguages: ["chi_sim"] });
    expect(snap.timings.ocrRuns).toBe(1);
    expect(joined(snap.text), snap.text).toEqual(expect.arrayContaining(["你好", "设置"]));
    // Its line is clicked after being read again in the same language: the drawn button is hit.
    const index = snap.records.findIndex(
      (r) => r.ocr !== undefined && r.title?.replace(/\s+/g, "") === "设置",
    );
    expect(index, snap.text).toBeGreaterThan(0);
    expect((await s.click(index)).delivery).toBe("delivered_unverified");
    const title = (await createSession().snapshot({ app: chinese.pid, screenshot: false, ocr: false })).window
      .title;
    expect(title).toBe("clicked 设置 1");
    await s.close();
  });

  it("with English and Chinese asked, reads the Chinese labels too", async () => {
    const snap = await createSession().snapshot({
      app: chinese.pid,
      screenshot: false,
      ocrLanguages: ["eng", "chi_sim"],
    });
    expect(joined(snap.text), snap.text).toEqual(expect.arrayContaining(["你好", "设置"]));
  });

  it("the same window without Chinese asked prints no Chinese", async () => {
    const snap = await createSession().snapshot({ app: chinese.pid, screenshot: false });
    expect(snap.timings.ocrRuns).toBe(1);
    expect(ocrLines(snap.text).join(" "), snap.text).not.toMatch(han);
  });
});

describe("acting on ocr lines", () => {
  it("a click on a drawn button's line hits it 20 of 20 times", async () => {
    let hits = 0;
    for (let n = 1; n <= 20; n++) {
      const snap = await session.snapshot({ app: drawn.pid, screenshot: false });
      const index = snap.records.findIndex((r) => r.ocr !== undefined && r.title === "Next track");
      expect(index, snap.text).toBeGreaterThan(0);
      const result = await session.click(index);
      expect(result.delivery).toBe("delivered_unverified");
      const title = result.snapshot?.window.title ?? "";
      if (title === `clicked Next track ${n}`) hits++;
      else throw new Error(`click ${n}: the window is titled "${title}"`);
    }
    expect(hits).toBe(20);
  });

  it("a label redrawn between the snapshot and the click is STALE_REF, and nothing reaches the app", async () => {
    const snap = await session.snapshot({ app: drawn.pid, screenshot: false });
    const play = snap.records.find((r) => r.ocr !== undefined && r.title === "Play");
    expect(play, snap.text).toBeDefined();
    process.kill(drawn.pid, "SIGUSR1");
    // The redraw is the app's: wait until the pixels say so, with OCR off (the text stays the snapshot's).
    const end = Date.now() + 5000;
    for (;;) {
      const now = await createSession().snapshot({ app: drawn.pid, screenshot: false, ocr: true });
      if (ocrLines(now.text).includes("yalP")) break;
      if (Date.now() > end) throw new Error(`the label was never redrawn:\n${now.text}`);
    }
    const before = (await createSession().snapshot({ app: drawn.pid, screenshot: false, ocr: false })).window
      .title;
    const e = await rejects(session.click(play!.index));
    expect(e.code, e.message).toBe("STALE_REF");
    expect(e.message).toMatch(/the pointer was moved there and nothing else was sent/);
    const after = (await createSession().snapshot({ app: drawn.pid, screenshot: false, ocr: false })).window
      .title;
    expect(after).toBe(before);
    process.kill(drawn.pid, "SIGUSR1");
  });
});

describe("ocr through the doors", () => {
  it("CLI: --ocr off prints no ocr lines, the default prints them, --ocr bogus is a usage error", async () => {
    const on = await runCli(["snapshot", "--app", String(drawn.pid)], desktop.env);
    expect(on.code, on.stderr).toBe(0);
    expect(ocrLines(on.stdout).join(" ")).toMatch(/Next track/);
    const off = await runCli(["snapshot", "--app", String(drawn.pid), "--ocr", "off"], desktop.env);
    expect(ocrLines(off.stdout)).toEqual([]);
    // A ref to an OCR line, acted on from another process: found again by its text, clicked at its centre.
    const id = /^snapshot (s[a-z0-9]{7}) /.exec(on.stdout)![1];
    const index = /^\t*(\d+) text \(ocr(?:, unsure)?\) Pause$/m.exec(on.stdout)![1];
    const click = await runCli(["click", `@${id}:e${index}`], desktop.env);
    expect(click.code, click.stderr).toBe(0);
    expect(click.stdout).toMatch(/^0 frame clicked Pause \d+ \[changed: name\]$/m);
    const bad = await runCli(["snapshot", "--app", String(drawn.pid), "--ocr", "bogus"], desktop.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--ocr must be auto or on or off/);
  });

  it("MCP: get_app_state prints ocr lines by default and none with ocr: false", async () => {
    const client = await connect(createSession());
    const text = async (args: Record<string, unknown>) => {
      const r = (await client.callTool({ name: "get_app_state", arguments: args })) as CallToolResult;
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      return (r.content[0] as { text: string }).text;
    };
    expect(ocrLines(await text({ app: drawn.pid, screenshot: false })).join(" ")).toMatch(/Next track/);
    expect(ocrLines(await text({ app: drawn.pid, screenshot: false, ocr: false }))).toEqual([]);
  });
});
