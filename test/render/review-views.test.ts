/**
 * Views (depth, skeleton, root, maxTokens) against find, the budget's closing
 * line and the diff after an action: defects found in review, each a test that
 * failed before its fix.
 */
import { describe, expect, it } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { createSnapshot } from "../../lib/observe/snapshot.js";
import { estimateTokens, TOKEN_ESTIMATE_ERROR } from "../../lib/render/index.js";
import {
  button,
  editorDesktop as desktop,
  EDITOR_FRAME as frame,
  useFakeSessions,
  withMethod,
} from "../support/editor.js";
import { rejects } from "../support/rejects.js";

const { open, setup } = useFakeSessions();

describe("find observes the whole window", () => {
  const tools = () => [
    {
      role: "panel",
      title: "Tools",
      frame,
      children: [button("Open", 120), button("Save", 140)],
    },
  ];

  it("refuses view options, naming them: a view would hide matches or return refs no action takes", async () => {
    const { s } = setup(tools());
    const views = [{ depth: 1 }, { skeleton: true }, { maxTokens: 200 }, { root: 1 }] as const;
    for (const view of views) {
      const e = await rejects(s.find("Editor", { role: "push button" }, view as never));
      expect(e.code).toBe("INVALID_ARGUMENT");
      expect(e.message).toContain(Object.keys(view)[0]);
      expect(e.message).not.toContain("root needs a session");
      expect(e.hint).toMatch(/whole window/);
    }
    // Several at once: all named.
    const e = await rejects(s.find("Editor", { name: "Open" }, { depth: 1, maxTokens: 100 } as never));
    expect(e.message).toContain("depth");
    expect(e.message).toContain("maxTokens");
  });

  it("after an outline of the window, returns refs to elements inside its collapsed lines that act", async () => {
    const { b, s } = setup(tools());
    const outline = await s.snapshot({ app: "Editor", screenshot: false, depth: 1 });
    expect(outline.view?.hidden).toBe(2);
    const r = await s.find("Editor", { role: "push button" });
    expect(r.total).toBe(2);
    for (const m of r.matches) expect(() => s.address(m.ref)).not.toThrow();
    await s.click(r.matches[1]!.ref, { snapshot: false });
    expect(b.fakeLog()).toEqual([`action ${r.matches[1]!.record.handle} click`]);
  });
});

describe("the diff of a budgeted snapshot that grew past its budget", () => {
  it("a budgeted snapshot shortened after an action keeps its style and does not report untouched elements as changed", async () => {
    // The diff compares printed lines (fieldsChanged: a.line !== b.line). Under maxTokens the
    // acted-on snapshot printed as a tree and the fresh one, before issue 33 §6, as compact, so
    // every element's line differed and read as "[changed: line]". A budget now keeps the style.
    const few = [button("Alpha", 120), button("Beta", 140), button("Gamma", 160)];
    const { b, s } = setup(few);
    const full = await s.snapshot({ app: "Editor", screenshot: false });
    const tokensOf = (t: string) => Math.ceil(t.length / 3);
    // A budget the three-button tree fits, and that the forty-button tree does not.
    const budget = Math.max(200, tokensOf(full.text) + 40);
    const before = await s.snapshot({ app: "Editor", screenshot: false, maxTokens: budget });
    expect(before.style).toBe("tree");
    const many = [
      ...few,
      ...Array.from({ length: 40 }, (_, i) => button(`Extra ${i}`, 200 + i * 5, { actions: ["click"] })),
    ];
    await b.fakeReplace(desktop(many));
    const alpha = before.records.find((r) => r.title === "Alpha")!;
    const result = await s.click(alpha.index);
    const fresh = result.snapshot!;
    // Precondition: the budget had to shorten the fresh snapshot.
    expect(fresh.view?.kind, fresh.text).toBe("budget");
    expect(fresh.text).toMatch(/\(Shortened to fit \d+ tokens/);
    expect(fresh.style).toBe("tree");
    const changedNames = (result.changes?.changed ?? []).map((c) => c.name);
    expect(changedNames).not.toContain("Beta");
    expect(changedNames).not.toContain("Gamma");
  });
});

describe("the diff after going back to a window", () => {
  const mainFrame = { x: 100, y: 100, w: 800, h: 600 };
  const small = { x: 300, y: 300, w: 200, h: 100 };
  const btn = (title: string, y: number) => ({
    role: "push button",
    title,
    actions: ["click"],
    frame: { x: 120, y, w: 200, h: 20 },
  });
  const body = Array.from({ length: 12 }, (_, i) => btn(`Body ${i}`, 200 + i * 22));
  const main = {
    title: "Main",
    role: "frame",
    id: "w-main",
    focused: true,
    frame: mainFrame,
    root: {
      role: "frame",
      title: "Main",
      frame: mainFrame,
      children: [
        {
          role: "tool bar",
          title: "Tools",
          frame: mainFrame,
          children: [btn("Tool A", 110), btn("Tool B", 130)],
        },
        { role: "panel", title: "Body", frame: mainFrame, children: body },
      ],
    },
  };
  const dialog = {
    title: "Ask",
    role: "dialog",
    id: "w-ask",
    modal: true,
    frame: small,
    root: { role: "dialog", title: "Ask", frame: small, children: [btn("OK", 320)] },
  };
  const app = (windows: object[]) => ({ apps: [{ name: "Editor", pid: 77, focused: true, windows }] });

  /** A session whose fake replaces its tree with `next()` right after each action is delivered. */
  function dialogSession(next: () => object | undefined) {
    const wrap = (b: NativeBackend) =>
      withMethod(b, "doAction", (doAction) => async (...a) => {
        await doAction(...a);
        const tree = next();
        if (tree) await b.fakeReplace(tree);
      });
    return open(app([main]), { wrap }).s;
  }

  it("is not computed against a snapshot of that window with other view options", async () => {
    let next: object | undefined;
    const s = dialogSession(() => next);
    const whole = await s.snapshot({ app: "Editor", screenshot: false });
    next = app([main, dialog]);
    // The dialog's fresh snapshot, and the one after it, are budgeted; the stored one of Main is not.
    const first = await s.click(whole.records.find((r) => r.title === "Tool A")!.index, {
      snapshot: { maxTokens: 4000 },
    });
    expect(first.snapshot?.window.title).toBe("Ask");
    next = app([main]);
    const back = await s.click(first.snapshot!.records.find((r) => r.title === "OK")!.index);
    expect(back.snapshot?.window.title).toBe("Main");
    expect(back.snapshot?.view?.maxTokens).toBe(4000);
    expect(back.changes).toBeUndefined();
    expect(back.changesFrom).toBeUndefined();
    expect(back.text).toBe(back.snapshot!.text);
  });

  it("is not computed against a subtree snapshot of that window (the rest of it is not 'added')", async () => {
    // A dialog opens on a click inside the subtree, and closes on its OK.
    let next: object | undefined;
    const s = dialogSession(() => next);
    const whole = await s.snapshot({ app: "Editor", screenshot: false });
    const bodyIndex = whole.records.find((r) => r.title === "Body")!.index;
    const sub = await s.snapshot({ app: "Editor", screenshot: false, root: bodyIndex });
    next = app([main, dialog]);
    const first = await s.click(sub.records.find((r) => r.title === "Body 0")!.index);
    expect(first.snapshot?.window.title).toBe("Ask");
    next = app([main]);
    const back = await s.click(first.snapshot!.records.find((r) => r.title === "OK")!.index);
    expect(back.snapshot?.window.title).toBe("Main");
    // Nothing of the main window was added: it is as it was before the dialog opened.
    const added = (back.changes?.added ?? []).map((c) => c.name);
    expect(added).not.toContain("Tool A");
    expect(added).not.toContain("Tools");
    // The whole window's snapshot is the base: the same scope (none) and view.
    expect(back.changesFrom).toBe(whole.id);
  });
});

describe("budgets", () => {
  it("a budget the window cannot fit is not claimed as met", () => {
    // The header prints the window's title whole (up to textLimit); the budget's last resort
    // (depth 0, compact) can then be well over maxTokens, and its closing line still says
    // "Shortened to fit 100 tokens".
    const win = { x: 0, y: 0, w: 600, h: 400 };
    const title = "Quarterly report draft version ".repeat(15);
    const kids = Array.from({ length: 30 }, (_, i) => ({
      role: "push button",
      title: `Button number ${i}`,
      frame: { x: 10, y: 10 + i, w: 50, h: 10 },
      actions: ["click"],
    }));
    const raw = {
      version: 1,
      platform: "linux",
      app: { name: "demo", pid: 42 },
      window: { title, frame: win, scale: 1 },
      root: { role: "frame", title, frame: win, children: kids },
      walk: { ended: "complete", nodesObserved: 31 },
    };
    const s = createSnapshot({ raw, options: { maxTokens: 100 } });
    const tokens = estimateTokens(s.text);
    const claims = /fit 100 tokens/.test(s.text);
    expect({ within: tokens <= 100 * (1 + TOKEN_ESTIMATE_ERROR), claims }).not.toEqual({
      within: false,
      claims: true,
    });
  });
  const win = { x: 0, y: 0, w: 600, h: 400 };
  const raw = (title: string, notes: string[] = []) => ({
    version: 1,
    platform: "linux",
    app: { name: "demo", pid: 42 },
    window: { title, frame: win, scale: 1 },
    root: {
      role: "frame",
      title,
      frame: win,
      children: Array.from({ length: 30 }, (_, i) => ({
        role: "push button",
        title: `Button number ${i}`,
        frame: { x: 10, y: 10 + i, w: 50, h: 10 },
        actions: ["click"],
      })),
    },
    walk: { ended: "complete", nodesObserved: 31, ...(notes.length > 0 ? { notes } : {}) },
  });

  it("says so when even the smallest outline is over the budget, and about how many tokens that is", () => {
    // Backend notes print whole: nothing the budget shortens can bring these under 60 tokens.
    const notes = Array.from({ length: 3 }, (_, i) => `note ${i}: ${"web content still loading ".repeat(8)}`);
    const s = createSnapshot({ raw: raw("Report", notes), options: { maxTokens: 60 } });
    const tokens = estimateTokens(s.text);
    expect(tokens).toBeGreaterThan(60 * (1 + TOKEN_ESTIMATE_ERROR));
    expect(s.text).not.toMatch(/Shortened to fit/);
    const last = s.text.split("\n").at(-1)!;
    const said = /Could not fit 60 tokens: the smallest outline is about (\d+)/.exec(last);
    expect(said).not.toBeNull();
    expect(Math.abs(Number(said![1]) - tokens)).toBeLessThanOrEqual(5);
    expect(s.view).toMatchObject({ kind: "budget", maxTokens: 60, tokens });
  });

  it("shortens a long window title in the header, so the window fits", () => {
    const title = "Quarterly report draft version ".repeat(15);
    const s = createSnapshot({ raw: raw(title), options: { maxTokens: 100 } });
    expect(estimateTokens(s.text)).toBeLessThanOrEqual(100 * (1 + TOKEN_ESTIMATE_ERROR));
    expect(s.text).toMatch(/Shortened to fit 100 tokens/);
    // Without a budget the title prints as before.
    const whole = createSnapshot({ raw: raw(title) });
    expect(whole.text.split("\n")[1]).toContain(title.trim().slice(0, 200));
  });
});
