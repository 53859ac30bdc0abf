/**
 * The CLI's help and docs/cli.md say the same thing as its parser (issue 37):
 * each command's `--help` lists exactly the flags its parser takes, with the
 * usage the page's "## Commands" row starts with, and that row names no flag
 * the command does not take. test/doors/docs-match.test.ts checks that the
 * page names everything; this checks that nothing names more, or a different
 * usage, so the three cannot drift apart in either direction.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { commandFlags, GLOBAL_FLAGS } from "../../lib/doors/cli/args.js";
import { COMMANDS } from "../../lib/doors/cli/grammar.js";
import { helpText } from "../../lib/doors/cli/help.js";
import { proseOf, REPO } from "../support/doc-blocks.js";

const PAGE = "docs/cli.md";

/** The flags of the option lines under `options:` in a command's help. */
function helpFlags(help: string): string[] {
  const lines = help.split("\n");
  const from = lines.indexOf("options:");
  const out: string[] = [];
  for (const line of lines.slice(from + 1)) {
    if (line.trim() === "") break;
    const m = /^ {2}(?:-[A-Za-z], )?--([a-z][a-z-]*)/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** The "## Commands" table's rows: the first cell's code (the usage, `\|` read as `|`) and the row. */
function commandRows(): Map<string, { usage: string; text: string }> {
  const text = proseOf(readFileSync(join(REPO, PAGE), "utf8"));
  const lines = text.split("\n");
  const start = lines.indexOf("## Commands");
  const end = lines.findIndex((l, i) => i > start && /^#{1,2} /.test(l));
  const rows = new Map<string, { usage: string; text: string }>();
  for (const line of lines.slice(start + 1, end)) {
    const first = line.startsWith("|") ? line.split(/(?<!\\)\|/)[1] : undefined;
    const code = first === undefined ? null : /`([^`]+)`/.exec(first);
    if (code) {
      const usage = code[1]!.replace(/\\\|/g, "|").trim();
      rows.set(usage.split(/\s+/)[0]!, { usage, text: line });
    }
  }
  return rows;
}

// `mcp` takes the server's options (lib/doors/mcp/options.ts), checked against docs/mcp.md by docs-match.
const commands = Object.keys(COMMANDS).filter((c) => c !== "mcp");
// --version prints the version whatever else is typed: the main help lists it, once.
const globals = GLOBAL_FLAGS.filter((f) => f !== "version");

describe("the CLI's help, its parser and docs/cli.md agree", () => {
  it("each command's --help lists exactly the flags its parser takes", () => {
    const wrong: string[] = [];
    for (const c of commands) {
      const listed = helpFlags(helpText(c)).sort();
      const taken = [...new Set([...commandFlags(c), ...globals])].sort();
      if (listed.join(" ") !== taken.join(" "))
        wrong.push(`axsnap ${c} --help lists ${listed.join(",")}; its parser takes ${taken.join(",")}`);
    }
    expect(wrong).toEqual([]);
  });

  it("each row of the page's commands table starts with the usage the command's help prints", () => {
    const rows = commandRows();
    const wrong: string[] = [];
    for (const c of Object.keys(COMMANDS)) {
      const usage = /^usage: axsnap (.*?)(?: \[options\])?$/m.exec(helpText(c))?.[1];
      const row = rows.get(c);
      if (row?.usage !== usage) wrong.push(`${c}: the page says \`${row?.usage}\`, the help \`${usage}\``);
    }
    expect(wrong).toEqual([]);
  });

  it("a row of the page's commands table names no flag its command does not take", () => {
    const rows = commandRows();
    const wrong: string[] = [];
    for (const c of commands) {
      const takes = new Set([...commandFlags(c), ...GLOBAL_FLAGS]);
      // Only the last cell ("its options"): what the command does may mention another command's flag.
      const cells = rows.get(c)?.text.split(/(?<!\\)\|/) ?? [];
      const last = cells[cells.length - 2] ?? "";
      for (const m of last.matchAll(/--([a-z][a-z-]*)/g))
        if (!takes.has(m[1]!)) wrong.push(`the row ${c} names --${m[1]}, which ${c} does not take`);
    }
    expect(wrong).toEqual([]);
  });
});
