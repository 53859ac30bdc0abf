import { describe, expect, it } from "vitest";
import { AxsnapError, render } from "../../lib/index.js";
import type { RawNode } from "../../lib/model/model.js";
import { prettyActionName } from "../../lib/render/actions.js";
import { sanitize } from "../../lib/render/sanitize.js";
import { body, button, group, text, win } from "../support/build.js";

describe("whole text", () => {
  it("prints header, tree, and the focused footer by index and role", () => {
    const r = render(
      win([
        {
          role: "AXTextArea",
          roleDescription: "text entry area",
          value: "Hi",
          settable: true,
          valueType: "string",
          states: { focused: true },
        },
      ]),
    );
    expect(r.text).toBe(
      [
        "App=com.example.test (pid 42)",
        'Window: "Main", App: TestApp.',
        "0 standard window Main",
        "\t1 text entry area (settable, string) Hi",
        "",
        "The focused UI element is 1 text entry area.",
      ].join("\n"),
    );
    expect(r.focusedIndex).toBe(1);
  });

  it("uses the app name when there is no bundle id or window title", () => {
    const s = win([]);
    s.app = { name: "Calc", pid: 7 };
    s.window.title = "";
    delete s.root.title; // the window element has no name either: the header names the app
    const lines = render(s).text.split("\n");
    expect(lines[0]).toBe("App=Calc (pid 7)");
    expect(lines[1]).toBe('Window: "Calc", App: Calc.');
  });

  it("prints selected text of the focused element instead of the focus line", () => {
    const r = render(
      win([
        {
          role: "AXTextField",
          title: "Name",
          value: "codex",
          selectedText: "codex",
          states: { focused: true },
        },
      ]),
    );
    expect(r.text.endsWith("\n\nSelected text: [codex]")).toBe(true);
    expect(r.selectedText).toBe("codex");
  });

  it("prints the menu bar after the window at depth 0 without the Apple item", () => {
    const s = win([button("OK")]);
    s.menuBar = {
      role: "AXMenuBar",
      roleDescription: "menu bar",
      children: [
        { role: "AXMenuBarItem", title: "Apple" },
        {
          role: "AXMenuBarItem",
          title: "TestApp",
          children: [
            {
              role: "AXMenu",
              frame: { x: 0, y: 1243, w: 0, h: 0 },
              children: [{ role: "AXMenuItem", title: "Quit" }],
            },
          ],
        },
        { role: "AXMenuBarItem", title: "File" },
      ],
    };
    expect(body(render(s).text)).toEqual([
      "0 standard window Main",
      "\t1 button OK",
      "2 menu bar",
      "\t3 TestApp",
      "\t4 File",
    ]);
    expect(render(s).records[3]!.pathRoot).toBe("menuBar");
    expect(render(s).records[3]!.path).toEqual([1]);
  });
});

describe("one line", () => {
  it("orders traits as selected/selectable, expanded/collapsed, disabled, settable, type", () => {
    const r = render(
      win([
        {
          role: "AXTextField",
          roleDescription: "text field",
          value: "docs",
          settable: true,
          states: { selected: true, enabled: false },
        },
        { role: "AXRow", roleDescription: "row", states: { selectable: true, expanded: false } },
        {
          role: "AXSplitter",
          roleDescription: "splitter",
          value: 185,
          settable: true,
          states: { enabled: false },
        },
      ]),
    );
    expect(body(r.text).slice(1)).toEqual([
      "\t1 text field (selected, disabled, settable, string) Value: docs",
      "\t2 row (selectable, collapsed)",
      "\t3 splitter (disabled, settable, float) 185",
    ]);
  });

  it("prints the recorded value conventions: switch on/off, radio 0/1, bare scroll bar value", () => {
    const r = render(
      win([
        {
          role: "AXCheckBox",
          subrole: "AXSwitch",
          roleDescription: "switch",
          value: 1,
          identifier: "X_Toggle",
        },
        { role: "AXRadioButton", roleDescription: "radio button", description: "CPU", value: 0 },
        {
          role: "AXScrollBar",
          roleDescription: "scroll bar",
          value: 0.1371493880660984,
          settable: true,
          valueType: "number",
        },
        { role: "AXRadioGroup", roleDescription: "", description: "Categories", help: "Display processes" },
      ]),
    );
    expect(body(r.text).slice(1)).toEqual([
      "\t1 switch Value: on, ID: X_Toggle",
      "\t2 radio button Description: CPU, Value: 0",
      "\t3 scroll bar (settable, float) 0.1371493880660984",
      "\t4 Description: Categories, Help: Display processes",
    ]);
  });

  it("prints AT-SPI checked states as on/off and derives role text from the role name", () => {
    const s = win([
      { role: "check box", title: "Bold", states: { checked: true } },
      { role: "radio-button", title: "Page 2", states: { checked: false } },
      { role: "push button", title: "Close", actions: ["click"] },
    ]);
    s.platform = "linux";
    expect(body(render(s).text).slice(1)).toEqual([
      "\t1 check box Bold, Value: on",
      "\t2 radio button Page 2, Value: off",
      "\t3 push button Close",
    ]);
  });

  it("uses the description as title for buttons, the value for search fields, the first text for rows", () => {
    const r = render(
      win([
        { role: "AXButton", roleDescription: "button", description: "back", actions: ["AXPress"] },
        {
          role: "AXTextField",
          subrole: "AXSearchField",
          roleDescription: "search text field",
          value: "codex",
          settable: true,
        },
        {
          role: "AXRow",
          roleDescription: "row",
          states: { selected: true },
          children: [{ role: "AXCell", children: [text("Mail")] }],
        },
      ]),
    );
    expect(body(r.text)).toContain("\t1 button back");
    expect(body(r.text)).toContain("\t2 search text field (settable, string) codex");
    expect(body(r.text)).toContain("\t3 row (selected) Mail");
    expect(r.records[2]!.identity.name).toBeUndefined();
    expect(r.records[3]!.identity).toMatchObject({ name: "Mail", nameFrom: "rowText" });
  });

  it("prints links as [text](url) and hides their children", () => {
    const r = render(win([{ role: "AXLink", url: "https://a.test/x", children: [text("Docs")] }]));
    expect(body(r.text)).toEqual(["0 standard window Main", "\t1 link [Docs](https://a.test/x)"]);
  });

  it("hides secure values: bullets when non-empty, nothing read into the record", () => {
    const r = render(
      win([
        {
          role: "AXTextField",
          subrole: "AXSecureTextField",
          roleDescription: "secure text field",
          charCount: 9,
          settable: true,
        },
        {
          role: "AXTextField",
          subrole: "AXSecureTextField",
          roleDescription: "secure text field",
          charCount: 0,
        },
        { role: "password text", value: "hunter2", states: { secure: true } },
      ]),
    );
    expect(body(r.text).slice(1)).toEqual([
      "\t1 secure text field (settable, string) Value: •••",
      "\t2 secure text field",
      "\t3 password text Value: •••",
    ]);
    expect(JSON.stringify(r)).not.toContain("hunter2");
    expect(r.records[3]!.secure).toBe(true);
  });

  it("filters primary actions and pretty-prints the rest", () => {
    const r = render(
      win([
        {
          role: "AXCheckBox",
          description: "Wi-Fi",
          value: 1,
          actions: [
            "AXShowMenu",
            "AXPress",
            "Name:show details\nTarget:0x0\nSelector:(null)",
            "AXIncrement",
            "AXIncrement",
          ],
        },
        {
          role: "AXScrollArea",
          roleDescription: "scroll area",
          actions: ["AXScrollLeftByPage", "AXScrollRightByPage", "AXScrollUpByPage", "AXScrollDownByPage"],
        },
        { role: "AXMenuItem", title: "Copy", actions: ["AXPress", "AXCancel", "AXPick"] },
      ]),
    );
    expect(body(r.text).slice(1)).toEqual([
      "\t1 check box Description: Wi-Fi, Value: on, Secondary Actions: show details, Increment",
      "\t2 scroll area Secondary Actions: Scroll Up, Scroll Down",
      "\t3 menu item Copy",
    ]);
    expect(prettyActionName("AXScrollDownByPage")).toBe("Scroll Down");
    expect(prettyActionName("AXZoomWindow")).toBe("zoom the window");
    expect(prettyActionName("AXRaise")).toBe("Raise");
  });

  it("keeps scrolling sideways where the scroll area has a horizontal scroll bar", () => {
    const r = render(
      win([
        {
          role: "AXScrollArea",
          roleDescription: "scroll area",
          actions: ["AXScrollLeftByPage", "AXScrollRightByPage", "AXScrollUpByPage", "AXScrollDownByPage"],
          children: [{ role: "AXScrollBar", orientation: "horizontal", value: 0 }],
        },
      ]),
    );
    expect(body(r.text)[1]).toBe(
      "\t1 scroll area Secondary Actions: Scroll Left, Scroll Right, Scroll Up, Scroll Down",
    );
  });

  it("hides machine identifiers and prints others after the value", () => {
    const r = render(
      win([button("Save", { identifier: "_NS:63" }), button("Go", { identifier: "go-button" })]),
    );
    expect(body(r.text).slice(1)).toEqual(["\t1 button Save", "\t2 button Go, ID: go-button"]);
    expect(r.records[1]!.identity.identifier).toBe("_NS:63");
  });
});

describe("sanitising", () => {
  it("turns newlines into \\n and tabs into \\t, drops control characters, cuts at the limit", () => {
    expect(sanitize("a\nb\r\nc\u0007d\te", 500)).toBe("a\\nb\\ncd\\te");
    expect(sanitize("x".repeat(600), 500)).toBe(`${"x".repeat(500)}...`);
    expect(sanitize("x".repeat(600), "max")).toBe("x".repeat(600));
    expect(sanitize(`${"x".repeat(9)}😀z`, 10)).toBe(`${"x".repeat(9)}...`);
  });

  it("applies textLimit to every printed field", () => {
    const r = render(win([button("y".repeat(40))]), { textLimit: 10 });
    expect(body(r.text)[1]).toBe(`\t1 button ${"y".repeat(10)}...`);
  });
});

describe("elision and anonymous targets", () => {
  it("elides empty wrappers and single-child wrappers without adding depth", () => {
    const r = render(
      win([
        group([group([button("Deep")])]),
        group([text("a"), button("b")], { states: { enabled: false } }),
      ]),
    );
    expect(body(r.text)).toEqual([
      "0 standard window Main",
      "\t1 button Deep",
      "\t2 container (disabled)",
      "\t\t3 text a",
      "\t\t4 button b",
    ]);
  });

  it("keeps multi-child containers inside web areas", () => {
    const r = render(
      win([
        {
          role: "AXWebArea",
          description: "Page",
          url: "https://a.test/",
          children: [group([button("x"), button("y")])],
        },
      ]),
    );
    expect(body(r.text)).toEqual([
      "0 standard window Main",
      "\t1 HTML content Page, URL: https://a.test/",
      "\t\t2 container",
      "\t\t\t3 button x",
      "\t\t\t4 button y",
    ]);
  });

  it("prints a small pressable anonymous container as a button with its frame", () => {
    const r = render(
      win([
        group([{ role: "AXImage" }], { actions: ["AXPress"], frame: { x: 110, y: 60, w: 24, h: 24 } }),
        group([{ role: "AXImage" }, button("inner")], {
          actions: ["AXPress"],
          frame: { x: 110, y: 60, w: 400, h: 300 },
        }),
      ]),
    );
    expect(body(r.text).slice(0, 3)).toEqual([
      "0 standard window Main",
      "\t1 button Frame: x=10, y=10, w=24, h=24",
      "\t\t2 image",
    ]);
    expect(r.records[1]!.roleText).toBe("button");
  });
});

describe("text summaries", () => {
  const bubble = (...texts: string[]) =>
    group(
      texts.map((t) => text(t)),
      { frame: { x: 120, y: 100, w: 300, h: 40 } },
    );

  it("merges 2–8 short texts into one synthetic container line", () => {
    const r = render(win([bubble("Alice", "Lunch at noon?")]));
    expect(body(r.text)[1]).toBe("\t1 container Alice Lunch at noon?");
    const rec = r.records[1]!;
    expect(rec.synthetic).toBe("text-summary");
    expect(rec.path).toEqual([0]);
    expect(rec.clickPoint).toEqual({ x: 120 + 90, y: 120 });
  });

  it("gives a summary of a wrapper whose frame was not read its texts' union, for the click point", () => {
    // The Linux walk does not read a nameless AT-SPI filler's extents; its texts have theirs.
    const filler: RawNode = {
      role: "filler",
      children: [
        { role: "label", title: "Alice", frame: { x: 120, y: 100, w: 60, h: 20 } },
        { role: "label", title: "Lunch at noon?", frame: { x: 120, y: 120, w: 200, h: 20 } },
      ],
    };
    const r = render(win([filler]));
    expect(body(r.text)[1]).toBe("\t1 container Alice Lunch at noon?");
    expect(r.records[1]!.screenFrame).toEqual({ x: 120, y: 100, w: 200, h: 40 });
    expect(r.records[1]!.clickPoint).toEqual({ x: 120 + 60, y: 120 });
  });

  it.each([
    ["date and time", ["Bob", "Yesterday at 10:42 AM"]],
    ["date and time (CJK)", ["小明", "2026年11月28日 下午3:05"]],
    ["counter", ["Unread", "3/5"]],
    ["time range", ["Standup", "09:00-10:00"]],
    ["too long", ["a", "b".repeat(230)]],
    ["one text", ["only"]],
  ])("does not merge on %s", (_what, texts) => {
    const r = render(win([bubble(...texts)]));
    expect(r.records.some((x) => x.synthetic !== false)).toBe(false);
  });

  it("merges a time alone, and nine texts are too many", () => {
    expect(render(win([bubble("Carol", "10:42 AM", "ok")])).records[1]!.synthetic).toBe("text-summary");
    expect(render(win([bubble(..."abcdefghi".split(""))])).records.some((x) => x.synthetic)).toBe(false);
  });

  it("prints the text as a child line and images as children when there are images", () => {
    const r = render(win([group([{ role: "AXImage", description: "avatar" }, text("Dana"), text("hello")])]));
    expect(body(r.text)).toEqual([
      "0 standard window Main",
      "\t1 container",
      "\t\t2 text Dana hello",
      "\t\t3 image avatar",
    ]);
    expect(r.records[2]!.synthetic).toBe("summary-text");
    expect(r.records[3]!.path).toEqual([0, 0]);
  });
});

describe("rows", () => {
  const rows = (n: number, y0: number) =>
    Array.from(
      { length: n },
      (_, i): RawNode => ({
        role: "AXRow",
        roleDescription: "row",
        rowIndex: i,
        via: "rows",
        frame: { x: 100, y: y0 + i * 20, w: 800, h: 20 },
        states: { selectable: true },
        children: [{ role: "AXCell", children: [text(`item ${i}`), text(`${i} KB`)] }],
      }),
    );

  it("prints only rows inside the list's visible frame, at most 20, with showing A-B of M", () => {
    const list: RawNode = {
      role: "AXOutline",
      roleDescription: "outline",
      title: "Files",
      frame: { x: 100, y: 50, w: 800, h: 300 },
      rowCount: 500,
      children: rows(100, 50 - 20 * 10),
    };
    const r = render(
      win([
        {
          role: "AXScrollArea",
          roleDescription: "scroll area",
          frame: { x: 100, y: 50, w: 800, h: 300 },
          children: [list],
        },
      ]),
    );
    const lines = body(r.text);
    expect(lines[2]).toBe("\t\t2 outline Files (showing 10-24 of 500 items)");
    expect(lines[3]).toBe("\t\t\t3 row (selectable) item 10");
    expect(lines[4]).toBe("\t\t\t\t| 10 KB");
  });

  it("takes the first 20 rows when none can be measured", () => {
    const unmeasured = rows(30, 0).map(({ frame: _f, ...row }) => row);
    const r = render(win([{ role: "AXTable", roleDescription: "table", children: unmeasured }]));
    expect(body(r.text)[1]).toBe("\t1 table (showing 0-19 of 30 items)");
    expect(r.records.filter((x) => x.role === "AXRow")).toHaveLength(20);
  });

  it("prints a selected row's children instead of its texts", () => {
    const list = rows(2, 60);
    list[1]!.states = { selected: true };
    const r = render(
      win([
        {
          role: "AXTable",
          roleDescription: "table",
          frame: { x: 100, y: 50, w: 800, h: 300 },
          children: list,
        },
      ]),
    );
    expect(body(r.text).slice(2)).toEqual([
      "\t\t2 row (selectable) item 0",
      "\t\t\t| 0 KB",
      "\t\t3 row (selected) item 1",
      "\t\t\t4 cell",
      "\t\t\t\t5 text item 1",
      "\t\t\t\t6 text 1 KB",
    ]);
  });
});

describe("rows of a table without row objects (GTK3 tree views)", () => {
  // 3 columns: a check box cell, a name, a nickname; 30 rows of 20 px, the table shows 5 of them.
  const cells = (n: number, y0: number): RawNode[] =>
    Array.from({ length: n }).flatMap((_, i): RawNode[] => {
      const frame = (x: number, w: number) => ({ x, y: y0 + i * 20, w, h: 20 });
      const states = { selectable: true, ...(i === 12 ? { selected: true } : {}) };
      return [
        {
          role: "table cell",
          frame: frame(100, 40),
          states: { ...states, checked: i % 2 === 0 },
          actions: ["toggle"],
        },
        { role: "table cell", title: `name ${i}`, frame: frame(140, 100), states },
        { role: "table cell", title: `nick ${i}`, frame: frame(240, 100), states },
      ];
    });

  it("prints one numbered line per visible row, the other cells' texts under it, and showing A-B of M", () => {
    const table: RawNode = {
      role: "tree table",
      frame: { x: 100, y: 100, w: 300, h: 100 },
      children: [
        { role: "table column header", title: "Name", frame: { x: 140, y: 80, w: 100, h: 20 } },
        ...cells(30, 100 - 20 * 10),
      ],
    };
    const r = render(win([table]));
    expect(body(r.text).slice(1)).toEqual([
      "\t1 tree table (showing 10-14 of 30 items)",
      "\t\t2 table column header Name",
      "\t\t3 table cell (selectable) Value: on",
      "\t\t\t| name 10 | nick 10",
      "\t\t4 table cell (selectable) Value: off",
      "\t\t\t| name 11 | nick 11",
      "\t\t5 table cell (selected) Value: on",
      "\t\t\t| name 12 | nick 12",
      "\t\t6 table cell (selectable) Value: off",
      "\t\t\t| name 13 | nick 13",
      "\t\t7 table cell (selectable) Value: on",
      "\t\t\t| name 14 | nick 14",
    ]);
    // A row line's record is its first cell: a click selects that cell's row.
    expect(r.records[5]!.role).toBe("table cell");
    expect(r.records[5]!.path).toEqual([0, 1 + 12 * 3]);
  });

  it("counts rows by the list's rowCount and the cells' rowIndex when only the rows on screen were read", () => {
    // The Linux backend reads a big tree view's rows on screen only: rows 5000-5004 of 10,000.
    const read = cells(5, 100).map((c, k) => ({ ...c, rowIndex: 5000 + Math.floor(k / 3) }));
    const table: RawNode = {
      role: "table",
      frame: { x: 100, y: 100, w: 300, h: 100 },
      rowCount: 10_000,
      children: [
        { role: "table column header", title: "Name", frame: { x: 140, y: 80, w: 100, h: 20 } },
        ...read,
      ],
    };
    const r = render(win([table]));
    expect(body(r.text).slice(1, 5)).toEqual([
      "\t1 table (showing 5000-5004 of 10000 items)",
      "\t\t2 table column header Name",
      "\t\t3 table cell (selectable) Value: on",
      "\t\t\t| name 0 | nick 0",
    ]);
    expect(body(r.text).filter((l) => /^\t\t\d+ table cell/.test(l))).toHaveLength(5);
    // All rows read and on screen: no suffix.
    const all: RawNode = {
      ...table,
      rowCount: 5,
      children: read.map((c) => ({ ...c, rowIndex: c.rowIndex! - 5000 })),
    };
    expect(body(render(win([all])).text)[1]).toBe("\t1 table");
  });
});

describe("hidden elements", () => {
  it("skips AT-SPI widgets at the hidden coordinate and closed menus", () => {
    const s = win([
      {
        role: "combo box",
        title: "Fruit",
        children: [
          {
            role: "menu",
            frame: { x: -2147483648, y: -2147483648, w: 1, h: 1 },
            children: [{ role: "menu item", title: "Apple" }],
          },
        ],
      },
      { role: "push button", title: "Gone", states: { visible: false } },
    ]);
    s.platform = "linux";
    expect(body(render(s).text)).toEqual(["0 standard window Main", "\t1 combo box Fruit"]);
  });
});

describe("limits", () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => button(`b${i}`));

  it("stops at maxNodes and says what was cut", () => {
    const r = render(win(many(50)), { maxNodes: 10 });
    expect(r.records).toHaveLength(10);
    expect(r.complete).toBe(false);
    expect(r.text.split("\n").at(-1)).toBe(
      "(Snapshot incomplete: the node limit of 10 was reached; 41 elements were not printed. Raise maxNodes or maxDepth, or act on what is shown.)",
    );
    expect(r.records.every((x) => x.proof.unique === false)).toBe(true);
  });

  it("stops at maxDepth", () => {
    let deep: RawNode = button("leaf");
    for (let i = 0; i < 10; i++)
      deep = { role: "AXSplitGroup", roleDescription: "split group", children: [deep] };
    const r = render(win([deep]), { maxDepth: 3 });
    expect(Math.max(...body(r.text).map((l) => /^\t*/.exec(l)![0].length))).toBe(3);
    expect(r.cut.depthLimit).toBe(true);
    expect(r.text).toContain("elements deeper than 3 levels were not printed");
  });

  it("reports a walk cut by its deadline", () => {
    const r = render(win([button("a")], { walk: { ended: "deadline", nodesObserved: 812 } }));
    expect(r.complete).toBe(false);
    expect(r.text).toContain("the walk stopped at its deadline after reading 812 elements");
    expect(r.records[1]!.proof).toEqual({ unique: false, reason: "incomplete", matches: 1 });
  });

  it("proves unique records on complete snapshots and counts duplicates", () => {
    const r = render(win([button("OK"), button("Cancel"), button("Cancel")]));
    expect(r.records[1]!.proof).toEqual({ unique: true });
    expect(r.records[2]!.proof).toEqual({ unique: false, reason: "duplicates", matches: 2 });
  });

  it("rejects bad options with INVALID_ARGUMENT", () => {
    for (const bad of [
      { maxNodes: 0 },
      { maxNodes: 1.5 },
      { maxDepth: Number.NaN },
      { textLimit: -1 },
      { style: "xml" },
    ]) {
      expect(() => render(win([]), bad as never)).toThrow(AxsnapError);
    }
  });
});

describe("compact style", () => {
  it("prints the same indices and records in a denser form", () => {
    const s = win([
      {
        role: "AXTextField",
        roleDescription: "text field",
        title: "Name",
        value: "Ada",
        settable: true,
        states: { focused: true },
      },
      { role: "AXCheckBox", roleDescription: "check box", title: 'Say "hi"', value: 1 },
      group([group([button("x".repeat(100))])]),
      {
        role: "AXTextField",
        subrole: "AXSearchField",
        roleDescription: "search text field",
        value: "q",
        settable: true,
      },
    ]);
    const tree = render(s);
    const compact = render(s, { style: "compact" });
    expect(compact.text.split("\n")).toEqual([
      'App: "TestApp" Window: "Main"',
      "",
      '0: window "Main"',
      '  1: textbox "Name" value="Ada" focused',
      '  2: checkbox "Say \\"hi\\"" checked',
      `  3: button "${"x".repeat(80)}..."`,
      '  4: searchbox "q"',
    ]);
    expect(compact.records).toEqual(tree.records);
  });

  it("leaves out plain text and silent groups, moving their children up, and keeps the indices", () => {
    // Inside a web area, multi-child containers print in the tree style (they are not elided).
    const s = win([
      {
        role: "AXWebArea",
        description: "Page",
        children: [
          group([
            text("Label"),
            group([button("Go"), button("Stop")], { description: "Controls" }),
            group([button("a"), button("b")]),
          ]),
        ],
      },
      { role: "AXGroup", children: [text("Ada"), text("Hello")] },
    ]);
    expect(body(render(s).text)).toEqual([
      "0 standard window Main",
      "\t1 HTML content Page",
      "\t\t2 container",
      "\t\t\t3 text Label",
      "\t\t\t4 container Controls",
      "\t\t\t\t5 button Go",
      "\t\t\t\t6 button Stop",
      "\t\t\t7 container",
      "\t\t\t\t8 button a",
      "\t\t\t\t9 button b",
      "\t10 container Ada Hello",
    ]);
    expect(render(s, { style: "compact" }).text.split("\n").slice(2)).toEqual([
      '0: window "Main"',
      '  1: web "Page"',
      '    4: group "Controls"',
      '      5: button "Go"',
      '      6: button "Stop"',
      '    8: button "a"',
      '    9: button "b"',
      '  10: group "Ada Hello"',
    ]);
  });
});

describe("hostile names and edge cases", () => {
  it("treats role, subrole and action names that match Object.prototype as plain strings", () => {
    const s = win([
      {
        role: "AXButton",
        title: "b",
        subrole: "constructor",
        actions: ["AXPress", "hasOwnProperty", "toString"],
      },
      { role: "valueOf", title: "v" },
    ]);
    expect(body(render(s).text)[1]).toBe("\t1 button b, Secondary Actions: hasOwnProperty, toString");
    expect(render(s, { style: "compact" }).text).toContain("2: valueOf");
  });

  it("never prints a secure search field's value as its title", () => {
    const r = render(
      win([
        {
          role: "AXTextField",
          subrole: "AXSearchField",
          value: "hunter2",
          states: { secure: true },
          settable: true,
        },
      ]),
    );
    expect(r.text).not.toContain("hunter2");
    expect(JSON.stringify(r.records)).not.toContain("hunter2");
  });

  it("prints a link without text by its image's description, and a bare URL otherwise", () => {
    const r = render(
      win([
        { role: "AXLink", url: "https://a.test/", children: [{ role: "AXImage", description: "Home logo" }] },
        { role: "AXLink", url: "https://b.test/" },
      ]),
    );
    expect(body(r.text).slice(1)).toEqual([
      "\t1 link [Home logo](https://a.test/)",
      "\t2 link [](https://b.test/)",
    ]);
  });

  it("numbers the controls of an unselected row, as the recorded output does", () => {
    const row: RawNode = {
      role: "AXRow",
      states: { selectable: true },
      children: [
        {
          role: "AXCell",
          children: [
            text("Codex Computer Use"),
            {
              role: "AXCheckBox",
              subrole: "AXSwitch",
              roleDescription: "switch",
              value: 1,
              actions: ["AXPress"],
            },
          ],
        },
      ],
    };
    const r = render(win([{ role: "AXTable", children: [row] }]));
    expect(body(r.text).slice(2)).toEqual([
      "\t\t2 row (selectable) Codex Computer Use",
      "\t\t\t3 switch Value: on",
    ]);
    expect(r.records[3]!.path).toEqual([0, 0, 0, 1]);
  });

  it("prefers a focused field over the focused window that holds it", () => {
    const s = win([{ role: "AXTextField", title: "Name", states: { focused: true } }]);
    s.root.states = { focused: true };
    expect(render(s).focusedIndex).toBe(1);
  });

  it("reports both limits when both cut", () => {
    let deep: RawNode = button("leaf");
    for (let i = 0; i < 5; i++) deep = { role: "AXSplitGroup", children: [deep] };
    const r = render(win([deep, ...Array.from({ length: 20 }, (_, i) => button(`b${i}`))]), {
      maxNodes: 8,
      maxDepth: 3,
    });
    expect(r.text).toMatch(/node limit of 8 was reached; elements deeper than 3 levels were not printed/);
  });
});

describe("issue 13: whitespace and noise in names (Linux)", () => {
  it("prints runs of spaces in names and descriptions as one, values as they are", () => {
    const s = win([
      { role: "push button", title: "Backspace    BackSpace", actions: ["click"] },
      { role: "push button", title: "Go", description: "Go  \t  now", actions: ["click"] },
      { role: "text", value: "a    b", settable: true },
    ]);
    s.platform = "linux";
    expect(body(render(s).text).slice(1)).toEqual([
      "\t1 push button Backspace BackSpace",
      "\t2 push button Go, Description: Go now",
      "\t3 text (settable, string) Value: a    b",
    ]);
  });

  it("drops a menu's description that only says '<name> menu'", () => {
    const s = win([
      { role: "menu", title: "File", description: "file Menu", actions: ["click"] },
      { role: "menu", title: "Edit", description: "Edit things", actions: ["click"] },
    ]);
    s.platform = "linux";
    expect(body(render(s).text).slice(1)).toEqual([
      "\t1 menu File",
      "\t2 menu Edit, Description: Edit things",
    ]);
  });

  it("names an untitled window by its window title", () => {
    const s = win([{ role: "push button", title: "OK", actions: ["click"] }]);
    s.platform = "linux";
    s.root = { role: "frame", children: s.root.children ?? [] };
    s.window.title = "gtk3-widget-factory";
    expect(body(render(s).text)[0]).toBe("0 frame gtk3-widget-factory");
    s.window.title = "";
    expect(body(render(s).text)[0]).toBe("0 frame");
  });
});

describe("issue 13: names from labels (AT-SPI LABELLED_BY)", () => {
  it("does not print again a label that only names another printed element", () => {
    const s = win([
      {
        role: "text",
        title: "User name",
        labelledBy: [7],
        settable: true,
        valueType: "string",
        value: "",
        handle: 5,
      },
      { role: "label", title: "User name", handle: 7 },
      { role: "password text", title: "Password", labelledBy: [9], states: { secure: true }, handle: 8 },
      { role: "label", title: "Password", handle: 9 },
      // Same text, but not the label of anything: it prints.
      { role: "label", title: "User name", handle: 10 },
      // The label of something, but it says more than the name it gave: it prints.
      { role: "label", title: "Notes", handle: 12 },
      { role: "text", title: "Other", labelledBy: [12], handle: 11 },
    ]);
    s.platform = "linux";
    const lines = body(render(s).text).slice(1);
    expect(lines.some((l) => /^\t\d+ text .*User name/.test(l))).toBe(true);
    expect(lines.some((l) => /^\t\d+ password text .*Password/.test(l))).toBe(true);
    expect(lines.filter((l) => / label User name$/.test(l))).toHaveLength(1);
    expect(lines.some((l) => / label Password$/.test(l))).toBe(false);
    expect(lines.some((l) => / label Notes$/.test(l))).toBe(true);
  });
});
