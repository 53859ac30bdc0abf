/**
 * Chromium's states and values as Chromium itself gives them over AT-SPI
 * (issue 32 §4, §5), on a page of the test's own (test/pages/states.html):
 * pressed toggles, editable fields set by value, a select's chosen option,
 * checkable tree items, table cells by number, aria-valuetext, a fractional
 * step, invalid and required in both styles, and numbers given as strings.
 * Through the library and the CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, chromium, type Desktop, fileUrl } from "../../scripts/desktop.mjs";
import { indexIn, runCli, runCliJson, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 90_000;
const WEB = "chromium";

let desktop: Desktop;
let app: App;
let session: Session;

beforeAll(async () => {
  desktop = await useDesktop();
  app = await chromium(desktop, fileUrl("test/pages/states.html"), { windowName: "axsnap states" });
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await app?.stop();
  await desktop?.stop();
});

/** The printed line of an index, without its indentation. */
function lineOf(snap: { text: string }, index: number): string {
  return (
    snap.text
      .split("\n")
      .find((l) => new RegExp(`^\\s*${index}[ :]`).test(l))
      ?.trim() ?? ""
  );
}

/** Web content arrives a moment after the window: fresh snapshots, bounded, until the page's last field shows. */
async function loaded(options: { style?: "tree" | "compact" } = {}): Promise<Snapshot> {
  const until = Date.now() + 30_000;
  for (;;) {
    const snap = await session.snapshot({ app: WEB, screenshot: false, ...options });
    if (/Qty/.test(snap.text) && /Bob/.test(snap.text)) return snap;
    if (Date.now() > until) throw new Error(`the page never showed; last snapshot:\n${snap.text}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe("Chromium's states, read as Chromium gives them", () => {
  it(
    "prints pressed toggles, settable fields, the chosen option, checked tree items, valuetext and the step's digits",
    async () => {
      const snap = await loaded();
      expect(lineOf(snap, indexIn(snap, / Bold\b/))).toMatch(/^\d+ toggle button Bold, Value: on$/);
      expect(lineOf(snap, indexIn(snap, / Italic\b/))).toMatch(/^\d+ toggle button Italic, Value: off\b/);
      expect(lineOf(snap, indexIn(snap, /^\d+ entry .*First/))).toMatch(
        /^\d+ entry \(settable, string\) First, Value: one$/,
      );
      expect(lineOf(snap, indexIn(snap, /^\d+ entry .*Notes/))).toMatch(/\(settable, string\) Notes/);
      expect(lineOf(snap, indexIn(snap, /^\d+ combo box .*Fruit/))).toMatch(/ Fruit, Value: Banana\b/);
      expect(lineOf(snap, indexIn(snap, /^\d+ list box .*Colors/))).toMatch(/ Colors, Value: Red\b/);
      expect(lineOf(snap, indexIn(snap, /^\d+ tree item .*Alpha/))).toMatch(/Alpha, Value: on$/);
      expect(lineOf(snap, indexIn(snap, /^\d+ tree item .*Beta/))).toMatch(/Beta, Value: mixed$/);
      expect(lineOf(snap, indexIn(snap, /^\d+ tree item .*Gamma/))).toMatch(/Gamma, Value: off$/);
      expect(lineOf(snap, indexIn(snap, /^\d+ slider .*Temp/))).toMatch(/Temp, Value: Three degrees\b/);
      expect(lineOf(snap, indexIn(snap, /^\d+ slider .*Fine/))).toMatch(/Fine, Value: 0\.2\b/);
      expect(lineOf(snap, indexIn(snap, /^\d+ spin button .*Qty/))).toMatch(
        /^\d+ spin button \(settable, float\) Qty, Value: 5\b/,
      );
      // Invalid and required print in the tree style too (compact below).
      expect(lineOf(snap, indexIn(snap, /^\d+ entry .*Mail/))).toMatch(
        /^\d+ entry \(required, invalid, settable, string\) Mail$/,
      );
      const compact = await loaded({ style: "compact" });
      expect(compact.text).toMatch(/\n *\d+: textbox "Mail" required invalid\n/);
      expect(compact.text).toMatch(/\n *\d+: toggle "Bold" checked\n/);
      expect(compact.text).toMatch(/\n *\d+: item "Beta" mixed\n/);
      expect(compact.text).toMatch(/\n *\d+: combobox "Fruit" value="Banana"/);
    },
    TIMEOUT,
  );

  it(
    "finds a select by its chosen option",
    async () => {
      const found = await session.find(WEB, { role: "combo box", text: "Banana" });
      expect(found.total).toBe(1);
      expect(found.text).toMatch(/combo box .*Fruit, Value: Banana/);
    },
    TIMEOUT,
  );

  it(
    "gives every table cell a number, and a click on one reaches that cell",
    async () => {
      const snap = await loaded();
      const bob = indexIn(snap, /^\d+ table cell Bob$/);
      expect(lineOf(snap, indexIn(snap, /^\d+ table cell 42$/))).toBe(`${bob + 1} table cell 42`);
      const result = await session.click(bob);
      expect(result.delivery).not.toBe("not_delivered");
      const after = await session.snapshot({ app: WEB, screenshot: false });
      expect(after.text).toMatch(/table cell Bob clicked/);
    },
    TIMEOUT,
  );

  it(
    "sets an editable field's text though Chromium offers no EditableText, and says how",
    async () => {
      const snap = await loaded();
      const first = indexIn(snap, /^\d+ entry .*First/);
      const result = await session.setValue(first, "set by axsnap");
      expect(result).toMatchObject({
        action: "setValue",
        channel: "synthetic",
        delivery: "delivered_verified",
      });
      expect(result.applied).toBe(true);
      expect(result.notes.join(" ")).toMatch(/selecting all \(ctrl\+a\) and typing/);
      expect(lineOf(result.snapshot!, first)).toMatch(/First, Value: set by axsnap$/);
    },
    TIMEOUT,
  );

  it(
    "sets a number given as a string, and reports a value the app changed as what it became",
    async () => {
      const snap = await loaded();
      const qty = indexIn(snap, /^\d+ spin button .*Qty/);
      const set = await session.setValue(qty, "42");
      expect(set).toMatchObject({
        channel: "semantic",
        delivery: "delivered_verified",
        applied: true,
        value: 42,
      });
      expect(lineOf(set.snapshot!, qty)).toMatch(/Qty, Value: 42\b/);

      const vol = indexIn(set.snapshot!, /^\d+ slider .*Vol/);
      // The slider's step is 10: 75 becomes 80, said as such.
      const stepped = await session.setValue(vol, "75");
      expect(stepped).toMatchObject({ applied: false, value: 80 });
      expect(stepped.notes.join(" ")).toMatch(/75.*became 80|became 80.*75/);
      expect(lineOf(stepped.snapshot!, vol)).toMatch(/Vol, Value: 80\b/);

      // A range input keeps to its maximum (a number input takes 99 over its max: HTML only marks it invalid).
      const clamped = await session.setValue(vol, 150);
      expect(clamped).toMatchObject({ applied: false, value: 100 });
    },
    TIMEOUT,
  );
});

describe("through the CLI", () => {
  it(
    "prints the pressed toggle and reports a stepped value with applied false",
    async () => {
      const snap = await runCli(["snapshot", "--app", WEB]);
      expect(snap.code, snap.stderr).toBe(0);
      expect(snap.stdout).toMatch(/\d+ toggle button Bold, Value: on\n/);
      const id = snapshotIdIn(snap.stdout);
      const vol = indexIn(snap.stdout, /^\d+ slider .*Vol/);
      const set = await runCliJson(["set-value", `@${id}:e${vol}`, "35", "--no-snapshot"]);
      expect(set.env.ok, set.stdout).toBe(true);
      expect(set.env.data).toMatchObject({ applied: false, value: 40 });
      const text = await runCli(["set-value", `@${id}:e${vol}`, "55", "--no-snapshot"]);
      expect(text.stdout).toMatch(/55.*became 60/);
    },
    TIMEOUT,
  );
});
