/**
 * Writes the documentation's example replies from real runs, so they stay what the
 * doors print: on a private headless desktop with gtk3-widget-factory, the
 * CLI's skeleton and a drill into one of its collapsed lines, and on
 * galculator a find and the diff reply of a click by the ref it printed; a
 * window whose text is only pixels, read by OCR, and a click on one of its
 * lines by its ref; and the MCP server's reply to a toggle and to the next click
 * by a ref that reply printed (the MCP SDK's own client over stdio).
 *
 * Each example goes between `<!-- example:NAME -->` and `<!-- /example -->`
 * in one of the docs/ pages (docs/cli.md, docs/mcp.md, docs/observe.md); ids
 * and pids vary from run to run, the shape does not.
 *
 *   npm run readme:examples
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type DrawnSpec, startDrawnText } from "../test/support/drawn-text.js";
import { gtkWidgetFactory, startApp, startDesktop } from "./desktop.mjs";

const PAGES = ["cli.md", "mcp.md", "observe.md"].map((page) => new URL(`../docs/${page}`, import.meta.url));

/** The index and snapshot id of the first line matching `re` in a printed text. */
function refIn(text: string, re: RegExp): string {
  const id = /\b[Ss]napshot (s[a-z0-9]{7})\b/.exec(text)?.[1];
  for (const raw of text.split("\n")) {
    const m = /^\t*(\d+) (.*)$/.exec(raw);
    if (id && m && re.test(m[2]!)) return `@${id}:e${m[1]}`;
  }
  throw new Error(`no line matches ${re} in:\n${text}`);
}

function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
}

function block(command: string, out: string): string {
  return `\`\`\`\n$ ${command}\n${out.trimEnd()}\n\`\`\``;
}

const desktop = await startDesktop();
const state = mkdtempSync(join(tmpdir(), "axsnap-readme-"));
const examples = new Map<string, string>();
try {
  const env = { ...(process.env as Record<string, string>), ...desktop.env, XDG_STATE_HOME: state };
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, ["--import", "tsx", "lib/cli.ts", ...args], {
      env,
      encoding: "utf8",
    });
    if (r.status !== 0)
      throw new Error(`axsnap ${args.join(" ")} exited ${r.status}:\n${r.stdout}${r.stderr}`);
    return r.stdout;
  };

  let app = await gtkWidgetFactory(desktop);
  try {
    const skeleton = cli("snapshot", "--app", "gtk3-widget-factory", "--skeleton");
    const tabs = refIn(skeleton, /^table \(\+\d+ elements\)$/);
    const drill = cli("snapshot", "--root", tabs);
    examples.set(
      "cli-skeleton",
      [
        block("axsnap snapshot --app gtk3-widget-factory --skeleton", skeleton),
        block(`axsnap snapshot --root ${tabs}`, drill),
      ].join("\n\n"),
    );
  } finally {
    await app.stop();
  }

  const galc = await startApp(desktop, "galculator", [], { name: "galculator" });
  try {
    const found = cli("find", "--app", "galculator", "--role", "toggle button", "--name", "7", "--exact");
    const seven = /(@s[a-z0-9]{7}:e\d+) /.exec(found)?.[1];
    if (seven === undefined) throw new Error(`find printed no ref:\n${found}`);
    const click = cli("click", seven);
    examples.set(
      "cli-reply",
      [
        block('axsnap find --app galculator --role "toggle button" --name 7 --exact', found),
        block(`axsnap click ${seven}`, click),
      ].join("\n\n"),
    );
  } finally {
    await galc.stop();
  }

  // A window whose tree has no text at all: its labels are drawn (test/apps/drawn-text.py).
  const player: DrawnSpec = {
    title: "axsnap drawn player",
    width: 420,
    height: 120,
    lines: [
      { text: "Play", x: 32, y: 44, box: true },
      { text: "Next track", x: 120, y: 44, box: true },
      { text: "Now playing: Blue Monday", x: 32, y: 96 },
    ],
  };
  const drawn = await startDrawnText(desktop, player);
  try {
    const look = cli("snapshot", "--app", "axsnap-drawn-text");
    const next = refIn(look, /^text \(ocr\) Next track$/);
    const click = cli("click", next);
    examples.set(
      "cli-ocr",
      [block("axsnap snapshot --app axsnap-drawn-text", look), block(`axsnap click ${next}`, click)].join(
        "\n\n",
      ),
    );
  } finally {
    await drawn.stop();
  }

  app = await gtkWidgetFactory(desktop);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/mcp-main.ts"],
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "axsnap-readme", version: "0.0.0" });
  try {
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) =>
      textOf((await client.callTool({ name, arguments: args })) as CallToolResult);
    const state0 = await call("get_app_state", { app: "gtk3-widget-factory", screenshot: false });
    const toggle = refIn(state0, /^toggle button togglebutton, Value: off$/);
    const first = await call("click", { ref: toggle });
    const again = refIn(first, /^toggle button togglebutton, Value: on/);
    const second = await call("click", { ref: again });
    examples.set(
      "mcp-reply",
      [
        block(`click {"ref": "${toggle}"}`, first),
        block(`click {"ref": "${again}"}   (the ref the reply printed)`, second),
      ].join("\n\n"),
    );
  } finally {
    await client.close();
    await app.stop();
  }
} finally {
  await desktop.stop();
  rmSync(state, { recursive: true, force: true });
}

const pages = new Map(PAGES.map((url) => [url, readFileSync(url, "utf8")]));
for (const [name, body] of examples) {
  const re = new RegExp(`(<!-- example:${name} -->\\n)[\\s\\S]*?(<!-- /example -->)`);
  const page = [...pages.keys()].find((url) => re.test(pages.get(url)!));
  if (!page) throw new Error(`no docs page has a <!-- example:${name} --> … <!-- /example --> block`);
  pages.set(
    page,
    pages.get(page)!.replace(re, (_m, open: string, close: string) => `${open}${body}\n${close}`),
  );
}
for (const [url, text] of pages) writeFileSync(url, text);
console.log(`docs: wrote ${[...examples.keys()].join(", ")}`);
