/**
 * Every runnable code block of README.md and docs/*.md runs here, against a
 * real headless desktop, so the pages cannot drift from the code. Each block
 * gets a fresh gtk3-widget-factory (blocks click and type, and the next one
 * must see the app as its page describes it).
 *
 * - `sh` blocks run in bash (-e, -o pipefail) in an empty directory, with an
 *   `axsnap` on PATH that is this checkout's lib/cli.ts, bundled here as
 *   `npm run build` bundles it (a tsx start per command would cost half a
 *   second each), a session directory of their own and no warm process;
 * - `ts` blocks run with tsx from the repository's root, `from "axsnap"`
 *   pointing at lib/index.ts.
 *
 * A block that cannot run here says why on the line before its fence:
 * `<!-- no-run: reason -->` (see test/support/doc-blocks.ts).
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { blocksOf, type DocBlock, docPages, isRunnable, REPO } from "../support/doc-blocks.js";
import { useDesktop } from "../support/linux.js";

const TSX = import.meta.resolve("tsx");
const blocks = docPages().flatMap((page) => blocksOf(page));
const runnable = blocks.filter(isRunnable);

let desktop: Desktop;
let work: string;
let bin: string;
/** The bundle sits in build/ (git-ignored), one level below the root, where the CLI finds package.json and the addon. */
const bundle = `docs-cli-${process.pid}`;

beforeAll(async () => {
  desktop = await useDesktop();
  work = mkdtempSync(join(tmpdir(), "axsnap-docs-examples-"));
  bin = join(work, "bin");
  mkdirSync(bin);
  await build({
    // `axsnap mcp` imports mcp.js beside the CLI's entry, as dist/cli.js imports dist/mcp.js.
    entryPoints: { [bundle]: join(REPO, "lib", "cli.ts"), mcp: join(REPO, "lib", "mcp.ts") },
    outdir: join(REPO, "build"),
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    chunkNames: `${bundle}-chunk-[hash]`,
    logLevel: "warning",
  });
  writeFileSync(
    join(bin, "axsnap"),
    `#!/bin/sh\nexec "${process.execPath}" "${join(REPO, "build", `${bundle}.js`)}" "$@"\n`,
  );
  chmodSync(join(bin, "axsnap"), 0o755);
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
  for (const name of readdirSync(join(REPO, "build")))
    if (name.startsWith(bundle) || name === "mcp.js") rmSync(join(REPO, "build", name), { force: true });
});

interface Run {
  code: number | null;
  out: string;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString("utf8");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

async function runBlock(block: DocBlock, n: number): Promise<Run> {
  const dir = mkdtempSync(join(work, `block-${n}-`));
  const env = {
    ...process.env,
    ...desktop.env,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    XDG_STATE_HOME: join(dir, "state"),
    AXSNAP_DAEMON: "off",
  };
  if (block.lang === "ts") {
    // The file sits in the repository (scratch/ is git-ignored) so that its other imports resolve.
    mkdirSync(join(REPO, "scratch"), { recursive: true });
    const scratch = mkdtempSync(join(REPO, "scratch", "docs-example-"));
    try {
      const file = join(scratch, "block.ts");
      const code = block.code.replace(
        /from "axsnap"/g,
        `from ${JSON.stringify(join(REPO, "lib", "index.ts"))}`,
      );
      writeFileSync(file, `${code}\nprocess.exit(process.exitCode ?? 0);\n`);
      return await run(process.execPath, ["--import", TSX, file], REPO, env);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
  return run("bash", ["-e", "-o", "pipefail", "-c", block.code], dir, env);
}

describe("the documentation's code blocks", () => {
  it("are found, and every block that does not run says why", () => {
    expect(runnable.length).toBeGreaterThanOrEqual(15);
    for (const b of blocks) if (b.noRun !== undefined) expect(b.noRun, `${b.page}:${b.line}`).not.toBe("");
    // A no-run marker on a block that would never run anyway is a marker that says nothing.
    for (const b of blocks)
      if (b.noRun !== undefined)
        expect(["sh", "bash", "ts", "json"], `${b.page}:${b.line}`).toContain(b.lang);
  });

  runnable.forEach((block, n) => {
    it(`${block.page}:${block.line} (${block.lang}) runs`, async () => {
      const app = await gtkWidgetFactory(desktop);
      try {
        const result = await runBlock(block, n);
        if (process.env.DOCS_EXAMPLES_PRINT) console.log(`== ${block.page}:${block.line}\n${result.out}`);
        expect(result.code, `${block.page}:${block.line} printed:\n${result.out}`).toBe(0);
      } finally {
        await app.stop();
      }
    }, 60_000);
  });
});
