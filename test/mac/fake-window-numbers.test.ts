/**
 * macOS window ids that outlive the process (issue 35, third review M3): a window's id is its
 * window-server number, "w" + kCGWindowNumber ("a unique value within the user session",
 * CGWindow.h), which every process sees alike, so the CLI's next process finds the very window a
 * stored snapshot was taken of even when another window has its title. The number comes from the
 * private _AXUIElementGetWindow (looked up at run time, as window managers use it: AltTab's
 * src/api-wrappers/private-apis/ApplicationServices.HIServices.framework.swift), else from the one
 * window of the app at the AX frame in the window server's list; with neither, the id stays
 * "e" + a handle of the listing process, which another process names by title.
 */
import { describe, expect, it } from "vitest";
import { storedOf } from "../../lib/doors/cli/store.js";
import { idOutlivesProcess, observeStoredWindow } from "../../lib/doors/cli/window.js";
import { listWindows, snapshot } from "../../lib/observe/desktop.js";
import { createSession } from "../../lib/session/session.js";
import { appWith, button, cg, DOC_FRAME, macBackends, PID } from "../support/mac-probes.js";
import { type AXElement, axWindow, type CGWindow, loadMacFake, type World } from "../support/mac-world.js";
import { rejects } from "../support/rejects.js";

const _addon = loadMacFake();
const backend = macBackends();

const _FIRST = DOC_FRAME;
const SECOND = { x: 600, y: 120, w: 500, h: 400 };
/** Two "Untitled" documents: AX window 10 is CG window 10, 11 is 11 (the fake pairs them by number). */
function twoUntitled(extra: Partial<World> = {}, cgWindows?: CGWindow[]): World {
  const one = axWindow(10, "Untitled", [button(21, "Save")], { AXMain: true, AXFocused: true });
  const two = axWindow(11, "Untitled", [button(22, "Print", 620, 140)], {}, SECOND);
  return {
    focusedPid: PID,
    apps: [appWith([one, two], 10)],
    windows: cgWindows ?? [cg(10, "Untitled"), cg(11, "Untitled", SECOND)],
    ...extra,
  };
}

const VIEW = { style: "tree", textLimit: 200, maxNodes: 2000, maxDepth: 64 } as const;

/** Process A: the second window listed, observed by id and stored as the CLI stores it. */
async function storeSecond(world: World) {
  const a = backend(world);
  const listed = await listWindows("Editor", {}, a);
  const second = listed.find((w) => w.frame.x === 600)!;
  const snap = await snapshot({ app: "Editor", window: { id: second.id }, screenshot: false }, a);
  expect(snap.text).toMatch(/button Print/);
  const stored = storedOf(snap, VIEW);
  await snap.release();
  return { listed, second, stored };
}

/** Process B: its own backend (its own handles) over `world`, re-observing the stored window. */
async function observeIn(world: World, stored: ReturnType<typeof storedOf>) {
  const b = backend(world);
  const session = createSession({ backend: b });
  try {
    const snap = await observeStoredWindow(stored, (window) =>
      session.snapshot({ app: PID, screenshot: false, ...(window === undefined ? {} : { window }) }),
    );
    return { text: snap.text, window: snap.window };
  } finally {
    await session.close();
  }
}

describe("macOS window ids shared by every process (issue 35 M3)", () => {
  it("M3: a later process finds the second of two 'Untitled' windows by its window-server number", async () => {
    const world = twoUntitled();
    const { listed, second, stored } = await storeSecond(world);
    expect(listed.map((w) => w.id)).toEqual(["w10", "w11"]);
    expect(second.id).toBe("w11");
    expect(idOutlivesProcess(stored.window.id)).toBe(true);
    const seen = await observeIn(world, stored);
    expect(seen.window.id).toBe("w11");
    expect(seen.text).toMatch(/button Print/);
    expect(seen.text).not.toMatch(/button Save/);
  });

  it("a window that closed between the two processes is refused as gone, never taken for the other 'Untitled'", async () => {
    const { stored } = await storeSecond(twoUntitled());
    const one = axWindow(10, "Untitled", [button(21, "Save")], { AXMain: true, AXFocused: true });
    const e = await rejects(
      observeIn({ focusedPid: PID, apps: [appWith([one], 10)], windows: [cg(10, "Untitled")] }, stored),
    );
    expect(e.code).toBe("WINDOW_NOT_FOUND");
    expect(e.message).toMatch(/is gone from Editor; nothing was sent/);
  });

  it("a new window the app opened at the same place is another window: its number differs, the ref is refused", async () => {
    const { stored } = await storeSecond(twoUntitled());
    // Window 11 closed; a new "Untitled" (AX 12, CG 12) opened exactly where it was.
    const one = axWindow(10, "Untitled", [button(21, "Save")], { AXMain: true, AXFocused: true });
    const again = axWindow(12, "Untitled", [button(23, "Print", 620, 140)], {}, SECOND);
    const e = await rejects(
      observeIn(
        {
          focusedPid: PID,
          apps: [appWith([one, again], 10)],
          windows: [cg(10, "Untitled"), cg(12, "Untitled", SECOND)],
        },
        stored,
      ),
    );
    expect(e.code).toBe("WINDOW_NOT_FOUND");
  });

  it("without _AXUIElementGetWindow the number comes from the window server's list, matched by pid and frame", async () => {
    const world = twoUntitled({ axGetWindow: false });
    const { listed, stored } = await storeSecond(world);
    expect(listed.map((w) => w.id)).toEqual(["w10", "w11"]);
    const seen = await observeIn(world, stored);
    expect(seen.window.id).toBe("w11");
    expect(seen.text).toMatch(/button Print/);
  });

  it("without the private call, a window whose frame no CG window has keeps a handle id, and another process is refused honestly", async () => {
    // The window server lists only the first window (the second at a frame it does not have).
    const world = twoUntitled({ axGetWindow: false }, [cg(10, "Untitled")]);
    const { listed, stored } = await storeSecond(world);
    expect(listed[0]?.id).toBe("w10");
    expect(listed[1]?.id).toMatch(/^e\d+$/);
    expect(idOutlivesProcess(stored.window.id)).toBe(false);
    const e = await rejects(observeIn(world, stored));
    expect(e.code).toBe("STALE_REF");
    expect(e.message).toMatch(/several windows titled "Untitled"/);
  });

  it("two CG windows at one frame with one title (tabs) give no number: a guess would name another window", async () => {
    const world = twoUntitled({ axGetWindow: false }, [
      cg(10, "Untitled"),
      cg(30, "Untitled", SECOND),
      cg(31, "Untitled", SECOND, { onScreen: false }),
    ]);
    const listed = await listWindows("Editor", {}, backend(world));
    expect(listed.map((w) => w.id)).toEqual(["w10", expect.stringMatching(/^e\d+$/)]);
  });

  it("the private call's number is checked: one another window of the listing has is not given twice", async () => {
    // AX window 11 is scripted as CG window 10 too (what the private call might answer for a
    // window it maps to its parent): the second gets its number from its own frame instead.
    const world = twoUntitled({}, [cg(10, "Untitled"), cg(11, "Untitled", SECOND)]);
    const app = world.apps[0]!;
    const children = (app.root.attrs.AXChildren as AXElement[]).map((w) =>
      w.id === 11 ? { ...w, cgWindow: 10 } : w,
    );
    app.root.attrs.AXChildren = children;
    const listed = await listWindows("Editor", {}, backend(world));
    expect(listed.map((w) => w.id)).toEqual(["w10", "w11"]);
  });

  it("a window id that no window has (another session's, a made-up one) is WINDOW_NOT_FOUND listing the windows", async () => {
    const b = backend(twoUntitled());
    for (const id of ["w99999", "w11x", "w", "e11"]) {
      const e = await rejects(snapshot({ app: "Editor", window: { id }, screenshot: false }, b));
      expect(e.code).toBe("WINDOW_NOT_FOUND");
      expect(e.message).toMatch(/id w10\b.*id w11\b/);
    }
  });

  it("a focused window gets the same id as its listing entry (window choice and listWindows agree)", async () => {
    const b = backend(twoUntitled());
    const snap = await snapshot({ app: "Editor", screenshot: false }, b);
    expect(snap.window.id).toBe("w10");
    await snap.release();
  });
});
