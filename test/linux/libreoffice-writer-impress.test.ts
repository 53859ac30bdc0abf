/**
 * Issue 32, item 7: LibreOffice Writer and Impress (7.4, GTK3 VCL plugin), as
 * an agent does it, deciding each step from what the door printed. Writer's
 * document manages its descendants (it lists only the paragraphs on screen):
 * the search for where keys go must still look inside it. Impress opens its
 * template chooser first; the agent closes it, clicks the slide's title
 * placeholder and types into it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import type { Desktop } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { type Office, officeDir, processUse, startOffice } from "../support/office.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 240_000;
let desktop: Desktop;
let session: Session;
let dir: string;

beforeAll(async () => {
  desktop = await useDesktop();
  dir = officeDir();
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

/** Snapshots `pid` until `test` holds. */
async function until(pid: number, test: (s: Snapshot) => boolean, what: string): Promise<Snapshot> {
  const end = Date.now() + 30_000;
  for (;;) {
    const s = await session.snapshot({ app: pid, screenshot: false });
    if (test(s)) return s;
    if (Date.now() > end) throw new Error(`${what} never showed; last snapshot:\n${s.text}`);
    await sleep(300);
  }
}

const focusedLine = (s: Snapshot) => {
  const index = /The focused UI element is (\d+) /.exec(s.text)?.[1];
  return index === undefined ? undefined : s.text.split("\n").find((l) => l.trim().startsWith(`${index} `));
};

describe("Writer: a new document typed into and read back", () => {
  let writer: Office;
  beforeAll(async () => {
    writer = await startOffice(desktop, dir, "writer", "Untitled 1");
  }, TIMEOUT);
  afterAll(async () => {
    await writer?.app.stop();
  });

  it(
    "types where the focus is (the document's paragraph) and reads the text back",
    async () => {
      const t = performance.now();
      const snap = await until(
        writer.pid,
        (s) => s.complete && /document text\b/.test(s.text),
        "the document",
      );
      console.log(`Writer snapshot: ${(performance.now() - t).toFixed(0)} ms`);
      expect(snap.complete, snap.text).toBe(true);
      // The agent sees the caret is in the document's paragraph, and types.
      expect(focusedLine(snap)?.trim(), snap.text).toMatch(/^\d+ paragraph\b/);
      const typed = await session.typeText("Hello from axsnap", { app: writer.pid });
      expect(typed.delivery, JSON.stringify(typed)).toMatch(/^delivered/);
      const after = await until(
        writer.pid,
        (s) => /paragraph\b.*Hello from axsnap/.test(s.text),
        "the typed text",
      );
      expect(after.text).toMatch(/^\t*\d+ paragraph \(settable, string\) Value: Hello from axsnap$/m);
      const idle = processUse(writer.pid);
      await sleep(3000);
      expect(processUse(writer.pid).ticks - idle.ticks).toBeLessThan(50);
    },
    TIMEOUT,
  );
});

describe("Impress: the template chooser closed, the title placeholder typed into", () => {
  let impress: Office;
  beforeAll(async () => {
    impress = await startOffice(desktop, dir, "impress", "Untitled 1");
  }, TIMEOUT);
  afterAll(async () => {
    await impress?.app.stop();
  });

  it(
    "closes the template chooser, clicks the title placeholder, types a title and reads it back",
    async () => {
      // A fresh profile shows the template chooser over the new presentation.
      const chooser = await until(
        impress.pid,
        (s) => /Select a Template|PresentationTitle/.test(s.text),
        "a window",
      );
      if (/Select a Template/.test(chooser.text)) {
        const close = await session.find(impress.pid, { role: "push button", name: "Close", exact: true });
        expect(close.matches.length, close.text).toBe(1);
        const closed = await session.click(close.matches[0]!.ref);
        expect(closed.delivery, JSON.stringify(closed)).toMatch(/^delivered/);
      }
      const t = performance.now();
      const slide = await until(
        impress.pid,
        (s) => s.complete && /PresentationTitle/.test(s.text),
        "the slide",
      );
      console.log(`Impress snapshot: ${(performance.now() - t).toFixed(0)} ms`);
      expect(slide.complete, slide.text).toBe(true);
      expect(slide.text).toMatch(/paragraph \(settable, string\) Value: Click to add Title/);
      const title = await session.find(impress.pid, {
        role: "panel",
        name: "PresentationTitle",
        exact: true,
      });
      expect(title.matches.length, title.text).toBe(1);
      const clicked = await session.click(title.matches[0]!.ref);
      expect(clicked.delivery, JSON.stringify(clicked)).toMatch(/^delivered/);
      const typed = await session.typeText("Quarterly results", { app: impress.pid });
      expect(typed.delivery, JSON.stringify(typed)).toMatch(/^delivered/);
      await session.pressKey("Escape", { app: impress.pid });
      const after = await until(impress.pid, (s) => /Value: Quarterly results/.test(s.text), "the title");
      expect(after.text).toMatch(
        /PresentationTitle\n\t*\d+ paragraph \(settable, string\) Value: Quarterly results/,
      );
    },
    TIMEOUT,
  );
});
