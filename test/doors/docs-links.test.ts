/**
 * Every relative link of README.md and docs/*.md reaches a file of this
 * repository, and every #anchor a heading of the page it points at (as
 * GitHub makes heading ids), so a page that moves or renames a section
 * cannot leave a dead link behind. Nothing links outside the repository
 * (`../shared/` is no part of a clone or the package).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { docPages, proseOf, REPO } from "../support/doc-blocks.js";

/** GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of proseOf(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]!
      .replace(/`/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  page: string;
  target: string;
}

function linksOf(page: string): Link[] {
  const text = proseOf(readFileSync(join(REPO, page), "utf8")).replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => ({ page, target: m[1]! }));
}

const pages = docPages();

describe("links in README.md and docs/", () => {
  it("finds the pages and their links", () => {
    expect(pages).toContain("README.md");
    expect(pages).toContain("docs/snapshot-format.md");
    expect(pages.flatMap(linksOf).length).toBeGreaterThan(30);
  });

  for (const page of pages) {
    it(`${page}: every relative link resolves`, () => {
      const broken: string[] = [];
      for (const { target } of linksOf(page)) {
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [path = "", anchor] = target.split("#");
        const file = path === "" ? page : normalize(join(dirname(page), path));
        if (file.startsWith("..") || relative(REPO, join(REPO, file)).startsWith("..")) {
          broken.push(`${target}: outside the repository`);
          continue;
        }
        if (!existsSync(join(REPO, file))) {
          broken.push(`${target}: no file ${file}`);
          continue;
        }
        if (anchor !== undefined && statSync(join(REPO, file)).isFile() && file.endsWith(".md")) {
          const anchors = anchorsOf(readFileSync(join(REPO, file), "utf8"));
          if (!anchors.has(anchor)) broken.push(`${target}: no heading #${anchor} in ${file}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }

  it("nothing points at ../shared/, which no clone has", () => {
    for (const page of pages) expect(readFileSync(join(REPO, page), "utf8"), page).not.toContain("../shared");
  });

  it("the README stays a front door: at most 250 lines, linking ARCHITECTURE.md and every docs page", () => {
    const readme = readFileSync(join(REPO, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
    const front = pages.filter((p) => p !== "README.md" && !p.startsWith("docs/internals/"));
    for (const page of front) expect(readme, page).toContain(`](${page})`);
  });

  it("ARCHITECTURE.md stays a map: at most 400 lines, linking every docs/internals page", () => {
    const map = readFileSync(join(REPO, "ARCHITECTURE.md"), "utf8");
    expect(map.split("\n").length).toBeLessThanOrEqual(400);
    const internals = pages.filter((p) => p.startsWith("docs/internals/"));
    expect(internals.length).toBeGreaterThan(0);
    for (const page of internals) expect(map, page).toContain(`](${page})`);
  });

  it("ARCHITECTURE.md's codemap names every folder of lib/ and src-native/ and every file at lib/'s top", () => {
    const map = readFileSync(join(REPO, "ARCHITECTURE.md"), "utf8");
    const folders = (dir: string): string[] =>
      readdirSync(join(REPO, dir), { withFileTypes: true })
        // decls/ holds one folder a target SDK: the map names decls/ and stops there.
        .filter((e) => e.isDirectory() && dir !== "src-native/mac/decls")
        .flatMap((e) => [`${dir}/${e.name}/`, ...folders(`${dir}/${e.name}`)]);
    const named = [...folders("lib"), ...folders("src-native")];
    const top = readdirSync(join(REPO, "lib")).filter((f) => f.endsWith(".ts"));
    const missing = [
      ...named.filter((f) => !map.includes(`\`${f}\``)),
      ...top.filter((f) => !map.includes(`lib/${f}`)),
    ];
    expect(missing).toEqual([]);
  });
});
