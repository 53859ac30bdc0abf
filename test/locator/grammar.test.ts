/** The locator string form (issue 34, design 2.1): examples, errors with a caret, and a round-trip property. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import { parseLocator, printLocator } from "../../lib/session/locator/grammar.js";
import type { Locator, LocatorStep } from "../../lib/session/locator/types.js";

describe("parseLocator", () => {
  it("reads the design's examples", () => {
    expect(parseLocator('app=gtk3-widget-factory >> window="Widget Factory" >> page tab "Page 2"')).toEqual({
      app: "gtk3-widget-factory",
      window: { title: "Widget Factory" },
      path: [{ role: "page tab", name: "Page 2" }],
    });
    expect(parseLocator('app=mousepad >> window:dialog="Save As" >> text\n"Name"')).toEqual({
      app: "mousepad",
      window: { kind: "dialog", title: "Save As" },
      path: [{ role: "text", name: "Name" }],
    });
    expect(
      parseLocator('app=drift >> window=/^axsnap drift/ >> panel "Actions" >> push button "Save"'),
    ).toEqual({
      app: "drift",
      window: { title: /^axsnap drift/ },
      path: [
        { role: "panel", name: "Actions" },
        { role: "push button", name: "Save" },
      ],
    });
    expect(parseLocator('check box "Option" [nth=2]')).toEqual({
      path: [{ role: "check box", name: "Option", nth: 2 }],
    });
  });

  it("reads ids, raw roles, a bare window, and names holding >>", () => {
    expect(parseLocator('AXButton "a >> b" [id="ok"] [nth=3]')).toEqual({
      path: [{ role: "AXButton", name: "a >> b", id: "ok", nth: 3 }],
    });
    expect(parseLocator("window")).toEqual({ window: {}, path: [] });
    expect(parseLocator('app="Google Chrome" >> window:sheet')).toEqual({
      app: "Google Chrome",
      window: { kind: "sheet" },
      path: [],
    });
    expect(parseLocator('window "Main"')).toEqual({ path: [{ role: "window", name: "Main" }] });
    expect(parseLocator("button /sa[/]ve\\//i")).toEqual({ path: [{ role: "button", name: /sa[/]ve\//i }] });
  });

  const refusals: [string, number, RegExp][] = [
    ["", 0, /empty locator/],
    ['button "Save', 7, /unterminated string/],
    ['button "Save" >>', 16, /expected a role/],
    ["Button", 0, /expected a role/],
    ['button "a" "b"', 11, /expected a name, an attribute or ">>"/],
    ["button [nth=0]", 12, /nth counts from 1/],
    ["button [foo=1]", 7, /expected \[id=…\] or \[nth=…\]/],
    ["window:frame", 7, /expected a window kind/],
    ["app=/x/ >> button", 4, /takes a name, not a regular expression/],
    ["button /(/", 7, /not a valid regular expression/],
    ['button "\\x"', 7, /invalid string/],
  ];
  for (const [text, at, why] of refusals)
    it(`refuses ${JSON.stringify(text)} at ${at}`, () => {
      let error: unknown;
      try {
        parseLocator(text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(AxsnapError);
      const e = error as AxsnapError;
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toMatch(why);
      expect(e.message).toContain(`at position ${at}`);
      // The caret sits under the position on the line printed above it.
      const lines = e.message.split("\n");
      expect(lines.at(-1)!.indexOf("^") - 2).toBe(at);
      expect(e.hint).toMatch(/window/);
    });

  it("puts the caret on the line of a multi-line locator", () => {
    const e = (() => {
      try {
        parseLocator('app=x >>\n  button "a" [x]');
      } catch (err) {
        return err as AxsnapError;
      }
    })()!;
    expect(e.message.split("\n").slice(-2)).toEqual(['    button "a" [x]', "               ^"]);
  });
});

describe("printLocator", () => {
  it("writes the full form with JSON quoting", () => {
    expect(
      printLocator({
        app: "TextEdit",
        window: { kind: "dialog", title: 'Save "As"' },
        path: [{ role: "push button", name: "Save\n>>", id: "x" }],
      }),
    ).toBe('app=TextEdit >> window:dialog="Save \\"As\\"" >> push button "Save\\n>>" [id="x"]');
    expect(printLocator({ app: "Google Chrome", path: [] })).toBe('app="Google Chrome"');
  });

  it("refuses a role that cannot be written", () => {
    expect(() => printLocator({ path: [{ role: "HTML content" }] })).toThrow(/cannot be written/);
  });
});

// Names from the hard cases: separators, quotes, slashes, escapes, newlines, non-BMP and lone surrogates.
const tricky = fc.oneof(
  fc.string({ unit: "grapheme" }),
  fc.string({
    unit: fc.constantFrom(">", ">>", " >> ", '"', "\\", "/", "\n", "\t", "[", "]", "=", "😀", "\ud800", "a"),
  }),
  fc.constantFrom("", " ", ">>", '">>"', "/x/", "a\u2028b", "𝒳 >> 𝒴"),
);
const word = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
const role = fc.oneof(
  fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(" ")),
  fc.stringMatching(/^AX[A-Za-z]{1,10}$/),
);
const regex = fc
  .tuple(
    fc.constantFrom("a/b", "^x$", "[/]+", "\\d{2}", "a\\nb", "(?:>>)", "😀", ".*"),
    fc.subarray(["i", "m", "s", "u"]),
  )
  .map(([source, flags]) => new RegExp(source, flags.join("")));
const name = fc.oneof(tricky, regex);
const step: fc.Arbitrary<LocatorStep> = fc.record(
  { role, name, id: tricky, nth: fc.integer({ min: 1, max: 99 }) },
  { requiredKeys: ["role"] },
);
const locator: fc.Arbitrary<Locator> = fc
  .record(
    {
      app: tricky.filter((s) => s !== ""),
      window: fc.record(
        { kind: fc.constantFrom("window", "dialog", "menu", "popup", "sheet" as const), title: name },
        { requiredKeys: [] },
      ),
      path: fc.array(step, { maxLength: 4 }),
    },
    { requiredKeys: ["path"] },
  )
  // A bare `window` first step is the window segment's spelling (documented): not generated without one.
  .filter((l) => l.app !== undefined || l.window !== undefined || l.path.length > 0)
  .filter((l) => {
    const first = l.path[0];
    return !(
      l.window === undefined &&
      first &&
      first.role === "window" &&
      first.name === undefined &&
      first.id === undefined &&
      first.nth === undefined
    );
  }) as fc.Arbitrary<Locator>;

describe("round trip", () => {
  it("parse(print(l)) equals l", () => {
    fc.assert(
      fc.property(locator, (l) => {
        expect(parseLocator(printLocator(l))).toEqual(l);
      }),
      { numRuns: 2000 },
    );
  });
});
