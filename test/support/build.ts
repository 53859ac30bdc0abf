/** Small builders for hand-written trees in rule tests. */
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";

export function win(children: RawNode[], extra: Partial<RawSnapshot> = {}): RawSnapshot {
  return {
    version: 1,
    platform: "macos",
    app: { name: "TestApp", bundleId: "com.example.test", pid: 42 },
    window: { title: "Main", frame: { x: 100, y: 50, w: 800, h: 600 }, scale: 2 },
    root: {
      role: "AXWindow",
      subrole: "AXStandardWindow",
      roleDescription: "standard window",
      title: "Main",
      frame: { x: 100, y: 50, w: 800, h: 600 },
      children,
    },
    walk: { ended: "complete", nodesObserved: 1 + count(children) },
    ...extra,
  };
}

/** Counts nodes iteratively and tolerates the malformed trees the abuse tests build. */
export function count(nodes: RawNode[]): number {
  let n = 0;
  const stack: unknown[] = [...nodes];
  while (stack.length > 0) {
    const c = stack.pop() as RawNode | null;
    n++;
    if (Array.isArray(c?.children)) stack.push(...c.children);
  }
  return n;
}

export const text = (value: string, frame?: RawNode["frame"]): RawNode => ({
  role: "AXStaticText",
  roleDescription: "text",
  value,
  ...(frame ? { frame } : {}),
});

export const group = (children: RawNode[], extra: Partial<RawNode> = {}): RawNode => ({
  role: "AXGroup",
  roleDescription: "group",
  children,
  ...extra,
});

export const button = (title: string, extra: Partial<RawNode> = {}): RawNode => ({
  role: "AXButton",
  roleDescription: "button",
  title,
  actions: ["AXPress"],
  ...extra,
});

/** The tree lines only: header, footer and closing lines dropped. */
export function body(text: string): string[] {
  return text.split("\n").filter((l) => /^\t*\d/.test(l) || /^\t*\|/.test(l));
}
