/**
 * macOS windows on other Spaces (issue 35, third review M1). kAXWindowsAttribute lists the windows
 * of the current Space only (the project's mac_recover.cc; AltTab's src/api-wrappers/AXUIElement.swift
 * windows(): "doesn't return windows on other Spaces"), and a full-screen window is a Space of its
 * own. A window such a listing leaves out has not closed: it keeps its pin (and so its handle and
 * its id) while its element still answers and the window server still lists its number, and it is
 * listed meanwhile as not visible, so a Space switch opens and closes nothing. A window that really
 * closed (its element answers kAXErrorInvalidUIElement, or the window server no longer lists it)
 * loses its id. On the fake, "on another Space" is an AXWindow element that stays in the world (it
 * answers) but is not in the app's AXWindows, with its CG window not on screen.
 */
import { describe, expect, it } from "vitest";
import { listWindows, snapshot } from "../../lib/observe/desktop.js";
import { compareWindows } from "../../lib/observe/windows.js";
import { appWith, button, cg, macBackends, PID } from "../support/mac-probes.js";
import { type AXElement, axWindow, loadMacFake, type World, type WorldApp } from "../support/mac-world.js";
import { rejects } from "../support/rejects.js";

const addon = loadMacFake();
const backend = macBackends();

const NOTES_FRAME = { x: 950, y: 80, w: 300, h: 200 };
/** The app with `listed` in AXWindows and `alive` elements that answer but are not listed (another Space). */
function appOf(listed: AXElement[], alive: AXElement[] = [], focused = 10): WorldApp {
  const app = appWith(listed, focused);
  app.root.attrs.AXChildren = [...listed, ...alive];
  return app;
}

const doc = () => axWindow(10, "Doc", [button(21, "OK")], { AXMain: true, AXFocused: true });
const notes = () => axWindow(11, "Notes", [button(22, "Next", 960, 120)], {}, NOTES_FRAME);

const both = (extra: Partial<World> = {}): World => ({
  focusedPid: PID,
  apps: [appOf([doc(), notes()])],
  windows: [cg(10, "Doc"), cg(11, "Notes", NOTES_FRAME)],
  ...extra,
});
/** The user is on another Space holding only "Doc" (or "Notes" went full screen). */
const notesElsewhere = (extra: Partial<World> = {}): World => ({
  focusedPid: PID,
  apps: [appOf([doc()], [notes()])],
  windows: [cg(10, "Doc"), cg(11, "Notes", NOTES_FRAME, { onScreen: false })],
  ...extra,
});

describe("macOS windows on other Spaces (issue 35 M1)", () => {
  it("M1: a window on another Space for one listing keeps its id, and its old id still resolves when it is back", async () => {
    const b = backend(both());
    const first = await listWindows("Editor", {}, b);
    const notesId = first.find((w) => w.title === "Notes")!.id;
    const docId = first.find((w) => w.title === "Doc")!.id;

    addon.fakeWorldReplace(notesElsewhere());
    const elsewhere = await listWindows("Editor", {}, b);
    // Still listed, not visible: it exists, on another Space.
    expect(elsewhere.map((w) => [w.title, w.id, w.visible])).toEqual([
      ["Doc", docId, true],
      ["Notes", notesId, false],
    ]);

    addon.fakeWorldReplace(both());
    const back = await listWindows("Editor", {}, b);
    expect(back.find((w) => w.title === "Doc")!.id).toBe(docId);
    expect(back.find((w) => w.title === "Notes")!.id).toBe(notesId);
    const snap = await snapshot({ app: "Editor", window: { id: notesId }, screenshot: false }, b);
    expect(snap.text).toMatch(/button Next/);
    await snap.release();
  });

  // An action's result compares the app's listings before and after it by id (lib/session/act/result.ts
  // finish → compareWindows): an action that switched the Space (Front() activation, a full-screen
  // toggle) must not report the windows left on the other Space as closed.
  it("a Space switch opens and closes nothing: the listings an action's result compares differ only in visibility", async () => {
    const b = backend(both());
    const before = await listWindows("Editor", {}, b);
    addon.fakeWorldReplace(notesElsewhere());
    const after = await listWindows("Editor", {}, b);
    expect(compareWindows(before, after)).toEqual({ opened: [], closed: [] });
    addon.fakeWorldReplace(both());
    expect(compareWindows(after, await listWindows("Editor", {}, b))).toEqual({ opened: [], closed: [] });
  });

  it("a window that closed while on another Space loses its id: its element is gone", async () => {
    const b = backend(both());
    const notesId = (await listWindows("Editor", {}, b)).find((w) => w.title === "Notes")!.id;
    addon.fakeWorldReplace(notesElsewhere());
    await listWindows("Editor", {}, b);
    const handles = (await b.handleStats()).table ?? 0;
    // Closed: AX no longer has the element, the window server no longer lists it.
    addon.fakeWorldReplace({ focusedPid: PID, apps: [appOf([doc()])], windows: [cg(10, "Doc")] });
    const now = await listWindows("Editor", {}, b);
    expect(now.map((w) => w.title)).toEqual(["Doc"]);
    expect((await b.handleStats()).table).toBe(handles - 1);
    const e = await rejects(snapshot({ app: "Editor", window: { id: notesId }, screenshot: false }, b));
    expect(e.code).toBe("WINDOW_NOT_FOUND");
  });

  it("a window whose element still answers but that the window server no longer lists has closed (an app keeping the object)", async () => {
    const b = backend(both());
    await listWindows("Editor", {}, b);
    addon.fakeWorldReplace({ focusedPid: PID, apps: [appOf([doc()], [notes()])], windows: [cg(10, "Doc")] });
    expect((await listWindows("Editor", {}, b)).map((w) => w.title)).toEqual(["Doc"]);
  });

  it("without a window-server number, the pin alone keeps the handle id across the Space switch", async () => {
    // No private call and no CG window at the frames: ids are handle ids ("e<N>").
    const b = backend(both({ axGetWindow: false, windows: [] }));
    const first = await listWindows("Editor", {}, b);
    const notesId = first.find((w) => w.title === "Notes")!.id;
    expect(notesId).toMatch(/^e\d+$/);
    addon.fakeWorldReplace(notesElsewhere({ axGetWindow: false, windows: [] }));
    expect((await listWindows("Editor", {}, b)).find((w) => w.title === "Notes")?.id).toBe(notesId);
    addon.fakeWorldReplace(both({ axGetWindow: false, windows: [] }));
    expect((await listWindows("Editor", {}, b)).find((w) => w.title === "Notes")?.id).toBe(notesId);
  });

  it("window choice never takes a window on another Space: the default snapshot faces the one here", async () => {
    const b = backend(both());
    await listWindows("Editor", {}, b);
    addon.fakeWorldReplace(notesElsewhere());
    const snap = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(snap.window.title).toBe("Doc");
    await snap.release();
  });

  it("kept windows are bounded: of twelve windows gone to other Spaces, the eight last listed stay, and the handle table does not grow", async () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      axWindow(30 + i, `W${i}`, [], {}, { x: 10 * i, y: 40, w: 400, h: 300 }),
    );
    const cgs = many.map((_, i) => cg(30 + i, `W${i}`, { x: 10 * i, y: 40, w: 400, h: 300 }));
    const b = backend({ focusedPid: PID, apps: [appOf([doc(), ...many])], windows: [cg(10, "Doc"), ...cgs] });
    await listWindows("Editor", {}, b);
    const handles = (await b.handleStats()).table ?? 0;
    const away = {
      focusedPid: PID,
      apps: [appOf([doc()], many)],
      windows: [cg(10, "Doc"), ...cgs.map((w) => ({ ...w, onScreen: false }))],
    };
    addon.fakeWorldReplace(away);
    const listed = await listWindows("Editor", {}, b);
    expect(listed.filter((w) => !w.visible)).toHaveLength(8);
    expect((await b.handleStats()).table).toBe(handles - 4);
    for (let i = 0; i < 3; i++) await listWindows("Editor", {}, b);
    expect((await b.handleStats()).table).toBe(handles - 4);
  });
});
