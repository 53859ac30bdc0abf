/**
 * The API reference is generated from the types (`npm run docs:api`,
 * TypeDoc): it must build without a warning (every type a public signature
 * names is exported and documented) and hold the main entry points.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("API reference", () => {
  it("builds from lib/index.ts without warnings and documents the public calls", async () => {
    const out = mkdtempSync(join(tmpdir(), "axsnap-docs-"));
    try {
      await run("npx", ["typedoc", "--out", out], { timeout: 120_000 });
      for (const page of [
        "functions/snapshot.html",
        "functions/click.html",
        "classes/AxsnapError.html",
        "types/ErrorCode.html",
      ])
        expect(existsSync(join(out, page)), page).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 150_000);
});
