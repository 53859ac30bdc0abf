/**
 * Issue 20: where `ocr: "auto"` reads pixels (lib/observe/ocr/plan.ts), and how the
 * text read prints (lib/observe/ocr/merge.ts). The recorded windows of real apps
 * (test/fixtures: GTK, Chromium, Slack, Finder, TextEdit, System Settings…)
 * read nothing in auto; the recorded video player, whose tree names nothing
 * but its window, reads the whole window; a self-drawn element reads only
 * its frame; named leaves inside it and every secure field are painted out.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import { mergeOcrLines } from "../../lib/observe/ocr/merge.js";
import { ocrModeOf, planOcr } from "../../lib/observe/ocr/plan.js";
import { render } from "../../lib/render/index.js";

const fixtures = join(import.meta.dirname, "..", "fixtures");
const load = (f: string) => JSON.parse(readFileSync(join(fixtures, f), "utf8")) as RawSnapshot;

const WIN = { x: 100, y: 50, w: 800, h: 600 };
function linux(children: RawNode[]): RawSnapshot {
  return {
    version: 1,
    platform: "linux",
    app: { name: "demo", pid: 9 },
    window: { title: "Demo", frame: WIN, scale: 1 },
    root: { role: "frame", title: "Demo", frame: WIN, children },
    walk: { ended: "complete", nodesObserved: 1 + children.length },
  } as RawSnapshot;
}
const at = (x: number, y: number, w: number, h: number) => ({ x: WIN.x + x, y: WIN.y + y, w, h });
const label = (title: string, x: number, y: number): RawNode => ({
  role: "label",
  title,
  frame: at(x, y, 80, 20),
});
const controls = ["Minimize", "Maximize", "Close"].map(
  (t, i): RawNode => ({ role: "push button", title: t, frame: at(700 + i * 30, 0, 30, 30) }),
);

describe("ocr: the option", () => {
  it("takes auto (the default), true and false; anything else is INVALID_ARGUMENT with a hint", () => {
    expect([ocrModeOf(undefined), ocrModeOf("auto"), ocrModeOf(true), ocrModeOf(false)]).toEqual([
      "auto",
      "auto",
      true,
      false,
    ]);
    for (const bad of ["on", 1, null, {}, "AUTO"])
      expect(() => ocrModeOf(bad)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }));
  });
});

describe("ocr auto: the thin-tree rule", () => {
  it("reads nothing of any recorded window of a normal app", () => {
    const read = readdirSync(fixtures)
      .filter((f) => f.endsWith(".json") && f !== "video-player.json")
      .map((f) => [f, planOcr(load(f), "auto")?.why ?? "none"]);
    expect(read.length).toBeGreaterThan(8);
    expect(Object.fromEntries(read)).toEqual(Object.fromEntries(read.map(([f]) => [f, "none"])));
  });

  it("reads the whole recorded video player, whose tree names nothing but its window", () => {
    expect(planOcr(load("video-player.json"), "auto")).toMatchObject({ why: "thin", regions: [] });
  });

  it("a window with only its own controls is thin; three named elements are not", () => {
    expect(planOcr(linux(controls), "auto")?.why).toBe("thin");
    expect(planOcr(linux([...controls, label("a", 0, 40), label("b", 0, 60)]), "auto")?.why).toBe("thin");
    expect(
      planOcr(linux([...controls, label("a", 0, 40), label("b", 0, 60), label("c", 0, 80)]), "auto"),
    ).toBe(undefined);
  });

  it("reads a drawing area that covers 5% of the window, only its frame, its named leaves painted out", () => {
    const named = [label("a", 0, 40), label("b", 0, 60), label("c", 0, 80)];
    const inside = label("Legend", 310, 210);
    const area: RawNode = { role: "drawing area", frame: at(300, 200, 200, 120), children: [inside] };
    const plan = planOcr(linux([...named, area]), "auto");
    expect(plan).toMatchObject({ why: "self-drawn", regions: [{ x: 300, y: 200, w: 200, h: 120 }] });
    expect(plan!.elements).toEqual([area]);
    expect(plan!.blanks).toEqual([{ x: 310, y: 210, w: 80, h: 20 }]);
    // 4.9% of the window: not read.
    const small: RawNode = { role: "drawing area", frame: at(300, 200, 196, 120) };
    expect(planOcr(linux([...named, small]), "auto")).toBe(undefined);
  });

  it("paints out every secure field of the window, and a named container is not painted out", () => {
    const page: RawNode = {
      role: "document web",
      title: "Page",
      frame: at(0, 30, 800, 570),
      children: [label("a", 0, 40), label("b", 0, 60), { role: "canvas", frame: at(0, 300, 800, 200) }],
    };
    const password: RawNode = { role: "password text", frame: at(10, 100, 200, 24), value: "hunter2" };
    const plan = planOcr(linux([page, password]), "auto");
    expect(plan?.why).toBe("self-drawn");
    expect(plan!.blanks).toContainEqual({ x: 10, y: 100, w: 200, h: 24 });
    expect(plan!.blanks).not.toContainEqual({ x: 0, y: 30, w: 800, h: 570 });
    // Asked outright: the whole window, the secure field still painted out.
    expect(planOcr(linux([page, password]), true)).toMatchObject({ why: "asked", regions: [] });
    expect(planOcr(linux([page, password]), true)!.blanks).toContainEqual({ x: 10, y: 100, w: 200, h: 24 });
  });

  it("paints out a field that only the label beside it makes secure (issue 31 item 3)", () => {
    // As a backend reads a field whose text it holds back: its length only, nothing that counts as a name.
    const pin: RawNode = { role: "text", frame: at(100, 100, 200, 24), charCount: 4, settable: true };
    const plan = planOcr(linux([label("PIN:", 10, 100), pin]), true);
    expect(plan!.blanks).toContainEqual({ x: 100, y: 100, w: 200, h: 24 });
  });

  it("false reads nothing; a window too small to hold text reads nothing", () => {
    expect(planOcr(linux([]), false)).toBe(undefined);
    const tiny = linux([]);
    tiny.window.frame = { ...WIN, w: 6 };
    expect(planOcr(tiny, true)).toBe(undefined);
  });
});

describe("ocr lines in the snapshot", () => {
  it("print as text (ocr) lines in reading order, nested under the element that holds them", () => {
    const area: RawNode = { role: "drawing area", frame: at(300, 200, 200, 120) };
    const raw = linux([label("a", 0, 40), area]);
    const n = mergeOcrLines(
      raw,
      [
        { text: "second", frame: { x: 310, y: 260, w: 60, h: 14 }, confidence: 0.9 },
        { text: "first", frame: { x: 310, y: 220, w: 60, h: 14 }, confidence: 0.9 },
        { text: "  ", frame: { x: 310, y: 280, w: 60, h: 14 }, confidence: 0.9 },
        { text: "outside", frame: { x: 10, y: 500, w: 60, h: 14 }, confidence: 0.5 },
      ],
      [area],
    );
    expect(n).toBe(3);
    const r = render(raw);
    expect(r.text.split("\n").slice(2)).toEqual([
      "0 frame Demo",
      "\t1 label a",
      "\t2 drawing area",
      "\t\t3 text (ocr) first",
      "\t\t4 text (ocr) second",
      // Read at 0.5: marked unsure on its line (issue 33).
      "\t5 text (ocr, unsure) outside",
    ]);
    expect(r.records[3]).toMatchObject({ frame: { x: 310, y: 220, w: 60, h: 14 } });
    expect(r.records[3]!.handle).toBeUndefined();
  });
});
