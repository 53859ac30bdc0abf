/**
 * The CLI and MCP doors on the agent's Wayland desktop (issue 36): one
 * desktop started by the CLI as a user starts it (`axsnap desktop start NAME
 * --wayland`), gtk3-widget-factory launched through the door (`axsnap
 * launch`), then driven through `axsnap --desktop NAME ...` and through
 * `axsnap mcp --desktop NAME` over stdio, each step decided only from what
 * the door printed: the snapshot's lines and its screenshot's pixels. A
 * point to click-at is where the screenshot changed when the door's own
 * click toggled a button (the agent's way of finding a widget in a picture:
 * no frame is read from anywhere else). The route the input took
 * ("gnome-mutter") shows in the reply line and in --json/structuredContent;
 * no reply names X11. Stopped with `axsnap desktop stop NAME`: nothing of it
 * (the warm CLI process included) runs after.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { privateRuntimeDir, processesMentioning, requireDeps, running } from "../support/agent-desktop.js";
import { type CliRun, indexIn, runCli, runCliJson, snapshotIdIn } from "../support/cli.js";
import { textOf } from "../support/mcp.js";
import { decodePng, type Image } from "../support/png.js";

const TIMEOUT = 180_000;
const NAME = "wdoors";
/** Every line any door printed here: none may send an agent to X11 on a Wayland desktop. */
const printed: string[] = [];
let runtime: string;
let shots: string;
let pid: number;
let desktopRuntime: string;
let client: Client | undefined;
const serverStderr: string[] = [];

/** `axsnap --desktop NAME ARGS`, its output kept for the X11 check. */
async function cli(args: string[]): Promise<CliRun> {
  const r = await runCli(["--desktop", NAME, ...args]);
  printed.push(r.stdout, r.stderr);
  return r;
}

async function cliJson(args: string[]) {
  const r = await runCliJson(["--desktop", NAME, ...args]);
  printed.push(r.stdout, r.stderr);
  return r;
}

/** The line printed for an index (tree style: tabs before it), without its `[changed: …]` mark. */
function lineIn(text: string, index: number): string | undefined {
  for (const raw of text.split("\n")) {
    const line = raw.trim().replace(/ \[(changed|added)[^\]]*\]$/, "");
    if (line.startsWith(`${index} `)) return line;
  }
  return undefined;
}

/** The first enabled "togglebutton" toggle's index and value, as a snapshot's lines print it. */
function toggleIn(text: string): { index: number; value: "on" | "off" } {
  const index = indexIn(text, /^\d+ toggle button togglebutton, Value: (on|off)$/);
  return { index, value: /Value: (on|off)$/.exec(lineIn(text, index)!)![1] as "on" | "off" };
}

const flip = (v: "on" | "off") => (v === "on" ? "off" : "on");

/** Per channel standard deviation, max over R, G, B, of the whole image: 0 for one flat colour. */
function spread(img: Image): number {
  let best = 0;
  for (let c = 0; c < 3; c++) {
    let sum = 0;
    let sq = 0;
    const n = img.width * img.height;
    for (let i = 0; i < n; i++) {
      const v = img.data[i * 4 + c]!;
      sum += v;
      sq += v * v;
    }
    best = Math.max(best, Math.sqrt(Math.max(0, sq / n - (sum / n) ** 2)));
  }
  return best;
}

const CELL = 4;

/** The 4×4 cells where two same-sized images differ by more than 24 in a channel. */
function changedCells(a: Image, b: Image): Set<number> {
  expect([b.width, b.height]).toEqual([a.width, a.height]);
  const cols = Math.ceil(a.width / CELL);
  const out = new Set<number>();
  for (let y = 0; y < a.height; y++)
    for (let x = 0; x < a.width; x++) {
      const i = (y * a.width + x) * 4;
      for (let c = 0; c < 3; c++)
        if (Math.abs(a.data[i + c]! - b.data[i + c]!) > 24) {
          out.add(Math.floor(y / CELL) * cols + Math.floor(x / CELL));
          break;
        }
    }
  return out;
}

/**
 * Where the window's picture changed between `before` and `after`, leaving
 * out what changes by itself (cells that differ between `before` and
 * `still`, taken with nothing done, and their neighbours: spinners, a
 * blinking caret): the largest connected patch of changed cells, as its
 * bounding box in pixels.
 */
function changedRegion(
  still: Image,
  before: Image,
  after: Image,
): { x: number; y: number; w: number; h: number } {
  const cols = Math.ceil(before.width / CELL);
  const noise = new Set<number>();
  for (const c of changedCells(still, before))
    for (let dy = -1; dy <= 1; dy++) for (let dx = -1; dx <= 1; dx++) noise.add(c + dy * cols + dx);
  const cells = new Set([...changedCells(before, after)].filter((c) => !noise.has(c)));
  let best: number[] = [];
  const seen = new Set<number>();
  for (const start of cells) {
    if (seen.has(start)) continue;
    const patch: number[] = [];
    const todo = [start];
    seen.add(start);
    while (todo.length > 0) {
      const c = todo.pop()!;
      patch.push(c);
      const x = c % cols;
      for (const n of [x > 0 ? c - 1 : -1, x < cols - 1 ? c + 1 : -1, c - cols, c + cols])
        if (n >= 0 && cells.has(n) && !seen.has(n)) {
          seen.add(n);
          todo.push(n);
        }
    }
    if (patch.length > best.length) best = patch;
  }
  // A toggle button's pressed look is hundreds of cells; a caret or a spinner's step a few.
  expect(best.length, `the largest changed patch (of ${cells.size} changed cells)`).toBeGreaterThan(30);
  const xs = best.map((c) => (c % cols) * CELL);
  const ys = best.map((c) => Math.floor(c / cols) * CELL);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, w: Math.max(...xs) + CELL - x, h: Math.max(...ys) + CELL - y };
}

const centre = (r: { x: number; y: number; w: number; h: number }) => ({
  x: Math.round(r.x + r.w / 2),
  y: Math.round(r.y + r.h / 2),
});

/** A CLI snapshot with a screenshot: its id, text, and the PNG it wrote (checked against the line that names it). */
async function cliShot(file: string): Promise<{ id: string; text: string; png: Image }> {
  const path = join(shots, file);
  const r = await cli(["snapshot", "--app", String(pid), "--screenshot", path]);
  expect(r.code, r.stderr).toBe(0);
  const m = new RegExp(
    `^screenshot ${path}: (\\d+)x(\\d+) px, [\\d.]+ px per point, window at -?\\d+,-?\\d+; click-at X Y --of (s[a-z0-9]{7})$`,
    "m",
  ).exec(r.stdout);
  expect(m, r.stdout.slice(0, 600)).not.toBeNull();
  const png = decodePng(readFileSync(path));
  expect([png.width, png.height]).toEqual([Number(m![1]), Number(m![2])]);
  const id = snapshotIdIn(r.stdout);
  expect(m![3]).toBe(id);
  return { id, text: r.stdout, png };
}

beforeAll(async () => {
  requireDeps();
  runtime = privateRuntimeDir();
  shots = runtime;
  const start = await runCliJson(["desktop", "start", NAME, "--wayland", "--size", "1920x1080"]);
  expect(start.code, start.stderr).toBe(0);
  expect(start.env.data).toMatchObject({ name: NAME, session: "wayland" });
  desktopRuntime = String(start.env.data.waylandDisplay).replace(/\/wayland-0$/, "");
  const launched = await cliJson(["launch", "gtk3-widget-factory"]);
  expect(launched.code, launched.stdout + launched.stderr).toBe(0);
  pid = launched.env.data.pid;
  // The launched app is a native Wayland client of that desktop's compositor.
  const env = readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
  expect(env).toContain(`WAYLAND_DISPLAY=${start.env.data.waylandDisplay}`);
  expect(env.some((kv) => kv.startsWith("DISPLAY="))).toBe(false);
  // The warm process for this desktop, started now rather than in the background by the first
  // command: which process prints a snapshot decides whether its refs to twins resolve.
  const warm = await cliJson(["daemon", "start"]);
  expect(warm.code, warm.stderr).toBe(0);
  // It is this desktop's: it lives on the desktop's bus (and ends with it).
  expect(readFileSync(`/proc/${warm.env.data.pid}/environ`, "latin1")).toContain(desktopRuntime);
}, TIMEOUT);

afterAll(async () => {
  await client?.close();
  if (serverStderr.length > 0) console.log(`MCP server stderr:\n${serverStderr.join("").slice(-2000)}`);
  await runCli(["desktop", "stop", NAME]);
});

describe("the CLI on the agent's Wayland desktop", () => {
  it(
    "a refusal's hint names the desktop in every command it gives, and following it works",
    async () => {
      // A snapshot printed by a process of its own: a ref to one of four "togglebutton" twins is
      // ambiguous to any other process, and the refusal says what to run instead.
      const cold = await runCli(["--desktop", NAME, "snapshot", "--app", String(pid)], {
        AXSNAP_DAEMON: "off",
      });
      expect(cold.code, cold.stderr).toBe(0);
      const toggle = toggleIn(cold.stdout);
      const refused = await cli(["click", `@${snapshotIdIn(cold.stdout)}:e${toggle.index}`]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^axsnap: AMBIGUOUS_TARGET: .*nothing was sent/m);
      const hint = /^hint: (.*)$/m.exec(refused.stderr)?.[1] ?? "";
      const commands = [...hint.matchAll(/`(axsnap [^`]*)`/g)].map((m) => m[1]!);
      expect(commands.length, hint).toBeGreaterThan(0);
      // Run as printed, each reaches this desktop, not the user's own.
      for (const c of commands) expect(c, hint).toMatch(new RegExp(`(^| )--desktop ${NAME}( |$)`));
      const again = commands.find((c) => / snapshot /.test(c) && !/FILE/.test(c));
      expect(again, hint).toBeDefined();
      const fresh = await runCli(again!.split(" ").slice(1));
      printed.push(fresh.stdout, fresh.stderr);
      expect(fresh.code, fresh.stderr).toBe(0);
      const id = snapshotIdIn(fresh.stdout);
      const done = await cli(["click", `@${id}:e${toggle.index}`]);
      expect(done.code, done.stderr).toBe(0);
      expect(lineIn(done.stdout, toggle.index)).toBe(
        `${toggle.index} toggle button togglebutton, Value: ${flip(toggle.value)}`,
      );
    },
    TIMEOUT,
  );

  it(
    "snapshot with a screenshot, click by ref, click-at a screenshot pixel (via gnome-mutter), ctrl+a and typing read back",
    async () => {
      const first = await cliShot("first.png");
      // The screenshot shows the window: a picture, not one flat colour (a blank frame is 0).
      expect(spread(first.png)).toBeGreaterThan(20);
      expect(first.png.width).toBeGreaterThan(800);
      const toggle = toggleIn(first.text);
      const on = flip(toggle.value);
      const printedAs = (v: string) => `${toggle.index} toggle button togglebutton, Value: ${v}`;
      const ok = (action: string) =>
        new RegExp(
          `^${action}: delivered_\\w+ \\((semantic|synthetic via gnome-mutter)\\), retry unsafe$`,
          "m",
        );

      // click by ref; the toggle's new state read back in the next snapshot.
      const click = await cli(["click", `@${first.id}:e${toggle.index}`]);
      expect(click.code, click.stderr).toBe(0);
      expect(click.stdout).toMatch(ok(`click @${first.id}:e${toggle.index}`));
      const after = await cliShot("after.png");
      expect(lineIn(after.text, toggle.index)).toBe(printedAs(on));

      // Where is it in the picture? Where the picture changes when it is clicked again (the focus
      // already on it, so only its look changes), less what changed with nothing done.
      const still = await cliShot("still.png");
      const click2 = await cli(["click", `@${still.id}:e${toggle.index}`]);
      expect(click2.stdout).toMatch(ok(`click @${still.id}:e${toggle.index}`));
      const back = await cliShot("back.png");
      expect(lineIn(back.text, toggle.index)).toBe(printedAs(toggle.value));
      const at = centre(changedRegion(after.png, still.png, back.png));

      // click-at there: the same button, pressed through Mutter's RemoteDesktop.
      const clickAt = await cli(["click-at", String(at.x), String(at.y), "--of", back.id]);
      expect(clickAt.code, clickAt.stderr).toBe(0);
      expect(clickAt.stdout).toMatch(
        new RegExp(
          `^clickAt ${at.x},${at.y} of ${back.id}: delivered_\\w+ \\(synthetic via gnome-mutter\\), retry unsafe$`,
          "m",
        ),
      );
      expect(clickAt.stdout).toMatch(
        new RegExp(`^note: the point is on element ${toggle.index} \\(toggle button`, "m"),
      );
      expect(lineIn(clickAt.stdout, toggle.index)).toBe(printedAs(on));

      // --json carries the route; the button goes back.
      const again = await cliShot("again.png");
      const json = await cliJson(["click-at", String(at.x), String(at.y), "--of", again.id]);
      expect(json.code, json.stderr).toBe(0);
      expect(json.env.data).toMatchObject({ action: "clickAt", channel: "synthetic", route: "gnome-mutter" });
      const read = await cli(["snapshot", "--app", String(pid)]);
      expect(lineIn(read.stdout, toggle.index)).toBe(printedAs(toggle.value));

      // Focus the entry, ctrl+a, type: the typed text replaces all of it only if ctrl+a selected it.
      const entry = indexIn(read.stdout, /^\d+ text \(settable, string\) Value: entry$/);
      const focus = await cli(["click", `@${snapshotIdIn(read.stdout)}:e${entry}`]);
      expect(focus.code, focus.stderr).toBe(0);
      expect(focus.stdout).toMatch(
        new RegExp(
          `^\\t*${entry} text \\(settable, string\\) Value: entry \\[changed: states \\+focused\\]$`,
          "m",
        ),
      );
      const press = await cli(["press", "ctrl+a", "--app", String(pid)]);
      expect(press.code, press.stderr).toBe(0);
      expect(press.stdout).toMatch(/^pressKey: delivered_\w+ \(synthetic via gnome-mutter\), retry unsafe$/m);
      const typed = await cli(["type", "wayland typed", "--app", String(pid)]);
      expect(typed.code, typed.stderr).toBe(0);
      expect(typed.stdout).toMatch(/^typeText: delivered_\w+ \(synthetic via gnome-mutter\), retry unsafe$/m);
      const readBack = await cli(["snapshot", "--app", String(pid)]);
      expect(lineIn(readBack.stdout, entry)).toBe(`${entry} text (settable, string) Value: wayland typed`);
    },
    TIMEOUT,
  );
});

describe("the MCP server over stdio on the same Wayland desktop", () => {
  it(
    "get_app_state with an image, click by element_index, click at a pixel of that image: the reply names gnome-mutter",
    async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", "lib/cli.ts", "mcp", "--desktop", NAME],
        env: process.env as Record<string, string>,
        stderr: "pipe",
      });
      transport.stderr?.on("data", (d: Buffer) => serverStderr.push(d.toString()));
      client = new Client({ name: "axsnap-wayland-doors", version: "0.0.0" });
      await client.connect(transport);
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = (await client!.callTool({ name, arguments: args })) as CallToolResult;
        printed.push(textOf(r));
        expect(r.isError, textOf(r)).toBeFalsy();
        return r;
      };
      const state = async () => {
        const r = await call("get_app_state", { app: pid, screenshot: true });
        const image = r.content.find((b) => b.type === "image");
        expect(image, "get_app_state's image content").toBeDefined();
        expect(image).toMatchObject({ mimeType: "image/png" });
        const png = decodePng(Buffer.from((image as { data: string }).data, "base64"));
        const [, w, h] = /Screenshot: (\d+)x(\d+) px/.exec(textOf(r)) ?? [];
        expect([png.width, png.height]).toEqual([Number(w), Number(h)]);
        return { text: textOf(r), png };
      };

      const first = await state();
      expect(spread(first.png)).toBeGreaterThan(20);
      const toggle = toggleIn(first.text);
      const printedAs = (v: string) => `${toggle.index} toggle button togglebutton, Value: ${v}`;
      const byIndex = async (want: string) => {
        const r = await call("click", { app: pid, element_index: toggle.index });
        expect(textOf(r)).toMatch(
          new RegExp(
            `^click @s[a-z0-9]{7}:e${toggle.index}: delivered_\\w+ \\((semantic|synthetic via gnome-mutter)\\), retry unsafe$`,
            "m",
          ),
        );
        expect(lineIn(textOf(r), toggle.index)).toBe(printedAs(want));
      };
      await byIndex(flip(toggle.value));
      const after = await state();
      const still = await state();
      await byIndex(toggle.value);
      const back = await state();
      const at = centre(changedRegion(after.png, still.png, back.png));

      // x, y are pixels of the latest image this server returned (back's).
      const clickAt = await call("click", { app: pid, x: at.x, y: at.y });
      expect(textOf(clickAt)).toMatch(
        /^clickAt: delivered_\w+ \(synthetic via gnome-mutter\), retry unsafe$/m,
      );
      expect(textOf(clickAt)).toMatch(
        new RegExp(`^note: the point is on element ${toggle.index} \\(toggle button`, "m"),
      );
      expect(clickAt.structuredContent).toMatchObject({
        action: "clickAt",
        channel: "synthetic",
        route: "gnome-mutter",
      });
      expect(lineIn(textOf(clickAt), toggle.index)).toBe(printedAs(flip(toggle.value)));
    },
    TIMEOUT,
  );
});

describe("permissions and stop", () => {
  it(
    "`axsnap permissions --desktop NAME` names the Wayland routes; no door printed X11; stop leaves nothing running",
    async () => {
      const perm = await cli(["permissions"]);
      expect(perm.code, perm.stderr).toBe(0);
      expect(perm.stdout).toMatch(new RegExp(`^session wayland, the agent's desktop ${NAME}$`, "m"));
      expect(perm.stdout).toMatch(/^capture screen, input screen: .*Mutter ScreenCast and RemoteDesktop/m);
      const json = await cliJson(["permissions"]);
      expect(json.env.data.desktop).toMatchObject({
        session: "wayland",
        routes: { capture: "screen", input: "screen" },
        agentDesktop: { name: NAME, session: "wayland" },
      });

      const all = printed.join("\n");
      expect(all).not.toMatch(/\bX11\b|XWayland|XTest|\bDISPLAY\b/);

      await client?.close();
      client = undefined;
      const stop = await runCli(["desktop", "stop", NAME]);
      expect(stop.code, stop.stderr).toBe(0);
      expect(stop.stdout).toBe(`stopped desktop ${NAME}\n`);
      expect(running(pid)).toBe(false);
      // The desktop's processes, and the warm CLI process (started with this file's runtime directory),
      // end with it (an exiting one may take a moment: bounded).
      const left = () => [...processesMentioning(desktopRuntime), ...processesMentioning(runtime)];
      const end = Date.now() + 10_000;
      while (left().length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      expect(left().map((p) => `${p} ${readFileSync(`/proc/${p}/cmdline`, "latin1")}`)).toEqual([]);
    },
    TIMEOUT,
  );
});
