/**
 * Issue 18 ("Smaller"), on a real desktop: handles nothing releases. A field
 * named by a label the walk never reached itself (the label lies below the
 * snapshot's maxDepth) carries the label's handle in `labelledBy`; the
 * snapshot that printed it must hold that handle and let it go on release,
 * or each label an app re-creates stays in the backend's table until the
 * bus reconnects. The app (test/apps/relabel-app.py) makes a new label on
 * each SIGUSR1; the test waits for the snapshot to show it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Snapshot } from "../../lib/index.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { snapshot } from "../../lib/observe/desktop.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 240_000;
let desktop: Desktop;
let app: App;
let backend: NativeBackend;

beforeAll(async () => {
  desktop = await useDesktop();
  app = await startApp(desktop, "/usr/bin/python3", ["test/apps/relabel-app.py"], {
    name: "axsnap-relabel-test",
    windowName: "axsnap relabel",
    timeoutMs: 20_000,
  });
  backend = new (loadNative().NativeBackend)("linux");
  await backend.connect(5000);
}, 60_000);

afterAll(async () => {
  await backend?.close();
  await app?.stop();
  await desktop?.stop();
});

/** The window's snapshot once its entry is named "Field <n>", released by the caller. */
async function snapshotNamed(n: number): Promise<Snapshot> {
  const end = Date.now() + 10_000;
  const field = new RegExp(`^\\s*\\d+ text \\(settable, string\\) Field ${n}$`, "m");
  for (;;) {
    const snap = await snapshot({ app: app.pid, screenshot: false, maxDepth: 3, deadlineMs: 5000 }, backend);
    if (field.test(snap.text)) return snap;
    await snap.release();
    if (Date.now() > end)
      throw new Error(`the entry never showed "Field ${n}"; last snapshot:\n${snap.text}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("labelledBy handles", () => {
  it(
    "a label outside the walked subtree is held by the snapshot that printed it, and released with it",
    async () => {
      const first = await snapshotNamed(1);
      // The label was not walked: it is not a line of the snapshot, only the field's name.
      expect(first.text).not.toMatch(/^\s*\d+ label Field 1$/m);
      const field = first.records.find((r) => r.title === "Field 1");
      expect(field?.role, first.text).toBe("text");
      await first.release();

      const tables = new Map<number, number>();
      for (let n = 2; n <= 1001; n++) {
        process.kill(app.pid, "SIGUSR1");
        const snap = await snapshotNamed(n);
        await snap.release();
        const made = n - 1;
        if (made === 10 || made === 100 || made === 1000) {
          const stats = await backend.handleStats();
          // Every snapshot was released: the ledger holds nothing, whatever the table does.
          expect(stats.held).toBe(0);
          tables.set(made, stats.table!);
        }
      }
      console.log(
        `handle table after 10 / 100 / 1000 label re-creations: ${[...tables.values()].join(" / ")}`,
      );
      // Flat: a handle per re-created label would add 990 between the 10th and the 1000th.
      expect(
        tables.get(1000)! - tables.get(10)!,
        `table sizes ${JSON.stringify([...tables])}`,
      ).toBeLessThanOrEqual(2);
    },
    TIMEOUT,
  );
});
