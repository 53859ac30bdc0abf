/**
 * Issue 32 §1 on the fake backend: an action whose semantic call opens a
 * modal dialog that holds the app. The world names its toolkit (GTK 3: an
 * action runs inside the accessibility call) and a button's `holdsApp` fault
 * makes its action answer and then leaves the app answering nothing until
 * key or pointer input reaches it (the dialog closing), so "the call does not
 * come back" is forced, not hoped for. A press that may open a dialog goes by
 * pointer where the element is on screen; where it is not, the action is
 * used, and the reply, later snapshots and their hints say what holds the app.
 */
import { describe, expect, it } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { liveObservation } from "../../lib/observe/desktop.js";
import { actionsRunInCall } from "../../lib/session/act/modal.js";
import { EDITOR_FRAME, useFakeSessions } from "../support/editor.js";
import { indexOf } from "../support/lines.js";
import { rejects } from "../support/rejects.js";

const { open } = useFakeSessions(3000);

const GTK3 = { name: "GTK", version: "3.24.38" };

/** The Editor with `children`, its toolkit `toolkit`. */
function world(children: Record<string, unknown>[], toolkit?: { name: string; version: string }) {
  return {
    apps: [
      {
        name: "Editor",
        pid: 77,
        ...(toolkit ? { toolkit } : {}),
        windows: [
          {
            title: "W",
            frame: EDITOR_FRAME,
            root: { role: "frame", title: "W", frame: EDITOR_FRAME, children },
          },
        ],
      },
    ],
  };
}

const saveAs = (extra: Record<string, unknown> = {}) => ({
  role: "push button",
  title: "Save As",
  actions: ["click"],
  frame: { x: 120, y: 140, w: 200, h: 20 },
  fault: { holdsApp: true },
  ...extra,
});
/** Below the window: the pointer cannot reach it, so its action is the only way. */
const offScreen = { frame: { x: 120, y: 900, w: 200, h: 20 } };

const log = (b: NativeBackend) => b.fakeLog().filter((l) => !l.startsWith("ocr"));

describe("which toolkits run an action inside the accessibility call", () => {
  it("GTK before 4 does; GTK 4, Qt, Chromium and an unnamed toolkit do not", () => {
    expect(actionsRunInCall("GTK", "3.24.38")).toBe(true);
    expect(actionsRunInCall("gtk", "2.24.33")).toBe(true);
    expect(actionsRunInCall("GTK", "4.8.3")).toBe(false);
    expect(actionsRunInCall("Qt", "5.15.8")).toBe(false);
    expect(actionsRunInCall("Chromium", "120")).toBe(false);
    expect(actionsRunInCall("", "")).toBe(false);
  });
});

describe("a press that may open a dialog, in GTK 3", () => {
  it("is a pointer click where the button is on screen: the app keeps answering", async () => {
    const { b, s } = open(world([saveAs()], GTK3));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(indexOf(snap, /push button Save As/));
    expect(result.channel).toBe("synthetic");
    expect(result.notes.join("\n")).toMatch(/clicked with the pointer, not by its action/);
    expect(log(b).filter((l) => /^(action|pointer click)/.test(l))).toEqual([
      "pointer click 220,150 button=1 count=1",
    ]);
    expect(result.snapshot).toBeDefined();
  });

  it("in a toolkit that does not run actions in the call, is its action as before", async () => {
    const { b, s } = open(world([saveAs({ fault: {} })], { name: "Qt", version: "5.15.8" }));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(indexOf(snap, /push button Save As/));
    expect(result.channel).toBe("semantic");
    expect(log(b).some((l) => l.startsWith("pointer click"))).toBe(false);
  });

  it("off screen, its action is used; the call does not come back: the reply says what holds the app, within the deadline", async () => {
    const { b, s } = open(world([saveAs(offScreen)], GTK3));
    const snap = await s.snapshot({ app: "Editor" });
    const started = performance.now();
    const result = await s.click(indexOf(snap, /push button Save As/), { deadlineMs: 3000 });
    expect(performance.now() - started).toBeLessThan(3000 + 250);
    expect(result.channel).toBe("semantic");
    expect(result.delivery).toBe("delivered_unverified");
    expect(log(b).some((l) => /^action \d+ click$/.test(l))).toBe(true);
    expect(result.snapshot).toBeUndefined();
    const notes = result.notes.join("\n");
    expect(notes).toMatch(/pressed by its action: it is not on screen inside its window/);
    expect(notes).toMatch(/stopped answering its accessibility right after this click/);
    expect(notes).toMatch(/modal dialog/);

    // Later snapshots say what holds it, not "wait a moment".
    for (const app of ["Editor", 77] as const) {
      const e = await rejects(s.snapshot({ app, screenshot: false }));
      expect(e.code).toBe("APP_UNRESPONSIVE");
      expect(e.message).toMatch(/has not answered its accessibility since a click .* modal dialog/);
      expect(e.hint).toMatch(/ask the user to finish or close that dialog/);
      expect(e.hint).not.toMatch(/wait a moment/);
    }

    // Input cannot be judged in an app that answers nothing: refused, nothing sent.
    const refused = await rejects(s.clickAt(300, 300, { app: "Editor", raw: true, snapshot: false }));
    expect(refused.delivery).toBe("not_delivered");
    expect(log(b).some((l) => l.startsWith("pointer click"))).toBe(false);
    // The user closes the dialog (keys reach it at the X level); the app answers again.
    await b.keys(liveObservation(snap)!.window, "Escape", 1000);
    expect(b.fakeLog()).toContain("released 77");
    const back = await s.snapshot({ app: "Editor", screenshot: false });
    expect(back.text).toMatch(/push button Save As/);
  });
});
