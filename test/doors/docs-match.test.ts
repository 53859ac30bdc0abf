/**
 * docs/cli.md and docs/mcp.md name every command, option, tool and field the
 * code has (issue 33 §9), checked against the code's own tables, never a
 * list kept here: the CLI's commands (COMMANDS), the flags its parser takes
 * (commandFlags, GLOBAL_FLAGS) and the options its help prints, the MCP
 * server's tools and their input fields as `tools/list` returns them, and
 * the server's options as its help prints them. It reads tables of the
 * docs: a row is found by the first `code` of its first cell, so
 * `| \`set-value TARGET VALUE\` | … |` is the row of set-value. Each failure
 * names the page, the section, the row and what is missing; a row naming
 * something the code no longer has fails too.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { commandFlags, GLOBAL_FLAGS } from "../../lib/doors/cli/args.js";
import { COMMANDS } from "../../lib/doors/cli/grammar.js";
import { helpText } from "../../lib/doors/cli/help.js";
import { createMcpServer } from "../../lib/mcp.js";
import { createSession } from "../../lib/session/session.js";
import { proseOf, REPO } from "../support/doc-blocks.js";

const CLI_PAGE = "docs/cli.md";
const MCP_PAGE = "docs/mcp.md";

function page(path: string): string {
  return proseOf(readFileSync(join(REPO, path), "utf8"));
}

/** The text under `## heading` up to the next heading of level 2 or above; undefined when there is none. */
function section(text: string, heading: string): string | undefined {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start === -1) return undefined;
  const end = lines.findIndex((l, i) => i > start && /^#{1,2} /.test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end).join("\n");
}

interface Row {
  /** The first word of the first `code` of the first cell: a command, a flag, a tool. */
  key: string;
  text: string;
}

/** The rows of every table in a section (header and separator rows left out). */
function rowsOf(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split("\n")) {
    if (!line.startsWith("|") || /^\|[\s|:-]+\|$/.test(line.trim())) continue;
    const first = line.split(/(?<!\\)\|/)[1] ?? "";
    const code = /`([^`]+)`/.exec(first);
    if (code) rows.push({ key: code[1]!.trim().split(/\s+/)[0]!, text: line });
  }
  return rows;
}

/** `--flag` written as itself, not as the start of a longer flag. */
function namesFlag(text: string, flag: string): boolean {
  return new RegExp(`(^|[^a-z-])--${flag}(?![a-z-])`).test(text);
}

/** A field written as code: `field`, `field: …`, `field`/…, but not `field_other`. */
function namesField(text: string, field: string): boolean {
  return new RegExp(`\`${field}(?![A-Za-z0-9_])`).test(text);
}

/** The flags of the option lines of a help text: `  --flag …` or `  -h, --flag …`, with the lines. */
function helpOptions(help: string, after: string): { flag: string; line: string }[] {
  const lines = help.split("\n");
  const from = lines.indexOf(after);
  if (from === -1) return [];
  const out: { flag: string; line: string }[] = [];
  for (const line of lines.slice(from + 1)) {
    if (line.trim() === "") break;
    const m = /^\s+(?:-[A-Za-z], )?--([a-z][a-z-]*)/.exec(line);
    if (m) out.push({ flag: m[1]!, line: line.trim() });
  }
  return out;
}

/** Option lines the main help prints as global: every command's help repeats them (mcp's aside). */
const globalLines = helpOptions(helpText(), "global options:");
const globalFlags = [...new Set([...GLOBAL_FLAGS, ...globalLines.map((o) => o.flag)])].sort();

/** A command's own flags: what its parser takes beyond the globals, and any option its help prints that is not a global line. */
function ownFlags(command: string): string[] {
  const fromHelp = helpOptions(helpText(command), "options:")
    .filter((o) => !globalLines.some((g) => g.line === o.line))
    .map((o) => o.flag);
  return [...new Set([...commandFlags(command), ...fromHelp])];
}

/** The MCP server's options as its help prints them (`axsnap mcp --help`, lib/doors/mcp/options.ts). */
const serverFlags = ownFlags("mcp");

describe("docs/cli.md names every command and option of the CLI (lib/doors/cli/grammar.ts)", () => {
  const text = page(CLI_PAGE);
  const commands = Object.keys(COMMANDS);

  it('"## Commands": a row per command, naming each of its own options', () => {
    const where = `${CLI_PAGE} "## Commands"`;
    const body = section(text, "Commands");
    expect(body, `${where}: no such section`).toBeDefined();
    const rows = rowsOf(body ?? "");
    const missing: string[] = [];
    for (const c of commands) {
      const row = rows.find((r) => r.key === c);
      if (!row) {
        missing.push(
          `${where}: no row for the command ${c} (a table row whose first cell starts with \`${c}\`)`,
        );
        continue;
      }
      for (const flag of ownFlags(c))
        if (!namesFlag(row.text, flag)) missing.push(`${where}, row ${c}: the option --${flag} is not named`);
    }
    for (const r of rows)
      if (!commands.includes(r.key)) missing.push(`${where}: the row ${r.key} names no command axsnap has`);
    expect(missing).toEqual([]);
  });

  it('"## Options": a row per option, global or of a command, saying what it does', () => {
    const where = `${CLI_PAGE} "## Options"`;
    const body = section(text, "Options");
    expect(body, `${where}: no such section`).toBeDefined();
    const keys = new Set(rowsOf(body ?? "").map((r) => r.key));
    // The server's options are the MCP page's (its "## Server options" table, checked below).
    const flags = new Map<string, string>();
    for (const f of globalFlags) flags.set(f, "global");
    for (const c of commands)
      if (c !== "mcp") for (const f of ownFlags(c)) flags.set(f, flags.has(f) ? `${flags.get(f)}, ${c}` : c);
    const missing: string[] = [];
    for (const [flag, of] of flags)
      if (!keys.has(`--${flag}`)) missing.push(`${where}: no row for --${flag} (${of})`);
    for (const key of keys) {
      const flag = key.replace(/^--/, "");
      if (!flags.has(flag)) missing.push(`${where}: the row ${key} names no option axsnap takes`);
    }
    expect(missing).toEqual([]);
  });
});

describe("docs/mcp.md names every tool, field and server option of lib/mcp.ts", () => {
  const text = page(MCP_PAGE);

  it('"## Tools": a row per tool, naming each of its input fields', async () => {
    const where = `${MCP_PAGE} "## Tools"`;
    const session = createSession();
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "docs-match", version: "0.0.0" });
    let tools: Tool[];
    try {
      await Promise.all([createMcpServer(session, {}).connect(b), client.connect(a)]);
      tools = (await client.listTools()).tools;
    } finally {
      await client.close();
      await session.close();
    }
    expect(tools.length).toBeGreaterThan(10);
    const body = section(text, "Tools");
    expect(body, `${where}: no such section`).toBeDefined();
    const rows = rowsOf(body ?? "");
    const missing: string[] = [];
    for (const tool of tools) {
      const row = rows.find((r) => r.key === tool.name);
      if (!row) {
        missing.push(`${where}: no row for the tool ${tool.name}`);
        continue;
      }
      for (const field of Object.keys(tool.inputSchema.properties ?? {}))
        if (!namesField(row.text, field))
          missing.push(`${where}, row ${tool.name}: the field ${field} is not named (as \`${field}\`)`);
    }
    for (const r of rows)
      if (!tools.some((t) => t.name === r.key))
        missing.push(`${where}: the row ${r.key} names no tool the server lists`);
    expect(missing).toEqual([]);
  });

  it('"## Server options": a row per option of `axsnap mcp`', () => {
    const where = `${MCP_PAGE} "## Server options"`;
    const body = section(text, "Server options");
    expect(body, `${where}: no such section`).toBeDefined();
    const keys = new Set(rowsOf(body ?? "").map((r) => r.key));
    expect(serverFlags).toContain("confirm-destructive");
    const missing = serverFlags.filter((f) => !keys.has(`--${f}`)).map((f) => `${where}: no row for --${f}`);
    for (const key of keys)
      if (!serverFlags.includes(key.replace(/^--/, "")))
        missing.push(`${where}: the row ${key} names no option the server takes`);
    expect(missing).toEqual([]);
  });

  it('"## Token figures": what the tool list costs, besides the replies', () => {
    const body = section(text, "Token figures");
    expect(body, `${MCP_PAGE} "## Token figures": no such section`).toBeDefined();
    expect(body, `${MCP_PAGE} "## Token figures": says nothing of tools/list`).toMatch(/tools\/list/);
  });
});
