/**
 * Issue 9, item 21: text hygiene. Characters that print nothing or reorder
 * what is printed (bidi controls, zero-width characters) never reach a printed
 * line, in any field of either style; a window title, app name or bundle id
 * cannot forge header text.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { render } from "../../lib/index.js";
import type { RawSnapshot } from "../../lib/model/model.js";
import { sanitize } from "../../lib/render/sanitize.js";
import { win } from "../support/build.js";

const BIDI = [
  "\u202A",
  "\u202B",
  "\u202C",
  "\u202D",
  "\u202E",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200E",
  "\u200F",
  "\u061C",
];
const ZERO_WIDTH = ["\u200B", "\u200C", "\u200D", "\u2060", "\uFEFF", "\u00AD"];
/** Invisible characters beyond the list that smuggle text past a reader: tags, variation selectors. */
const SMUGGLING = ["\u{E0041}", "\u{E007F}", "\uFE0F", "\u{E0100}", "\u2062", "\u180E"];
const INVISIBLE = [...BIDI, ...ZERO_WIDTH, ...SMUGGLING];

const hex = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;

/** Every field that prints: each holds `<word><c><word>` so the test can find it again. */
function everyField(c: string): RawSnapshot {
  const snap = win(
    [
      {
        role: "AXButton",
        roleDescription: "button",
        title: `Ti${c}tle`,
        description: `De${c}scription`,
        help: `He${c}lp`,
        identifier: `Id${c}entifier`,
        actions: ["AXPress", `AXCu${c}stom`],
      },
      {
        role: "AXTextField",
        roleDescription: "text field",
        value: `Va${c}lue`,
        placeholder: `Pla${c}ceholder`,
        settable: true,
        valueType: "string",
        selectedText: `Sel${c}ected`,
        states: { focused: true },
      },
      { role: "AXStaticText", roleDescription: "text", value: `Sta${c}tic` },
      { role: "AXLink", roleDescription: "link", title: `Li${c}nk`, url: `https://ex${c}ample.com` },
      {
        role: "AXTable",
        roleDescription: "table",
        children: [
          {
            role: "AXRow",
            roleDescription: "row",
            children: [
              { role: "AXStaticText", roleDescription: "text", value: `Fi${c}rst` },
              { role: "AXStaticText", roleDescription: "text", value: `Sec${c}ond` },
            ],
          },
        ],
      },
      {
        role: "AXGroup",
        roleDescription: "group",
        children: [
          { role: "AXStaticText", roleDescription: "text", value: `Sum${c}mary` },
          { role: "AXStaticText", roleDescription: "text", value: `Mer${c}ged` },
        ],
      },
    ],
    { walk: { ended: "complete", nodesObserved: 12, notes: [`No${c}te`] } },
  );
  snap.app = { name: `Ap${c}pName`, bundleId: `com.ex${c}ample.app`, pid: 42 };
  snap.window.title = `Win${c}dow`;
  snap.root.roleDescription = `standard win${c}dow`;
  return snap;
}

const WORDS = [
  "Title",
  "Description",
  "Help",
  "Identifier",
  "Value",
  "Placeholder",
  "Static",
  "Link",
  "example.com",
  "First",
  "Second",
  "Summary",
  "Merged",
  "Note",
  "AppName",
  "com.example.app",
  "Window",
];

describe("invisible characters never print", () => {
  it.each(INVISIBLE.map((c) => [hex(c), c]))("%s is stripped from every field, both styles", (_name, c) => {
    const tree = render(everyField(c)).text;
    const compact = render(everyField(c), { style: "compact" }).text;
    for (const text of [tree, compact]) expect(text.includes(c), text).toBe(false);
    for (const word of WORDS) expect(tree, word).toContain(word);
    expect(tree).toContain("Custom");
    expect(tree).toContain("Selected text: [Selected]");
    expect(render(everyField(c)).selectedText).toBeDefined();
    for (const word of ["Title", "Value", "AppName", "Window"]) expect(compact, word).toContain(word);
  });

  it("a field made only of invisible characters prints as empty, and the title falls back to the app name", () => {
    const snap = win([
      { role: "AXButton", roleDescription: "button", title: "\u200B\u202E", actions: ["AXPress"] },
    ]);
    snap.window.title = "\u200B\u2066";
    snap.root.title = snap.window.title;
    const lines = render(snap).text.split("\n");
    expect(lines[1]).toBe('Window: "TestApp", App: TestApp.');
    expect(lines[3]).toBe("\t1 button");
  });

  it("sanitize strips them wherever they stand, and trims what they hid", () => {
    for (const c of INVISIBLE) {
      expect(sanitize(`${c}a${c}b${c}`, "max")).toBe("ab");
      expect(sanitize(`${c} a b ${c}`, "max")).toBe("a b");
    }
  });

  it("holds for any text around them (property)", () => {
    const invisible = fc.constantFrom(...INVISIBLE);
    const piece = fc.oneof(fc.string({ maxLength: 6 }), invisible);
    const field = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(field, field, field, field, field, (title, value, description, windowTitle, appName) => {
        const snap = win([
          { role: "AXButton", roleDescription: "button", title, description, actions: ["AXPress"] },
          { role: "AXTextField", roleDescription: "text field", value, settable: true, valueType: "string" },
        ]);
        snap.window.title = windowTitle;
        snap.app = { name: appName.length > 0 ? appName : "A", pid: 42 };
        for (const style of ["tree", "compact"] as const) {
          const text = render(snap, { style }).text;
          for (const c of INVISIBLE) expect(text.includes(c)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("the header cannot be forged", () => {
  function header(title: string, app: RawSnapshot["app"], style: "tree" | "compact" = "tree"): string[] {
    const snap = win([]);
    // The window list and the window element read the same title, as in one observation.
    snap.window.title = title;
    snap.root.title = title;
    snap.app = app;
    return render(snap, { style }).text.split("\n").slice(0, 2);
  }

  it("escapes quotes and backslashes in the window title", () => {
    const [, line] = header('Fake", App: Fake. "', { name: "Real", bundleId: "com.real", pid: 9 });
    expect(line).toBe('Window: "Fake\\", App: Fake. \\"", App: Real.');
    expect(header('C:\\dir\\"x', { name: "Real", pid: 9 })[1]).toBe(
      'Window: "C:\\\\dir\\\\\\"x", App: Real.',
    );
  });

  it("keeps a literal backslash-n apart from a newline", () => {
    const [, escaped] = header("a\\nb", { name: "Real", pid: 9 });
    const [, newline] = header("a\nb", { name: "Real", pid: 9 });
    expect(escaped).not.toBe(newline);
    expect(newline).toBe('Window: "a\\nb", App: Real.');
  });

  it("quotes an app name that could pass for header text", () => {
    const lines = header("Doc", { name: 'Real.\nWindow: "Secret", App: Bank', pid: 9 });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('App="Real.\\nWindow: \\"Secret\\", App: Bank" (pid 9)');
    expect(lines[1]).toBe('Window: "Doc", App: "Real.\\nWindow: \\"Secret\\", App: Bank".');
  });

  it("quotes a bundle id that forges a pid", () => {
    const [line] = header("Doc", { name: "Evil", bundleId: "com.apple.finder (pid 1)", pid: 666 });
    expect(line).toBe('App="com.apple.finder (pid 1)" (pid 666)');
  });

  it("leaves ordinary names bare", () => {
    expect(header("Doc", { name: "Google Chrome", bundleId: "com.google.Chrome", pid: 5 })).toEqual([
      "App=com.google.Chrome (pid 5)",
      'Window: "Doc", App: Google Chrome.',
    ]);
    expect(header("Doc", { name: "gtk3-widget-factory", pid: 5 })[0]).toBe("App=gtk3-widget-factory (pid 5)");
    expect(header("Doc", { name: "计算器", pid: 5 })[1]).toBe('Window: "Doc", App: 计算器.');
  });

  it("escapes both fields of the compact header", () => {
    expect(header('x" Window: "y', { name: 'A" B', pid: 1 }, "compact")[0]).toBe(
      'App: "A\\" B" Window: "x\\" Window: \\"y"',
    );
  });

  it("cuts a long title without leaving half an escape", () => {
    const snap = win([]);
    snap.window.title = `${"a".repeat(9)}"${"b".repeat(20)}`;
    snap.root.title = snap.window.title;
    const line = render(snap, { textLimit: 10 }).text.split("\n")[1]!;
    expect(line).toBe('Window: "aaaaaaaaa...", App: TestApp.');
  });
});
