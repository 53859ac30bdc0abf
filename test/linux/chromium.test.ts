/**
 * The Linux backend against Chromium's web content: a local form page of the
 * test's own, and a page of 5,000 elements that must stop at the node limit.
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

/** Web content arrives a moment after the window: poll, bounded, until it shows. */
async function waitFor(
  app: string,
  test: (s: Snapshot) => boolean,
  options: { maxNodes?: number } = {},
): Promise<Snapshot> {
  const until = Date.now() + 20_000;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    await last?.release();
    last = await snapshot({ app, screenshot: false, deadlineMs: 8000, ...options });
    if (test(last)) return last;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`web content never appeared; last snapshot:\n${last?.text}`);
}

describe("Chromium web content", () => {
  it("shows the form and never the password", async () => {
    const app = await chromium(desktop, fileUrl("test/pages/form.html"), { windowName: "axsnap form" });
    const snap = await waitFor("chromium", (s) => s.text.includes("Submit"));
    try {
      expect(snap.text).toMatch(/\d+ (document web|HTML content)/);
      expect(snap.text).toMatch(/\d+ check box Subscribe/);
      expect(snap.text).toMatch(/\d+ slider .*Volume|\d+ slider/);
      expect(snap.text).toMatch(/\d+ push button Submit/);
      expect(snap.text).toContain("Ada");
      expect(snap.text).toContain("•••");
      // The password's value appears nowhere: not in the text, not in any record.
      expect(snap.text).not.toContain("hunter2");
      expect(JSON.stringify(snap.records)).not.toContain("hunter2");
      const secure = snap.records.find((r) => r.secure);
      expect(secure).toBeDefined();
      // The long list is cut to what is visible, and says so.
      expect(snap.text).toMatch(/\(showing \d+-\d+ of \d+ items\)/);
    } finally {
      await snap.release();
      await app.stop();
    }
  }, 60_000);

  it("reads only the buttons of a 5,000-button page that are on screen, and still stops at its node limit", async () => {
    const app = await chromium(desktop, fileUrl("test/pages/big.html"), { windowName: "axsnap big" });
    try {
      // The loaded page: its heading and first button print (while it builds, reads can fail: "errors").
      const snap = await waitFor(
        "chromium",
        (s) => /push button Button 1\n/.test(s.text) && !s.cutBy.includes("errors"),
      );
      try {
        // Off-screen buttons are left out while reading (not SHOWING): the walk fits its budget.
        expect(snap.complete).toBe(true);
        expect(snap.nodesObserved).toBeLessThan(1500);
        expect(snap.text).toMatch(/heading 5000 buttons/);
        expect(snap.text).not.toMatch(/push button Button 5000\b/);
      } finally {
        await snap.release();
      }
      const small = await snapshot({ app: "chromium", screenshot: false, maxNodes: 100, deadlineMs: 20_000 });
      try {
        expect(small.complete).toBe(false);
        expect(small.cutBy).toContain("node_limit");
        expect(small.records.length).toBeLessThanOrEqual(100);
        expect(small.text.split("\n").at(-1)).toMatch(/^\(Snapshot incomplete: /);
      } finally {
        await small.release();
      }
    } finally {
      await app.stop();
    }
  }, 60_000);
});
