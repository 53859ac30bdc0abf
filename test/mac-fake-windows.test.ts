/**
 * Review probes (macos-review-2 N5-N8), unmodified: they pass while the defects are present.
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

describe("macOS windows: probes", () => {
  // N6 (window ids): types.h says WindowInfo.id is "stable while the window exists"; Linux sets it to
  // the AT-SPI object path, MacBackend never sets it, so NormalizeWindows (window_choice.cc:24) derives
  // "e<handle>". listWindows releases its handles (addon.cc ListWindows: ReleaseUnheld), so the next
  // Intern of the same AX window gives a new handle and a new id.
  it("N6: on macOS a window's id changes between two listings of an unchanged app; snapshot({ window: { id } }) then fails", async () => {
    const doc = windowEl(10, "Doc", [button(21, "OK")], { AXMain: true });
    const find = windowEl(11, "Find", [button(22, "Next")], {
      AXSubrole: "AXDialog",
      ...at(950, 80, 300, 200),
    });
    const b = backend({
      focusedPid: PID,
      apps: [appWith([doc, find], 10)],
      windows: [cg(10, "Doc"), cg(11, "Find", { bounds: { x: 950, y: 80, w: 300, h: 200 } })],
    });
    const first = await listWindows("Editor", {}, b);
    const second = await listWindows("Editor", {}, b);
    expect(first.map((w) => w.title)).toEqual(second.map((w) => w.title));
    // Same windows, different ids.
    expect(first.map((w) => w.id)).not.toEqual(second.map((w) => w.id));
    const dialog = first.find((w) => w.title === "Find")!;
    await expect(
      snapshot({ app: "Editor", window: { id: dialog.id }, screenshot: false }, b),
    ).rejects.toMatchObject({
      code: "WINDOW_NOT_FOUND",
    });
  });

  // N7: the same instability makes every action's `opened` / `closed` (compareWindows by id, result.ts)
  // report a window that no live snapshot holds as both closed and opened, though nothing changed.
  it("N7: an action that changes nothing reports the app's other window as closed and opened", async () => {
    const doc = windowEl(10, "Doc", [button(21, "OK")], { AXMain: true });
    const find = windowEl(11, "Find", [button(22, "Next")], {
      AXSubrole: "AXDialog",
      ...at(950, 80, 300, 200),
    });
    const b = backend({
      focusedPid: PID,
      apps: [appWith([doc, find], 10)],
      windows: [cg(10, "Doc"), cg(11, "Find", { bounds: { x: 950, y: 80, w: 300, h: 200 } })],
    });
    const session = createSession({ backend: b });
    const s = await session.snapshot({ app: "Editor", screenshot: false });
    const ok = s.records.find((r) => r.title === "OK")!;
    const r = await session.click(ok.index, { settle: false });
    expect(r.opened?.map((w) => w.title)).toEqual(["Find"]);
    expect(r.closed?.map((w) => w.title)).toEqual(["Find"]);
    await session.close();
  });

  // N8: waitFor({ window }) finds the window in a listing, then observes it by that listing's id
  // (act/wait.ts: env.observe({ window: { id: found.id } })); the observation lists again, the id has
  // changed (N6), and the wait that succeeded fails with WINDOW_NOT_FOUND.
  it("N8: waitFor({ window: 'Find' }) sees the window, then fails to observe it", async () => {
    const doc = windowEl(10, "Doc", [button(21, "OK")], { AXMain: true });
    const find = windowEl(11, "Find", [button(22, "Next")], {
      AXSubrole: "AXDialog",
      ...at(950, 80, 300, 200),
    });
    const b = backend({
      focusedPid: PID,
      apps: [appWith([doc, find], 10)],
      windows: [cg(10, "Doc"), cg(11, "Find", { bounds: { x: 950, y: 80, w: 300, h: 200 } })],
    });
    const session = createSession({ backend: b });
    await expect(session.waitFor("Editor", { window: "Find" }, { timeoutMs: 3000 })).rejects.toMatchObject({
      code: "WINDOW_NOT_FOUND",
      message: expect.stringMatching(/no window with id "e\d+".*"Find" \(dialog, id e\d+\)/),
    });
    await session.close();
  });

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
