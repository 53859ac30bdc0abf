/**
 * Issue 18 ("Smaller"), on a real desktop: a list whose first child is not a
 * row. Chromium's table of test/pages/headed.html has its caption before its
 * 200 rows, and is scrolled to row 100, so the caption is off screen and left
 * out of the read; "(showing A-B of M items)" must count rows, not children.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../lib/index.js";
import { snapshot } from "../../lib/observe/desktop.js";
import { chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
});

/** Web content arrives a moment after the window: poll, bounded, until the rows show. */
async function withRows(): Promise<Snapshot> {
  const until = Date.now() + 20_000;
  for (;;) {
    const s = await snapshot({ app: "chromium", screenshot: false, deadlineMs: 8000 });
    if (/table row Order \d+$/m.test(s.text) && s.complete) return s;
    await s.release();
    if (Date.now() > until) throw new Error(`the table's rows never showed; last snapshot:\n${s.text}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe("a table with a caption before its rows", () => {
  it("says which of its 200 rows show by their row numbers, the caption not counted", async () => {
    const app = await chromium(desktop, fileUrl("test/pages/headed.html"), {
      windowName: "axsnap headed ready",
    });
    try {
      const s = await withRows();
      try {
        const printed = [...s.text.matchAll(/table row Order (\d+)$/gm)].map((m) => Number(m[1]));
        const suffix = /table Open orders \(showing (\d+)-(\d+) of (\d+) items\)$/m.exec(s.text);
        expect(suffix, s.text).not.toBeNull();
        // Rows are numbered from 0, as the page names them: the first printed row is row A, the last row B.
        expect([Number(suffix![1]), Number(suffix![2]), Number(suffix![3])], s.text).toEqual([
          printed[0],
          printed[printed.length - 1],
          200,
        ]);
        expect(printed[0], s.text).toBeGreaterThan(90);
      } finally {
        await s.release();
      }
    } finally {
      await app.stop();
    }
  }, 90_000);
});
