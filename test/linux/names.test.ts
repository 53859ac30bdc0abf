/**
 * Issue 13, item 1, on a real app under the headless desktop: a GTK form of
 * the tests' own (test/apps/form-app.py) whose fields are named only by the
 * labels beside them. They print with their labels' names (AT-SPI
 * LABELLED_BY), a described field with its hint (DESCRIBED_BY), and the
 * labels that only name a field do not print again.
 * (zenity --forms would be the natural app, but it does not tie its labels
 * to its fields: its entries have no relations to read.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { loadNative } from "../../lib/native.js";
import { type App, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let session: Session;
let app: App;

beforeAll(async () => {
  desktop = await useDesktop();
  app = await startApp(desktop, "/usr/bin/python3", ["test/apps/form-app.py"], {
    name: "axsnap-form-test",
    windowName: "axsnap form",
    timeoutMs: 20_000,
  });
  session = createSession({ deadlineMs: 5000 });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await app?.stop();
  await desktop?.stop();
});

async function until(style: "tree" | "compact", test: (snap: Snapshot) => boolean): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await session.snapshot({ app: app.pid, screenshot: false, deadlineMs: 8000, style });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

describe("names from labels (AT-SPI relations)", () => {
  it(
    "fields print with their labels' names and hints, the labels that only name them not again",
    async () => {
      const snap = await until("tree", (s) => /password text/.test(s.text) && /spin button/.test(s.text));
      const lines = snap.text.split("\n").map((l) => l.trim());
      const has = (re: RegExp) => expect(lines, snap.text).toContainEqual(expect.stringMatching(re));
      has(/^\d+ text \(settable, string\) User name$/);
      has(/^\d+ password text \(settable, string\) Password$/);
      has(/^\d+ spin button \(settable, float\) Copies, Description: How many to print, Value: 1$/);
      expect(
        lines.filter((l) => /^\d+ label (User name|Password|Copies)$/.test(l)),
        snap.text,
      ).toEqual([]);
      // The hint is not a name: it still prints.
      has(/^\d+ label How many to print$/);
      // The name is the record's too: an agent acts on the field by it.
      const user = snap.records.find((r) => r.roleText === "text");
      expect(user?.title).toBe("User name");

      const compact = await until("compact", (s) => /password/.test(s.text));
      expect(compact.text).toMatch(/^\s*\d+: textbox "User name"$/m);
      expect(compact.text).toMatch(/^\s*\d+: password "Password"$/m);
    },
    TIMEOUT,
  );
});

describe("ids (AccessibleId, read per element only from apps that give them)", () => {
  it(
    "an app that gives ids has them on its records, snapshot after snapshot",
    async () => {
      for (let i = 0; i < 3; i++) {
        const snap = await until("tree", (s) => /push button Sign in/.test(s.text));
        const button = snap.records.find((r) => r.title === "Sign in");
        expect(button?.identifier, snap.text).toBe("sign-in");
        expect(button?.identity.identifier).toBe("sign-in");
      }
    },
    TIMEOUT,
  );

  it(
    "a backend's first walk of the app (its reads started during window choice) finds what its second finds",
    async () => {
      await until("tree", (s) => /push button Sign in/.test(s.text));
      const native = loadNative();
      // A backend of its own: no direct connection, bulk snapshot or id probe yet, as in a CLI process.
      const backend = new native.NativeBackend("linux");
      await backend.connect(5000);
      const request = { app: app.pid, maxNodes: 2400, maxDepth: 64, deadlineMs: 8000, screenshot: false };
      const first = await backend.snapshot(request);
      const second = await backend.snapshot(request);
      await backend.close();
      const reads = (r: typeof first) => JSON.stringify(r.raw.walk.reads);
      expect(first.raw.walk.reads?.find((r) => r.kind === "GetItems")?.calls, reads(first)).toBe(1);
      const text = JSON.stringify(first.raw.root);
      expect(text).toContain('"identifier":"sign-in"');
      expect(text).toBe(JSON.stringify(second.raw.root));
    },
    TIMEOUT,
  );

  it(
    "an app that gives none is not asked for them element by element once it has been probed",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        let snap: Snapshot | undefined;
        for (let i = 0; i < 4; i++) {
          snap = await session.snapshot({ app: gtk.pid, screenshot: false, deadlineMs: 8000 });
        }
        const getAll = snap?.timings.reads?.find((r) => r.kind === "GetAll")?.calls ?? 0;
        // Only the elements the bulk cache does not hold (a tree view's cells) are read whole.
        expect(getAll, JSON.stringify(snap?.timings.reads)).toBeLessThan((snap?.nodesObserved ?? 0) / 3);
        expect(snap?.records.some((r) => r.identifier !== undefined)).toBe(false);
      } finally {
        await gtk.stop();
      }
    },
    TIMEOUT,
  );
});
