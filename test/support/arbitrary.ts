/**
 * fast-check arbitraries for random trees the model allows: both platforms'
 * roles, every optional field, hostile text (newlines, controls, digits that
 * look like indices), hidden frames, and deep or wide shapes.
 */
import fc from "fast-check";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";

const ROLES = [
  "AXGroup",
  "AXUnknown",
  "AXButton",
  "AXStaticText",
  "AXTextField",
  "AXTextArea",
  "AXRow",
  "AXCell",
  "AXOutline",
  "AXTable",
  "AXColumn",
  "AXList",
  "AXLink",
  "AXImage",
  "AXCheckBox",
  "AXRadioButton",
  "AXScrollArea",
  "AXScrollBar",
  "AXWebArea",
  "AXMenu",
  "AXMenuItem",
  "AXMenuBarItem",
  "AXPopUpButton",
  "filler",
  "panel",
  "section",
  "push button",
  "check-box",
  "table row",
  "list item",
  "label",
  "text",
  "page tab",
  "menu",
];

const nasty = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    "",
    " ",
    "12 items",
    "3/5",
    "09:00-10:00",
    "Yesterday 10:42",
    "a\nb",
    "\t7",
    "\u0000x\u0085",
    "😀",
    "| x",
  ),
  fc.string({ unit: "binary", maxLength: 8 }),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const coord = fc.oneof(fc.integer({ min: -500, max: 3000 }), fc.constant(-2147483648));
const rect = fc.record({
  x: coord,
  y: coord,
  w: fc.integer({ min: 0, max: 2000 }),
  h: fc.integer({ min: 0, max: 2000 }),
});

const states = fc.record(
  {
    enabled: fc.boolean(),
    focused: fc.boolean(),
    selected: fc.boolean(),
    selectable: fc.boolean(),
    expanded: fc.boolean(),
    checked: fc.constantFrom(true, false, "mixed" as const),
    secure: fc.boolean(),
    visible: fc.boolean(),
    required: fc.boolean(),
  },
  { requiredKeys: [] },
);

function strip<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

const fields = fc.record({
  role: fc.constantFrom(...ROLES),
  subrole: maybe(
    fc.constantFrom("AXSecureTextField", "AXSearchField", "AXSwitch", "AXTabButton", "AXStandardWindow"),
  ),
  roleDescription: maybe(fc.oneof(fc.constant(""), nasty)),
  title: maybe(nasty),
  description: maybe(nasty),
  help: maybe(nasty),
  value: maybe(
    fc.oneof(
      nasty,
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.boolean(),
      fc.integer({ min: 0, max: 2 }),
    ),
  ),
  settable: maybe(fc.boolean()),
  identifier: maybe(fc.oneof(nasty, fc.constant("_NS:12"))),
  url: maybe(fc.constantFrom("https://a.test/", "file:///tmp/x")),
  placeholder: maybe(nasty),
  selectedText: maybe(nasty),
  charCount: maybe(fc.nat(20)),
  rowIndex: maybe(fc.nat(1000)),
  rowCount: maybe(fc.nat(1000)),
  states: maybe(states),
  actions: maybe(
    fc.subarray([
      "AXPress",
      "AXShowMenu",
      "AXRaise",
      "AXScrollUpByPage",
      "Name:x\ny",
      "click",
      "activate",
      "expand or contract",
      "",
    ]),
  ),
  frame: maybe(rect),
});

export const nodeArb: fc.Arbitrary<RawNode> = fc.letrec<{ node: RawNode }>((tie) => ({
  node: fc
    .tuple(
      fields,
      fc.oneof({ depthSize: "small", maxDepth: 7 }, fc.constant([]), fc.array(tie("node"), { maxLength: 6 })),
    )
    .map(([f, children]) => {
      const n = strip({ ...f }) as RawNode;
      if (n.states) strip(n.states);
      if ((children as RawNode[]).length > 0) n.children = children as RawNode[];
      return n;
    }),
})).node;

export const snapshotArb: fc.Arbitrary<RawSnapshot> = fc
  .record({
    root: nodeArb,
    menuBar: maybe(nodeArb),
    ended: fc.constantFrom("complete", "complete", "deadline", "node_limit", "depth_limit" as const),
    title: nasty,
    platform: fc.constantFrom("macos", "linux" as const),
  })
  .map(({ root, menuBar, ended, title, platform }) => {
    const s: RawSnapshot = {
      version: 1,
      platform,
      app: { name: "App", bundleId: "com.example.app", pid: 1 },
      window: { title, frame: { x: 0, y: 0, w: 1200, h: 800 }, scale: 2 },
      root,
      walk: { ended, nodesObserved: 1 },
    };
    if (menuBar) s.menuBar = menuBar;
    return s;
  });
