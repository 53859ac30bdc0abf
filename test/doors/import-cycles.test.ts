/**
 * Issue 22: lib/ has no import cycle, type-only imports and dynamic
 * import() included (a cycle of types still ties the modules' meanings
 * together, and a cycle of values decides what is undefined at load time).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const LIB = join(__dirname, "..", "..", "lib");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The lib/ files one file imports (static, type-only, re-exports and import()). */
function importsOf(file: string, text: string): string[] {
  const specs = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/g),
    ...text.matchAll(/import\(\s*"([^"]+)"\s*\)/g),
  ].map((m) => m[1]!);
  return specs
    .filter((s) => s.startsWith("."))
    .map((s) => normalize(join(dirname(file), s.replace(/\.js$/, ".ts"))))
    .map((p) => (existsSync(p) ? p : join(p.replace(/\.ts$/, ""), "index.ts")))
    .filter((p) => existsSync(p));
}

/** Strongly connected components of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) found.push(part.map((p) => relative(LIB, p)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("lib/ imports", () => {
  it("form no cycle", () => {
    const graph = new Map(sources(LIB).map((f) => [f, importsOf(f, readFileSync(f, "utf8"))]));
    expect(graph.size).toBeGreaterThan(50);
    // The check bites: a graph with a cycle in it is found.
    const probe = new Map(graph);
    const [a, b] = [join(LIB, "model", "errors.ts"), join(LIB, "observe", "snapshot.ts")];
    probe.set(a, [...(graph.get(a) ?? []), b]);
    expect(cycles(probe).length).toBeGreaterThan(0);
    expect(cycles(graph)).toEqual([]);
  });
});
