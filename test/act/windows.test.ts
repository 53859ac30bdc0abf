/**
 * Issue 11 §3 without a desktop: compareWindows, the `window` option's
 * validation, and listWindows / snapshot({ window }) / the default choice of
 * the surface the user faces, over the fake backend (several windows of one
 * app: a main window, a modal dialog, an open popup).
 */
import { afterEach, describe, expect, it } from "vitest";
import { AxsnapError, compareWindows, type WindowListing } from "../../lib/index.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { listWindows, snapshot } from "../../lib/observe/desktop.js";
import { windowOptionOf } from "../../lib/observe/windows.js";
import { rejects } from "../support/rejects.js";

type Node = Record<string, unknown>;
const native = loadNative();
const open: NativeBackend[] = [];

function fake(script: object): NativeBackend {
  const b = new native.NativeBackend("fake", script);
  open.push(b);
  return b;
}

afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

const frame = { x: 100, y: 100, w: 800, h: 600 };
const small = { x: 300, y: 300, w: 200, h: 100 };
const button = (title: string): Node => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: { x: 320, y: 320, w: 80, h: 30 },
});
const win = (title: string, role: string, children: Node[], extra: Node = {}) => ({
  title,
  role,
  frame: extra.frame ?? frame,
  root: { role, title, frame: extra.frame ?? frame, children },
  ...extra,
});
const editor = (windows: object[]) => ({ apps: [{ name: "Editor", pid: 4100, focused: true, windows }] });

function listing(id: string, extra: Partial<WindowListing> = {}): WindowListing {
  return {
    id,
    title: id,
    role: "frame",
    kind: "window",
    frame,
    active: false,
    minimized: false,
    visible: true,
    modal: false,
    inParent: false,
    index: 0,
    ...extra,
  };
}

describe("compareWindows", () => {
  it("says what opened and what closed, by id, in listing order", () => {
    const main = listing("/a/1");
    const popup = listing("/a/19", { kind: "menu", role: "window", index: 1 });
    const dialog = listing("/a/24", { kind: "dialog", role: "dialog", modal: true, index: 1 });
    expect(compareWindows([main], [main, popup])).toEqual({ opened: [popup], closed: [] });
    expect(compareWindows([main, popup], [main, dialog])).toEqual({ opened: [dialog], closed: [popup] });
    expect(compareWindows([main, popup], [main])).toEqual({ opened: [], closed: [popup] });
  });

  it("keys by id only: a moved, retitled or re-indexed window is neither opened nor closed", () => {
    const before = [listing("/a/1"), listing("/a/2", { index: 1 })];
    const after = [
      listing("/a/2", { index: 0, title: "renamed", visible: false }),
      listing("/a/1", { index: 1, frame: { x: 0, y: 0, w: 10, h: 10 } }),
    ];
    expect(compareWindows(before, after)).toEqual({ opened: [], closed: [] });
    expect(compareWindows([], [])).toEqual({ opened: [], closed: [] });
  });
});

describe("the window option is validated before anything native runs", () => {
  it.each([
    ["a string", "Save"],
    ["null", null],
    ["an array", [0]],
    ["no field", {}],
    ["two fields", { title: "a", index: 0 }],
    ["an unknown field", { name: "a" }],
    ["an empty title", { title: "" }],
    ["a numeric title", { title: 3 }],
    ["a negative index", { index: -1 }],
    ["a fractional index", { index: 1.5 }],
    ["a string index", { index: "1" }],
    ["an empty id", { id: "" }],
  ])("%s → INVALID_ARGUMENT", async (_label, value) => {
    expect(() => windowOptionOf(value)).toThrow(AxsnapError);
    const b = fake(editor([win("Main", "frame", [button("a")])]));
    const err = await rejects(snapshot({ app: "Editor", screenshot: false, window: value as never }, b));
    expect(err.code).toBe("INVALID_ARGUMENT");
    expect(err.hint).toMatch(/listWindows/);
  });

  it("accepts exactly one of title, index, id", () => {
    expect(windowOptionOf(undefined)).toBeUndefined();
    expect(windowOptionOf({ title: "Save" })).toEqual({ title: "Save" });
    expect(windowOptionOf({ index: 0 })).toEqual({ index: 0 });
    expect(windowOptionOf({ id: "/org/a11y/atspi/accessible/5" })).toEqual({
      id: "/org/a11y/atspi/accessible/5",
    });
  });

  it("listWindows refuses a bad app or options", async () => {
    const b = fake(editor([]));
    expect((await rejects(listWindows("  ", {}, b))).code).toBe("INVALID_ARGUMENT");
    expect((await rejects(listWindows(0, {}, b))).code).toBe("INVALID_ARGUMENT");
    expect((await rejects(listWindows("Editor", { deadlineMs: -1 }, b))).code).toBe("INVALID_ARGUMENT");
    expect((await rejects(listWindows("Editor", { signal: AbortSignal.abort() }, b))).code).toBe("ABORTED");
    expect((await rejects(listWindows("Nobody", {}, b))).code).toBe("APP_NOT_FOUND");
  });
});

describe("listWindows and snapshot({ window }) over the fake backend", () => {
  const three = () =>
    fake(
      editor([
        win("Report — Editor", "frame", [button("Main button")], { focused: true }),
        win("Report settings", "dialog", [button("Dialog button")], { frame: small, id: "dlg-1" }),
        win("Report preview", "frame", [button("Preview button")], { minimized: true }),
      ]),
    );

  it("lists every window with id, kind, states and its index", async () => {
    const windows = await listWindows("Editor", {}, three());
    expect(windows.map((w) => [w.index, w.title, w.kind, w.role, w.active, w.minimized])).toEqual([
      [0, "Report — Editor", "window", "frame", true, false],
      [1, "Report settings", "dialog", "dialog", false, false],
      [2, "Report preview", "window", "frame", false, true],
    ]);
    expect(windows[1]?.id).toBe("dlg-1");
    // Without a backend id, one derived from the element handle.
    expect(windows[0]?.id).toMatch(/^e\d+$/);
    expect(new Set(windows.map((w) => w.id)).size).toBe(3);
    expect(windows[1]?.frame).toEqual(small);
  });

  it("reaches a window by exact title, unique substring, index and id", async () => {
    const b = three();
    const byTitle = await snapshot(
      { app: "Editor", screenshot: false, window: { title: "Report settings" } },
      b,
    );
    expect(byTitle.text).toMatch(/Dialog button/);
    expect(byTitle.text).toMatch(/^Window: "Report settings" \(dialog\), App: Editor\.$/m);
    const bySubstring = await snapshot({ app: "Editor", screenshot: false, window: { title: "PREVIEW" } }, b);
    expect(bySubstring.text).toMatch(/Preview button/);
    const byIndex = await snapshot({ app: "Editor", screenshot: false, window: { index: 1 } }, b);
    expect(byIndex.text).toMatch(/Dialog button/);
    const byId = await snapshot({ app: "Editor", screenshot: false, window: { id: "dlg-1" } }, b);
    expect(byId.text).toMatch(/Dialog button/);
    const plain = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(plain.text).toMatch(/Main button/);
    expect(plain.text).toMatch(/^Window: "Report — Editor", App: Editor\.$/m);
    for (const s of [byTitle, bySubstring, byIndex, byId, plain]) await s.release();
  });

  it("an ambiguous title is AMBIGUOUS_TARGET listing the candidates; a missing window WINDOW_NOT_FOUND listing all", async () => {
    const b = three();
    const ambiguous = await rejects(
      snapshot({ app: "Editor", screenshot: false, window: { title: "Report" } }, b),
    );
    expect(ambiguous.code).toBe("AMBIGUOUS_TARGET");
    expect(ambiguous.message).toMatch(/matches 3 windows/);
    expect(ambiguous.message).toMatch(/index 1 "Report settings" \(dialog, id dlg-1\)/);
    expect(ambiguous.hint).toMatch(/index or id/);
    for (const window of [{ title: "Nope" }, { index: 3 }, { id: "gone" }]) {
      const missing = await rejects(snapshot({ app: "Editor", screenshot: false, window }, b));
      expect(missing.code).toBe("WINDOW_NOT_FOUND");
      expect(missing.message).toMatch(/index 0 "Report — Editor"/);
      expect(missing.hint).toMatch(/listWindows/);
    }
    // Handles of the windows looked at are not leaked: nothing is held after the failures.
    expect(b.fakeReleased()).toBeGreaterThan(0);
  });
});

describe("the default choice shows the surface the user faces", () => {
  it("a modal dialog over the focused main window", async () => {
    const b = fake(
      editor([
        win("Main", "frame", [button("Main button")], { focused: true }),
        win("Save changes?", "dialog", [button("Don't save")], { frame: small, modal: true }),
      ]),
    );
    const s = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(s.text).toMatch(/^Window: "Save changes\?" \(modal dialog\), App: Editor\.$/m);
    expect(s.text).toMatch(/Don't save/);
    await s.release();
  });

  it("a non-modal dialog does not take over; an open popup menu does, even over a modal dialog", async () => {
    const plain = fake(
      editor([
        win("Main", "frame", [button("Main button")], { focused: true }),
        win("Find", "dialog", [button("Find next")], { frame: small }),
      ]),
    );
    expect((await snapshot({ app: "Editor", screenshot: false }, plain)).text).toMatch(/Main button/);
    const menu = fake(
      editor([
        win("Main", "frame", [button("Main button")], { focused: true }),
        win("Save changes?", "dialog", [button("Don't save")], { frame: small, modal: true }),
        win(
          "",
          "window",
          [{ role: "menu", children: [{ role: "menu item", title: "Copy", actions: ["click"] }] }],
          {
            frame: small,
            kind: "menu",
          },
        ),
        win("tip", "tool tip", [], { frame: small }),
      ]),
    );
    const s = await snapshot({ app: "Editor", screenshot: false }, menu);
    expect(s.text).toMatch(/^Window: "Editor" \(menu\), App: Editor\.$/m);
    expect(s.text).toMatch(/^\t*\d+ menu item Copy$/m);
    // The compact header says the same.
    const c = await snapshot({ app: "Editor", screenshot: false, style: "compact" }, menu);
    expect(c.text.split("\n")[0]).toBe('App: "Editor" Window: "Editor" (menu)');
  });

  it("a menu shown in place in its window (inParent) leaves the window chosen, and is listed", async () => {
    const b = fake(
      editor([
        win("Main", "frame", [button("Main button")], { focused: true }),
        win("File", "menu", [{ role: "menu item", title: "New", actions: ["click"] }], {
          frame: small,
          kind: "menu",
          inParent: true,
        }),
      ]),
    );
    expect((await snapshot({ app: "Editor", screenshot: false }, b)).text).toMatch(/Main button/);
    const listed = await listWindows("Editor", {}, b);
    expect(listed.map((w) => [w.title, w.kind, w.inParent])).toEqual([
      ["Main", "window", false],
      ["File", "menu", true],
    ]);
    const alone = await snapshot({ app: "Editor", screenshot: false, window: { id: listed[1]!.id } }, b);
    expect(alone.text).toMatch(/^Window: "File" \(menu\), App: Editor\.$/m);
  });

  it("a hidden popup is not chosen", async () => {
    const b = fake(
      editor([
        win("Main", "frame", [button("Main button")], { focused: true }),
        win("", "window", [button("Stale")], { frame: small, visible: false }),
      ]),
    );
    expect((await snapshot({ app: "Editor", screenshot: false }, b)).text).toMatch(/Main button/);
  });
});
