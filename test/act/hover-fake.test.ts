/**
 * Issue 31, items 1 and 2, on the fake backend: what the pointer lands on is
 * judged once it is there. The hover is forced deterministically: the fake
 * desktop is replaced when a pointer move arrives (the hook below), as an
 * app relabels a control on enter-notify. Every pointer path is covered:
 * pixel clicks, raw ones (the guards judge what is there after the hover),
 * scrolls and drags at pixels (a drag's end first), and clicks, scrolls and
 * drags by ref that fall back to the pointer. The real apps are in
 * test/linux/hover.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AxsnapError } from "../../lib/index.js";
import {
  loadNative,
  type NativeBackend,
  type NativePointerEvent,
  type NativeWindow,
} from "../../lib/native.js";
import type { Snapshot } from "../../lib/observe/snapshot.js";
import { createSession, type Session } from "../../lib/session/session.js";
import { rejects } from "../support/rejects.js";

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
/** A control with no press or scroll action: a click or scroll by ref on it is pointer input. */
const pane = (title: string, y: number): Node => ({
  role: "panel",
  title,
  frame: { x: 120, y, w: 200, h: 20 },
});

function setup(children: Node[], options: Parameters<typeof createSession>[0] = {}) {
  const b = new native.NativeBackend("fake", desktop(children));
  const s = createSession({ backend: b, deadlineMs: 3000, ...options });
  open.push({ b, s });
  return { b, s };
}

afterEach(async () => {
  for (const { b, s } of open.splice(0)) {
    await s.close();
    await b.close();
  }
});

/**
 * The fake app reacts to the pointer: when a move lands in the band y..y+20 (a row), the desktop becomes
 * `hovered` (the row relabelled, replaced, disabled), as enter-notify would make it.
 */
function onHover(b: NativeBackend, y: number, hovered: Node[]): void {
  const send = b.pointer.bind(b);
  // On the instance: the addon's methods are read-only on its prototype.
  Object.defineProperty(b, "pointer", {
    value: async (window: NativeWindow, event: NativePointerEvent, deadlineMs: number) => {
      await send(window, event, deadlineMs);
      if (event.kind === "move" && event.y >= y && event.y < y + 20) await b.fakeReplace(desktop(hovered));
    },
  });
}

/** A point of the snapshot's screenshot at the centre of a row made by `row(_, y)`. */
const rowPixels = (snap: Snapshot, y: number) => ({
  x: (220 - snap.screenshot!.windowOrigin.x) * snap.screenshot!.scale,
  y: (y + 10 - snap.screenshot!.windowOrigin.y) * snap.screenshot!.scale,
});

const indexOf = (snap: Snapshot, name: string) => snap.records.find((r) => r.title === name)!.index;
const pointerLog = (b: NativeBackend) =>
  b.fakeLog().filter((l) => l.startsWith("pointer") || l.startsWith("action"));

function refusedAfterHover(e: AxsnapError, code: string, now: RegExp): void {
  expect(e.code, e.message).toBe(code);
  expect(e.message).toMatch(now);
  expect(e.message).toMatch(/the pointer was moved there and nothing else was sent/);
  expect(e.delivery).toBe("not_delivered");
  expect(e.retry).toBe("safe");
}

describe("pixel input is judged again once the pointer is there", () => {
  it("clickAt: a control relabelled on hover is STALE_REF naming it; only the move was sent", async () => {
    const { b, s } = setup([row("Keep", 120)]);
    const snap = await s.snapshot({ app: "Editor" });
    onHover(b, 120, [row("Delete all", 120)]);
    const p = rowPixels(snap, 120);
    const e = await rejects(s.clickAt(p.x, p.y, { of: snap }));
    refusedAfterHover(
      e,
      "STALE_REF",
      /now that the pointer is there, the point is on push button "Delete all"/,
    );
    expect(e.hint).toMatch(/the pointer is still there/);
    expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
  });

  it("raw: confirm is asked about the name after the hover, once; declined, nothing is pressed", async () => {
    const asked: string[] = [];
    const { b, s } = setup([row("Keep", 120)], {
      confirm: (r) => {
        asked.push(r.name);
        return false;
      },
    });
    const snap = await s.snapshot({ app: "Editor" });
    onHover(b, 120, [row("Delete all", 120)]);
    const p = rowPixels(snap, 120);
    const e = await rejects(s.clickAt(p.x, p.y, { of: snap, raw: true }));
    refusedAfterHover(e, "POLICY_DENIED", /declined "Delete all"/);
    expect(asked).toEqual(["Delete all"]);
    expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
  });

  it("a destructive name confirmed before the move is not asked again after it, and is pressed", async () => {
    const asked: string[] = [];
    const { b, s } = setup([row("Delete all", 120)], {
      confirm: (r) => {
        asked.push(r.name);
        return true;
      },
    });
    const snap = await s.snapshot({ app: "Editor" });
    const p = rowPixels(snap, 120);
    const result = await s.clickAt(p.x, p.y, { of: snap, snapshot: false });
    expect(result.delivery).toBe("delivered_unverified");
    expect(asked).toEqual(["Delete all"]);
    expect(pointerLog(b)).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer click 220,130 button=1 count=1",
    ]);
  });

  it("a control disabled on hover is NOT_ENABLED, raw or not", async () => {
    for (const raw of [false, true]) {
      const { b, s } = setup([row("Keep", 120)]);
      const snap = await s.snapshot({ app: "Editor" });
      onHover(b, 120, [row("Keep", 120, { states: { enabled: false } })]);
      const p = rowPixels(snap, 120);
      refusedAfterHover(await rejects(s.clickAt(p.x, p.y, { of: snap, raw })), "NOT_ENABLED", /Keep/);
      expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
    }
  });

  it("scrollAt: a control replaced on hover is STALE_REF; no wheel step is sent", async () => {
    const { b, s } = setup([row("Keep", 120)]);
    const snap = await s.snapshot({ app: "Editor" });
    onHover(b, 120, [row("Keep", 120), row("Delete all", 120)]);
    const p = rowPixels(snap, 120);
    const e = await rejects(s.scrollAt(p.x, p.y, { dy: 2 }, { of: snap }));
    refusedAfterHover(e, "STALE_REF", /push button "Delete all", which snapshot s\w+ did not have/);
    expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
  });

  it("dragAt: its end is judged with the pointer on it, before the drag starts", async () => {
    const { b, s } = setup([row("Item", 120), row("Archive", 200)]);
    const snap = await s.snapshot({ app: "Editor" });
    onHover(b, 200, [row("Item", 120), row("Delete all", 200)]);
    const from = rowPixels(snap, 120);
    const to = rowPixels(snap, 200);
    const e = await rejects(s.dragAt(from, to, { of: snap }));
    refusedAfterHover(e, "STALE_REF", /the drag's end is on push button "Delete all"/);
    expect(pointerLog(b)).toEqual(["pointer move 220,210 button=1 count=1"]);
  });

  it("dragAt: both ends unchanged by the pointer: the end, then the start, then the drag", async () => {
    const { b, s } = setup([row("Item", 120), row("Archive", 200)]);
    const snap = await s.snapshot({ app: "Editor" });
    const result = await s.dragAt(rowPixels(snap, 120), rowPixels(snap, 200), { of: snap, snapshot: false });
    expect(result.delivery).toBe("delivered_unverified");
    expect(pointerLog(b)).toEqual([
      "pointer move 220,210 button=1 count=1",
      "pointer move 220,130 button=1 count=1",
      "pointer drag 220,130 button=1 count=1",
    ]);
  });
});

describe("pointer input by ref is judged again once the pointer is there", () => {
  it("a click on an element with no press action, relabelled on hover: STALE_REF naming it", async () => {
    const { b, s } = setup([pane("Archive", 120)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    onHover(b, 120, [pane("Delete all", 120)]);
    const e = await rejects(s.click(`@${snap.id}:e${indexOf(snap, "Archive")}`));
    refusedAfterHover(
      e,
      "STALE_REF",
      /\(panel Archive\) reads as panel "Delete all" now that the pointer is on it/,
    );
    expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
  });

  it("a click falling back to the pointer where a new control appears on hover: STALE_REF naming it", async () => {
    const { b, s } = setup([pane("Archive", 120)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    onHover(b, 120, [pane("Archive", 120), row("Delete all", 120)]);
    const e = await rejects(s.click(`@${snap.id}:e${indexOf(snap, "Archive")}`));
    refusedAfterHover(e, "STALE_REF", /is on push button "Delete all", which the observation did not have/);
    expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
  });

  it("a hidden control inside the element (a collapsed <select>'s options) is not in front of it: pressed", async () => {
    // Chromium answers a hit test on a collapsed <select> with one of its options, which say they are not on screen.
    const hidden = (visible: boolean): Node => ({
      ...pane("Fruit", 120),
      children: [{ ...row("Cherry", 120), role: "menu item", states: { visible } }],
    });
    const { b, s } = setup([pane("Fruit", 120)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    onHover(b, 120, [hidden(false)]);
    const result = await s.click(`@${snap.id}:e${indexOf(snap, "Fruit")}`, { snapshot: false });
    expect(result.channel).toBe("synthetic");
    expect(pointerLog(b)).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer click 220,130 button=1 count=1",
    ]);
    // The same option shown (the list opened on hover) is something new in front.
    const other = setup([pane("Fruit", 120)]);
    const again = await other.s.snapshot({ app: "Editor", screenshot: false });
    onHover(other.b, 120, [hidden(true)]);
    const e = await rejects(other.s.click(`@${again.id}:e${indexOf(again, "Fruit")}`));
    refusedAfterHover(e, "STALE_REF", /menu item "Cherry", which the observation did not have/);
  });

  it("a scroll with no scroll action (wheel steps over it), relabelled on hover: STALE_REF", async () => {
    const { b, s } = setup([pane("List", 120)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    onHover(b, 120, [pane("Delete all", 120)]);
    const e = await rejects(s.scroll(`@${snap.id}:e${indexOf(snap, "List")}`, "down", 1));
    refusedAfterHover(e, "STALE_REF", /reads as panel "Delete all"/);
    expect(pointerLog(b)).toEqual(["pointer move 220,130 button=1 count=1"]);
  });

  it("a drag between refs: its end relabelled on hover is STALE_REF, before the drag starts", async () => {
    const { b, s } = setup([row("Item", 120), row("Archive", 200)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    onHover(b, 200, [row("Item", 120), row("Delete all", 200)]);
    const e = await rejects(
      s.drag(`@${snap.id}:e${indexOf(snap, "Item")}`, `@${snap.id}:e${indexOf(snap, "Archive")}`),
    );
    refusedAfterHover(e, "STALE_REF", /reads as push button "Delete all"/);
    expect(pointerLog(b)).toEqual(["pointer move 220,210 button=1 count=1"]);
  });

  it("unchanged by the pointer: moved, then pressed", async () => {
    const { b, s } = setup([pane("Archive", 120)]);
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(`@${snap.id}:e${indexOf(snap, "Archive")}`, { snapshot: false });
    expect(result.channel).toBe("synthetic");
    expect(pointerLog(b)).toEqual([
      "pointer move 220,130 button=1 count=1",
      "pointer click 220,130 button=1 count=1",
    ]);
  });
});
