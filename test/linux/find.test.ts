/**
 * Issue 19 §3, find, through all three doors on a real desktop (one headless
 * desktop and one gtk3-widget-factory for this file):
 *
 * - the API: find by role and name, by text in a value, by states, by a
 *   regular expression; limit and how many more; a ref from find clicked
 *   (the session kept the observation); hostile queries refused with
 *   INVALID_ARGUMENT before anything is observed (the app's latest snapshot
 *   stays what it was);
 * - MCP: `find_elements` over stdio with the SDK's client (annotations,
 *   structured content), a ref it returned clicked with `click`, refusals;
 * - the CLI: `axsnap find` in one process, `axsnap click REF` in another
 *   (the found snapshot is in the store), refusals with exit 2.
 *
 * Also prints the tokens (o200k) of a find reply beside the whole snapshot's.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type FindResult, type Session } from "../../lib/index.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { errorOf, textOf } from "../support/mcp.js";
import { rejects } from "../support/rejects.js";

const TIMEOUT = 90_000;
const GTK = "gtk3-widget-factory";

let desktop: Desktop;
let gtk: App;
let session: Session;
let client: Client;
let state: string;
const figures: string[] = [];

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
  session = createSession({ deadlineMs: 8000 });
  state = mkdtempSync(join(tmpdir(), "axsnap-find-"));
}, TIMEOUT);

afterAll(async () => {
  await client?.close();
  await session?.close();
  await gtk?.stop();
  await desktop?.stop();
  if (figures.length > 0) console.log(`find, tokens (o200k):\n  ${figures.join("\n  ")}`);
});

const tokens = (text: string) => encode(text).length;
const lineOf = (r: FindResult, index: number) => r.matches.find((m) => m.index === index)?.line;

describe("find through the API", () => {
  it(
    "by role and name, by text in a value, by states, by a regular expression",
    async () => {
      const boxes = await session.find(GTK, { role: "check box", name: "checkbutton" });
      expect(boxes.total).toBe(6);
      expect(boxes.matches.every((m) => m.role === "check box" && m.name === "checkbutton")).toBe(true);
      expect(boxes.text.split("\n")[0]).toContain(boxes.snapshot.id);
      expect(boxes.snapshot.screenshot).toBeUndefined();

      // "entry" is the value of two enabled text fields and one disabled one; never a name here.
      const entries = await session.find(GTK, { role: "text", text: "entry", states: ["enabled"] });
      expect(entries.total).toBeGreaterThanOrEqual(2);
      for (const m of entries.matches) {
        expect(m.line).toMatch(/Value: (combobox)?entry$/);
        expect(m.line).not.toMatch(/disabled/);
      }

      const enabledBoxes = await session.find(GTK, { role: "check box", states: ["enabled"] });
      expect(enabledBoxes.total).toBe(2);
      const checked = await session.find(GTK, { role: "check box", states: ["enabled", "checked"] });
      expect(checked.matches.map((m) => m.line)).toEqual(["check box checkbutton, Value: on"]);

      const pages = await session.find(GTK, { name: /^page \d$/i });
      expect(pages.matches.map((m) => m.name?.toLowerCase())).toContain("page 2");
      expect(pages.matches.every((m) => /^page \d$/i.test(m.name ?? ""))).toBe(true);
      const tab = pages.matches.find((m) => m.role === "page tab")!;
      expect(tab.ancestors).toEqual(["page tab list"]);
    },
    TIMEOUT,
  );

  it(
    "at most limit matches, and how many more matched",
    async () => {
      const all = await session.find(GTK, { name: /^page \d$/i });
      const five = await session.find(GTK, { name: /^page \d$/i }, { limit: 5 });
      expect(all.total).toBeGreaterThan(5);
      expect(five.matches).toHaveLength(5);
      expect(five.total).toBe(all.total);
      expect(five.more).toBe(all.total - 5);
      expect(five.text.split("\n").at(-1)).toBe(
        `${all.total - 5} more matched; narrow the query or raise limit`,
      );
    },
    TIMEOUT,
  );

  it(
    "a ref from find is kept by the session and clicked like any ref",
    async () => {
      const off = await session.find(GTK, { role: "check box", states: ["enabled", "!checked"] });
      expect(off.matches).toHaveLength(1);
      const target = off.matches[0]!;
      expect(session.address(target.ref).record).toBe(target.record);
      const result = await session.click(target.ref);
      expect(result.delivery).not.toBe("not_delivered");
      expect(result.target).toMatchObject({ snapshotId: off.snapshot.id, index: target.index });
      const now = await session.find(GTK, { role: "check box", states: ["enabled"] });
      expect(lineOf(now, target.index)).toBe("check box checkbutton, Value: on");
    },
    TIMEOUT,
  );

  it(
    "hostile queries are refused with INVALID_ARGUMENT, nothing observed",
    async () => {
      const latest = session.address(0, GTK).snapshot;
      const cases: [string, Promise<unknown>][] = [
        ["empty query", session.find(GTK, {})],
        ["empty name", session.find(GTK, { name: "" })],
        ["huge pattern", session.find(GTK, { name: new RegExp("a".repeat(10_000)) })],
        ["huge text", session.find(GTK, { text: "x".repeat(100_000) })],
        ["bad states", session.find(GTK, { states: ["checked; rm -rf /"] })],
        ["bad limit", session.find(GTK, { role: "check box" }, { limit: 0 })],
        ["unknown field", session.find(GTK, { rol: "check box" } as never)],
      ];
      for (const [what, p] of cases) {
        const e = await rejects(p);
        expect(e.code, what).toBe("INVALID_ARGUMENT");
        expect(e.hint.length, what).toBeGreaterThan(10);
        expect(e.delivery, what).toBe("not_delivered");
      }
      expect(session.address(0, GTK).snapshot).toBe(latest);
    },
    TIMEOUT,
  );

  it(
    "tokens: a find reply beside the whole snapshot",
    async () => {
      const full = await session.snapshot({ app: GTK, screenshot: false });
      const queries = [
        ["role check box", { role: "check box" }],
        ['role push button + name "button"', { role: "push button", name: "button" }],
        ["states checked", { states: ["checked"] }],
        ['text "entry"', { text: "entry" }],
      ] as const;
      figures.push(`whole snapshot text: ${tokens(full.text)} (${full.records.length} elements)`);
      for (const [what, q] of queries) {
        const r = await session.find(GTK, q);
        const n = tokens(r.text);
        figures.push(`find ${what}: ${n} (${r.total} matches), ${(n / tokens(full.text)).toFixed(2)}x`);
        expect(n).toBeLessThan(tokens(full.text) / 3);
      }
    },
    TIMEOUT,
  );
});

async function connect(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/mcp-main.ts"],
    env: { ...(process.env as Record<string, string>), ...desktop.env },
    stderr: "pipe",
  });
  const c = new Client({ name: "axsnap-find-test", version: "0.0.0" });
  await c.connect(transport);
  return c;
}

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

interface Structured {
  snapshot_id: string;
  total: number;
  more: number;
  matches: { index: number; ref: string; role: string; name?: string; line: string; ancestors: string[] }[];
}

describe("find_elements through MCP", () => {
  beforeAll(async () => {
    client = await connect();
  }, TIMEOUT);

  it("is listed read-only and closed-world, with a title and an output schema", async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === "find_elements");
    expect(tool).toBeDefined();
    expect(tool!.title).toBe("Find elements");
    expect(tool!.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(Object.keys(tool!.inputSchema.properties ?? {}).sort()).toEqual(
      ["app", "exact", "limit", "name", "role", "states", "text", "window"].sort(),
    );
    expect(Object.keys(tool!.outputSchema?.properties ?? {})).toContain("matches");
  });

  it(
    "finds by role, name and states; the ref it returns is clicked with click",
    async () => {
      const r = await call("find_elements", {
        app: GTK,
        role: "toggle button",
        name: "togglebutton",
        states: ["enabled", "!checked"],
        window: "gtk3-widget-factory",
      });
      expect(r.isError).toBeFalsy();
      const s = r.structuredContent as unknown as Structured;
      expect(s.total).toBe(1);
      const m = s.matches[0]!;
      expect(m).toMatchObject({
        role: "toggle button",
        name: "togglebutton",
        line: "toggle button togglebutton, Value: off",
      });
      expect(m.ref).toBe(`@${s.snapshot_id}:e${m.index}`);
      expect(textOf(r)).toContain(`${m.ref} toggle button togglebutton, Value: off`);
      expect(r.content.some((b) => b.type === "image")).toBe(false);

      const click = await call("click", { ref: m.ref });
      expect(click.isError).toBeFalsy();
      expect(click.structuredContent).toMatchObject({ target: m.ref });
      expect((click.content[0] as { text: string }).text).toMatch(new RegExp(`^click ${m.ref}: delivered`));
      const after = await call("find_elements", {
        app: GTK,
        role: "toggle button",
        name: "togglebutton",
        states: ["enabled"],
      });
      const lines = (after.structuredContent as unknown as Structured).matches.map((x) => [x.index, x.line]);
      expect(lines).toContainEqual([m.index, "toggle button togglebutton, Value: on"]);
    },
    TIMEOUT,
  );

  it(
    "tokens: a find_elements reply beside get_app_state's",
    async () => {
      const state = await call("get_app_state", { app: GTK });
      const image = state.content.find((b) => b.type === "image") as { data: string };
      const png = Buffer.from(image.data, "base64");
      const imageTokens = Math.round((png.readUInt32BE(16) * png.readUInt32BE(20)) / 750);
      const stateText = tokens(textOf(state));
      figures.push(`MCP get_app_state: ${stateText} text + ${imageTokens} image (width×height/750)`);
      for (const args of [
        { role: "check box" },
        { role: "push button", name: "button" },
        { text: "entry" },
      ]) {
        const r = await call("find_elements", { app: GTK, ...args });
        const text = tokens(textOf(r));
        const structured = tokens(JSON.stringify(r.structuredContent));
        figures.push(
          `MCP find_elements ${JSON.stringify(args)}: ${text} text (${(text / (stateText + imageTokens)).toFixed(2)}x of get_app_state), structuredContent ${structured}`,
        );
        expect(text).toBeLessThan(stateText / 3);
      }
    },
    TIMEOUT,
  );

  it(
    "a regular expression and a limit; the reply says how many more",
    async () => {
      const r = await call("find_elements", { app: GTK, name: "/^page \\d$/i", limit: 3 });
      const s = r.structuredContent as unknown as Structured;
      expect(s.matches).toHaveLength(3);
      expect(s.more).toBe(s.total - 3);
      expect(textOf(r).split("\n").at(-1)).toBe(
        `${s.total - 3} more matched; narrow the query or raise limit`,
      );
    },
    TIMEOUT,
  );

  it(
    "nothing matched: says so and names the roles there",
    async () => {
      const r = await call("find_elements", { app: GTK, role: "butto" });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as unknown as Structured).total).toBe(0);
      expect(textOf(r)).toMatch(/no element matched/);
      expect(textOf(r)).toMatch(/push button \(\d+\)/);
      expect(textOf(r)).toMatch(/get_app_state/);
    },
    TIMEOUT,
  );

  it(
    "a role in the compact style's word finds what the tree's words find (issue 33 §6)",
    async () => {
      const word = (await call("find_elements", { app: GTK, role: "button", limit: 100 }))
        .structuredContent as unknown as Structured;
      const tree = (await call("find_elements", { app: GTK, role: "push button", limit: 100 }))
        .structuredContent as unknown as Structured;
      expect(word.total).toBeGreaterThan(2);
      expect(word.matches.map((m) => m.line)).toEqual(tree.matches.map((m) => m.line));
    },
    TIMEOUT,
  );

  it(
    "hostile input is refused with INVALID_ARGUMENT",
    async () => {
      expect(errorOf(await call("find_elements", { app: GTK, name: "/(unclosed/" }))).toMatchObject({
        code: "INVALID_ARGUMENT",
        delivery: "not_delivered",
      });
      expect(errorOf(await call("find_elements", { app: GTK, text: `/${"a".repeat(300)}/` })).code).toBe(
        "INVALID_ARGUMENT",
      );
      const empty = errorOf(await call("find_elements", { app: GTK }));
      expect(empty.code).toBe("INVALID_ARGUMENT");
      expect(String(empty.hint)).toMatch(/role/);
      // Caught by the schema: the SDK answers with an error result naming the field.
      const bad = await call("find_elements", { app: GTK, role: "check box", limit: 0 });
      expect(bad.isError).toBe(true);
      expect(textOf(bad)).toMatch(/limit/);
    },
    TIMEOUT,
  );
});

describe("axsnap find through the CLI", () => {
  const cli = (args: string[]) => runCli(args, { XDG_STATE_HOME: state });
  const cliJson = (args: string[]) => runCliJson(args, { XDG_STATE_HOME: state });

  it(
    "prints the matches with refs; a ref it printed is clicked by another process",
    async () => {
      const text = await cli(["find", "--app", GTK, "--role", "radio button", "--name", "Page 2", "--exact"]);
      expect(text.code, text.stderr).toBe(0);
      const lines = text.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(
        /^find role "radio button", name "Page 2" \(exact\) in snapshot s[a-z0-9]{7} /,
      );
      expect(lines[1]).toMatch(/axsnap click REF/);
      expect(lines[2]).toMatch(
        /^locators: app=gtk3-widget-factory >> window="gtk3-widget-factory" >> a line.s role "name"/,
      );
      expect(lines[3]).toMatch(/^@s[a-z0-9]{7}:e\d+ radio button Page 2, Value: off$/);

      const found = await cliJson([
        "find",
        "--app",
        GTK,
        "--role",
        "radio button",
        "--name",
        "Page 2",
        "--state",
        "!checked",
        "--window",
        "gtk3-widget-factory",
      ]);
      expect(found.code, found.stdout).toBe(0);
      const data = found.env.data;
      expect(data.total).toBe(1);
      const ref: string = data.matches[0].ref;
      expect(ref).toMatch(new RegExp(`^@${data.snapshotId}:e\\d+$`));

      const click = await cliJson(["click", ref]);
      expect(click.code, click.stdout).toBe(0);
      expect(click.env.data.target.ref).toBe(ref);
      expect(click.env.data.delivery).not.toBe("not_delivered");

      const now = await cliJson([
        "find",
        "--app",
        GTK,
        "--role",
        "radio button",
        "--state",
        "checked",
        "--name",
        "/^page \\d$/i",
      ]);
      expect(now.code, now.stdout).toBe(0);
      expect(now.env.data.matches.map((m: { line: string }) => m.line)).toEqual([
        "radio button Page 2, Value: on",
      ]);
    },
    TIMEOUT,
  );

  it(
    "is in the help, and runs as a step of axsnap call",
    async () => {
      const help = await cli(["help"]);
      expect(help.stdout).toContain("\n  find ");
      const one = await cli(["find", "--help"]);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(/^usage: axsnap find \[options\]\n/);
      for (const flag of ["--role", "--name", "--exact", "--text", "--state", "--limit", "--window"])
        expect(one.stdout).toContain(flag);
      const steps = JSON.stringify([
        { command: "find", app: GTK, role: "radio button", name: "page", limit: 1 },
        { command: "find", app: GTK, name: "/^page \\d$/i", state: "checked" },
      ]);
      const r = await cliJson(["call", "--calls", steps]);
      expect(r.code, r.stdout).toBe(0);
      const [boxes, pages] = r.env.data.steps;
      expect(boxes.data.matches).toHaveLength(1);
      expect(boxes.data.total).toBe(3);
      expect(boxes.data.more).toBe(2);
      expect(pages.data.matches.every((m: { line: string }) => /Value: on|selected/.test(m.line))).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "refuses hostile or empty queries with exit 2 and a hint",
    async () => {
      const invalid = await cliJson(["find", "--app", GTK, "--name", "/(unclosed/"]);
      expect(invalid.code).toBe(2);
      expect(invalid.env.error.code).toBe("INVALID_ARGUMENT");
      expect(invalid.env.error.hint).toMatch(/regular expression/);
      const huge = await cliJson(["find", "--app", GTK, "--text", `/${"a".repeat(300)}/`]);
      expect(huge.code).toBe(2);
      expect(huge.env.error.code).toBe("INVALID_ARGUMENT");
      const empty = await cli(["find", "--app", GTK]);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toMatch(/--role, --name, --text, --state/);
      const limit = await cli(["find", "--app", GTK, "--role", "check box", "--limit", "0"]);
      expect(limit.code).toBe(2);
    },
    TIMEOUT,
  );
});
