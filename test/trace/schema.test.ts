/**
 * docs/trace.md's JSON examples are the format: each parses with the schema
 * (lib/session/trace/schema.ts) of the header, of a line, or of `secrets.json`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { traceHeaderSchema, traceLineSchema, traceMasksSchema } from "../../lib/session/trace/schema.js";
import { blocksOf, REPO } from "../support/doc-blocks.js";

describe("docs/trace.md", () => {
  it("every JSON example parses with the trace schema", () => {
    const blocks = blocksOf("docs/trace.md").filter((b) => b.lang === "json");
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    for (const b of blocks) {
      const value = JSON.parse(b.code) as { format?: unknown; masks?: unknown };
      const schema =
        value.masks !== undefined
          ? traceMasksSchema
          : value.format === undefined
            ? traceLineSchema
            : traceHeaderSchema;
      const parsed = schema.safeParse(value);
      expect(parsed.success, `docs/trace.md:${b.line}: ${parsed.error?.message ?? ""}`).toBe(true);
    }
    expect(readFileSync(join(REPO, "docs/trace.md"), "utf8")).toContain("## Format");
  });
});
