/**
 * Issue 33, item 5: one meaning per printed text. A line holds one element,
 * so a newline prints as `\n`, a tab in a value as `\t`, and a backslash as
 * `\\` (as the header's quoted title always did). So a real newline and a
 * backslash followed by `n` never print alike, in either style, and a printed
 * value reads back (docs/cli.md, "Newlines, tabs and backslashes") to exactly
 * what the element holds.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { render } from "../../lib/index.js";
import type { RawNode } from "../../lib/model/model.js";
import { sanitize } from "../../lib/render/sanitize.js";
import { body, win } from "../support/build.js";

const field = (value: string): RawNode => ({
  role: "AXTextField",
  roleDescription: "text field",
  value,
  settable: true,
  valueType: "string",
});

/** The reading rule docs/cli.md gives: `\n` a newline, `\t` a tab, `\\` a backslash (`\"` a quote inside quotes). */
function readBack(printed: string): string {
  return printed.replace(/\\([\\nt"])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
}

/** The printed value: after `Value: ` in the tree style, the `value="..."` field in compact. */
function printedValue(value: string, style: "tree" | "compact" = "tree"): string {
  const text = render(win([field(value)]), { style }).text;
  if (style === "tree") return /^\t1 text field \(settable, string\) Value: (.*)$/m.exec(text)![1]!;
  return /^ *1: textbox (value=.*)$/m.exec(text)![1]!;
}

describe("a newline and a backslash-n print apart", () => {
  it("in a value, both styles", () => {
    for (const style of ["tree", "compact"] as const) {
      const newline = printedValue("a\nb", style);
      const literal = printedValue("a\\nb", style);
      expect(newline, style).not.toBe(literal);
    }
    expect(printedValue("a\nb")).toBe("a\\nb");
    expect(printedValue("a\\nb")).toBe("a\\\\nb");
    expect(printedValue("a\tb")).toBe("a\\tb");
    expect(printedValue("a\\tb")).toBe("a\\\\tb");
  });

  it("doubles every backslash, as the header's quoted title does", () => {
    expect(printedValue("C:\\Users\\me")).toBe("C:\\\\Users\\\\me");
    expect(printedValue('say \\"hi"', "compact")).toBe('value="say \\\\\\"hi\\""');
  });

  it("keeps a trailing newline of a value (typed Return shows)", () => {
    expect(printedValue("line\n")).toBe("line\\n");
  });

  it("a control character dropped between a backslash and an n makes no escape", () => {
    expect(readBack(sanitize("a\\\u0007nb", "max"))).toBe("a\\nb");
  });

  it("a cut never leaves half an escape", () => {
    expect(sanitize("abc\\\\def", 4)).toBe("abc...");
    expect(sanitize("abc\ndef", 4)).toBe("abc...");
    expect(sanitize("ab\\ndef", 4)).toBe("ab\\\\...");
  });

  it("a printed value reads back to the value (property)", () => {
    const piece = fc.constantFrom("a", "n", "t", "\\", "\n", "\t", "x y", '"');
    const value = fc
      .array(piece, { minLength: 1, maxLength: 12 })
      .map((p) => `v${p.join("")}v`)
      .filter((v) => !v.includes("\r"));
    fc.assert(
      fc.property(value, (v) => {
        expect(readBack(printedValue(v))).toBe(v);
        expect(readBack(printedValue(v, "compact").replace(/^value="(.*)"$/, "$1"))).toBe(v);
        expect(readBack(sanitize(v, "max"))).toBe(v);
      }),
      { numRuns: 500 },
    );
  });
});

describe("names", () => {
  it("a tab in a name prints as a space, a newline as \\n, and a backslash-n apart from it", () => {
    const lines = body(
      render(
        win([
          { role: "AXButton", roleDescription: "button", title: "Open\tCtrl+O", actions: ["AXPress"] },
          { role: "AXButton", roleDescription: "button", title: "two\nlines", actions: ["AXPress"] },
          { role: "AXButton", roleDescription: "button", title: "two\\nlines", actions: ["AXPress"] },
        ]),
      ).text,
    );
    expect(lines.slice(1)).toEqual([
      "\t1 button Open Ctrl+O",
      "\t2 button two\\nlines",
      "\t3 button two\\\\nlines",
    ]);
  });
});
