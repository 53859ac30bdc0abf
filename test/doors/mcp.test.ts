/**
 * The MCP server end to end, as a client sees it: the SDK's own Client and
 * StdioClientTransport spawn `node --import tsx lib/mcp-main.ts` with this
 * file's headless desktop in its environment, and call its tools against
 * gtk3-widget-factory and Chromium (test/pages/form.html, for its password
 * field and its "Delete account" button). A short transcript is printed.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, chromium, type Desktop, fileUrl, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { indexIn, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { spawnRawServer } from "../support/mcp-raw.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
/** The documented limits (docs/mcp.md, docs/internals/doors.md): one request line, and a text to type or set. */
const REQUEST_LIMIT = 4 * 1024 * 1024;
const TEXT_LIMIT = 100_000;
const GTK = "gtk3-widget-factory";
const WEB = "chromium";
const SECRET = "hunter2";
const TOOLS = [
  "list_apps",
  "get_app_state",
  "click",
  "perform_secondary_action",
  "set_value",
  "type_text",
  "press_key",
  "scroll",
  "drag",
  "wait_for",
  "find_elements",
  "list_windows",
  "launch_app",
  "start_trace",
  "stop_trace",
];

let desktop: Desktop;
let gtk: App;
let client: Client;
const stderr: string[] = [];

async function connect(args: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/mcp-main.ts", ...args],
    // The client passes only a few variables by default: the server needs the desktop's.
    env: { ...(process.env as Record<string, string>), ...desktop.env },
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const c = new Client({ name: "axsnap-test", version: "0.0.0" });
  await c.connect(transport);
  return c;
}

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
  client = await connect();
}, TIMEOUT);

afterAll(async () => {
  await client?.close();
  await gtk?.stop();
  await desktop?.stop();
  if (stderr.length > 0) console.log(`server stderr:\n${stderr.join("").slice(-2000)}`);
});

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

function texts(r: CallToolResult): string[] {
  return r.content.flatMap((b) => (b.type === "text" ? [b.text] : []));
}

/** The snapshot text block of a result (the one that starts with "Snapshot s…"). */
function snapshotText(r: CallToolResult): string {
  const t = texts(r).find((s) => /^Snapshot s[a-z0-9]{7} /.test(s));
  if (t === undefined) throw new Error(`no snapshot in the result:\n${texts(r).join("\n")}`);
  return t;
}

/** Width and height of a base64 PNG, after checking its signature and that IHDR comes first. */
function pngSize(base64: string): { width: number; height: number } {
  const png = Buffer.from(base64, "base64");
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(png.toString("ascii", 12, 16)).toBe("IHDR");
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function errorOf(r: CallToolResult): Record<string, unknown> {
  expect(r.isError).toBe(true);
  return JSON.parse(texts(r)[0]!) as Record<string, unknown>;
}

describe("the MCP server", () => {
  it("lists its tools, each with a description", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names.sort()).toEqual([...TOOLS].sort());
    for (const t of tools) expect(t.description?.length ?? 0).toBeGreaterThan(60);
    const click = tools.find((t) => t.name === "click")!;
    expect(Object.keys(click.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["element_index", "ref", "x", "y"]),
    );
    // What every action shares (refs, delivery, the safety rules) is said once, in the instructions.
    const instructions = client.getInstructions() ?? "";
    expect(instructions).toMatch(/ref "@<snapshot id>:e<N>"/);
    expect(instructions).toMatch(/delivery/);
    expect(instructions).toMatch(/--confirm-destructive/);
    console.log(`tools: ${names.join(", ")}`);
  });

  it(
    "wait_for: the state once an element is there; TIMEOUT as an error result when the text never shows",
    async () => {
      const met = await call(client, "wait_for", { app: GTK, role: "radio button", screenshot: false });
      expect(met.isError).toBeFalsy();
      expect(texts(met)[0]).toMatch(/^met after \d+ ms \(\d+ observations, woken by events\)$/);
      expect(snapshotText(met)).toContain("radio button");
      const late = await call(client, "wait_for", {
        app: GTK,
        text: "no such text anywhere",
        timeout_ms: 600,
      });
      expect(errorOf(late)).toMatchObject({ code: "TIMEOUT", delivery: "not_delivered" });
      const bad = await call(client, "wait_for", { app: GTK, text: "a", idle: true });
      expect(errorOf(bad)).toMatchObject({ code: "INVALID_ARGUMENT" });
    },
    TIMEOUT,
  );

  it(
    "get_app_state: the snapshot text with its id and ref form, and the screenshot as a PNG image block",
    async () => {
      const r = await call(client, "get_app_state", { app: GTK });
      expect(r.isError).toBeFalsy();
      const text = snapshotText(r);
      expect(text).toContain("radio button");
      const id = snapshotIdIn(text);
      expect(text).toContain(`Refs look like @${id}:e<N>`);
      const image = r.content.find((b) => b.type === "image");
      expect(image).toMatchObject({ type: "image", mimeType: "image/png" });
      const size = pngSize((image as { data: string }).data);
      expect(size.width).toBeGreaterThan(0);
      expect(size.height).toBeGreaterThan(0);
      expect(text).toContain(`Screenshot: ${size.width}x${size.height} px`);
    },
    TIMEOUT,
  );

  it(
    "get_app_state with marks: the screenshot carries the element indices, and the text says so",
    async () => {
      const plain = await call(client, "get_app_state", { app: GTK });
      const r = await call(client, "get_app_state", { app: GTK, marks: true });
      expect(r.isError).toBeFalsy();
      expect(snapshotText(r)).toContain("The numbered boxes on it are element indices");
      expect(snapshotText(plain)).not.toContain("numbered boxes");
      const image = (x: CallToolResult) =>
        (x.content.find((b) => b.type === "image") as { data: string }).data;
      expect(pngSize(image(r))).toEqual(pngSize(image(plain)));
      expect(image(r)).not.toBe(image(plain));
      const bad = await call(client, "get_app_state", { app: GTK, marks: "yes" });
      expect(bad.isError).toBe(true);
    },
    TIMEOUT,
  );

  it(
    "click by element_index checks a radio button, seen in the reply; then one by ref",
    async () => {
      const first = snapshotText(await call(client, "get_app_state", { app: GTK, screenshot: false }));
      const page2 = indexIn(first, /^\d+ radio button Page 2, Value: off$/);
      const r = await call(client, "click", { app: GTK, element_index: page2 });
      expect(r.isError).toBeFalsy();
      // The result as structured content; the reply text (test/doors/mcp-replies.test.ts has its shape).
      const result = r.structuredContent as Record<string, unknown>;
      expect(result).toMatchObject({
        action: "click",
        delivery: "delivered_unverified",
        retry: "unsafe",
        channel: "semantic",
        notes: [],
        target: `@${snapshotIdIn(first)}:e${page2}`,
      });
      // A page switch: its changes are longer than the window, so the reply prints the window whole.
      const after = texts(r)[0]!;
      expect(after).toMatch(/\d+ radio button Page 2, Value: on/);
      expect(after).toMatch(/\d+ radio button Page 1, Value: off/);
      // No screenshot after an action unless asked.
      expect(r.content.some((b) => b.type === "image")).toBe(false);
      console.log(
        `call: click ${JSON.stringify({ app: GTK, element_index: page2 })}\nresult: ${texts(r)[0]}\nsnapshot: ${after.split("\n").slice(0, 3).join(" | ")} | … ${after
          .split("\n")
          .find((l) => /radio button Page 2/.test(l))
          ?.trim()}`,
      );

      const page1 = indexIn(after, /^\d+ radio button Page 1\b/);
      const back = await call(client, "click", { ref: `@${String(result.snapshotId)}:e${page1}` });
      expect(back.isError).toBeFalsy();
      expect(texts(back)[0]).toMatch(/\d+ radio button Page 1, Value: on/);
    },
    TIMEOUT,
  );

  it(
    "a malformed call is answered with a clear error and the server stays alive",
    async () => {
      const bad = await call(client, "click", { app: GTK, element_index: "the second radio" });
      expect(bad.isError).toBe(true);
      expect(texts(bad).join("\n")).toMatch(/Input validation error.*click/s);
      expect(texts(bad).join("\n")).toMatch(/element_index/);
      console.log(`malformed click: ${texts(bad).join(" ")}`);

      const wrong = await call(client, "type_text", { app: GTK, text: 42 });
      expect(wrong.isError).toBe(true);
      expect(texts(wrong).join("\n")).toMatch(/text/);

      // What a schema cannot say is checked by the server: one target, not two.
      const both = errorOf(await call(client, "click", { app: GTK, element_index: 1, ref: "@s2345678:e1" }));
      expect(both).toMatchObject({ code: "INVALID_ARGUMENT", delivery: "not_delivered", retry: "safe" });
      expect(both.message).toMatch(/not both/);

      const apps = await call(client, "list_apps", {});
      expect(apps.isError).toBeFalsy();
      const list = JSON.parse(texts(apps)[0]!) as { name: string; pid: number }[];
      expect(list.map((a) => a.name)).toContain(GTK);
    },
    TIMEOUT,
  );
  it(
    "type_text and set_value with a text over the documented limit, in a request under the request limit: INVALID_ARGUMENT, nothing typed",
    async () => {
      const before = snapshotText(await call(client, "get_app_state", { app: GTK, screenshot: false }));
      const entry = indexIn(before, /^\d+ text \(settable, string\) Value: entry$/);
      // Just under the request limit, far over the text limit.
      const text = "z".repeat(REQUEST_LIMIT - 4096);
      const typed = errorOf(await call(client, "type_text", { app: GTK, element_index: entry, text }));
      expect(typed).toMatchObject({ code: "INVALID_ARGUMENT", delivery: "not_delivered", retry: "safe" });
      expect(typed.message).toBe(
        `type_text: text is ${text.length} characters, over the limit of ${TEXT_LIMIT}; nothing was typed`,
      );
      expect(typed.hint).toMatch(/several type_text calls/);
      const set = errorOf(
        await call(client, "set_value", {
          app: GTK,
          element_index: entry,
          value: "z".repeat(TEXT_LIMIT + 1),
        }),
      );
      expect(set).toMatchObject({ code: "INVALID_ARGUMENT", delivery: "not_delivered" });
      expect(set.message).toMatch(/^set_value: value is 100001 characters, over the limit of 100000/);
      const after = snapshotText(await call(client, "get_app_state", { app: GTK, screenshot: false }));
      expect(after).toMatch(/^\s*\d+ text \(settable, string\) Value: entry$/m);
      expect(after).not.toContain("zzz");
      // At the limit, it goes in.
      const ok = await call(client, "type_text", {
        app: GTK,
        element_index: entry,
        text: "!".repeat(TEXT_LIMIT),
      });
      expect(ok.isError).toBeFalsy();
      const reset = await call(client, "set_value", { app: GTK, element_index: entry, value: "entry" });
      expect(reset.isError).toBeFalsy();
    },
    TIMEOUT,
  );
});

describe("the MCP server after a request over the size limit", () => {
  it(
    "an 11 MB get_app_state line is refused with its id, and the next get_app_state answers with the window",
    async () => {
      const raw = spawnRawServer(desktop.env);
      try {
        await raw.initialize();
        const started = Date.now();
        await raw.write({
          jsonrpc: "2.0",
          id: "huge",
          method: "tools/call",
          params: { name: "get_app_state", arguments: { app: GTK, window: "w".repeat(11 * 1024 * 1024) } },
        });
        const refused = await raw.answer("huge");
        expect(refused.error).toMatchObject({ code: -32600, data: { limitBytes: REQUEST_LIMIT } });
        const refusedMs = Date.now() - started;
        await raw.write({
          jsonrpc: "2.0",
          id: "next",
          method: "tools/call",
          params: { name: "get_app_state", arguments: { app: GTK, screenshot: false } },
        });
        const next = (await raw.answer("next")).result as unknown as CallToolResult;
        expect(next.isError).toBeFalsy();
        expect(snapshotText(next)).toContain("radio button");
        await raw.stderrMatching(/refused request "huge" \(tools\/call\): \d+ bytes on one line/);
        console.log(
          `11 MB get_app_state: refused in ${refusedMs} ms; the next get_app_state answered ${Date.now() - started} ms after the huge line was sent`,
        );
      } finally {
        await raw.close();
      }
    },
    TIMEOUT,
  );
});

describe("the MCP server on Chromium's form page", () => {
  let web: App;

  beforeAll(async () => {
    web = await chromium(desktop, fileUrl("test/pages/form.html"), { windowName: "axsnap form" });
  }, TIMEOUT);

  afterAll(async () => {
    await web?.stop();
  });

  /** Web content arrives a moment after the window: poll get_app_state, bounded. */
  async function form(c: Client): Promise<string> {
    const until = Date.now() + 20_000;
    for (;;) {
      const r = await call(c, "get_app_state", { app: WEB, screenshot: false });
      const text = r.isError ? "" : snapshotText(r);
      if (text.includes("push button Delete account")) return text;
      if (Date.now() > until) throw new Error(`the page never showed; last answer:\n${texts(r).join("\n")}`);
      await sleep(300);
    }
  }

  it(
    "type_text into the password field is refused with POLICY_DENIED, nothing sent, the secret nowhere",
    async () => {
      const text = await form(client);
      const pw = indexIn(text, /^\d+ password text (\(settable, string\) )?Password\b/);
      const r = await call(client, "type_text", { app: WEB, text: "x", element_index: pw });
      const e = errorOf(r);
      expect(e).toMatchObject({ code: "POLICY_DENIED", delivery: "not_delivered", retry: "safe" });
      expect(typeof e.hint).toBe("string");
      expect(JSON.stringify(r)).not.toContain(SECRET);
      expect(text).not.toContain(SECRET);
      console.log(`type_text into the password field: ${texts(r)[0]!.replace(/\s+/g, " ")}`);
    },
    TIMEOUT,
  );

  it(
    'clicking "Delete account" is refused by default and allowed with --confirm-destructive',
    async () => {
      const text = await form(client);
      const del = indexIn(text, /^\d+ push button Delete account$/);
      const refused = errorOf(await call(client, "click", { ref: `@${snapshotIdIn(text)}:e${del}` }));
      expect(refused).toMatchObject({ code: "POLICY_DENIED", delivery: "not_delivered" });

      const confirming = await connect(["--confirm-destructive"]);
      try {
        const before = await form(confirming);
        const r = await call(confirming, "click", {
          ref: `@${snapshotIdIn(before)}:e${indexIn(before, /^\d+ push button Delete account$/)}`,
        });
        expect(r.isError).toBeFalsy();
        expect(r.structuredContent).toMatchObject({
          delivery: "delivered_unverified",
          channel: "semantic",
        });
        // Chromium shows the page's change a moment later: poll, bounded.
        let seen = texts(r)[0]!;
        const until = Date.now() + 10_000;
        while (!seen.includes("Account deleted") && Date.now() < until) {
          await sleep(200);
          seen = snapshotText(await call(confirming, "get_app_state", { app: WEB, screenshot: false }));
        }
        expect(seen).toContain("Account deleted");
      } finally {
        await confirming.close();
      }
      expect(stderr.join("")).toMatch(/allowed by --confirm-destructive/);
    },
    TIMEOUT,
  );
});
