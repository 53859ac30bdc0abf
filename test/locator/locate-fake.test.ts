/**
 * session.locate on the fake backend (issue 34, design 2.2 and 2.4): it
 * waits for the element on the app's events, picks the window the locator
 * names, refuses several matches at once (each with the locator that tells
 * it apart), names the closest candidates when nothing matches, never gives
 * a verdict from an incomplete observation, and lets go of the observations
 * it does not return. Actions take `{ locator }` targets through it.
 */
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import { useFakeSessions } from "../support/editor.js";
import { rejects } from "../support/rejects.js";

const { open } = useFakeSessions(5000);

type Node = Record<string, unknown>;
const frame = { x: 100, y: 100, w: 800, h: 600 };
const small = { x: 300, y: 300, w: 300, h: 200 };
const button = (title: string, at = 150): Node => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: { x: 120, y: at, w: 80, h: 24 },
});
const panel = (title: string, children: Node[]): Node => ({
  role: "panel",
  title,
  frame: { x: 110, y: 110, w: 400, h: 300 },
  children,
});
const win = (title: string, role: string, children: Node[], extra: Node = {}) => ({
  title,
  role,
  frame: extra.frame ?? frame,
  root: { role, title, frame: extra.frame ?? frame, children },
  ...extra,
});
const drift = (windows: object[]) => ({
  apps: [{ name: "drift", pid: 4200, focused: true, windows }],
});
const main = (children: Node[], title = "axsnap drift") => win(title, "frame", children, { focused: true });

describe("locate", () => {
  it("finds the one element, in a snapshot the session keeps; click({ locator }) acts on it", async () => {
    const { b, s } = open(drift([main([panel("Actions", [button("Save", 150), button("Details", 180)])])]));
    const found = await s.locate('app=drift >> window="axsnap drift" >> push button "Save"');
    expect(found.record.title).toBe("Save");
    expect(found.ref).toBe(`@${found.snapshot.id}:e${found.record.index}`);
    expect(found.locator).toBe('app=drift >> window="axsnap drift" >> push button "Save"');
    expect(found.rounds).toBe(1);
    expect(found.notes).toEqual([]);
    // The session holds it: its ref acts.
    expect((await s.resolve(found.ref)).index).toBe(found.record.index);
    const r = await s.click({ locator: 'app=drift >> push button "Details"' }, { snapshot: false });
    expect(r.target?.locator).toBe('app=drift >> push button "Details"');
    expect(b.fakeLog().filter((l) => /click/.test(l))).toHaveLength(1);
  });

  it("waits for an element that appears later, on the app's events, and lets go of what it saw before", async () => {
    const { b, s } = open(drift([main([panel("Actions", [button("Details", 150)])])]));
    setTimeout(
      () =>
        void b.fakeReplace(drift([main([panel("Actions", [button("Details", 150), button("Save", 180)])])])),
      400,
    );
    const found = await s.locate('app=drift >> panel "Actions" >> push button "Save"', { timeoutMs: 5000 });
    expect(found.record.title).toBe("Save");
    expect(found.rounds).toBeGreaterThan(1);
    expect(found.ms).toBeGreaterThanOrEqual(350);
    // The observations before the one returned were released: with it let go, nothing is held.
    expect(found.snapshot.released).toBe(false);
    await found.snapshot.release();
    await expect.poll(async () => (await b.handleStats()).held).toBe(0);
  });

  it("several matches: AMBIGUOUS_TARGET at once, each match with the locator that tells it apart", async () => {
    const { s } = open(
      drift([main([panel("Actions", [button("Save", 150)]), panel("More", [button("Save", 250)])])]),
    );
    const t0 = performance.now();
    const e = await rejects(s.locate('app=drift >> push button "Save"', { timeoutMs: 5000 }));
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(e.code).toBe("AMBIGUOUS_TARGET");
    expect(e.message).toMatch(
      /^2 elements match push button "Save": panel "Actions" >> push button "Save" \(@s\w+:e\d+\); panel "More" >> push button "Save" \(@s\w+:e\d+\)$/,
    );
    expect(e.matches?.map((m) => m.locator)).toEqual([
      'app=drift >> window="axsnap drift" >> panel "Actions" >> push button "Save"',
      'app=drift >> window="axsnap drift" >> panel "More" >> push button "Save"',
    ]);
    expect(e.matches?.[1]?.ancestors).toEqual(['panel "More"']);
    expect(e.observed).toBeDefined();
    // The refs in the refusal act: the observation is held.
    expect((await s.resolve(e.matches![1]!.ref)).index).toBeGreaterThan(0);
  });

  it("none by the deadline: ELEMENT_NOT_FOUND naming the closest candidates, and the last observation", async () => {
    const { s } = open(drift([main([panel("Actions", [button("Store", 150), button("Details", 180)])])]));
    const e = await rejects(
      s.locate('app=drift >> window="axsnap drift" >> panel "Actions" >> push button "Save"', {
        timeoutMs: 800,
        near: { frame: { x: 20, y: 50, w: 80, h: 24 } },
      }),
    );
    expect(e.code).toBe("ELEMENT_NOT_FOUND");
    expect(e.message).toMatch(
      /^no element matches push button "Save" in window "axsnap drift" of drift \(waited \d+ ms, \d+ observations?\)$/,
    );
    expect(e.candidates?.[0]).toMatchObject({
      locator: 'app=drift >> window="axsnap drift" >> push button "Store"',
      line: "push button Store",
      ancestors: ['panel "Actions"'],
      why: "same role, ancestors and place, name differs",
    });
    expect(e.hint).toMatch(/^closest: push button "Store" \(@s\w+:e\d+\) · same role/);
    expect(e.observed?.text).toContain("Store");
  });

  it("picks the window by kind and title; a title that differs, with one window of that kind, is taken with a note", async () => {
    const { s } = open(
      drift([
        main([button("Open")]),
        win("Save As — notes.txt", "dialog", [button("Save", 330)], { frame: small, id: "dlg-1" }),
      ]),
    );
    const exact = await s.locate('app=drift >> window:dialog="Save As — notes.txt" >> push button "Save"');
    expect(exact.snapshot.window.title).toBe("Save As — notes.txt");
    expect(exact.notes).toEqual([]);
    const differs = await s.locate('app=drift >> window:dialog="Save As — Untitled 1" >> push button "Save"');
    expect(differs.record.title).toBe("Save");
    expect(differs.notes).toEqual([
      'window title differs: recorded "Save As — Untitled 1", now "Save As — notes.txt"',
    ]);
    const regex = await s.locate("app=drift >> window=/^Save As/ >> push button");
    expect(regex.record.title).toBe("Save");
  });

  it("several windows match: AMBIGUOUS_TARGET listing them; none: WINDOW_NOT_FOUND after waiting", async () => {
    const { s } = open(
      drift([
        main([button("Open")]),
        win("Report 1", "dialog", [button("Close", 330)], { frame: small, id: "d1" }),
        win("Report 2", "dialog", [button("Close", 330)], { frame: small, id: "d2" }),
      ]),
    );
    const several = await rejects(s.locate("app=drift >> window:dialog=/Report/ >> push button"));
    expect(several.code).toBe("AMBIGUOUS_TARGET");
    expect(several.message).toMatch(/2 windows of drift match .*dialog "Report 1"; dialog "Report 2"/);
    const none = await rejects(
      s.locate('app=drift >> window:popup="Menu" >> push button', { timeoutMs: 600 }),
    );
    expect(none.code).toBe("WINDOW_NOT_FOUND");
    expect(none.message).toMatch(/open: window "axsnap drift", dialog "Report 1", dialog "Report 2"/);
  });

  it("an incomplete observation gives no verdict: IDENTITY_UNPROVEN, hint maxNodes", async () => {
    const { s } = open(drift([main([panel("Actions", [button("A"), button("B"), button("Save")])])]));
    const e = await rejects(s.locate('app=drift >> push button "Save"', { maxNodes: 2, timeoutMs: 3000 }));
    expect(e.code).toBe("IDENTITY_UNPROVEN");
    expect(e.hint).toMatch(/maxNodes/);
  });

  it("a locator without an app takes options.app; a bad locator is INVALID_ARGUMENT with a caret", async () => {
    const { s } = open(drift([main([button("Save")])]));
    expect((await s.locate('push button "Save"', { app: "drift" })).record.title).toBe("Save");
    const noApp = await rejects(s.locate('push button "Save"'));
    expect(noApp.code).toBe("INVALID_ARGUMENT");
    const bad = await rejects(s.locate('app=drift >> push button "Save'));
    expect(bad.code).toBe("INVALID_ARGUMENT");
    expect(bad.message).toMatch(/\^/);
    expect(bad).toBeInstanceOf(AxsnapError);
  });
});
