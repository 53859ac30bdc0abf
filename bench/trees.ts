/**
 * Deterministic benchmark trees: a 1,200-node window shaped like a real
 * productivity app (toolbar, sidebar outline, a web area of message groups,
 * a form) so the renderer's rules all run, not just one fast path.
 */
import type { RawNode, RawSnapshot } from "../lib/model/model.js";

const W = { x: 0, y: 25, w: 1440, h: 875 };

function text(value: string, y: number): RawNode {
  return { role: "AXStaticText", roleDescription: "text", value, frame: { x: 300, y, w: 200, h: 16 } };
}

function count(n: RawNode): number {
  return 1 + (n.children ?? []).reduce((a, c) => a + count(c), 0);
}

export function mixedWindow(targetNodes = 1200): RawSnapshot {
  const toolbar: RawNode = {
    role: "AXToolbar",
    roleDescription: "toolbar",
    frame: { x: 0, y: 25, w: 1440, h: 52 },
    children: ["back", "forward", "share", "new"].map((d, i) => ({
      role: "AXButton",
      roleDescription: "button",
      description: d,
      actions: ["AXPress"],
      frame: { x: 80 + i * 40, y: 35, w: 32, h: 28 },
    })),
  };
  const rows: RawNode[] = [];
  for (let i = 0; i < 60; i++) {
    rows.push({
      role: "AXRow",
      roleDescription: "row",
      via: "rows",
      rowIndex: i,
      states: { selectable: true, selected: i === 3 },
      frame: { x: 0, y: 90 + i * 24, w: 240, h: 24 },
      children: [
        {
          role: "AXCell",
          roleDescription: "cell",
          children: [
            { role: "AXImage", roleDescription: "image", description: "folder" },
            text(`Channel ${i}`, 90 + i * 24),
          ],
        },
      ],
    });
  }
  const sidebar: RawNode = {
    role: "AXScrollArea",
    roleDescription: "scroll area",
    frame: { x: 0, y: 77, w: 240, h: 823 },
    actions: ["AXScrollUpByPage", "AXScrollDownByPage"],
    children: [
      {
        role: "AXOutline",
        roleDescription: "outline",
        description: "sidebar",
        frame: { x: 0, y: 77, w: 240, h: 1500 },
        children: rows,
      },
    ],
  };
  const messages: RawNode[] = [];
  const web: RawNode = {
    role: "AXWebArea",
    roleDescription: "HTML content",
    description: "Messages",
    url: "https://chat.example.test/c/general",
    frame: { x: 240, y: 77, w: 1200, h: 823 },
    children: messages,
  };
  const snap: RawSnapshot = {
    version: 1,
    platform: "macos",
    app: { name: "Chat", bundleId: "com.example.chat", pid: 4242 },
    window: { title: "general – Chat", frame: W, scale: 2 },
    root: {
      role: "AXWindow",
      subrole: "AXStandardWindow",
      roleDescription: "standard window",
      title: "general – Chat",
      frame: W,
      actions: ["AXRaise"],
      children: [toolbar, sidebar, web],
    },
    walk: { ended: "complete", nodesObserved: 0 },
  };
  let i = 0;
  while (count(snap.root) < targetNodes) {
    const y = 90 + (i % 40) * 20;
    const kind = i % 5;
    if (kind === 0) {
      // A message bubble: wrapper > wrapper > author, time, text (merges into one line).
      messages.push({
        role: "AXGroup",
        children: [
          {
            role: "AXGroup",
            children: [
              text(`user${i % 7}`, y),
              text(`${(i % 12) + 1}:0${i % 6} PM`, y),
              text(`message number ${i} about the plan`, y),
            ],
          },
        ],
      });
    } else if (kind === 1) {
      messages.push({
        role: "AXGroup",
        children: [
          { role: "AXLink", url: `https://example.test/doc/${i}`, children: [text(`Document ${i}`, y)] },
          {
            role: "AXButton",
            roleDescription: "button",
            description: "React",
            actions: ["AXPress", "AXShowMenu"],
            frame: { x: 900, y, w: 24, h: 24 },
          },
          {
            role: "AXGroup",
            actions: ["AXPress"],
            frame: { x: 930, y, w: 24, h: 24 },
            children: [{ role: "AXImage", roleDescription: "image" }],
          },
        ],
      });
    } else if (kind === 2) {
      messages.push({
        role: "AXGroup",
        children: [
          {
            role: "AXTextField",
            roleDescription: "text field",
            title: `Field ${i}`,
            value: `value ${i}`,
            settable: true,
            valueType: "string",
            placeholder: "Type here",
          },
          {
            role: "AXCheckBox",
            roleDescription: "check box",
            title: `Option ${i}`,
            value: i % 2,
            actions: ["AXPress"],
          },
        ],
      });
    } else if (kind === 3) {
      messages.push({
        role: "AXHeading",
        roleDescription: "heading",
        title: `Section ${i}`,
        children: [text(`Section ${i}`, y)],
      });
    } else {
      messages.push({
        role: "AXGroup",
        children: [
          text(`Alice ${i}`, y),
          text(`Yesterday at 10:${10 + (i % 50)} AM`, y),
          text("see 3/5 items", y),
        ],
      });
    }
    i++;
  }
  snap.walk.nodesObserved = count(snap.root);
  return snap;
}
