/**
 * Which window the CLI observes again for a stored snapshot (lib/doors/cli/window.ts),
 * pure: a platform id (an AT-SPI path, a macOS window-server number "w" + N) names the
 * window itself; an id the core made from a handle ("e" + handle) means nothing to another process, so
 * the exact title names it then. The real-desktop half is test/doors/cli-refs.test.ts.
 */
import { describe, expect, it } from "vitest";
import { idOutlivesProcess, windowDifference, windowToObserve } from "../../lib/doors/cli/window.js";

const frame = { x: 40, y: 40, w: 400, h: 240 };
const stored = (id: string, title = "Doc") => ({ id, title, kind: "window" as const, frame, scale: 1 });

describe("the window a stored snapshot is observed again in", () => {
  it("is named by its id where the id outlives the process, else by its exact title", () => {
    expect(idOutlivesProcess("/org/a11y/atspi/accessible/1")).toBe(true);
    // macOS: the window server's number (kCGWindowNumber), the same in every process.
    expect(idOutlivesProcess("w1234")).toBe(true);
    expect(windowToObserve(stored("w1234"))).toEqual({ id: "w1234" });
    expect(idOutlivesProcess("e12")).toBe(false);
    expect(idOutlivesProcess("")).toBe(false);
    expect(windowToObserve(stored("/org/a11y/atspi/accessible/1"))).toEqual({
      id: "/org/a11y/atspi/accessible/1",
    });
    // A handle of the process that printed it could be any window here: never used.
    expect(windowToObserve(stored("e12"))).toEqual({ title: "Doc" });
    expect(windowToObserve(stored("e12", ""))).toBeUndefined();
  });

  it("must be the same window (its id, else its title), kind and frame", () => {
    const was = stored("/org/a11y/atspi/accessible/1");
    const same = { id: was.id, title: "Doc", kind: "window", frame: { ...frame }, scale: 1 };
    expect(windowDifference(was, same)).toBeUndefined();
    expect(windowDifference(was, { ...same, id: "/org/a11y/atspi/accessible/9" })).toMatch(/another window/);
    expect(windowDifference(was, { ...same, kind: "dialog" })).toMatch(/a dialog now, not a window/);
    // Its id names it: a new title is the same window retitled ("Doc" → "*Doc").
    expect(windowDifference(was, { ...same, title: "*Doc" })).toBeUndefined();
    // Named by its title (no id that outlives the process), the title must hold.
    expect(windowDifference(stored("e3"), { ...same, id: "e7", title: "Doc 2" })).toMatch(/titled "Doc 2"/);
    expect(windowDifference(was, { ...same, frame: { ...frame, x: 41 } })).toMatch(/moved or was resized/);
    // Without an id that outlives the process, the rest still decides.
    expect(windowDifference(stored("e3"), { ...same, id: "e7" })).toBeUndefined();
    expect(windowDifference(stored("e3"), { ...same, id: "e7", kind: "dialog" })).toMatch(/dialog/);
  });
});
