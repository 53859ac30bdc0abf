/**
 * Issue 19 §3, find: the matching rules over fixture trees (no desktop).
 * Which elements a query by role, name, text and states matches; how a match
 * prints (its line, its ref, its ancestors); the limit and how many more
 * matched; what an empty result says; and every hostile query refused with
 * INVALID_ARGUMENT before or instead of a runaway match.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import { createSnapshot, type Snapshot } from "../../lib/observe/snapshot.js";
import { checkFindQuery, type FindQuery, findIn, findText } from "../../lib/session/find.js";
import { PATTERN_LIMIT, patternOf } from "../../lib/session/pattern.js";
import { button, editorDesktop as desktop, useFakeSessions } from "../support/editor.js";
import { rejects } from "../support/rejects.js";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");
const fixture = (name: string, style: "tree" | "compact" = "tree"): Snapshot =>
  createSnapshot({
    raw: JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), "utf8")),
    options: { style },
  });

const gtk = fixture("gtk-widget-factory");
const textedit = fixture("textedit");

const indices = (snap: Snapshot, query: FindQuery, limit?: number): number[] =>
  findIn(snap, query, limit === undefined ? {} : { limit }).matches.map((m) => m.index);

function refused(fn: () => unknown): AxsnapError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AxsnapError);
    expect((e as AxsnapError).code).toBe("INVALID_ARGUMENT");
    expect((e as AxsnapError).hint.length).toBeGreaterThan(10);
    return e as AxsnapError;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

const win = { x: 0, y: 0, w: 600, h: 400 };
function tree(children: RawNode[]): Snapshot {
  const raw: RawSnapshot = {
    version: 1,
    platform: "linux",
    app: { name: "demo", pid: 42 },
    window: { title: "Demo", frame: win, scale: 1 },
    root: { role: "frame", title: "Demo", frame: win, children },
    walk: { ended: "complete", nodesObserved: 1 + children.length },
  };
  return createSnapshot({ raw });
}

describe("find: roles", () => {
  it("matches the role text as printed, in any case, and the raw role", () => {
    expect(indices(gtk, { role: "check box" })).toEqual([16, 17, 18, 19]);
    expect(indices(gtk, { role: "Check  Box " })).toEqual([16, 17, 18, 19]);
    // macOS: printed "toggle button" for AXCheckBox; both spellings reach it.
    expect(indices(textedit, { role: "toggle button" })).toEqual([10, 11, 12]);
    expect(indices(textedit, { role: "axcheckbox" })).toEqual([10, 11, 12]);
  });

  it("is the whole role, not a part of it", () => {
    expect(indices(gtk, { role: "push" })).toEqual([]);
    expect(indices(gtk, { role: "butto" })).toEqual([]);
    expect(indices(gtk, { role: "push button" })).toEqual([5, 6, 7, 26, 27, 29]);
  });

  it("matches the compact style's role word in a compact snapshot", () => {
    const compact = fixture("gtk-widget-factory", "compact");
    expect(indices(compact, { role: "checkbox" })).toEqual([16, 17, 18, 19]);
    expect(findIn(compact, { role: "checkbox" }).matches[0]!.line).toBe('checkbox "checkbutton" checked');
  });

  // Issue 33 §6: an agent that read one style's words finds with them in a snapshot of the other.
  it("matches either style's role words in a snapshot of either style", () => {
    const compact = fixture("gtk-widget-factory", "compact");
    for (const snap of [gtk, compact]) {
      const what = `${snap.style} snapshot`;
      expect(indices(snap, { role: "button" }), what).toEqual([5, 6, 7, 26, 27, 29]);
      expect(indices(snap, { role: "push button" }), what).toEqual([5, 6, 7, 26, 27, 29]);
      expect(indices(snap, { role: "checkbox" }), what).toEqual([16, 17, 18, 19]);
      expect(indices(snap, { role: "check box" }), what).toEqual([16, 17, 18, 19]);
      expect(indices(snap, { role: "textbox" }), what).toEqual([8, 9, 13, 51]);
      expect(indices(snap, { role: "toggle" }), what).toEqual([4, 28]);
      expect(indices(snap, { role: "toggle button" }), what).toEqual([4, 28]);
    }
    // The line printed is the snapshot's own: a tree snapshot's line for a compact word.
    expect(findIn(gtk, { role: "button", name: "Close" }).matches[0]!.line).toBe("push button Close");
    expect(findIn(compact, { role: "push button", name: "Close" }).matches[0]!.line).toBe('button "Close"');
    // macOS: the tree's "text entry area" is compact's "textarea", "button" both.
    const mac = fixture("save-dialog");
    const macCompact = fixture("save-dialog", "compact");
    for (const snap of [mac, macCompact]) {
      expect(indices(snap, { role: "text entry area" }), snap.style).toEqual([2]);
      expect(indices(snap, { role: "textarea" }), snap.style).toEqual([2]);
      expect(indices(snap, { role: "button" }), snap.style).toEqual([19, 20]);
      expect(indices(snap, { role: "popup" }), snap.style).toEqual([14, 17]);
      expect(indices(snap, { role: "pop up button" }), snap.style).toEqual([14, 17]);
    }
  });

  it('"text" names a different element in each style on Linux: read in the snapshot\'s own style', () => {
    // Tree: AT-SPI's text role (a field); compact: a label. Compact's "textbox" and the tree's
    // "label" name each unambiguously in either.
    const compact = fixture("gtk-widget-factory", "compact");
    const fields = indices(gtk, { role: "textbox" });
    const labels = indices(gtk, { role: "label" });
    expect(fields.length).toBeGreaterThan(0);
    expect(labels.length).toBeGreaterThan(0);
    expect(indices(gtk, { role: "text" })).toEqual(fields);
    expect(indices(compact, { role: "text" })).toEqual(labels);
    expect(indices(compact, { role: "textbox" })).toEqual(fields);
    expect(indices(compact, { role: "label" })).toEqual(labels);
  });
});

describe("find: names", () => {
  it("by default a part of the name, in any case", () => {
    expect(indices(gtk, { role: "push button", name: "button" })).toEqual([26, 27]);
    expect(indices(gtk, { name: "NESTED" })).toEqual([25, 26]);
  });

  it("exact: the whole name, case and all", () => {
    expect(indices(gtk, { role: "push button", name: "Button", exact: true })).toEqual([27]);
    expect(indices(gtk, { name: "button", exact: true })).toEqual([]);
  });

  it("a regular expression, tested against the name", () => {
    expect(indices(gtk, { name: /^Page \d$/ })).toEqual([1, 2, 3]);
    expect(indices(gtk, { name: /^tab [23]$/i })).toEqual([38, 39]);
  });

  it("a name that comes from the description (macOS buttons named by AXDescription)", () => {
    expect(indices(textedit, { name: "bold" })).toEqual([10]);
    expect(indices(textedit, { name: "font size" })).toEqual([6]);
  });
});

describe("find: text", () => {
  it("finds text in a value, a name, or the row text printed with an element", () => {
    // 12 is named Andrea, 13 holds it as its value, 45 is the row "| Andrea | Cimi".
    expect(indices(gtk, { text: "andrea" })).toEqual([12, 13, 45]);
    expect(indices(gtk, { text: "Click icon" })).toEqual([8]);
    expect(indices(gtk, { text: "otto" })).toEqual([46]);
  });

  it("finds text in a description", () => {
    expect(indices(textedit, { text: "first line indent" })).toEqual([20]);
  });

  it("does not match the labels the line adds (Value:, Secondary Actions:)", () => {
    expect(indices(gtk, { text: "expand or contract" })).toEqual([]);
    expect(indices(gtk, { text: "Value" })).toEqual([]);
  });

  it("takes a regular expression", () => {
    expect(indices(gtk, { role: "spin button", text: /^\d{2}$/ })).toEqual([14]);
  });

  it("never matches a secure field's value", () => {
    const snap = tree([
      { role: "text", title: "PIN", value: "hunter2", settable: true, valueType: "string" },
      { role: "label", title: "hunter2 is not a secret here" },
    ]);
    expect(indices(snap, { text: "hunter2" })).toEqual([2]);
  });
});

describe("find: states", () => {
  it("matches the states the line prints", () => {
    expect(indices(gtk, { states: ["checked"] })).toEqual([1, 16, 20, 28, 45, 47, 48]);
    expect(indices(gtk, { role: "check box", states: ["checked"] })).toEqual([16]);
    expect(indices(gtk, { states: ["disabled"] })).toEqual([19, 23, 29]);
    expect(indices(gtk, { states: ["focused"] })).toEqual([8]);
    expect(indices(gtk, { states: ["selected"] })).toEqual([36, 46]);
    expect(indices(gtk, { states: ["settable", "float"], role: "slider" })).toEqual([30, 31]);
  });

  it('"enabled" is a line that is not disabled; "!state" is a state the line lacks', () => {
    expect(indices(gtk, { role: "check box", states: ["enabled"] })).toEqual([16, 17, 18]);
    expect(indices(gtk, { role: "check box", states: ["!checked"] })).toEqual([17, 18, 19]);
    expect(indices(gtk, { role: "check box", states: ["ENABLED", "!checked"] })).toEqual([17, 18]);
  });
});

describe("find: what a match says", () => {
  it("its printed line, its ref into the snapshot, its ancestors below the window", () => {
    const r = findIn(gtk, { name: "Nested button" });
    expect(r.snapshot).toBe(gtk);
    expect(r.matches).toEqual([
      {
        index: 26,
        ref: `@${gtk.id}:e26`,
        role: "push button",
        name: "Nested button",
        line: "push button Nested button",
        ancestors: ['panel "Frame"'],
        locator: 'app=gtk3-widget-factory >> window="GTK+ Widget Factory" >> push button "Nested button"',
        record: gtk.records[26],
      },
    ]);
    const tab = findIn(gtk, { text: "Notebook page 1" }).matches[0]!;
    expect(tab.ancestors).toEqual(["page tab list", 'page tab "Tab 1"']);
    expect(findIn(gtk, { text: "otto" }).matches[0]!.line).toBe(
      "table cell (selected) Value: off, Secondary Actions: expand or contract, edit | Otto | chaotic",
    );
  });

  it("the text: a header with the snapshot id and refs, one line per match", () => {
    const r = findIn(gtk, { role: "push button", name: "button" });
    const lines = r.text.split("\n");
    expect(lines[0]).toContain(gtk.id);
    expect(lines[0]).toContain('"gtk3-widget-factory"');
    expect(lines[0]).toContain('"GTK+ Widget Factory"');
    expect(lines[1]).toMatch(new RegExp(`@${gtk.id}:eN`));
    expect(lines.slice(2)).toEqual([
      'locators: app=gtk3-widget-factory >> window="GTK+ Widget Factory" >> a line\'s role "name", then its [nth] or own locator after "·"',
      `@${gtk.id}:e26 push button Nested button · in panel "Frame"`,
      `@${gtk.id}:e27 push button Button`,
    ]);
  });

  it("the text gives a match its own locator where its role and name do not name it alone", () => {
    const r = findIn(gtk, { role: "check box" });
    const front = 'app=gtk3-widget-factory >> window="GTK+ Widget Factory"';
    const lines = r.text.split("\n").slice(3);
    expect(lines.length).toBeGreaterThan(1);
    // Each match's whole locator reads back from its line as the header says: front, role "name", then what follows "·".
    for (const [i, m] of r.matches.entries()) {
      const own = / · locator: (.*)$/.exec(lines[i]!)?.[1];
      const attrs = / · (\[(?:nth|id)=[^\]]*\])$/.exec(lines[i]!)?.[1];
      const self = m.name === undefined ? m.role : `${m.role} ${JSON.stringify(m.name)}`;
      const read =
        own !== undefined ? `${front} >> ${own}` : `${front} >> ${self}${attrs ? ` ${attrs}` : ""}`;
      expect(read, lines[i]).toBe(m.locator);
    }
    expect(lines.some((l) => / · \[nth=\d\]$/.test(l))).toBe(true);
  });

  it("at most limit matches (default 20), and how many more matched", () => {
    const all = findIn(gtk, { states: ["!disabled"] });
    expect(all.matches).toHaveLength(20);
    expect(all.total).toBe(gtk.records.length - 3);
    expect(all.more).toBe(all.total - 20);
    const two = findIn(gtk, { role: "push button" }, { limit: 2 });
    expect(two.matches.map((m) => m.index)).toEqual([5, 6]);
    expect(two.total).toBe(6);
    expect(two.more).toBe(4);
    expect(two.text.split("\n").at(-1)).toBe("4 more matched; narrow the query or raise limit");
    expect(findText(two, { limit: "--limit" }).split("\n").at(-1)).toBe(
      "4 more matched; narrow the query or raise --limit",
    );
  });

  it("nothing matched: says so, with the roles the window has", () => {
    const r = findIn(gtk, { role: "butto" });
    expect(r.matches).toEqual([]);
    expect(r.total).toBe(0);
    expect(r.text).toMatch(/no element matched/);
    expect(r.text).toMatch(/push button \(6\)/);
    expect(r.text).toMatch(/check box \(4\)/);
  });

  it("nothing matched by state: names the states the window prints", () => {
    const r = findIn(gtk, { states: ["pressed"] });
    expect(r.text).toMatch(/states printed here: .*checked/);
    expect(r.text).toMatch(/disabled/);
  });

  it("the doors' words for the next step go into the text", () => {
    const r = findIn(gtk, { role: "butto" });
    expect(findText(r, { snapshot: "get_app_state" })).toMatch(/get_app_state/);
  });
});

describe("find: hostile queries are refused with INVALID_ARGUMENT", () => {
  it("an empty query, or one that asks for nothing", () => {
    refused(() => checkFindQuery({}));
    refused(() => checkFindQuery(undefined));
    refused(() => checkFindQuery({ name: "" }));
    refused(() => checkFindQuery({ role: "   " }));
    refused(() => checkFindQuery({ states: [] }));
    refused(() => checkFindQuery({ text: "", states: [] }));
  });

  it("fields of the wrong kind, and fields it does not know", () => {
    refused(() => checkFindQuery({ name: 12 } as unknown as FindQuery));
    refused(() => checkFindQuery({ states: "checked" } as unknown as FindQuery));
    refused(() => checkFindQuery({ states: ["checked", ""] }));
    refused(() => checkFindQuery({ states: Array.from({ length: 40 }, () => "checked") }));
    refused(() => checkFindQuery({ nmae: "OK" } as unknown as FindQuery));
    refused(() => checkFindQuery({ role: "x".repeat(1000) }));
    refused(() => checkFindQuery({ name: "x".repeat(10_000) }));
    refused(() => checkFindQuery({ role: "push button", exact: "yes" } as unknown as FindQuery));
    refused(() => checkFindQuery({ text: "ok", exact: true }));
  });

  it("a limit that is not a whole number from 1 to 1000", () => {
    for (const limit of [0, -1, 1.5, 1001, Number.NaN])
      refused(() => findIn(gtk, { role: "push button" }, { limit }));
  });

  it("an invalid regular expression, with a hint", () => {
    const e = refused(() => patternOf("name", "/(unclosed/"));
    expect(e.message).toMatch(/not a valid regular expression/);
    refused(() => patternOf("name", "/a/q"));
  });

  it("a pattern longer than the limit, as a string or as a RegExp", () => {
    refused(() => patternOf("name", `/${"a".repeat(PATTERN_LIMIT + 1)}/`));
    refused(() => checkFindQuery({ name: new RegExp("a".repeat(PATTERN_LIMIT + 1)) }));
    expect(() => patternOf("name", `/${"a".repeat(PATTERN_LIMIT)}/`)).not.toThrow();
  });

  it("a pattern that backtracks catastrophically is stopped and refused", () => {
    const snap = tree([
      { role: "label", title: `${"a".repeat(40)}!` },
      { role: "label", title: `${"a".repeat(45)}!` },
    ]);
    const e = refused(() => findIn(snap, { name: /(a+)+$/ }));
    expect(e.message).toMatch(/took longer than/);
    expect(e.hint).toMatch(/nested/);
  });

  it("doors' strings: /re/flags is a regular expression, anything else a plain text", () => {
    expect(patternOf("name", "/^page \\d$/i")).toMatchObject({ kind: "regex" });
    expect(patternOf("name", "a/b")).toMatchObject({ kind: "text" });
    expect(patternOf("name", "/")).toMatchObject({ kind: "text" });
    // g and y would make test() stateful across lines: dropped.
    const p = patternOf("name", "/page/gy");
    expect(p.kind === "regex" && p.re.flags).toBe("");
  });
});

describe("Session.find over the fake backend", () => {
  const { setup } = useFakeSessions(1000);

  it("keeps the observation: its refs act, on the element found, and it is the app's latest", async () => {
    const { b, s } = setup([button("Open", 120), button("Save", 140), button("Close", 160)]);
    const r = await s.find("Editor", { role: "push button", name: "save" });
    expect(r.matches).toHaveLength(1);
    expect(r.snapshot.screenshot).toBeUndefined();
    expect(s.address(0, "Editor").snapshot).toBe(r.snapshot);
    const result = await s.click(r.matches[0]!.ref);
    expect(b.fakeLog()).toEqual([`action ${r.matches[0]!.record.handle} click`]);
    expect(result.target).toMatchObject({ snapshotId: r.snapshot.id, index: r.matches[0]!.index });
  });

  it("a ref from find is identity-checked like any ref", async () => {
    const { b, s } = setup([button("Open", 120), button("Save", 140)]);
    const r = await s.find("Editor", { name: "Save", exact: true });
    await b.fakeReplace(desktop([button("Open", 120), button("Delete all", 140)]));
    await expect(s.click(r.matches[0]!.ref)).rejects.toMatchObject({ code: "STALE_REF" });
    expect(b.fakeLog()).toEqual([]);
  });

  it("a query refused while matching keeps nothing: latest unchanged, the observation released", async () => {
    const { b, s } = setup([button(`${"a".repeat(40)}!`, 120), button("Save", 140)]);
    const e = await rejects(s.find("Editor", { name: /(a+)+$/ }));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect((await b.handleStats()).held).toBe(0);
    expect(() => s.address(0, "Editor")).toThrow(/no snapshot/);
    const before = await s.snapshot({ app: "Editor", screenshot: false });
    await rejects(s.find("Editor", { name: /(a+)+$/ }));
    expect(s.address(0, "Editor").snapshot).toBe(before);
  });
});
