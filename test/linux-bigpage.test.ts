/**
 * Big Chromium pages (issue 13): test/pages/huge.html?n=N has about N accessible elements (a heading,
 * a search form, a list of list items with a link or button and some text each, a fixed footer with
 * Save). On each, a snapshot returns, prints the top of the page, the first list items on screen and
 * the footer, keeps its node limit and its deadline. The 5,000 page's default snapshot is complete:
 * the list items off screen (Chromium marks them not SHOWING) are cut while reading, so the node limit
 * never has to cut the walk.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snapshot } from "../lib/desktop.js";
import type { Snapshot } from "../lib/index.js";
import { type App, chromium, type Desktop, fileUrl } from "../scripts/desktop.mjs";
import { useDesktop } from "./support/linux.js";

const run = promisify(execFile);
let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
});

/** The page's own count (huge.html): 11 fixed elements, 4 per row plus a link's static text every other row. */
function pageElements(n: number): number {
  const rows = Math.max(1, Math.round((n - 11) / 4.5));
  return 11 + 4 * rows + Math.floor(rows / 2);
}

/**
 * Reads the page with pyatspi (Debian's python3-pyatspi), independently of axsnap: waits until the
 * document titled TITLE has its list of ROWS items, then counts the page's elements: every element
 * outside the list's items, plus, per item, the size of the first item of its kind (odd rows: button,
 * even rows: link). Prints one JSON line.
 */
const PAGE_PROBE = `
import json, sys, time
import pyatspi
rows, title, limit = int(sys.argv[1]), sys.argv[2], time.monotonic() + float(sys.argv[3])
def size(acc):
    n = 1
    for i in range(acc.childCount):
        c = acc.getChildAtIndex(i)
        if c is not None:
            n += size(c)
    return n
def find_doc():
    desktop = pyatspi.Registry.getDesktop(0)
    for a in range(desktop.childCount):
        app = desktop.getChildAtIndex(a)
        if app is None or app.name != "Chromium":
            continue
        queue = [(app, 0)]
        while queue:
            acc, depth = queue.pop(0)
            if acc.getRoleName() == "document web" and acc.name == title:
                return acc
            if depth < 12:
                queue.extend((acc.getChildAtIndex(i), depth + 1) for i in range(acc.childCount))
                queue = [q for q in queue if q[0] is not None]
    return None
last = "no document"
while True:
    try:
        doc = find_doc()
        lists = [c for c in (doc.getChildAtIndex(i) for i in range(doc.childCount)) if c is not None and c.getRoleName() == "list"] if doc else []
        if lists and lists[0].childCount == rows:
            lst = lists[0]
            count = 1
            for i in range(doc.childCount):
                c = doc.getChildAtIndex(i)
                count += 1 if c.getRoleName() == "list" else size(c)
            odd, even = size(lst.getChildAtIndex(0)), size(lst.getChildAtIndex(1))
            count += (rows - rows // 2) * odd + (rows // 2) * even
            print(json.dumps({"rows": lst.childCount, "elements": count, "odd": odd, "even": even}))
            sys.exit(0)
        last = "list has %d of %d items" % (lists[0].childCount, rows) if lists else ("document without its list" if doc else "no document")
    except Exception as e:
        last = repr(e)
    if time.monotonic() > limit:
        sys.stderr.write("page never built: " + last + "\\n")
        sys.exit(1)
    time.sleep(0.5)
`;

/** Waits, bounded, until Chromium has built the page's accessibility tree; returns its element count. */
async function waitForPage(n: number): Promise<{ rows: number; elements: number }> {
  const rows = Math.max(1, Math.round((n - 11) / 4.5));
  const { stdout } = await run(
    "/usr/bin/python3",
    ["-c", PAGE_PROBE, String(rows), `axsnap huge ${n}`, "90"],
    {
      env: { ...process.env, ...desktop.env },
      timeout: 120_000,
    },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as { rows: number; elements: number };
}

async function take(app: App, options: { maxNodes?: number; deadlineMs?: number } = {}): Promise<Snapshot> {
  return snapshot({ app: app.pid, screenshot: false, deadlineMs: 20_000, ...options });
}

/** The numbered line of a printed element: `<index> <role> <name>` at the start of its text (tree style indents). */
function printed(text: string, role: string, name: string): boolean {
  const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  // A link prints its name as a Markdown link: `[Item 2](file:…#item-2)`.
  return new RegExp(`^\\s*\\d+ ${quote(role)} \\[?${quote(name)}(?![\\w])`, "m").test(text);
}

for (const n of [5000, 50_000]) {
  describe(`huge.html?n=${n}`, () => {
    let app: App;

    beforeAll(async () => {
      app = await chromium(desktop, `${fileUrl("test/pages/huge.html")}?n=${n}`, {
        windowName: `axsnap huge ${n}`,
      });
      await waitForPage(n);
    }, 150_000);

    afterAll(async () => {
      await app?.stop();
    });

    it(`has about ${n} accessible elements in the page`, async () => {
      const page = await waitForPage(n);
      expect(page.elements).toBe(pageElements(n));
      expect(Math.abs(page.elements - n)).toBeLessThanOrEqual(n * 0.01);
    }, 120_000);

    it("a default snapshot returns and prints the top, the first list items on screen and the footer", async () => {
      const snap = await take(app);
      try {
        const text = snap.text;
        expect(printed(text, "heading", "Huge list"), text).toBe(true);
        expect(text).toMatch(/^\s*\d+ (entry|search|text field)\b.*Search items/m);
        expect(printed(text, "push button", "Go"), text).toBe(true);
        // The first rows: odd rows hold a button, even rows a link.
        for (let i = 1; i <= 10; i++)
          expect(printed(text, i % 2 ? "push button" : "link", `Item ${i}`), `Item ${i}\n${text}`).toBe(true);
        // Rows far off screen are not printed.
        expect(text).not.toMatch(/\bItem 500\b/);
        // The fixed footer, after the list in the page, is on screen.
        expect(printed(text, "push button", "Save"), text).toBe(true);
        expect(snap.records.length).toBeLessThanOrEqual(1200);
      } finally {
        await snap.release();
      }
    }, 60_000);

    it("keeps the node limit, and says when it cut", async () => {
      for (const maxNodes of [1000, 200]) {
        const snap = await take(app, { maxNodes });
        try {
          expect(snap.records.length).toBeLessThanOrEqual(maxNodes);
          if (maxNodes === 200) {
            expect(snap.complete).toBe(false);
            expect(snap.cutBy.some((c) => c === "node_limit" || c === "render_node_limit")).toBe(true);
            expect(snap.text.split("\n").at(-1)).toMatch(/^\(Snapshot incomplete: /);
          }
        } finally {
          await snap.release();
        }
      }
    }, 90_000);

    if (n === 5000) {
      it("the default snapshot is complete: off-screen list items are cut while reading, not by the node limit", async () => {
        const snap = await take(app);
        try {
          expect(snap.cutBy, snap.text.split("\n").at(-1)).toEqual([]);
          expect(snap.complete).toBe(true);
        } finally {
          await snap.release();
        }
      }, 60_000);
    }

    if (n === 50_000) {
      it("keeps a short deadline: returns soon after it, marked incomplete by the deadline", async () => {
        const t0 = performance.now();
        const snap = await take(app, { deadlineMs: 300 });
        const elapsed = performance.now() - t0;
        try {
          // Bounded, not fast: deadline + a generous margin.
          expect(elapsed).toBeLessThan(3000);
          expect(snap.complete).toBe(false);
          expect(snap.cutBy).toContain("deadline");
        } finally {
          await snap.release();
        }
      }, 60_000);
    }
  });
}
