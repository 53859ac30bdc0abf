/**
 * Issue 33 §6, one style per conversation, over fixture trees (no desktop): a
 * token budget shortens a snapshot within the style asked for (it collapses
 * and cuts, never switches to the other style's words), and says so on its
 * last line whenever it printed less than the whole.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { render, type Style } from "../../lib/index.js";
import { compactRole } from "../../lib/render/roles.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith(".json"))
  .sort();
const raw = (file: string) => JSON.parse(readFileSync(join(FIXTURES, file), "utf8"));

const TREE_LINE = /^\t*(\d+)(?: (.*))?$/;
const COMPACT_LINE = /^ *(\d+): (.*)$/;
const SAID = /^\((Shortened to fit|Could not fit) \d+ tokens/;

/** Numbered lines of a text in one style: index → the rest of the line. */
function numbered(text: string, style: Style): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of text.split("\n")) {
    const m = (style === "tree" ? TREE_LINE : COMPACT_LINE).exec(line);
    if (m) out.set(Number(m[1]), m[2] ?? "");
  }
  return out;
}

/** A line's role words: what precedes its traits, title or quoted name in the whole rendering. */
function roleOf(whole: string, rest: string): string {
  return rest.startsWith(whole) ? whole : `(${rest})`;
}

describe("a budget keeps the style asked for", () => {
  for (const file of fixtures) {
    for (const style of ["tree", "compact"] as Style[]) {
      it(`${basename(file, ".json")}, ${style}: every budget prints ${style} lines with ${style} role words`, () => {
        const tree = raw(file);
        const whole = render(tree, { style });
        const wholeLines = numbered(whole.text, style);
        for (const maxTokens of [60, 150, 300, 500, 1000]) {
          const r = render(tree, { style, maxTokens });
          const what = `${file} ${style} at ${maxTokens}`;
          expect(r.style, what).toBe(style);
          const printed = numbered(r.text, style);
          expect(printed.size, `${what}: no ${style} line in\n${r.text}`).toBeGreaterThan(0);
          for (const [index, rest] of printed) {
            const rec = r.records[index]!;
            // A compact line the whole compact text leaves out (a collapsed text or group): its own word.
            const role =
              style === "tree"
                ? rec.roleText
                : (wholeLines.get(index)?.split(" ")[0] ??
                  compactRole({ role: rec.role, ...(rec.subrole ? { subrole: rec.subrole } : {}) }));
            expect(roleOf(role, rest), `${what}, line ${index}`).toBe(role);
          }
          // Less than the whole printed: the last line says it was shortened, and to what budget.
          if (r.text !== whole.text)
            expect(r.text.split("\n").at(-1), `${what}: the text does not say it was shortened`).toMatch(
              SAID,
            );
        }
      });
    }
  }

  it("save-dialog over a 330-token budget (375 whole): tree words (button Save), its long text cut, and one line saying so", () => {
    const r = render(raw("save-dialog.json"), { maxTokens: 330 });
    expect(r.style).toBe("tree");
    expect(r.text).toMatch(/^\t\t20 button Save$/m);
    expect(r.text).not.toMatch(/button "Save"/);
    // The text area's long value is what made it long: cut, every element still printed.
    expect(r.view).toMatchObject({ kind: "budget", hidden: 0, maxTokens: 330 });
    expect(r.text.split("\n").at(-1)).toMatch(/^\(Shortened to fit 330 tokens: /);
  });
});
