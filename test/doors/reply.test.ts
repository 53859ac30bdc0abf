/**
 * The composition of action replies (lib/doors/reply.ts) and the MCP server's
 * options (lib/doors/mcp/options.ts), without a desktop: snapshots rendered from
 * raw trees, results put together as the action layer does. What the real
 * doors print is tested in test/doors/mcp-replies.test.ts and test/doors/cli-replies.test.ts;
 * this covers the rules those cannot reach on demand (a tree too thin, an
 * action that changed nothing, renumbered lines, a window seen before).
 */
import { describe, expect, it } from "vitest";
import { MCP_DEFAULTS, parseMcpArgs } from "../../lib/doors/mcp/options.js";
import { composeReply, replyText, screenshotWanted } from "../../lib/doors/reply.js";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import { diffSnapshots } from "../../lib/observe/diff.js";
import { createSnapshot, type Snapshot } from "../../lib/observe/snapshot.js";
import type { WindowListing } from "../../lib/observe/windows.js";
import type { ActionResult } from "../../lib/session/act/result.js";

const win = { x: 0, y: 0, w: 600, h: 400 };
const words = { whole: "--full", idle: "wait", apps: "apps", snapshot: "snapshot" };

function raw(children: RawNode[], id = "/w/1", title = "Demo"): RawSnapshot {
  return {
    version: 1,
    platform: "linux",
    app: { name: "demo", pid: 42 },
    window: { title, frame: win, scale: 1, id },
    root: { role: "frame", title, frame: win, children },
    walk: { ended: "complete", nodesObserved: 1 },
  } as RawSnapshot;
}

const toggle = (n: number, on: boolean): RawNode => ({
  role: "check box",
  title: `Option ${n}`,
  states: { checked: on, enabled: true },
  actions: ["click"],
  frame: { x: 10, y: 10 + 22 * n, w: 120, h: 20 },
  handle: 100 + n,
});
const options = (count: number, on: number[] = []) =>
  Array.from({ length: count }, (_, i) => toggle(i, on.includes(i)));
const snap = (children: RawNode[], id?: string, title?: string): Snapshot =>
  createSnapshot({ raw: raw(children, id, title) });

function listing(id: string, kind: WindowListing["kind"], title = ""): WindowListing {
  return {
    id,
    title,
    role: kind === "menu" ? "window" : "frame",
    kind,
    frame: win,
    active: true,
    minimized: false,
    visible: true,
    modal: false,
    inParent: false,
    index: 1,
  };
}

/** A result without some of its fields (exactOptionalPropertyTypes: absent, not undefined). */
function without(r: ActionResult, ...keys: (keyof ActionResult)[]): ActionResult {
  const out = { ...r };
  for (const k of keys) delete out[k];
  return out;
}

/** A result as finish() makes it: the fresh snapshot, its changes from `from`, and what opened. */
function result(
  from: Snapshot,
  fresh: Snapshot,
  more: Partial<ActionResult> = {},
  same = true,
): ActionResult {
  const changes = diffSnapshots(from, fresh);
  return {
    action: "click",
    delivery: "delivered_unverified",
    retry: "unsafe",
    channel: "semantic",
    notes: [],
    target: { snapshotId: from.id, index: 1 },
    snapshot: fresh,
    changes,
    changesFrom: from.id,
    sameSurface: same,
    text: changes.text,
    settled: { mode: "quiet", ms: 152, events: 3, quietMs: 150 },
    opened: [],
    closed: [],
    ...more,
  };
}

describe("composeReply", () => {
  it("a toggle: its line, numbered as in the fresh snapshot, under the action and settled lines", () => {
    const a = snap(options(30));
    const b = snap(options(30, [4]));
    const reply = composeReply(result(a, b), { words });
    const text = replyText(reply, ["screenshot line"]);
    // One short line names the fresh snapshot (refs are formed from it): the rest is in the tools' help.
    expect(text.split("\n").slice(0, 4)).toEqual([
      `click @${a.id}:e1: delivered_unverified (semantic), retry unsafe`,
      "settled: quiet after 152 ms (3 change events)",
      `snapshot ${b.id}, changes since ${a.id}:`,
      "screenshot line",
    ]);
    expect(text).toContain("\t5 check box Option 4, Value: on [changed: value");
    expect(text).not.toContain("Option 5");
    expect(reply.data).toMatchObject({
      shows: "diff",
      changes: { from: a.id, to: b.id, changed: [{ index: 5, ref: `@${b.id}:e5`, name: "Option 4" }] },
      settled: { mode: "quiet", ms: 152 },
    });
  });

  it("removed lines: refs of the snapshot they were in; renumbered lines are said to need their old refs", () => {
    const a = snap(options(30));
    const b = snap(options(30).slice(1));
    const reply = composeReply(result(a, b), { words });
    expect(reply.view?.intro).toBe(
      `snapshot ${b.id}, changes since ${a.id}; 29 unchanged lines got new numbers: reach those by @${a.id}:eN:`,
    );
    expect(reply.data.changes?.removed).toEqual([expect.objectContaining({ index: 1, ref: `@${a.id}:e1` })]);
  });

  it("the whole text: when asked, when not longer than the diff, when a surface just opened", () => {
    const a = snap(options(30));
    const b = snap(options(30, [4]));
    expect(composeReply(result(a, b), { words, mode: "full" }).view).toMatchObject({
      shows: "whole",
      intro: `snapshot ${b.id}: the whole window "Demo" (the full reply, as asked):`,
      body: b.text,
    });
    const small = snap(options(2));
    const smallAfter = snap([toggle(0, true)]);
    expect(composeReply(result(small, smallAfter), { words }).view?.intro).toBe(
      `snapshot ${smallAfter.id}: the whole window "Demo" (no longer than its changes):`,
    );
    const menu = snap([{ role: "menu item", title: "Copy", frame: win }], "/w/9", "");
    const opened = without(
      result(a, menu, { opened: [listing("/w/9", "menu")] }, false),
      "changes",
      "changesFrom",
    );
    const reply = composeReply(opened, { words });
    expect(reply.view).toMatchObject({ shows: "whole", body: menu.text });
    expect(reply.view?.intro).toMatch(/\(it just opened\):$/);
    expect(reply.surfaces).toEqual(["opened: menu (untitled), id /w/9"]);
    // GTK reuses a closed popup's id: a menu that opens again is read whole, not diffed with its last opening.
    const reopened = result(
      snap([{ role: "menu item", title: "Copy", frame: win }], "/w/9", ""),
      menu,
      {
        opened: [listing("/w/9", "menu")],
      },
      false,
    );
    expect(composeReply(reopened, { words }).view?.shows).toBe("whole");
  });

  it("back to a window seen before (a popup closed): its changes since the last snapshot of it", () => {
    const a = snap(options(30));
    const b = snap(options(30, [7]));
    const back = result(a, b, { closed: [listing("/w/9", "menu")] }, false);
    const reply = composeReply(back, { words });
    expect(reply.view?.shows).toBe("diff");
    expect(reply.view?.intro).toBe(
      `snapshot ${b.id}, changes since ${a.id}, the last snapshot of this window "Demo":`,
    );
    expect(reply.surfaces).toEqual(["closed: menu (untitled), id /w/9"]);
  });

  it("a dialog over the reply budget by one long text: printed in the tree's words, the text cut, and said so", () => {
    // Issue 33 §6: before, the budget printed it compact (`button "Save"`), or whole over the budget.
    const letter = "Dear team, here is the plan for the spring release. ".repeat(40);
    const dialog = snap(
      [
        { role: "text", title: "Letter", value: letter, states: { editable: true }, frame: win, handle: 7 },
        ...["Cancel", "Save"].map((title, i) => ({
          role: "push button",
          title,
          actions: ["click"],
          frame: { x: 10 + 100 * i, y: 300, w: 90, h: 20 },
          handle: 8 + i,
        })),
      ],
      "/w/2",
      "Save",
    );
    const menu = snap([{ role: "menu item", title: "Save", frame: win }], "/w/9", "");
    const opened = without(
      result(menu, dialog, { opened: [listing("/w/2", "dialog", "Save")] }, false),
      "changes",
      "changesFrom",
    );
    const reply = composeReply(opened, { words, replyTokens: 100 });
    expect(reply.view?.shows).toBe("budget");
    expect(reply.view?.intro).toMatch(/shortened to the reply budget of 100 tokens/);
    const body = reply.view!.body;
    expect(body).toMatch(/^\t\d+ push button Save$/m);
    expect(body).not.toMatch(/button "Save"/);
    expect(body.length).toBeLessThan(dialog.text.length / 2);
    expect(body.split("\n").at(-1)).toBe(
      "(Shortened to fit 100 tokens: texts longer than 80 characters are cut; every element printed.)",
    );
  });

  it("a whole window longer than the reply budget prints through the budget view, indices kept", () => {
    // Eight panels of 25 toggles: about 2,000 tokens whole.
    const panels = (on: number[], moved = 0): RawNode[] =>
      Array.from({ length: 8 }, (_, p) => ({
        role: "panel",
        title: `Panel ${p}`,
        frame: win,
        children: Array.from({ length: 25 }, (_, i) => ({
          ...toggle(p * 25 + i, on.includes(p * 25 + i)),
          handle: 1000 + p * 25 + i + (p > 0 ? moved : 0),
        })),
      }));
    const menu = snap([{ role: "menu item", title: "Copy", frame: win }], "/w/9", "");
    const big = snap(panels([3]));
    const opened = without(
      result(menu, big, { opened: [listing("/w/1", "window", "Demo")] }, false),
      "changes",
      "changesFrom",
    );
    const reply = composeReply(opened, { words, replyTokens: 500 });
    expect(reply.view?.shows).toBe("budget");
    expect(reply.data.shows).toBe("budget");
    expect(reply.view?.intro).toBe(
      `snapshot ${big.id}: the whole window "Demo" (it just opened), shortened to the reply budget of 500 tokens (--full prints all of it):`,
    );
    const body = reply.view!.body;
    expect(body.length).toBeLessThan(big.text.length / 2);
    expect(body.split("\n").at(-1)).toMatch(
      /^\(Shortened to fit 500 tokens: \d+ of \d+ elements are inside .* open one with root and its index/,
    );
    // Every line it prints is the whole snapshot's line N, in the snapshot's own style and words
    // (issue 33 §6: a budget never switches to compact under the agent): its refs are the snapshot's.
    const whole = new Map(
      big.text.split("\n").flatMap((l) => {
        const m = /^\t*(\d+) (.*)$/.exec(l);
        return m ? [[Number(m[1]), m[2]!] as const] : [];
      }),
    );
    expect(body).not.toMatch(/^ *\d+: /m);
    const shown = body.split("\n").flatMap((l) => {
      const m = /^\t*(\d+) (.*?)(?: \(\+\d+(?: more)? elements?\))?$/.exec(l);
      return m ? [[Number(m[1]), m[2]!] as const] : [];
    });
    expect(shown.length).toBeGreaterThan(2);
    for (const [i, line] of shown) expect(whole.get(i)).toBe(line);
    // The full reply prints all of it; without a budget, the whole.
    expect(composeReply(opened, { words, replyTokens: 500, mode: "full" }).view).toMatchObject({
      shows: "whole",
      body: big.text,
    });
    expect(composeReply(opened, { words }).view).toMatchObject({ shows: "whole", body: big.text });
    // A page switch (most elements replaced, the diff longer than the whole): shortened, with the
    // lines that changed state after it, the switcher the budget may have collapsed.
    const before = snap(panels([]));
    const after = snap(panels([0], 5000));
    const switched = composeReply(result(before, after), { words, replyTokens: 500 });
    expect(switched.view?.shows).toBe("budget");
    expect(switched.view?.intro).toMatch(/\(no longer than its changes\), shortened to the reply budget/);
    expect(switched.view?.body.split("\n").slice(-2)).toEqual([
      `changed since ${before.id}, numbered as above:`,
      "2 check box Option 0, Value: on [changed: value, states +checked]",
    ]);
    // A window within the budget prints whole.
    const small = snap(options(10));
    const smallOpened = without(
      result(menu, small, { opened: [listing("/w/1", "window", "Demo")] }, false),
      "changes",
      "changesFrom",
    );
    expect(composeReply(smallOpened, { words, replyTokens: 500 }).view?.shows).toBe("whole");
  });

  it("settled cap and none say what they mean; no fresh snapshot says what to do", () => {
    const a = snap(options(30));
    const b = snap(options(30, [4]));
    const cap = composeReply(result(a, b, { settled: { mode: "cap", ms: 2000, events: 41 } }), { words });
    expect(cap.settled).toBe(
      "settled: not quiet: change events were still coming at the 2000 ms cap (41), so the app may be mid-change; wait before relying on it",
    );
    const none = composeReply(result(a, b, { settled: { mode: "none", ms: 0, events: 0 } }), { words });
    expect(none.settled).toMatch(/^settled: not waited for/);
    const bare = composeReply(without(result(a, b), "snapshot"), { words });
    expect(replyText(bare, [])).toBe(
      `click @${a.id}:e1: delivered_unverified (semantic), retry unsafe\nsettled: quiet after 152 ms (3 change events)\nno fresh snapshot came back (see the notes); snapshot observes the app again\n`,
    );
    // None asked for (`--no-snapshot`): nothing to say about it.
    expect(
      replyText(composeReply(without(result(a, b), "snapshot"), { words, snapshotAsked: false }), []),
    ).not.toMatch(/fresh snapshot/);
    // An app that exited: said so, its windows closed, and the next step lists the apps (a snapshot of it could only fail).
    const exited = composeReply(
      {
        ...without(result(a, b), "snapshot"),
        exited: { name: "Editor", pid: 77 },
        opened: [],
        closed: [listing("/w/1", "window", "Notes")],
      },
      { words },
    );
    expect(replyText(exited, [])).toBe(
      `click @${a.id}:e1: delivered_unverified (semantic), retry unsafe\nsettled: quiet after 152 ms (3 change events)\nclosed: window "Notes", id /w/1\nthe app exited: Editor (pid 77)\nno fresh snapshot: the app exited; apps\n`,
    );
    expect(exited.data.exited).toEqual({ name: "Editor", pid: 77 });
  });

  it("a title cannot forge a line", () => {
    const a = snap(options(30));
    const reply = composeReply(
      result(a, snap(options(30, [1])), { opened: [listing("/w/3", "dialog", "Save\nsettled: quiet")] }),
      { words },
    );
    expect(reply.surfaces[0]!.split("\n")).toHaveLength(1);
  });
});

describe("screenshotWanted", () => {
  const a = snap(options(30));
  const toggled = result(a, snap(options(30, [4])));

  it("the call decides when it asks; else never, always, or auto", () => {
    expect(screenshotWanted(toggled, "always", false, false)).toBe(false);
    expect(screenshotWanted(toggled, "never", true, false)).toBe(true);
    expect(screenshotWanted(toggled, "never", undefined, true)).toBe(false);
    expect(screenshotWanted(toggled, "always", undefined, false)).toBe(true);
  });

  it("auto: not for a change the tree shows; yes for a new surface, pixels, a thin tree, no change", () => {
    expect(screenshotWanted(toggled, "auto", undefined, false)).toBe(false);
    expect(screenshotWanted({ ...toggled, sameSurface: false }, "auto", undefined, false)).toBe(true);
    expect(
      screenshotWanted({ ...toggled, closed: [listing("/w/9", "menu")] }, "auto", undefined, false),
    ).toBe(true);
    expect(screenshotWanted(toggled, "auto", undefined, true)).toBe(true);
    expect(screenshotWanted(result(a, snap(options(30))), "auto", undefined, false)).toBe(true);
    const thin = snap(options(2));
    expect(screenshotWanted(result(thin, snap(options(2, [0]))), "auto", undefined, false)).toBe(true);
  });
});

describe("parseMcpArgs", () => {
  it("reads the options in both spellings; refuses anything else", () => {
    const httpDefaults = { allowRemote: false, allowedHosts: [], allowedOrigins: [] };
    expect(parseMcpArgs([])).toEqual({ ...MCP_DEFAULTS, ...httpDefaults, help: false });
    expect(parseMcpArgs(["--confirm-destructive", "--action-screenshots", "auto", "--replies=full"])).toEqual(
      {
        confirmDestructive: true,
        actionScreenshots: "auto",
        replies: "full",
        allowLaunchPaths: false,
        replyTokens: 500,
        traceScreenshots: true,
        help: false,
        ...httpDefaults,
      },
    );
    expect(
      parseMcpArgs(["--trace", "run.axtrace", "--trace-dir=/tmp/t", "--trace-screenshots", "off"]),
    ).toMatchObject({ trace: "run.axtrace", traceDir: "/tmp/t", traceScreenshots: false });
    expect(parseMcpArgs(["--action-screenshots=always"]).actionScreenshots).toBe("always");
    expect(parseMcpArgs(["--help"]).help).toBe(true);
    expect(parseMcpArgs(["--reply-tokens", "800"]).replyTokens).toBe(800);
    expect(parseMcpArgs(["--reply-tokens=0"]).replyTokens).toBe(0);
    for (const bad of [
      ["--reply-tokens"],
      ["--reply-tokens", "20"],
      ["--reply-tokens", "many"],
      ["--bogus"],
      ["--confirm"],
      ["--replies"],
      ["--replies", "half"],
      ["--action-screenshots", "sometimes"],
      ["--confirm-destructive=yes"],
      ["serve"],
      ["--trace"],
      ["--trace", "--replies", "full"],
      ["--trace-dir="],
      ["--trace-screenshots", "maybe"],
    ])
      expect(() => parseMcpArgs(bad), bad.join(" ")).toThrow(
        expect.objectContaining({
          code: "INVALID_ARGUMENT",
          hint: expect.stringMatching(/^usage: axsnap mcp /),
        }),
      );
  });
});
