/**
 * The documentation's pages and their fenced code blocks, for the tests that
 * keep the pages true (test/doors/docs-examples.test.ts, docs-links.test.ts).
 *
 * A block is runnable when its language is `sh`, `bash` or `ts` and the line
 * before its fence is not `<!-- no-run: <reason> -->`. Any other language
 * (`json`, `text`, none) is shown, never run.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const REPO = join(import.meta.dirname, "..", "..");

/** README.md, ARCHITECTURE.md, docs/*.md and docs/internals/*.md, as paths relative to the repository. */
export function docPages(): string[] {
  const pages = (dir: string) =>
    readdirSync(join(REPO, dir))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => `${dir}/${name}`);
  return ["README.md", "ARCHITECTURE.md", ...pages("docs"), ...pages("docs/internals")];
}

export interface DocBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The reason given by a `<!-- no-run: … -->` line right before the fence, if any. */
  noRun?: string;
}

const RUNNABLE = new Set(["sh", "bash", "ts"]);
const NO_RUN = /^<!--\s*no-run:\s*(.*?)\s*-->$/;

export function blocksOf(page: string, text = readFileSync(join(REPO, page), "utf8")): DocBlock[] {
  const lines = text.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`${page}:${start + 1}: a code block that never closes`);
    const before = start > 0 ? NO_RUN.exec(lines[start - 1]!.trim()) : null;
    blocks.push({
      page,
      line: start + 1,
      lang: open[1] ?? "",
      code: body.join("\n"),
      ...(before ? { noRun: before[1] ?? "" } : {}),
    });
  }
  return blocks;
}

export function isRunnable(block: DocBlock): boolean {
  return RUNNABLE.has(block.lang) && block.noRun === undefined;
}

/** The text of a page outside its code blocks (links inside code are not links). */
export function proseOf(text: string): string {
  return text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
}
