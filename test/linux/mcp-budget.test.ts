/**
 * What the MCP door answers costs what its text says (issue 33 §2, §3), as a
 * client sees it: the SDK's Client over stdio (which checks structuredContent
 * against each tool's output schema), the real server, gtk3-widget-factory on
 * this file's headless desktop. Tokens are o200k's.
 *
 * §2: an action's structuredContent is bounded by the same reply budget as
 * its text (--reply-tokens, default 500): a page switch, whose changes are
 * hundreds of lines, answered 18,972 characters of structured content.
 *
 * §3: list_apps with launchable: true over 96 desktop entries (generated in
 * an XDG_DATA_DIRS of this test's own, so the count and the names are the
 * same on every machine; ids and names as long as this machine's own) is at
 * most 1,500 tokens as text and as structured content, and carries what
 * launch_app takes; list_apps and list_windows are lines or compact JSON,
 * never pretty-printed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { indexIn, type Json, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf } from "../support/mcp.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";
const ENTRIES = 96;

let desktop: Desktop;
let gtk: App;
let data: string;
const clients: Client[] = [];
const stderr: string[] = [];

const tokens = (s: string) => encode(s).length;
const structuredTokens = (r: CallToolResult) => tokens(JSON.stringify(r.structuredContent));

/**
 * Desktop entries shaped like real ones: reverse-DNS ids and plain ones, names
 * of one to three words, some hidden from menus (NoDisplay), all starting /bin/true.
 */
function writeEntries(dir: string): string[] {
  const words = [
    "Text",
    "Photo",
    "Music",
    "Video",
    "Disk",
    "Mail",
    "Chart",
    "Note",
    "Font",
    "Map",
    "Clock",
    "Scan",
  ];
  const kinds = ["Editor", "Viewer", "Manager", "Player", "Browser", "Settings", "Tool", "Reader"];
  const apps = join(dir, "applications");
  mkdirSync(apps, { recursive: true });
  const ids: string[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    const w = words[i % words.length]!;
    const k = kinds[Math.floor(i / words.length) % kinds.length]!;
    const id = i % 3 === 0 ? `org.example.${w}${k}.desktop` : `${w.toLowerCase()}-${k.toLowerCase()}.desktop`;
    const name = i % 4 === 0 ? `${w} ${k} Pro` : `${w} ${k}`;
    writeFileSync(
      join(apps, id),
      `[Desktop Entry]\nType=Application\nName=${name}\nExec=/bin/true %F\nTerminal=false\n${i % 9 === 0 ? "NoDisplay=true\n" : ""}`,
    );
    ids.push(id);
  }
  return ids;
}

/** A client of `axsnap mcp ARGS`, its XDG data dirs this test's own. */
async function connect(args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/cli.ts", "mcp", ...args],
    env: {
      ...(process.env as Record<string, string>),
      ...desktop.env,
      XDG_DATA_DIRS: data,
      XDG_DATA_HOME: join(data, "home"),
    },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const c = new Client({ name: "axsnap-budget-test", version: "0.0.0" });
  await c.connect(transport);
  clients.push(c);
  return c;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const r = (await c.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${textOf(r)}`);
  return r;
}

let ids: string[];

beforeAll(async () => {
  desktop = await useDesktop();
  data = mkdtempSync(join(tmpdir(), "axsnap-xdg-"));
  ids = writeEntries(data);
  gtk = await gtkWidgetFactory(desktop);
}, TIMEOUT);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await gtk?.stop();
  await desktop?.stop();
  if (data) rmSync(data, { recursive: true, force: true });
  if (stderr.length > 0) console.log(`server stderr:\n${stderr.join("").slice(-2000)}`);
});

describe("an action's structured content within the reply budget (§2)", () => {
  it.each([
    [500, [], true],
    // So small that the head of the reply (action, settling, the changes' summary) leaves room for one change.
    [300, ["--reply-tokens", "300"], false],
  ])(
    "a page switch with a budget of %i tokens: structuredContent within it, carrying the refs of the changed lines the text shows",
    async (budget, args, all) => {
      const c = await connect(args as string[]);
      const before = textOf(await call(c, "get_app_state", { app: GTK, screenshot: false }));
      const page2 = indexIn(before, /^\d+ radio button Page 2, Value: off$/);
      const r = await call(c, "click", { ref: `@${snapshotIdIn(before)}:e${page2}` });
      const text = textOf(r);
      const fresh = snapshotIdIn(text);
      const s = r.structuredContent as Json;
      // Back to Page 1 whatever the checks find, by the line the reply printed.
      const page1 = indexIn(text, /^\d+ radio button Page 1, Value: off$/);
      onTestFinished(async () => {
        await call(c, "click", { ref: `@${fresh}:e${page1}` });
      });
      console.log(
        `page switch, budget ${budget}: text ${tokens(text)} tokens (${text.length} chars), structuredContent ${structuredTokens(r)} tokens (${JSON.stringify(s).length} chars)`,
      );
      expect(s.shows).toBe("budget");
      expect(structuredTokens(r)).toBeLessThanOrEqual(budget);
      // What it carries is what the text shows, the changed lines first: the switcher's, by the fresh snapshot's refs.
      const carried = [...s.changes.changed, ...s.changes.added, ...s.changes.removed];
      expect(carried.length).toBeGreaterThan(0);
      const lines = text.split("\n");
      for (const x of carried)
        expect(lines.some((l) => l.startsWith(`${x.index} ${x.line} [changed`))).toBe(true);
      const line = indexIn(text, /^\d+ radio button Page 2, Value: on$/);
      if (all) expect(s.changes.changed.map((x: Json) => x.ref)).toContain(`@${fresh}:e${line}`);
      // And says how much it left out.
      expect(s.changes.omitted).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it(
    "a toggle's small diff: every change in the structured content, nothing omitted",
    async () => {
      const c = await connect();
      const before = textOf(await call(c, "get_app_state", { app: GTK, screenshot: false }));
      const toggle = indexIn(before, /^\d+ toggle button togglebutton, Value: off$/);
      const r = await call(c, "click", { element_index: toggle });
      onTestFinished(async () => {
        await call(c, "click", { element_index: toggle });
      });
      const s = r.structuredContent as Json;
      expect(s.shows).toBe("diff");
      expect(s.changes.changed.map((x: Json) => x.index)).toContain(toggle);
      expect(s.changes.omitted).toBeUndefined();
      expect(structuredTokens(r)).toBeLessThanOrEqual(500);
    },
    TIMEOUT,
  );
});

describe("lists that cost what they say (§3)", () => {
  it(
    `list_apps with launchable: true over ${ENTRIES} entries: at most 1,500 tokens as text and as structured content, every id and what launch_app takes`,
    async () => {
      const c = await connect();
      const r = await call(c, "list_apps", { launchable: true });
      const text = textOf(r);
      console.log(
        `list_apps launchable, ${ENTRIES} entries: text ${tokens(text)} tokens, structuredContent ${structuredTokens(r)} tokens`,
      );
      for (const id of ids) expect(text).toContain(id);
      expect(text).not.toMatch(/\n {2}/);
      expect(tokens(text)).toBeLessThanOrEqual(1500);
      expect(structuredTokens(r)).toBeLessThanOrEqual(1500);
      const listed = (r.structuredContent as Json).launchable as Json[];
      expect(listed.length).toBe(ENTRIES);
      expect(listed.filter((e) => e.hidden === true).length).toBe(Math.ceil(ENTRIES / 9));
      // An id as listed is what launch_app takes: found and started (/bin/true then exits without a window).
      const launched = (await c.callTool({
        name: "launch_app",
        arguments: { app: ids[1] },
      })) as CallToolResult;
      expect(launched.isError).toBe(true);
      expect(JSON.parse(textOf(launched)).code).toBe("ACTION_FAILED");
    },
    TIMEOUT,
  );

  it(
    "list_apps and list_windows: one entry a line, no pretty-printing",
    async () => {
      const c = await connect();
      const apps = await call(c, "list_apps", {});
      const listed = (apps.structuredContent as Json).apps as Json[];
      expect(listed.some((a) => a.name === GTK)).toBe(true);
      expect(textOf(apps).trim().split("\n").length).toBeLessThanOrEqual(listed.length + 2);
      expect(textOf(apps)).not.toMatch(/\n {2}/);
      const windows = await call(c, "list_windows", { app: GTK });
      const w = (windows.structuredContent as Json).windows as Json[];
      expect(textOf(windows).trim().split("\n").length).toBe(w.length);
      expect(textOf(windows)).not.toMatch(/\n {2}/);
    },
    TIMEOUT,
  );
});
