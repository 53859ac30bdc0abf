/**
 * Every hint the library can put on an error, read from its own source with
 * the TypeScript parser (every `hint:` property, every `hint`/`*_HINT`
 * constant, every hint argument of `invalidArgument`), so that a hint added
 * later is checked by the doors' hint tests too (test/doors/cli-hints.test.ts,
 * test/doors/mcp-hints.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const LIB = join(import.meta.dirname, "..", "..", "lib");

/** A template's text with each `${…}` as a sample value (a pid where it names one). */
function literalText(node: ts.Node, sf: ts.SourceFile): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    let text = node.head.text;
    for (const span of node.templateSpans)
      text += `${/pid/i.test(span.expression.getText(sf)) ? "1234" : "X"}${span.literal.text}`;
    return text;
  }
  if (ts.isConditionalExpression(node)) return literalText(node.whenTrue, sf);
  return undefined;
}

/** A door's own files: lib/cli.ts, lib/doors/cli/…, lib/mcp.ts, lib/mcp-main.ts, lib/doors/mcp/…. */
const DOOR = /^(doors\/)?(cli|mcp)(\/|\.ts$|-main\.ts$)/;

/** Every hint written in lib/ outside the CLI and MCP doors, with where it is. */
export function libraryHints(): { where: string; hint: string }[] {
  return hintsIn((f) => !DOOR.test(f));
}

/** Every hint the MCP server writes itself (lib/mcp.ts, lib/doors/mcp/…), with where it is. */
export function mcpDoorHints(): { where: string; hint: string }[] {
  return hintsIn((f) => /^(doors\/)?mcp(\/|\.ts$|-main\.ts$)/.test(f));
}

function hintsIn(keep: (file: string) => boolean): { where: string; hint: string }[] {
  const out: { where: string; hint: string }[] = [];
  const files = readdirSync(LIB, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && keep(f))
    .map((f) => join(LIB, f));
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const add = (node: ts.Node) => {
      const text = literalText(node, sf);
      if (text === undefined) return;
      const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      out.push({ where: `${relative(LIB, file)}:${line + 1}`, hint: text });
    };
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAssignment(node) && node.name.getText(sf) === "hint") add(node.initializer);
      if (ts.isVariableDeclaration(node) && node.initializer && /^hint$|_HINT$/.test(node.name.getText(sf)))
        add(node.initializer);
      if (ts.isCallExpression(node) && node.expression.getText(sf) === "invalidArgument" && node.arguments[1])
        add(node.arguments[1]);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}
