/**
 * The Linux backend's fast paths print what the plain reads print. One window
 * is read three ways, each in a process of its own (the switches are read when
 * the backend starts): over the app's direct connection with the bulk cache
 * (the default), over the bus daemon (AXSNAP_P2P=0), and with every element
 * read live (AXSNAP_BULK=0: no children from the cache, no hidden children
 * left out, long lists cut by the walk's binary search instead). The texts must
 * be the same line for line: gtk3-widget-factory, a Chromium page of 5,000
 * elements and a 10,000-row GTK tree view scrolled to row 5000.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type App,
  chromium,
  type Desktop,
  fileUrl,
  gtkWidgetFactory,
  startApp,
} from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const run = promisify(execFile);
let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
});

/** The CLI's snapshot text of `pid`, without its first line (the snapshot id differs every time). */
async function text(pid: number, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(
    "npx",
    ["tsx", "lib/cli.ts", "snapshot", "--app", String(pid), "--deadline", "20000"],
    {
      env: { ...process.env, ...desktop.env, ...env },
      timeout: 60_000,
    },
  );
  return stdout.split("\n").slice(1).join("\n");
}

/** Polls the default read until `ready` holds (a page still building changes under the reads). */
async function settled(pid: number, ready: (t: string) => boolean): Promise<string> {
  const until = Date.now() + 40_000;
  let last = "";
  while (Date.now() < until) {
    last = await text(pid);
    if (ready(last)) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the window never settled; last read:\n${last}`);
}

/**
 * The lines of a Chromium window's page: its document line and everything under it. The browser's
 * own chrome changes between reads by itself (a tab's name gains "- Memory usage - 47.0 MB").
 */
function page(t: string): string {
  const lines = t.split("\n");
  const start = lines.findIndex((l) => /^\t*\d+ document web\b/.test(l));
  if (start < 0) return t;
  const depth = (l: string) => l.length - l.replace(/^\t+/, "").length;
  let end = start + 1;
  while (end < lines.length && lines[end]!.trim() !== "" && depth(lines[end]!) > depth(lines[start]!)) end++;
  return lines.slice(start, end).join("\n");
}

async function samePrinted(
  app: App,
  ready: (t: string) => boolean,
  part: (t: string) => string = (t) => t,
): Promise<void> {
  try {
    const fast = part(await settled(app.pid, ready));
    expect(part(await text(app.pid, { AXSNAP_P2P: "0" }))).toBe(fast);
    expect(part(await text(app.pid, { AXSNAP_BULK: "0" }))).toBe(fast);
  } finally {
    await app.stop();
  }
}

describe("the direct connection, the bus and live reads print the same window", () => {
  it("gtk3-widget-factory", async () => {
    await samePrinted(await gtkWidgetFactory(desktop), (t) => /radio button Page 1/.test(t));
  }, 120_000);

  it("a Chromium page of 5,000 elements (off-screen items: left out from the cache, or cut by the search)", async () => {
    const web = await chromium(desktop, `${fileUrl("test/pages/huge.html")}?n=5000`, {
      windowName: "axsnap huge",
    });
    await samePrinted(
      web,
      (t) => /push button Save/.test(t) && /\(showing 0-\d+ of 1109 items\)/.test(t),
      page,
    );
  }, 120_000);

  it("a GTK tree view of 10,000 rows scrolled to row 5000", async () => {
    const list = await startApp(
      desktop,
      "/usr/bin/python3",
      ["test/apps/big-list.py", "--rows", "10000", "--select", "5000"],
      { name: "axsnap-big-list" },
    );
    await samePrinted(list, (t) => /\(showing 5000-\d+ of 10000 items\)/.test(t));
  }, 120_000);
});
