/**
 * Issue 19, "Costs": the walk the CLI starts while the library loads
 * (lib/observe/desktop-backend.ts). `snapshot()` may show it only when it asked for
 * exactly that walk, of the desktop backend, and the walk ended a moment ago;
 * otherwise it walks again and the early walk's handles are let go. On a real
 * desktop: the early walk is made to end, then the app changes (a radio
 * button is clicked through a backend of the test's own), so the snapshot
 * shows which walk it printed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RawNode } from "../../lib/model/model.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { type SnapshotOptions, snapshot } from "../../lib/observe/desktop.js";
import { desktopBackend, startEarlyWalk } from "../../lib/observe/desktop-backend.js";
import { walkRequestOrUndefined } from "../../lib/observe/observe-request.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

let desktop: Desktop;
let app: App;
let shared: NativeBackend;
let other: NativeBackend;

beforeAll(async () => {
  desktop = await useDesktop();
  app = await gtkWidgetFactory(desktop);
  shared = await desktopBackend();
  other = new (loadNative().NativeBackend)("linux");
  await other.connect(5000);
}, 60_000);

afterAll(async () => {
  await other?.close();
  await app?.stop();
  await desktop?.stop();
});

const options: SnapshotOptions = { app: "gtk3-widget-factory", screenshot: false };
const page2 = /^\t*\d+ radio button Page 2, Value: (on|off)$/m;

const request = {
  app: "gtk3-widget-factory",
  maxNodes: 2400,
  maxDepth: 64,
  deadlineMs: 5000,
  screenshot: false,
};

/**
 * Clicks the page radio `name` and waits until the app shows it checked: all
 * through the test's own backend's raw calls, so no library observation lets
 * the early walk go before the snapshot under test asks for it.
 */
async function choosePage(name: string): Promise<void> {
  const radio = async () => {
    const walked = await other.snapshot(request);
    const stack: RawNode[] = [walked.raw.root];
    let found: RawNode | undefined;
    while (stack.length > 0 && !found) {
      const node = stack.pop()!;
      if (node.role === "radio button" && node.title === name) found = node;
      stack.push(...(node.children ?? []));
    }
    return { found, release: () => other.release(walked.handles) };
  };
  const first = await radio();
  expect(first.found?.handle, `no radio button ${name}`).toBeDefined();
  await other.doAction(first.found!.handle!, "Click", 5000);
  await first.release();
  const end = Date.now() + 5000;
  for (;;) {
    const now = await radio();
    await now.release();
    if (now.found?.states?.checked === true) return;
    if (Date.now() > end) throw new Error(`${name} never showed checked`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The shared backend keeps an app's bulk read for 300 ms (docs/linux.md, Reads, live reads and X11): a change made
 * through another client shows once that has passed, whichever walk observes it.
 */
const pastBulkAge = () => new Promise((r) => setTimeout(r, 350));

/** Starts the early walk of `walkOptions` and waits until it has ended (it holds its handles then). */
async function endedEarlyWalk(walkOptions: SnapshotOptions): Promise<void> {
  const before = (await shared.handleStats()).held;
  startEarlyWalk(walkRequestOrUndefined(walkOptions)!, 5000);
  const end = Date.now() + 5000;
  while ((await shared.handleStats()).held <= before) {
    if (Date.now() > end) throw new Error("the early walk never ended");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the early walk", () => {
  it("is what snapshot() prints when it asks for the same walk a moment after", async () => {
    await choosePage("Page 1");
    await endedEarlyWalk(options);
    await choosePage("Page 2");
    const snap = await snapshot(options);
    try {
      // The walk from before the click: the one the snapshot call took.
      expect(page2.exec(snap.text)?.[1], snap.text).toBe("off");
    } finally {
      await snap.release();
    }
  });

  it("is let go when the snapshot asks for another walk, and its handles are released", async () => {
    await choosePage("Page 1");
    const baseline = (await shared.handleStats()).held;
    await endedEarlyWalk({ ...options, maxDepth: 30 });
    await choosePage("Page 2");
    await pastBulkAge();
    const snap = await snapshot(options);
    expect(page2.exec(snap.text)?.[1], snap.text).toBe("on");
    await snap.release();
    const end = Date.now() + 5000;
    while ((await shared.handleStats()).held !== baseline) {
      if (Date.now() > end)
        throw new Error(`handles held: ${(await shared.handleStats()).held}, not ${baseline}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it("is let go when it ended more than a second before the snapshot asks", async () => {
    await choosePage("Page 1");
    await endedEarlyWalk(options);
    await choosePage("Page 2");
    await new Promise((r) => setTimeout(r, 1100));
    const snap = await snapshot(options);
    try {
      expect(page2.exec(snap.text)?.[1], snap.text).toBe("on");
    } finally {
      await snap.release();
    }
  });

  it("is let go by a snapshot through another backend, which walks on its own", async () => {
    await choosePage("Page 1");
    await endedEarlyWalk(options);
    await choosePage("Page 2");
    // An observation through another backend, after the app changed.
    const mine = await snapshot(options, other);
    expect(page2.exec(mine.text)?.[1]).toBe("on");
    await mine.release();
    await pastBulkAge();
    // Taken by nobody since: the shared backend's next snapshot walks again.
    const snap = await snapshot(options);
    expect(page2.exec(snap.text)?.[1]).toBe("on");
    await snap.release();
  });
});
