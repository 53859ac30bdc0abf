/**
 * macOS windows and surfaces on the fake CF/AX layer: stable ids (issue 21 N6-N8), input to a
 * listed menu (N5), and the capture of a surface (N9).
 */
import { afterEach, describe, expect, it } from "vitest";
import { listWindows, snapshot } from "../lib/desktop.js";
import type { NativeBackend } from "../lib/native.js";
import { createSession } from "../lib/session.js";
import {
  type AXElement,
  type CGWindow,
  loadMacFake,
  macBackend,
  type World,
  type WorldApp,
} from "./support/mac-world.js";

const open: NativeBackend[] = [];
function backend(world: World): NativeBackend {
  const b = macBackend(world);
  open.push(b);
  return b;
}
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
  const addon = loadMacFake();
  addon.fakeWorldClear();
  expect(addon.fakeCFLive()).toBe(0);
});

const PID = 500;
const APP_ID = 1;
const FRAME = { x: 100, y: 80, w: 800, h: 600 };
const at = (x: number, y: number, w: number, h: number) => ({ AXPosition: { x, y }, AXSize: { w, h } });

const button = (id: number, title: string): AXElement => ({
  id,
  attrs: {
    AXRole: "AXButton",
    AXRoleDescription: "button",
    AXTitle: title,
    AXEnabled: true,
    ...at(120 + (id % 10) * 60, 120, 50, 24),
  },
  actions: ["AXPress"],
});

function windowEl(
  id: number,
  title: string,
  children: AXElement[],
  extra: Record<string, unknown> = {},
): AXElement {
  return {
    id,
    attrs: {
      AXRole: "AXWindow",
      AXSubrole: "AXStandardWindow",
      AXRoleDescription: "standard window",
      AXTitle: title,
      AXMinimized: false,
      AXMain: false,
      AXFocused: false,
      ...at(FRAME.x, FRAME.y, FRAME.w, FRAME.h),
      AXParent: { ref: APP_ID },
      AXChildren: children,
      ...extra,
    },
    settable: ["AXMain", "AXFocused", "AXMinimized"],
    actions: ["AXRaise"],
  };
}

function appWith(windows: AXElement[], focused?: number): WorldApp {
  const attrs: Record<string, unknown> = {
    AXRole: "AXApplication",
    AXTitle: "Editor",
    AXWindows: windows.map((w) => ({ ref: w.id })),
    AXChildren: windows,
  };
  if (focused !== undefined) attrs.AXFocusedWindow = { ref: focused };
  return { pid: PID, name: "Editor", bundleId: "com.example.editor", root: { id: APP_ID, attrs } };
}

const cg = (number: number, title: string, extra: Partial<CGWindow> = {}): CGWindow => ({
  number,
  pid: PID,
  bounds: FRAME,
  name: title,
  ...extra,
});

describe("macOS window ids (issue 21, N6-N8)", () => {
  const twoWindows = (): World => {
    const doc = windowEl(10, "Doc", [button(21, "OK")], { AXMain: true });
    const find = windowEl(11, "Find", [button(22, "Next")], {
      AXSubrole: "AXDialog",
      ...at(950, 80, 300, 200),
    });
    return {
      focusedPid: PID,
      apps: [appWith([doc, find], 10)],
      windows: [cg(10, "Doc"), cg(11, "Find", { bounds: { x: 950, y: 80, w: 300, h: 200 } })],
    };
  };

  // N6: the id is the element handle; a listing pins one reference per window it lists, so the
  // next listing finds the same window (CFEqual) under the same handle while the window exists.
  it("N6: two listings of an unchanged app give the same ids, and a listed id selects its window", async () => {
    const b = backend(twoWindows());
    const first = await listWindows("Editor", {}, b);
    const second = await listWindows("Editor", {}, b);
    expect(second.map((w) => [w.title, w.id])).toEqual(first.map((w) => [w.title, w.id]));
    const dialog = first.find((w) => w.title === "Find")!;
    const s = await snapshot({ app: "Editor", window: { id: dialog.id }, screenshot: false }, b);
    expect(s.window).toMatchObject({ title: "Find", id: dialog.id });
    expect(s.text).toMatch(/button Next/);
    expect(s.text).not.toMatch(/button OK/);
    await s.release();
    // Released, the snapshot leaves the window's pin: the id still holds.
    expect((await listWindows("Editor", {}, b)).map((w) => w.id)).toEqual(first.map((w) => w.id));
  });

  it("N6: a window that closed loses its pin (its reference is given back), the other keeps its id", async () => {
    const world = twoWindows();
    const b = backend(world);
    const addon = loadMacFake();
    const first = await listWindows("Editor", {}, b);
    const withBoth = addon.fakeCFLive();
    const app = world.apps[0]!;
    const doc = (app.root.attrs.AXChildren as AXElement[])[0]!;
    app.root.attrs.AXWindows = [{ ref: 10 }];
    app.root.attrs.AXChildren = [doc];
    world.windows = [cg(10, "Doc")];
    addon.fakeWorldReplace(world);
    const after = await listWindows("Editor", {}, b);
    expect(after.map((w) => [w.title, w.id])).toEqual([["Doc", first.find((w) => w.title === "Doc")!.id]]);
    expect(addon.fakeCFLive()).toBe(withBoth - 1);
  });

  it("N6: an app that quit gives its windows' pins back at the next listing of apps", async () => {
    const b = backend(twoWindows());
    const addon = loadMacFake();
    const before = addon.fakeCFLive();
    await listWindows("Editor", {}, b);
    expect(addon.fakeCFLive()).toBeGreaterThanOrEqual(before + 2);
    const listed = addon.fakeCFLive();
    addon.fakeWorldReplace({ focusedPid: 0, apps: [], windows: [] });
    await b.listApps(2000);
    // At least the two windows' references.
    expect(addon.fakeCFLive()).toBeLessThanOrEqual(listed - 2);
  });

  // N7: compareWindows matches the listings before and after an action by id.
  it("N7: an action that changes nothing reports no window opened or closed", async () => {
    const b = backend(twoWindows());
    const session = createSession({ backend: b });
    const s = await session.snapshot({ app: "Editor", screenshot: false });
    const ok = s.records.find((r) => r.title === "OK")!;
    const r = await session.click(ok.index, { settle: false });
    expect(r.opened).toEqual([]);
    expect(r.closed).toEqual([]);
    await session.close();
  });

  // N8: waitFor({ window }) observes the window by the id of the listing that found it.
  it("N8: waitFor({ window: 'Find' }) finds the window and observes it", async () => {
    const b = backend(twoWindows());
    const session = createSession({ backend: b });
    const r = await session.waitFor("Editor", { window: "Find" }, { timeoutMs: 3000 });
    expect(r.window).toMatchObject({ title: "Find" });
    expect(r.snapshot.window).toMatchObject({ title: "Find", id: r.window!.id });
    expect(r.snapshot.text).toMatch(/button Next/);
    await session.close();
  });
});

describe("macOS surfaces (issue 21, N5, N9)", () => {
  // N5 (input to a listed surface): a snapshot of an open menu (snapshot({ window: { id } }) with an
  // id from listWindows) gives LiveObservation.window = the AXMenu. Front()/CheckFront require the
  // app's AXFocusedWindow to be that element or its AXParent's child (mac_backend.cc:1455-1470); an
  // open menu is never the key window (AppKit: the key window stays the document window while a
  // menu tracks), so every key press aimed at the menu is refused after the 2 s activation wait.
  it("N5: keys aimed at a snapshot of an open menu are refused: the menu is never 'the app's key window'", async () => {
    const menu: AXElement = {
      id: 40,
      attrs: {
        AXRole: "AXMenu",
        ...at(150, 150, 160, 80),
        AXChildren: [
          {
            id: 41,
            attrs: {
              AXRole: "AXMenuItem",
              AXTitle: "Copy",
              AXEnabled: true,
              AXParent: { ref: 40 },
              ...at(150, 150, 160, 20),
            },
            actions: ["AXPress"],
          },
          {
            id: 42,
            attrs: {
              AXRole: "AXMenuItem",
              AXTitle: "Paste",
              AXEnabled: true,
              AXParent: { ref: 40 },
              ...at(150, 170, 160, 20),
            },
            actions: ["AXPress"],
          },
        ],
      },
    };
    const doc = windowEl(10, "Doc", [button(21, "OK")], { AXMain: true, AXFocused: true });
    const app = appWith([doc], 10);
    // A context menu is a child of the application element while it is open (Surfaces() relies on it).
    app.root.attrs.AXChildren = [doc, menu];
    app.root.attrs.AXFocusedUIElement = { ref: 41 };
    const b = backend({ focusedPid: PID, apps: [app], windows: [cg(10, "Doc")] });
    const session = createSession({ backend: b });
    const listed = await listWindows("Editor", {}, b);
    const m = listed.find((w) => w.role === "AXMenu");
    expect(m).toBeDefined();
    // By index: ids from a listing do not survive it on macOS (N6).
    const s = await session.snapshot({ app: "Editor", window: { index: m!.index }, screenshot: false });
    expect(s.text).toMatch(/Copy/);
    const t0 = Date.now();
    await expect(session.pressKey("down", { snapshot: false })).rejects.toMatchObject({
      message: expect.stringMatching(/did not become the app's key window/),
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500); // the whole activation wait, for nothing
    await session.close();
  }, 30_000);
});
