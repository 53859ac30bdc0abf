/**
 * Issue 33, item 5, through the command line on a real text editor
 * (mousepad, one headless desktop for this file): `type --escapes` puts a
 * real newline and a real tab into the app, `type` without it a backslash and
 * an n, and the replies print the two apart; the file mousepad saves holds
 * exactly what the printed value reads back to (docs/cli.md, "Newlines, tabs
 * and backslashes").
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;

let desktop: Desktop;
let state: string;

beforeAll(async () => {
  desktop = await useDesktop();
  state = mkdtempSync(join(tmpdir(), "axsnap-cli-text-"));
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

const cli = (args: string[]) => runCli(args, { XDG_STATE_HOME: state });

/** The reading rule docs/cli.md gives for printed text: `\n` a newline, `\t` a tab, `\\` a backslash. */
const readBack = (printed: string): string =>
  printed.replace(/\\([\\nt])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : "\\"));

/** The value printed on the text view's line of a reply or snapshot. */
function printedValue(text: string): string {
  const m = /^\s*\d+ text \(settable, string\) Value: (.*?)(?: \[changed: [^\]]*\])?$/m.exec(text);
  if (!m) throw new Error(`no text view with a value in:\n${text}`);
  return m[1]!;
}

describe("mousepad: type through the CLI", () => {
  it(
    "--escapes types a real newline and tab; a typed backslash-n prints apart from them; the saved file agrees",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-cli-text-"));
      const file = join(dir, "typed.txt");
      writeFileSync(file, "");
      const app: App = await startApp(desktop, "/usr/bin/mousepad", [file], {
        name: "mousepad",
        windowName: "typed.txt",
        timeoutMs: 60_000,
      });
      try {
        const snap = await cli(["snapshot", "--app", String(app.pid)]);
        expect(snap.code, snap.stderr).toBe(0);
        const id = /^snapshot (s[a-z0-9]{7})/.exec(snap.stdout)![1]!;
        const ref = `@${id}:e${indexIn(snap.stdout, /^\d+ text \(settable, string\)/)}`;

        // Without --escapes: the characters as given, a backslash and an n.
        const literal = await cli(["type", "x\\ny", "--into", ref]);
        expect(literal.code, literal.stderr).toBe(0);
        expect(printedValue(literal.stdout)).toBe("x\\\\ny");

        // With --escapes: a real newline and a real tab, printed as \n and \t.
        const escaped = await cli(["type", "\\nz\\tw", "--into", ref, "--escapes"]);
        expect(escaped.code, escaped.stderr).toBe(0);
        const shown = printedValue(escaped.stdout);
        expect(shown).toBe("x\\\\ny\\nz\\tw");
        expect(readBack(shown)).toBe("x\\ny\nz\tw");

        // What the app holds, as it saves it (keys go where focus is: in the text).
        const focus = await cli(["click", ref, "--no-snapshot"]);
        expect(focus.code, focus.stderr).toBe(0);
        const saved = await cli(["press", "ctrl+s", "--app", String(app.pid), "--no-snapshot"]);
        expect(saved.code, saved.stderr).toBe(0);
        const until = Date.now() + 20_000;
        let content = readFileSync(file, "utf8");
        while (content === "" && Date.now() < until) {
          await sleep(100);
          content = readFileSync(file, "utf8");
        }
        expect(content.replace(/\n$/, "")).toBe(readBack(shown));
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});
