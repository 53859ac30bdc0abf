/**
 * Acting safely, against the fake backend with the UI changed by script
 * between snapshot and action: identity checks, refusals, fallbacks, results.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import type { Snapshot } from "../../lib/observe/snapshot.js";
import { createSession, type Session } from "../../lib/session/session.js";

type Node = Record<string, unknown>;
const native = loadNative();
const open: { b: NativeBackend; s: Session }[] = [];
const frame = { x: 100, y: 100, w: 800, h: 600 };

function desktop(children: Node[]) {
  return {
    apps: [
      {
        name: "Editor",
        pid: 77,
        windows: [{ title: "W", frame, root: { role: "frame", title: "W", frame, children } }],
      },
    ],
  };
}
const row = (title: string, y: number, extra: Node = {}): Node => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: { x: 120, y, w: 200, h: 20 },
  ...extra,
});

function setup(children: Node[], options: Parameters<typeof createSession>[0] = {}) {
  const b = new native.NativeBackend("fake", desktop(children));
  const s = createSession({ backend: b, deadlineMs: 1000, ...options });
  open.push({ b, s });
  return { b, s };
}

afterEach(async () => {
  for (const { b, s } of open.splice(0)) {
    await s.close();
    await b.close();
  }
});

const indexOf = (text: string, name: string) =>
  Number(new RegExp(`(\\d+) push button ${name}\\b`).exec(text)![1]);

describe("identity", () => {
  it("reaches the same element after the rows were reordered", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140), row("Gamma", 160)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const beta = indexOf(snap.text, "Beta");
    await b.fakeReplace(desktop([row("Gamma", 120), row("Alpha", 140), row("Beta", 160)]));
    const result = await s.click(`@${snap.id}:e${beta}`);
    expect(result.channel).toBe("semantic");
    expect(result.notes.join(" ")).toMatch(/moved; found again by its identity/);
    const betaNow = result.snapshot!.records.find((r) => r.title === "Beta")!;
    expect(b.fakeLog()).toEqual([`action ${betaNow.handle} click`]);
  });

  it("refuses with AMBIGUOUS_TARGET when a duplicate appeared, and sends nothing", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([row("Beta", 120), row("Alpha", 140), row("Beta", 160)]));
    await expect(s.click(indexOf(snap.text, "Beta"))).rejects.toMatchObject({
      code: "AMBIGUOUS_TARGET",
      retry: "safe",
    });
    expect(b.fakeLog()).toEqual([]);
  });

  it("refuses with STALE_REF when the element is gone", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([row("Gamma", 120), row("Alpha", 140)]));
    await expect(s.click(indexOf(snap.text, "Beta"))).rejects.toMatchObject({ code: "STALE_REF" });
    expect(b.fakeLog()).toEqual([]);
  });

  it("refuses with IDENTITY_UNPROVEN when the new observation is incomplete", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140)], { deadlineMs: 300 });
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    // Beta's old handle now names Gamma; finding Beta again needs a walk that hangs.
    await b.fakeReplace(
      desktop([
        {
          role: "panel",
          title: "slow",
          fault: { hangMs: 5000 },
          children: [row("Gamma", 100), row("Beta", 120)],
        },
        row("Alpha", 140),
      ]),
    );
    await expect(s.click(indexOf(snap.text, "Beta"))).rejects.toMatchObject({ code: "IDENTITY_UNPROVEN" });
    expect(b.fakeLog()).toEqual([]);
  });

  it("refuses when the element changes between resolving and acting (confirm landed)", async () => {
    // Reads: 2 by the snapshot, 2 when resolving; the 5th, confirming, finds it gone.
    const { b, s } = setup([row("Alpha", 120, { fault: { dieAfterReads: 4 } })]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const err = await s.click(indexOf(snap.text, "Alpha")).catch((e) => e);
    expect(err).toMatchObject({ code: "STALE_REF", delivery: "not_delivered" });
    expect(err.message).toMatch(/just before acting/);
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("unknown is not a match", () => {
  it("refuses with IDENTITY_UNPROVEN when the element cannot be read (the app does not answer)", async () => {
    const { b, s } = setup([row("Alpha", 120)], { deadlineMs: 300 });
    await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([row("Alpha", 120, { fault: { hangMs: 5000 } })]));
    await expect(s.click(1)).rejects.toMatchObject({ code: "IDENTITY_UNPROVEN", retry: "safe" });
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("channels and results", () => {
  it("falls back to a synthetic click, with a note, when the element has no press action", async () => {
    const { b, s } = setup([{ role: "panel", title: "Canvas", frame: { x: 200, y: 200, w: 100, h: 50 } }]);
    await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(1);
    expect(result.channel).toBe("synthetic");
    expect(result.notes.join(" ")).toMatch(/no press action/);
    expect(b.fakeLog()).toEqual([
      "pointer move 250,225 button=1 count=1",
      "pointer click 250,225 button=1 count=1",
    ]);
  });

  it("falls back to a synthetic click when the element refuses its action", async () => {
    const { b, s } = setup([row("Go", 120)]);
    await s.snapshot({ app: "Editor", screenshot: false });
    // Same identity, but the action is gone: the semantic channel refuses.
    await b.fakeReplace(desktop([row("Go", 120, { actions: [] })]));
    const result = await s.click(1);
    expect(result.channel).toBe("synthetic");
    expect(result.notes.join(" ")).toMatch(/refused click/);
    expect(b.fakeLog()).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer click 220,130 button=1 count=1",
    ]);
  });

  it("verifies a value it set, and says delivered_unverified when the read-back fails", async () => {
    const field = (extra: Node = {}): Node => ({
      role: "text",
      title: "Name",
      settable: true,
      valueType: "string",
      value: "x",
      frame: { x: 120, y: 120, w: 200, h: 20 },
      ...extra,
    });
    const first = setup([field()]);
    await first.s.snapshot({ app: "Editor", screenshot: false });
    const ok = await first.s.setValue(1, "Ada");
    expect(ok).toMatchObject({ delivery: "delivered_verified", retry: "unsafe", channel: "semantic" });
    expect(ok.snapshot!.text).toContain("Value: Ada");

    // Reads: snapshot 2, resolve 2, confirm 2, the set 1; the read-back finds it gone.
    const second = setup([field({ fault: { dieAfterReads: 7 } })]);
    await second.s.snapshot({ app: "Editor", screenshot: false });
    const unverified = await second.s.setValue(1, "Ada");
    expect(unverified).toMatchObject({ delivery: "delivered_unverified", retry: "unsafe" });
    expect(unverified.notes.join(" ")).toMatch(/read back/);
  });

  it("writes a number given for a text field as its text (an agent's 42 means the characters 42)", async () => {
    const { b, s } = setup([
      {
        role: "text",
        title: "Age",
        settable: true,
        valueType: "string",
        value: "",
        frame: { x: 120, y: 120, w: 200, h: 20 },
      },
    ]);
    await s.snapshot({ app: "Editor", screenshot: false });
    const r = await s.setValue(1, 42);
    expect(r).toMatchObject({ delivery: "delivered_verified", channel: "semantic" });
    expect(r.snapshot!.text).toContain("Value: 42");
    expect(b.fakeLog().filter((l) => l.startsWith("set"))).toEqual(["setText 2 42"]);
  });

  it("performs a secondary action by its pretty or raw name", async () => {
    const { b, s } = setup([row("List", 120, { actions: ["click", "AXScrollDownByPage"] })]);
    await s.snapshot({ app: "Editor", screenshot: false });
    await s.performAction(1, "scroll down", { snapshot: false });
    await s.performAction(1, "AXScrollDownByPage", { snapshot: false });
    expect(b.fakeLog()).toEqual(["action 2 AXScrollDownByPage", "action 2 AXScrollDownByPage"]);
    await expect(s.performAction(1, "fly")).rejects.toMatchObject({ code: "ACTION_NOT_SUPPORTED" });
  });
});

describe("guards", () => {
  it("refuses to set or type into a secure field, and never reads it", async () => {
    const { b, s } = setup([
      { role: "password text", title: "Password", settable: true, charCount: 6, states: { secure: true } },
    ]);
    await s.snapshot({ app: "Editor", screenshot: false });
    await expect(s.setValue(1, "hunter2")).rejects.toMatchObject({
      code: "POLICY_DENIED",
      delivery: "not_delivered",
    });
    expect(b.fakeLog()).toEqual([]);
  });

  it("refuses a destructive target without confirm, and presses it when confirm agrees", async () => {
    const refusing = setup([row("Delete account", 120)]);
    await refusing.s.snapshot({ app: "Editor", screenshot: false });
    await expect(refusing.s.click(1)).rejects.toMatchObject({ code: "POLICY_DENIED" });
    expect(refusing.b.fakeLog()).toEqual([]);

    const asked: string[] = [];
    const agreeing = setup([row("删除文件", 120)], {
      confirm: (r) => {
        asked.push(r.name);
        return true;
      },
    });
    await agreeing.s.snapshot({ app: "Editor", screenshot: false });
    await agreeing.s.click(1, { snapshot: false });
    expect(asked).toEqual(["删除文件"]);
    expect(agreeing.b.fakeLog()).toEqual(["action 2 click"]);
  });

  it("clamps a point outside the window and says which point it used", async () => {
    const { b, s } = setup([row("Go", 120)]);
    await s.snapshot({ app: "Editor" });
    const result = await s.clickAt(5000, -40, { snapshot: false });
    expect(result.notes[0]).toMatch(/outside the window; used \(899, 100\)/);
    expect(b.fakeLog()).toEqual([
      "pointer move 899,100 button=1 count=1",
      "pointer click 899,100 button=1 count=1",
    ]);
  });

  it("refuses coordinate input on a stale observation", async () => {
    const { b, s } = setup([{ role: "panel", title: "Canvas", frame: { x: 200, y: 200, w: 100, h: 50 } }], {
      staleAfterMs: 30,
    });
    await s.snapshot({ app: "Editor" });
    await new Promise((r) => setTimeout(r, 60));
    await expect(s.clickAt(10, 10)).rejects.toMatchObject({ code: "STALE_OBSERVATION" });
    await expect(s.pressKey("ctrl+a")).rejects.toMatchObject({ code: "STALE_OBSERVATION" });
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("bad input", () => {
  it.each([
    ["a bare @e12", "@e12", "INVALID_ARGUMENT"],
    ["NaN", Number.NaN, "INVALID_ARGUMENT"],
    ["a negative index", -1, "INVALID_ARGUMENT"],
    ["a fractional index", 1.5, "INVALID_ARGUMENT"],
    ["a huge index", 1e12, "INVALID_ARGUMENT"],
    ["an index never printed", 999, "ELEMENT_NOT_FOUND"],
    ["an unknown ref", "@szzzzzzz:e1", "SNAPSHOT_NOT_FOUND"],
    ["garbage", "click the button", "INVALID_ARGUMENT"],
    ["an empty string", "", "INVALID_ARGUMENT"],
    ["an object that is not a record", { foo: 1 }, "INVALID_ARGUMENT"],
  ])("refuses %s", async (_what, target, code) => {
    const { b, s } = setup([row("Go", 120)]);
    await s.snapshot({ app: "Editor", screenshot: false });
    const err = await s.click(target as never).catch((e) => e);
    expect(err).toBeInstanceOf(AxsnapError);
    expect(err.code).toBe(code);
    expect(err.hint.length).toBeGreaterThan(10);
    expect(b.fakeLog()).toEqual([]);
  });

  it("refuses a ref to a released snapshot", async () => {
    const { s } = setup([row("Go", 120)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    for (let i = 0; i < 5; i++) await s.snapshot({ app: "Editor", screenshot: false });
    await expect(s.click(`@${snap.id}:e1`)).rejects.toMatchObject({ code: "SNAPSHOT_NOT_FOUND" });
  });

  it("refuses bad values and options", async () => {
    const { s } = setup([row("Go", 120)]);
    await s.snapshot({ app: "Editor", screenshot: false });
    await expect(s.setValue(1, Number.NaN)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(s.click(1, { count: 3 as 1 })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(s.clickAt(Number.POSITIVE_INFINITY, 1)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(s.performAction(1, "")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(() => createSession({ staleAfterMs: -1 })).toThrow(AxsnapError);
    expect(() => createSession({ destructiveWords: [""] })).toThrow(AxsnapError);
  });
});

describe("coordinates", () => {
  it("hit-tests a point: a destructive element under it needs confirm too", async () => {
    const { b, s } = setup([row("Delete all", 120)]);
    const snap = await s.snapshot({ app: "Editor" });
    const px = (150 - snap.screenshot!.windowOrigin.x) * snap.screenshot!.scale;
    const py = (130 - snap.screenshot!.windowOrigin.y) * snap.screenshot!.scale;
    await expect(s.clickAt(px, py)).rejects.toMatchObject({ code: "POLICY_DENIED" });
    expect(b.fakeLog()).toEqual([]);
  });

  /** A point of the snapshot's screenshot at the centre of a row made by `row(_, y)`. */
  const rowPixels = (snap: Snapshot, y: number) => ({
    x: (220 - snap.screenshot!.windowOrigin.x) * snap.screenshot!.scale,
    y: (y + 10 - snap.screenshot!.windowOrigin.y) * snap.screenshot!.scale,
  });

  it("judges a point by what is under it now: the same element is clicked, and the note names it as it reads now", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140)]);
    const snap = await s.snapshot({ app: "Editor" });
    const p = rowPixels(snap, 120);
    const result = await s.clickAt(p.x, p.y, { snapshot: false });
    expect(result.delivery).toBe("delivered_unverified");
    expect(result.notes).toEqual([
      `the point is on element ${indexOf(snap.text, "Alpha")} (push button Alpha)`,
    ]);
    expect(b.fakeLog()).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer click 220,130 button=1 count=1",
    ]);
  });

  it("refuses with STALE_REF when a harmless other element is under the point now, and clicks it when raw", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140)]);
    const snap = await s.snapshot({ app: "Editor" });
    await b.fakeReplace(desktop([row("Beta", 120), row("Alpha", 140)]));
    const p = rowPixels(snap, 120);
    const e = await s.clickAt(p.x, p.y).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: "STALE_REF", delivery: "not_delivered", retry: "safe" });
    expect((e as AxsnapError).message).toBe(
      `the point is on push button "Beta" now, not on element ${indexOf(snap.text, "Alpha")} (push button Alpha) as snapshot ${snap.id} showed; nothing was sent`,
    );
    expect((e as AxsnapError).hint).toMatch(/raw: true/);
    expect(b.fakeLog()).toEqual([]);
    const raw = await s.clickAt(p.x, p.y, { raw: true, snapshot: false });
    expect(raw.delivery).toBe("delivered_unverified");
    expect(raw.notes.join(" ")).toMatch(
      /the point is on push button "Beta", not on element \d+ \(push button Alpha\)/,
    );
    expect(b.fakeLog()).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer click 220,130 button=1 count=1",
    ]);
  });

  it("refuses a new control in front of the printed one, and one that is disabled now (raw or not)", async () => {
    const { b, s } = setup([row("Alpha", 120)]);
    const snap = await s.snapshot({ app: "Editor" });
    const p = rowPixels(snap, 120);
    // A later sibling over Alpha: drawn on top, so the click would reach it.
    await b.fakeReplace(desktop([row("Alpha", 120), row("Gamma", 120)]));
    const e = await s.clickAt(p.x, p.y).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: "STALE_REF", delivery: "not_delivered" });
    expect((e as AxsnapError).message).toMatch(/push button "Gamma", which snapshot s\w+ did not have/);
    await b.fakeReplace(desktop([row("Alpha", 120, { states: { enabled: false } })]));
    for (const raw of [false, true])
      await expect(s.clickAt(p.x, p.y, { raw })).rejects.toMatchObject({
        code: "NOT_ENABLED",
        delivery: "not_delivered",
      });
    // A scroll over it is not a press: allowed.
    await s.scrollAt(p.x, p.y, { dy: 1 }, { snapshot: false });
    expect(b.fakeLog()).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer wheel 220,130 button=1 count=1",
    ]);
  });

  it("runs the destructive guard on what is under the point now, raw or not", async () => {
    const { b, s } = setup([row("Keep", 120), row("Delete all", 160)]);
    const snap = await s.snapshot({ app: "Editor" });
    await b.fakeReplace(desktop([row("Delete all", 120), row("Keep", 160)]));
    const p = rowPixels(snap, 120);
    await expect(s.clickAt(p.x, p.y)).rejects.toMatchObject({ code: "STALE_REF" });
    await expect(s.clickAt(p.x, p.y, { raw: true })).rejects.toMatchObject({
      code: "POLICY_DENIED",
      message: expect.stringMatching(/"Delete all" looks destructive/),
    });
    expect(b.fakeLog()).toEqual([]);
  });

  it("names the element found again as the agent addressed it, and its new index in a note", async () => {
    const { b, s } = setup([row("Alpha", 120), row("Beta", 140), row("Gamma", 160)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([row("Gamma", 120), row("Beta", 140), row("Alpha", 160)]));
    const alpha = indexOf(snap.text, "Alpha");
    const result = await s.click(alpha);
    expect(result.target).toEqual({ snapshotId: snap.id, index: alpha });
    expect(result.notes.join(" ")).toMatch(
      /element \d+ moved; found again by its identity \(element \d+ of a new observation\)/,
    );
    // The fresh snapshot the result carries is the agent's new view, and the app's latest.
    const held = s.address(indexOf(result.snapshot!.text, "Alpha"));
    expect(held.snapshot.id).toBe(result.snapshot!.id);
    expect(held.record.title).toBe("Alpha");
  });
});

describe("rows", () => {
  it("clicks a row by selecting it in its list, and presses a row that is no choice", async () => {
    const r = (title: string, y: number, selectable: boolean): Node => ({
      role: "table row",
      title,
      states: { selectable },
      actions: ["click"],
      frame: { x: 120, y, w: 600, h: 20 },
    });
    const { b, s } = setup([
      { role: "table", title: "T", frame, children: [r("one", 120, true), r("two", 140, false)] },
    ]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const one = snap.records.find((x) => x.title === "one")!;
    const two = snap.records.find((x) => x.title === "two")!;
    // The backend answers a selection only once the row reads as selected.
    expect(await s.click(one.index, { snapshot: false })).toMatchObject({ delivery: "delivered_verified" });
    // A row that is no choice (not selectable) is not tried in a list: it is pressed as anything else.
    const pressed = await s.click(two.index, { snapshot: false });
    expect(pressed).toMatchObject({ channel: "semantic", notes: [] });
    expect(b.fakeLog()).toEqual([`select ${one.handle}`, `action ${two.handle} click`]);
  });
});
