import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createSnapshot, newSnapshotId } from "../../lib/index.js";
import { button, win } from "../support/build.js";

describe("Snapshot object", () => {
  it("has a short random id without look-alike characters", () => {
    const ids = new Set(Array.from({ length: 2000 }, () => newSnapshotId()));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^s[a-km-np-z2-9]{7}$/);
  });

  it("carries app, window, text, records, completeness, focus and timings", () => {
    const raw = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/save-dialog.json"), "utf8"));
    const snap = createSnapshot({ raw, options: { style: "compact" } });
    expect(snap.app.name).toBe("TextEdit");
    expect(snap.window.scale).toBe(2);
    expect(snap.style).toBe("compact");
    expect(snap.text.startsWith('App: "TextEdit" Window: ')).toBe(true);
    expect(snap.records.length).toBeGreaterThan(5);
    expect(snap.complete).toBe(true);
    expect(snap.cutBy).toEqual([]);
    expect(snap.selectedText).toBe("Untitled");
    expect(snap.records[snap.focusedIndex!]!.roleText).toBe("text field");
    expect(snap.timings.renderMs).toBeGreaterThanOrEqual(0);
    expect(snap.nodesObserved).toBe(raw.walk.nodesObserved);
  });

  it("titles the header and the window as line 0 does: one observation's read (issue 32 §6)", () => {
    // The window list read the title after a save, the walk read the window before it (or the other
    // way round): two reads of one title, one observation.
    const raw = win([button("Save")]);
    raw.window.title = "notes.txt - Mousepad";
    raw.root.title = "*Untitled 1 - Mousepad";
    for (const style of ["tree", "compact"] as const) {
      const snap = createSnapshot({ raw, options: { style } });
      expect(snap.window.title).toBe("*Untitled 1 - Mousepad");
      expect(snap.text).toContain('Window: "*Untitled 1 - Mousepad"');
      expect(snap.text).not.toContain("notes.txt");
    }
    // A window element without a name of its own keeps the listed title.
    const bare = win([button("Save")]);
    bare.window.title = "Listed";
    delete bare.root.title;
    expect(createSnapshot({ raw: bare }).window.title).toBe("Listed");
    expect(createSnapshot({ raw: bare }).text).toContain('Window: "Listed"');
  });

  it("says what cut an incomplete observation", () => {
    const many = Array.from({ length: 30 }, (_, i) => button(`b${i}`));
    const snap = createSnapshot({
      raw: win(many, { walk: { ended: "deadline", nodesObserved: 31 } }),
      options: { maxNodes: 5 },
    });
    expect(snap.complete).toBe(false);
    expect(snap.cutBy).toEqual(["deadline", "render_node_limit"]);
  });

  it("keeps the screenshot and its coordinate contract", () => {
    const screenshot = {
      format: "png" as const,
      data: new Uint8Array([137, 80, 78, 71]),
      pixelWidth: 1600,
      pixelHeight: 1200,
      scale: 2,
      windowOrigin: { x: 100, y: 50 },
    };
    const snap = createSnapshot({ raw: win([button("OK")]), screenshot });
    expect(snap.screenshot).toEqual(screenshot);
  });
});
