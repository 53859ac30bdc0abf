import { describe, expect, it } from "vitest";
import { AxsnapError, createSnapshot, render } from "../../lib/index.js";
import type { RawNode } from "../../lib/model/model.js";
import { button, win } from "../support/build.js";

function expectInvalid(input: unknown, where: RegExp): void {
  let caught: unknown;
  try {
    render(input);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(AxsnapError);
  const err = caught as AxsnapError;
  expect(err.code).toBe("INVALID_ARGUMENT");
  expect(err.message).toMatch(where);
  expect(err.hint.length).toBeGreaterThan(10);
  expect(err.retry).toBe("safe");
}

describe("malformed trees are INVALID_ARGUMENT, never a crash or a wrong render", () => {
  const good = () => win([button("OK")]);

  it.each([
    ["null", null, /at \$: expected a snapshot object/],
    ["a string", "tree", /at \$:/],
    ["an array", [], /at \$:/],
    ["wrong version", { ...good(), version: 2 }, /\$\.version/],
    ["unknown platform", { ...good(), platform: "windows" }, /\$\.platform/],
    ["missing app", { ...good(), app: undefined }, /\$\.app/],
    ["pid as string", { ...good(), app: { name: "x", pid: "42" } }, /\$\.app\.pid/],
    ["window without frame", { ...good(), window: { title: "t", scale: 1 } }, /\$\.window\.frame/],
    [
      "NaN frame",
      { ...good(), window: { title: "t", scale: 1, frame: { x: Number.NaN, y: 0, w: 1, h: 1 } } },
      /frame\.x/,
    ],
    [
      "zero scale",
      { ...good(), window: { title: "t", scale: 0, frame: { x: 0, y: 0, w: 1, h: 1 } } },
      /scale/,
    ],
    ["missing walk", { ...good(), walk: undefined }, /\$\.walk/],
    ["unknown walk end", { ...good(), walk: { ended: "tired", nodesObserved: 1 } }, /walk\.ended/],
    ["missing root", { ...good(), root: undefined }, /\$\.root/],
  ])("rejects %s", (_name, input, where) => expectInvalid(input, where));

  it.each([
    ["a node without role", { title: "x" }, /children\[0\]\.role/],
    ["a numeric title", { role: "AXButton", title: 5 }, /children\[0\]\.title/],
    ["an object value", { role: "AXButton", value: {} }, /children\[0\]\.value/],
    ["an infinite value", { role: "AXSlider", value: Number.POSITIVE_INFINITY }, /children\[0\]\.value/],
    ["actions as a string", { role: "AXButton", actions: "AXPress" }, /children\[0\]\.actions/],
    ["a non-string action", { role: "AXButton", actions: ["AXPress", 3] }, /actions\[1\]/],
    ["children as an object", { role: "AXGroup", children: {} }, /children\[0\]\.children/],
    ["a null child", { role: "AXGroup", children: [null] }, /children\[0\]\.children\[0\]/],
    ["states.enabled as string", { role: "AXButton", states: { enabled: "yes" } }, /states\.enabled/],
    ["states.checked as number", { role: "AXCheckBox", states: { checked: 1 } }, /states\.checked/],
    ["a bad frame", { role: "AXButton", frame: { x: 0, y: 0, w: "10", h: 1 } }, /frame\.w/],
    ["a negative rowCount", { role: "AXTable", rowCount: -1 }, /rowCount/],
    ["a fractional handle", { role: "AXButton", handle: 1.5 }, /handle/],
    ["an unknown valueType", { role: "AXButton", valueType: "date" }, /valueType/],
    ["an unknown child source", { role: "AXRow", via: "magic" }, /via/],
  ])("rejects %s", (_name, node, where) => expectInvalid(win([node as RawNode]), where));

  it("rejects a cycle through children", () => {
    const s = win([]);
    const a: RawNode = { role: "AXGroup", children: [] };
    a.children!.push(a);
    s.root.children = [a];
    expectInvalid(s, /appears twice/);
  });

  it("rejects a child shared between two parents", () => {
    const shared = button("shared");
    expectInvalid(
      win([
        { role: "AXGroup", children: [shared] },
        { role: "AXGroup", children: [shared] },
      ]),
      /appears twice/,
    );
  });

  it("rejects a node shared between the window and the menu bar", () => {
    const shared = button("shared");
    const s = win([shared]);
    s.menuBar = { role: "AXMenuBar", children: [shared] };
    expectInvalid(s, /\$\.menuBar.*appears twice/);
  });

  it("rejects a tree deeper than the model allows without overflowing the stack", () => {
    let deep: RawNode = button("leaf");
    for (let i = 0; i < 100_000; i++) deep = { role: "AXGroup", children: [deep] };
    expectInvalid(win([deep]), /deeper than 2048 levels/);
  });

  it("renders the deepest tree the model allows", () => {
    let deep: RawNode = button("leaf");
    for (let i = 0; i < 2000; i++) deep = { role: "AXSplitGroup", children: [deep] };
    const r = render(win([deep]));
    expect(r.complete).toBe(false);
    expect(r.records).toHaveLength(65);
  });

  it("createSnapshot validates too", () => {
    expect(() => createSnapshot({ raw: { version: 1 } })).toThrow(AxsnapError);
  });
});
