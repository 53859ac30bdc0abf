/**
 * Issue 19 §1, §5 and §8 through the MCP door, as a client sees it: the SDK's
 * Client over stdio, the server started as `axsnap mcp ...` (lib/cli.ts) and
 * as `mcp-main ...`, on gtk3-widget-factory, galculator and a zenity question
 * under this file's headless desktop.
 *
 * An action's reply is its action line, how it settled, the surfaces it
 * opened or closed, and the diff of the fresh snapshot against the one acted
 * on, numbered as in the fresh snapshot (so a line's ref works in the next
 * call); the whole fresh text when a surface opened, or when asked; no image
 * unless asked (or the server's --action-screenshots says so).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { indexIn, type Json, runCli, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf } from "../support/mcp.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";
const ACTIONS = [
  "click",
  "perform_secondary_action",
  "set_value",
  "type_text",
  "press_key",
  "scroll",
  "drag",
];
const READ_ONLY = ["list_apps", "get_app_state", "wait_for"];

let desktop: Desktop;
let gtk: App;
/** The server as docs/mcp.md starts it: `axsnap mcp`. */
let client: Client;
const stderr: string[] = [];
const clients: Client[] = [];

/** A client of the server started through `axsnap mcp ARGS` ("cli") or `mcp-main ARGS` ("main"). */
async function connect(entry: "cli" | "main", args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", ...(entry === "cli" ? ["lib/cli.ts", "mcp"] : ["lib/mcp-main.ts"]), ...args],
    env: { ...(process.env as Record<string, string>), ...desktop.env },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const c = new Client({ name: "axsnap-replies-test", version: "0.0.0" });
  await c.connect(transport);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
  client = await connect("cli");
}, TIMEOUT);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gtk?.stop();
  await desktop?.stop();
  if (stderr.length > 0) console.log(`server stderr:\n${stderr.join("").slice(-2000)}`);
});

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  return r;
}

const images = (r: CallToolResult) => r.content.filter((b) => b.type === "image");
const data = (r: CallToolResult): Json => r.structuredContent as Json;

async function state(c: Client, app: string | number = GTK, screenshot = false): Promise<string> {
  return textOf(await call(c, "get_app_state", { app, screenshot }));
}

const TOGGLE = /^\d+ toggle button togglebutton, Value: (on|off)$/;

describe("annotations and structured content", () => {
  it("every tool has a title and annotations; list_apps and the actions declare output schemas", async () => {
    const { tools } = await client.listTools();
    for (const t of tools) {
      expect(t.title, t.name).toMatch(/\w/);
      expect(t.annotations?.openWorldHint, t.name).toBe(false);
      expect(t.annotations?.title, t.name).toBe(t.title);
    }
    const by = (n: string) => tools.find((t) => t.name === n)!;
    for (const n of READ_ONLY) {
      expect(by(n).annotations?.readOnlyHint, n).toBe(true);
      expect(by(n).annotations?.destructiveHint, n).toBeUndefined();
    }
    for (const n of ACTIONS) {
      expect(by(n).annotations?.destructiveHint, n).toBe(true);
      expect(by(n).annotations?.readOnlyHint, n).toBe(false);
      expect(by(n).outputSchema?.properties, n).toHaveProperty("changes");
      expect(by(n).inputSchema.properties, n).toHaveProperty("reply");
      expect(by(n).inputSchema.properties, n).toHaveProperty("screenshot");
      expect(by(n).description, n).toMatch(/changes/);
    }
    expect(by("list_apps").outputSchema?.properties).toHaveProperty("apps");
    const apps = await call(client, "list_apps", {});
    expect(data(apps).apps).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: GTK, pid: gtk.pid })]),
    );
    expect(JSON.parse(textOf(apps))).toEqual(data(apps).apps);
  });
});

describe("action replies on gtk3-widget-factory (axsnap mcp)", () => {
  it(
    "a toggle's reply is the diff of its line, with a ref that works in the next call; no image",
    async () => {
      const r0 = await call(client, "get_app_state", { app: GTK });
      expect(images(r0)).toHaveLength(1); // get_app_state keeps its screenshot
      const before = textOf(r0);
      const id0 = snapshotIdIn(before);
      const toggle = indexIn(before, TOGGLE);
      const was = /Value: (on|off)$/.exec(
        before.split("\n").find((l) => l.trim().startsWith(`${toggle} `))!,
      )![1];
      const now = was === "on" ? "off" : "on";

      const r = await call(client, "click", { element_index: toggle });
      const text = textOf(r);
      expect(text.split("\n")[0]).toBe(
        `click @${id0}:e${toggle}: delivered_unverified (synthetic), retry unsafe`,
      );
      // The usual route is in the data, not on the line.
      expect(data(r).route).toBe("x11");
      expect(text).toMatch(/^settled: (quiet after \d+ ms|not quiet)/m);
      const fresh = snapshotIdIn(text);
      expect(fresh).not.toBe(id0);
      expect(text.split("\n")).toContain(`snapshot ${fresh}, changes since ${id0}:`);
      const at = indexIn(text, new RegExp(`^\\d+ toggle button togglebutton, Value: ${now}$`));
      expect(text).toMatch(
        new RegExp(`^\\t*${at} toggle button togglebutton, Value: ${now} \\[changed: [^\\]]*value`, "m"),
      );
      // The diff, not the window: lines that did not change are not printed.
      expect(text).not.toContain("page tab list");
      expect(text.length).toBeLessThan(before.length / 3);
      expect(images(r)).toEqual([]);
      expect(data(r)).toMatchObject({
        action: "click",
        target: `@${id0}:e${toggle}`,
        delivery: "delivered_unverified",
        snapshotId: fresh,
        shows: "diff",
        opened: [],
        closed: [],
        settled: { mode: expect.stringMatching(/^(quiet|cap)$/) },
        changes: { from: id0, to: fresh },
      });
      // No picture to attach (the server's default --action-screenshots never): none was captured.
      expect(data(r).screenshot).toBeUndefined();
      expect(data(r).changes.changed).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ index: at, ref: `@${fresh}:e${at}`, role: "toggle button" }),
        ]),
      );

      // The ref the reply printed, in the next call.
      const back = await call(client, "click", { ref: `@${fresh}:e${at}` });
      const backText = textOf(back);
      expect(backText.split("\n")[0]).toBe(
        `click @${fresh}:e${at}: delivered_unverified (synthetic), retry unsafe`,
      );
      expect(backText).toMatch(
        new RegExp(`^\\t*\\d+ toggle button togglebutton, Value: ${was} \\[changed: [^\\]]*value`, "m"),
      );
      // And a bare index means the fresh snapshot too.
      const again = await call(client, "click", { element_index: indexIn(backText, TOGGLE) });
      expect(textOf(again)).toMatch(new RegExp(`toggle button togglebutton, Value: ${now} \\[changed`));
      await call(client, "click", { element_index: indexIn(textOf(again), TOGGLE) });
      console.log(`a toggle's reply:\n${text}`);
    },
    TIMEOUT,
  );

  it(
    'reply: "full" prints the whole fresh snapshot; screenshot: true attaches its PNG',
    async () => {
      const before = await state(client);
      const toggle = indexIn(before, TOGGLE);
      const full = await call(client, "click", { element_index: toggle, reply: "full" });
      const text = textOf(full);
      expect(text).toContain("(the full reply, as asked):");
      expect(text).toMatch(/^App=gtk3-widget-factory \(pid \d+\)$/m);
      expect(text).toContain("page tab list");
      expect(data(full).shows).toBe("whole");
      expect(data(full).changes.changed.length).toBeGreaterThan(0);
      expect(images(full)).toEqual([]);

      const shot = await call(client, "click", { element_index: toggle, screenshot: true });
      expect(images(shot)).toHaveLength(1);
      const png = Buffer.from((images(shot)[0] as { data: string }).data, "base64");
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      const size = `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
      expect(textOf(shot)).toContain(`screenshot ${size} px attached; x/y are in its pixels`);
      expect(data(shot).screenshot).toMatchObject({ attached: true });
      expect(data(shot).shows).toBe("diff");
    },
    TIMEOUT,
  );

  it(
    "a combo box opening prints its popup whole; Escape (press_key) closes it and prints the window's changes",
    async () => {
      const before = await state(client);
      const combo = indexIn(before, /^\d+ combo box$/);
      const open = await call(client, "click", { element_index: combo });
      const text = textOf(open);
      expect(text).toMatch(/^opened: menu \(untitled\), id \S+$/m);
      expect(text).toContain("the whole menu (it just opened):");
      expect(text).toMatch(/menu item \(selected\) Donald Duck/);
      expect(text).toMatch(/menu item \(selectable\) Mickey Mouse/);
      expect(data(open)).toMatchObject({ shows: "whole", opened: [{ kind: "menu" }] });
      expect(images(open)).toEqual([]);
      console.log(`a combo box's reply:\n${text}`);

      const esc = await call(client, "press_key", { key: "Escape" });
      const escText = textOf(esc);
      expect(escText.split("\n")[0]).toBe("pressKey: delivered_unverified (synthetic), retry unsafe");
      expect(escText).toMatch(/^closed: menu \(untitled\), id \S+$/m);
      expect(escText).not.toContain("Donald Duck");
      expect(data(esc).closed).toMatchObject([{ kind: "menu" }]);
      const after = await state(client);
      expect(after).not.toContain("menu item");
    },
    TIMEOUT,
  );

  it(
    "a page switch (the diff longer than the window) prints the window shortened to the reply budget, with the switcher's changed lines",
    async () => {
      const before = await state(client);
      const page2 = indexIn(before, /^\d+ radio button Page 2, Value: off$/);
      const r = await call(client, "click", { ref: `@${snapshotIdIn(before)}:e${page2}` });
      const text = textOf(r);
      const fresh = snapshotIdIn(text);
      expect(text).toMatch(
        new RegExp(
          `^snapshot ${fresh}: the whole window "gtk3-widget-factory" \\(no longer than its changes\\), shortened to the reply budget of 500 tokens \\(reply: "full" prints all of it\\):$`,
          "m",
        ),
      );
      expect(text).toMatch(
        /^\(Shortened to fit 500 tokens: \d+ of \d+ elements are inside .*open one with root/m,
      );
      expect(text).toMatch(/^\d+ radio button Page 2, Value: on \[changed: [^\]]*value/m);
      expect(data(r).shows).toBe("budget");
      // The whole window is about 1,100 tokens; the reply stays near its budget.
      expect(text.length).toBeLessThan(before.length / 2);
      // The changed line's number is the fresh snapshot's: back to Page 1 by it.
      const page1 = indexIn(text, /^\d+ radio button Page 1, Value: off$/);
      const back = textOf(await call(client, "click", { ref: `@${fresh}:e${page1}` }));
      expect(back).toMatch(/^\d+ radio button Page 1, Value: on \[changed: [^\]]*value/m);
      console.log(`a page switch's reply:\n${text}`);
    },
    TIMEOUT,
  );

  it(
    "set_value, perform_secondary_action, scroll and drag: each reply is the diff of what it changed",
    async () => {
      let s = await state(client);
      const entry = indexIn(s, /^\d+ text \(settable, string\) Value: entry$/);
      const set = await call(client, "set_value", { element_index: entry, value: "axsnap" });
      expect(textOf(set)).toMatch(
        /^setValue @s[a-z0-9]{7}:e\d+: delivered_(verified|unverified) \(semantic\)/,
      );
      expect(textOf(set)).toMatch(
        new RegExp(`^\\t*${entry} text \\(settable, string\\) Value: axsnap \\[changed: [^\\]]*value`, "m"),
      );
      expect(data(set).shows).toBe("diff");
      await call(client, "set_value", { element_index: entry, value: "entry" });

      s = await state(client);
      // Its press action by name: the table cells' "Toggle" reaches no handler in this app.
      const toggle = indexIn(s, TOGGLE);
      const toggled = await call(client, "perform_secondary_action", {
        element_index: toggle,
        action: "click",
      });
      expect(textOf(toggled)).toMatch(/^performAction @s[a-z0-9]{7}:e\d+: delivered_unverified \(semantic\)/);
      expect(textOf(toggled)).toMatch(
        new RegExp(`^\\t*${toggle} toggle button togglebutton, Value: on \\[changed: [^\\]]*value`, "m"),
      );
      expect(data(toggled).changes.changed.map((c: Json) => c.index)).toContain(toggle);
      await call(client, "perform_secondary_action", { element_index: toggle, action: "Click" });

      s = await state(client);
      const lines = s.split("\n").map((l) => l.trim());
      const lorem = lines.findIndex((l) => /^\d+ text \(settable, string\) Value: Lorem ipsum/.test(l));
      const pane = indexIn(lines[lorem - 1]!, /^\d+ scroll pane$/);
      const scrolled = await call(client, "scroll", { element_index: pane, direction: "down" });
      expect(textOf(scrolled)).toMatch(
        /^\t*\d+ scroll bar \(settable, float\) [\d.]+ \[changed: [^\]]*value/m,
      );
      expect(data(scrolled).shows).toBe("diff");
      await call(client, "scroll", { element_index: pane, direction: "up", pages: 5 });

      s = await state(client);
      const slider = indexIn(s, /^\d+ slider \(settable, float\) Value: 50$/);
      const bar = indexIn(
        s
          .split("\n")
          .filter((l) => Number(/^\t*(\d+) /.exec(l)?.[1]) > slider)
          .join("\n"),
        /^\d+ progress bar/,
      );
      const dragged = await call(client, "drag", {
        from: { element_index: slider },
        to: { element_index: bar },
      });
      expect(textOf(dragged)).toMatch(/^drag @s[a-z0-9]{7}:e\d+: delivered_unverified \(synthetic\)/);
      expect(textOf(dragged)).toMatch(
        new RegExp(
          `^\\t*${slider} slider \\(settable, float\\) Value: [\\d.]+ \\[changed: [^\\]]*value`,
          "m",
        ),
      );
      await call(client, "set_value", { element_index: slider, value: 50 });
    },
    TIMEOUT,
  );
});

describe("galculator (axsnap mcp)", () => {
  let calc: App;

  beforeAll(async () => {
    calc = await startApp(desktop, "galculator", [], { name: "galculator" });
  }, TIMEOUT);

  afterAll(async () => {
    await calc?.stop();
  });

  it(
    "a digit's reply is the display's changed value, by a ref that works next",
    async () => {
      const s = await state(client, calc.pid);
      const seven = indexIn(s, /^\d+ toggle button 7, /);
      const r = await call(client, "click", { app: calc.pid, element_index: seven });
      const text = textOf(r);
      const display = indexIn(text, /^\d+ text \(settable, string\) Value: \d*7$/);
      expect(text).toMatch(
        new RegExp(`^\\t*${display} text \\(settable, string\\) Value: \\d*7 \\[changed: value\\]$`, "m"),
      );
      expect(data(r).shows).toBe("diff");
      const fresh = snapshotIdIn(text);
      const four = indexIn(s, /^\d+ toggle button 4, /);
      // An unchanged line's index still holds: the reply said lines not shown kept their numbers.
      expect(text).toMatch(/^snapshot s[a-z0-9]{7}, changes since s[a-z0-9]{7}:$/m);
      const next = await call(client, "click", { ref: `@${fresh}:e${four}` });
      expect(textOf(next)).toMatch(/text \(settable, string\) Value: \d*74 \[changed: value\]/);
    },
    TIMEOUT,
  );
});

describe("server options, one set through both entry points", () => {
  it(
    "--action-screenshots always and --replies full (mcp-main): every action reply has the whole text and its image",
    async () => {
      const c = await connect("main", ["--action-screenshots", "always", "--replies=full"]);
      const s = await state(c);
      const r = await call(c, "click", { element_index: indexIn(s, TOGGLE) });
      expect(images(r)).toHaveLength(1);
      expect(textOf(r)).toContain("(the full reply, as asked):");
      // The call's own choice wins over the server's.
      const r2 = await call(c, "click", {
        element_index: indexIn(s, TOGGLE),
        reply: "diff",
        screenshot: false,
      });
      expect(images(r2)).toEqual([]);
      expect(data(r2).shows).toBe("diff");
    },
    TIMEOUT,
  );

  it(
    "--action-screenshots auto (axsnap mcp): no image for a toggle, one when a popup opens or closes",
    async () => {
      const c = await connect("cli", ["--action-screenshots", "auto"]);
      const s = await state(c, GTK, true);
      const toggle = await call(c, "click", { element_index: indexIn(s, TOGGLE) });
      expect(images(toggle)).toEqual([]);
      const open = await call(c, "click", { element_index: indexIn(s, /^\d+ combo box$/) });
      expect(images(open)).toHaveLength(1);
      const esc = await call(c, "press_key", { key: "Escape" });
      expect(images(esc)).toHaveLength(1);
      await call(c, "click", { element_index: indexIn(await state(c), TOGGLE) });
    },
    TIMEOUT,
  );

  it(
    "--action-screenshots auto after a snapshot without a screenshot: still one when a popup opens, none for a toggle",
    async () => {
      const c = await connect("cli", ["--action-screenshots", "auto"]);
      const s = await state(c, GTK, false);
      const toggle = await call(c, "click", { element_index: indexIn(s, TOGGLE) });
      expect(images(toggle)).toEqual([]);
      const open = await call(c, "click", { element_index: indexIn(s, /^\d+ combo box$/) });
      expect(textOf(open)).toMatch(/^opened: menu/m);
      expect(images(open)).toHaveLength(1);
      expect(data(open).screenshot).toMatchObject({ attached: true });
      await call(c, "press_key", { key: "Escape" });
      await call(c, "click", { element_index: indexIn(await state(c), TOGGLE) });
    },
    TIMEOUT,
  );

  it(
    "usage errors exit 2 through both entry points; --help lists the options",
    async () => {
      // Both entry points for two mistakes (one parser); the rest through `axsnap mcp`.
      const cases: [string[], string[]][] = [
        [["lib/cli.ts", "mcp"], ["--bogus"]],
        [["lib/mcp-main.ts"], ["--bogus"]],
        [
          ["lib/cli.ts", "mcp"],
          ["--action-screenshots", "sometimes"],
        ],
        [["lib/mcp-main.ts"], ["--replies"]],
        [["lib/cli.ts", "mcp"], ["--confirm"]],
        [["lib/cli.ts", "mcp"], ["extra"]],
      ];
      const runs = await Promise.all(cases.map(([entry, args]) => runNode([...entry, ...args])));
      for (const [i, r] of runs.entries()) {
        const what = cases[i]!.flat().join(" ");
        expect(r.code, `${what}: ${r.stderr}`).toBe(2);
        expect(r.stdout, what).toBe("");
        expect(r.stderr, what).toMatch(
          /usage: axsnap mcp \[--confirm-destructive\] \[--action-screenshots never\|auto\|always\] \[--replies diff\|full\]/,
        );
      }
      expect(runs[4]!.stderr).toMatch(/its option is --confirm-destructive/);
      const help = await runCli(["mcp", "--help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/--action-screenshots MODE/);
      expect(help.stdout).toMatch(/--replies diff\|full/);
      expect(help.stdout).toMatch(/--confirm-destructive/);
    },
    TIMEOUT,
  );

  it(
    "axsnap mcp --confirm-destructive lets a destructive target through; without it, POLICY_DENIED",
    async () => {
      const zenity = await startApp(
        desktop,
        "zenity",
        ["--question", "--title", "Remove files", "--text", "Remove them?", "--ok-label", "Delete"],
        { name: "zenity" },
      );
      try {
        const s = await state(client, zenity.pid);
        const del = indexIn(s, /^\d+ push button Delete$/);
        const refused = (await client.callTool({
          name: "click",
          arguments: { app: zenity.pid, element_index: del },
        })) as CallToolResult;
        expect(refused.isError).toBe(true);
        expect(JSON.parse(textOf(refused))).toMatchObject({
          code: "POLICY_DENIED",
          delivery: "not_delivered",
        });

        const c = await connect("cli", ["--confirm-destructive"]);
        const s2 = await state(c, zenity.pid);
        const r = await call(c, "click", {
          app: zenity.pid,
          element_index: indexIn(s2, /^\d+ push button Delete$/),
        });
        expect(data(r).delivery).toMatch(/^delivered/);
        expect(stderr.join("")).toMatch(/allowed by --confirm-destructive/);
      } finally {
        await zenity.stop();
      }
    },
    TIMEOUT,
  );
});

/** Runs node with tsx and these arguments, stdin closed, with the desktop's environment. */
async function runNode(args: string[]) {
  const { spawn } = await import("node:child_process");
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", ...args], {
      env: { ...process.env, ...desktop.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout: out, stderr: err }));
  });
}
