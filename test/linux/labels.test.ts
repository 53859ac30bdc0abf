/**
 * Issue 19, section 7, on real apps under the headless desktop: fields whose
 * app ties no label to them (no LABELLED_BY) take the label beside them as
 * an inferred name. zenity's forms dialog is the app the issue names; the
 * tests' own layout form (test/apps/layout-form.py) adds a label above its
 * field, one far from its field, a heading, a spin button, a slider and two
 * fields sharing a row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let session: Session;

beforeAll(async () => {
  desktop = await useDesktop();
  session = createSession({ deadlineMs: 5000 });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
});

async function until(
  app: App,
  style: "tree" | "compact",
  test: (snap: Snapshot) => boolean,
): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await session.snapshot({ app: app.pid, screenshot: false, deadlineMs: 8000, style });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

const trimmed = (snap: Snapshot) => snap.text.split("\n").map((l) => l.trim());

describe("zenity --forms (no relations between its labels and entries)", () => {
  let zenity: App;
  beforeAll(async () => {
    zenity = await startApp(
      desktop,
      "/usr/bin/zenity",
      [
        "--forms",
        "--title=Sign in",
        "--text=Sign in",
        "--add-entry",
        "User name",
        "--add-password",
        "Password",
      ],
      { name: "zenity", windowName: "Sign in", timeoutMs: 20_000 },
    );
  }, TIMEOUT);
  afterAll(async () => {
    await zenity?.stop();
  });

  it(
    "its entries print with the labels left of them, marked inferred, and the labels keep their lines",
    async () => {
      const snap = await until(
        zenity,
        "tree",
        (s) => /password text/.test(s.text) && /label User name/.test(s.text),
      );
      const lines = trimmed(snap);
      const has = (re: RegExp) => expect(lines, snap.text).toContainEqual(expect.stringMatching(re));
      has(/^\d+ text \(settable, string\) Label: User name$/);
      has(/^\d+ password text \(settable, string\) Label: Password$/);
      has(/^\d+ label User name$/);
      has(/^\d+ label Password$/);
      // The dialog's own text is above and left of the entries, not beside one: it names none.
      has(/^\d+ label Sign in$/);
      const user = snap.records.find((r) => r.roleText === "text")!;
      expect(user.title).toBe("User name");
      expect(user.nameSource).toBe("inferred");
      // zenity's entry has no name of its own, so its identity has none either.
      expect(user.identity.name).toBeUndefined();

      const compact = await until(zenity, "compact", (s) => /password/.test(s.text));
      expect(compact.text).toMatch(/^\s*\d+: textbox label="User name"/m);
    },
    TIMEOUT,
  );

  it(
    "an action on the field by its index reaches the field the label is beside",
    async () => {
      const snap = await until(zenity, "tree", (s) => /Label: User name/.test(s.text));
      const user = snap.records.find((r) => r.title === "User name" && r.nameSource === "inferred")!;
      const result = await session.setValue(`@${snap.id}:e${user.index}`, "ada", { snapshot: true });
      const after = trimmed(result.snapshot!);
      expect(after, result.snapshot!.text).toContainEqual(
        expect.stringMatching(/^\d+ text \(settable, string\) Label: User name, Value: ada$/),
      );
    },
    TIMEOUT,
  );
});

describe("a GTK form of the tests' own, laid out without relations", () => {
  let form: App;
  beforeAll(async () => {
    form = await startApp(desktop, "/usr/bin/python3", ["test/apps/layout-form.py"], {
      name: "axsnap-layout-form",
      windowName: "axsnap layout form",
      timeoutMs: 20_000,
    });
  }, TIMEOUT);
  afterAll(async () => {
    await form?.stop();
  });

  it(
    "labels left of and above a field name it; a far label and a heading do not",
    async () => {
      const snap = await until(
        form,
        "tree",
        (s) => /heading Delivery/.test(s.text) && /label To/.test(s.text),
      );
      const lines = trimmed(snap);
      const has = (re: RegExp) => expect(lines, snap.text).toContainEqual(expect.stringMatching(re));
      has(/^\d+ text \(settable, string\) Label: Name$/);
      has(/^\d+ spin button \(settable, float\) Label: Copies, Value: 1$/);
      has(/^\d+ slider \(settable, float\) Label: Volume\b/);
      has(/^\d+ text \(settable, string\) Label: Comments$/);
      has(/^\d+ text \(settable, string\) Label: From$/);
      has(/^\d+ text \(settable, string\) Label: To$/);
      // The labels still print: an inferred name hides nothing.
      for (const l of ["Name", "Copies", "Volume", "Comments", "Far label", "From", "To"])
        has(new RegExp(`^\\d+ label ${l}$`));
      // "Far label" is at the other end of its row, "Delivery" is a heading: the two entries
      // under and beside them stay unnamed.
      const inferred = snap.records.filter((r) => r.nameSource === "inferred").map((r) => r.title);
      expect(inferred.sort(), snap.text).toEqual(["Comments", "Copies", "From", "Name", "To", "Volume"]);
      expect(
        lines.filter((l) => /^\d+ text \(settable, string\)$/.test(l)),
        snap.text,
      ).toHaveLength(2);
    },
    TIMEOUT,
  );
});

describe("gtk3-widget-factory (demo labels beside its controls, labelling none)", () => {
  it(
    "takes no demo label as a field's name: the disabled one beside its spin button names nothing",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        const snap = await until(gtk, "tree", (s) => /spin button/.test(s.text));
        expect(snap.text).not.toMatch(/Label: label\b/);
        expect(snap.records.filter((r) => r.nameSource === "inferred")).toEqual([]);
      } finally {
        await gtk.stop();
      }
    },
    TIMEOUT,
  );
});
