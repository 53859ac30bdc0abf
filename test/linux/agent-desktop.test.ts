/**
 * The agent's desktop keeps the user's desktop untouched (issue 23, section
 * 1). Two private desktops started by the product (lib/observe/agent-desktop/),
 * both with openbox: the "user's", with two windows of test/apps/input-app.py
 * and the pointer parked at a known point, and the agent's, with one. Every
 * kind of input axsnap sends goes to the agent's app: a pointer click on an
 * element with no action, clickAt, dragAt, typing and key presses. The
 * user's pointer (XQueryPointer), focus (XGetInputFocus, _NET_ACTIVE_WINDOW)
 * and stacking (_NET_CLIENT_LIST_STACKING, XQueryTree) are read through X
 * before and after and must be the same, while each input's effect shows in
 * the agent's app, and the agent's own pointer did move (the readings can
 * see a change).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type ActionResult,
  type AgentDesktop,
  createSession,
  launchApp,
  type Session,
  type Snapshot,
  startDesktop,
} from "../../lib/index.js";
import { privateRuntimeDir, readings, requireDeps, x } from "../support/agent-desktop.js";
import { indexIn } from "../support/cli.js";

const TIMEOUT = 120_000;
const APP = fileURLToPath(new URL("../apps/input-app.py", import.meta.url));
const USER_POINTER = { x: 333, y: 222 };

let user: AgentDesktop;
let agent: AgentDesktop;
const userApps: ChildProcess[] = [];
let session: Session;
let pid = 0;

/** Starts the input app on the user's desktop and waits for its window through X. */
async function userWindow(title: string): Promise<string> {
  const child = spawn(APP, [title], { env: user.env, stdio: "ignore", detached: true });
  userApps.push(child);
  const ids = await x(user.display, "xdotool", ["search", "--sync", "--name", `^${title}$`], 20_000);
  return ids.trim().split("\n")[0]!;
}

beforeAll(async () => {
  requireDeps();
  privateRuntimeDir();
  user = await startDesktop({ name: "user", windowManager: true });
  agent = await startDesktop({ name: "agent", windowManager: true });
  const a = await userWindow("user window A");
  await userWindow("user window B");
  // A's on top and focused, B below it: the user's own choice, which nothing here may change.
  await x(user.display, "xdotool", ["windowactivate", "--sync", a]);
  await x(user.display, "xdotool", ["mousemove", "--sync", String(USER_POINTER.x), String(USER_POINTER.y)]);
  session = createSession({ desktop: agent });
  const launched = await launchApp(APP, { args: ["agent window"], desktop: agent });
  pid = launched.pid;
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  for (const c of userApps) c.kill("SIGKILL");
  await agent?.stop();
  await user?.stop();
});

/** Fresh snapshots until `test` holds, bounded: synthetic input lands after the call returns. */
async function settled(result: ActionResult, test: (s: Snapshot) => boolean): Promise<Snapshot> {
  let last = result.snapshot!;
  const until = Date.now() + 5000;
  while (!test(last) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    last = await session.snapshot({ app: pid });
  }
  return last;
}

function center(snap: Snapshot, re: RegExp): { x: number; y: number } {
  const rec = snap.records[indexIn(snap, re)]!;
  const shot = snap.screenshot!;
  const p = rec.clickPoint!;
  return { x: (p.x - shot.windowOrigin.x) * shot.scale, y: (p.y - shot.windowOrigin.y) * shot.scale };
}

describe("the agent's desktop", () => {
  it(
    "takes every kind of input axsnap sends and leaves the user's pointer, focus and stacking as they were",
    async () => {
      expect(user.display).not.toBe(agent.display);
      const userBefore = await readings(user.display);
      const agentBefore = await readings(agent.display);
      console.log("user's desktop before:", JSON.stringify(userBefore));
      console.log("agent's desktop before:", JSON.stringify(agentBefore));
      expect(userBefore.pointer).toMatchObject(USER_POINTER);
      expect(userBefore.tree.length).toBeGreaterThan(1);

      const first = await session.snapshot({ app: pid, screenshot: true });
      const channels: string[] = [];

      // 1. A click on a label: it has no action, so the click is pointer input.
      const label = indexIn(first, /^\d+ label Click here$/);
      expect(first.records[label]!.actions).toEqual([]);
      const clicked = await session.click(label);
      channels.push(`click: ${clicked.channel}`);
      expect(clicked.channel).toBe("synthetic");
      expect((await settled(clicked, (s) => /label clicks: 1\b/.test(s.text))).text).toMatch(
        /label clicks: 1\b/,
      );

      // 2. clickAt the same label's pixels.
      const shot = await session.snapshot({ app: pid, screenshot: true });
      const at = center(shot, /^\d+ label Click here$/);
      const clickedAt = await session.clickAt(at.x, at.y, { of: shot });
      channels.push(`clickAt: ${clickedAt.channel}`);
      expect((await settled(clickedAt, (s) => /label clicks: 2\b/.test(s.text))).text).toMatch(
        /label clicks: 2\b/,
      );

      // 3. A drag across the pad: 120 pixels right.
      const pad = center(shot, /^\d+ drawing area Drag pad$/);
      const dragged = await session.dragAt(
        { x: pad.x - 60 * shot.screenshot!.scale, y: pad.y },
        { x: pad.x + 60 * shot.screenshot!.scale, y: pad.y },
        { of: shot },
      );
      channels.push(`dragAt: ${dragged.channel}`);
      const afterDrag = await settled(dragged, (s) => /label drag: \d+,-?\d+/.test(s.text));
      const [, dx, dy] = /label drag: (-?\d+),(-?\d+)/.exec(afterDrag.text) ?? [];
      expect(Number(dx)).toBeGreaterThan(100);
      expect(Math.abs(Number(dy))).toBeLessThan(5);

      // 4. Typing where keyboard focus is (the entry): key events.
      const typed = await session.typeText("hello agent", { app: pid });
      channels.push(`typeText: ${typed.channel}`);
      expect(typed.channel).toBe("synthetic");
      expect((await settled(typed, (s) => / Typed, Value: hello agent\n/.test(s.text))).text).toMatch(
        / Typed, Value: hello agent\n/,
      );

      // 5. A key press.
      const pressed = await session.pressKey("F5", { app: pid });
      channels.push(`pressKey: ${pressed.channel}`);
      expect((await settled(pressed, (s) => /label last key: F5/.test(s.text))).text).toMatch(
        /label last key: F5/,
      );

      const userAfter = await readings(user.display);
      const agentAfter = await readings(agent.display);
      console.log("channels:", channels.join(", "));
      console.log("user's desktop after: ", JSON.stringify(userAfter));
      console.log("agent's desktop after: ", JSON.stringify(agentAfter));
      expect(userAfter).toEqual(userBefore);
      // The readings do see input: the agent's pointer is where the last pointer input left it.
      expect(agentAfter.pointer).not.toEqual(agentBefore.pointer);
    },
    TIMEOUT,
  );
});
