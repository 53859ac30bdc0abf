/**
 * The MCP server from a source checkout, started the way a client starts it:
 * from another working directory (issue 19, section 8). `node --import tsx
 * /path/lib/mcp-main.ts` resolves `tsx` from the working directory and fails
 * there; `node /path/to/axsnap/scripts/mcp-source.mjs` registers the
 * checkout's own tsx, and so does an absolute `--import` of tsx's loader.
 * Each completes an MCP initialize and tools/list over stdio, from a temp dir
 * with no node_modules. No desktop: listing tools reaches no app.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const elsewhere = mkdtempSync(join(tmpdir(), "axsnap-mcp-cwd-"));

afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

/** Connects an SDK client to `node ...args` started in `cwd`; the tools it lists, or the failure with stderr. */
async function toolsFrom(args: string[], cwd: string): Promise<string[]> {
  const stderr: string[] = [];
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd, stderr: "pipe" });
  transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
  const client = new Client({ name: "axsnap-test", version: "0.0.0" });
  try {
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe("axsnap");
    const { tools } = await client.listTools();
    return tools.map((t) => t.name);
  } catch (e) {
    throw new Error(`${(e as Error).message}\nstderr: ${stderr.join("")}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}

describe("the MCP server from a source checkout, started in another directory", () => {
  it("starts through scripts/mcp-source.mjs", async () => {
    const tools = await toolsFrom([join(ROOT, "scripts", "mcp-source.mjs")], elsewhere);
    expect(tools).toEqual(expect.arrayContaining(["list_apps", "get_app_state", "click"]));
  }, 60_000);

  it("passes its arguments on to the server (a bad one is refused, exit 2)", async () => {
    await expect(
      toolsFrom([join(ROOT, "scripts", "mcp-source.mjs"), "--no-such-option"], elsewhere),
    ).rejects.toThrow(/no-such-option/);
  }, 60_000);

  it("starts with an absolute --import of the checkout's tsx loader", async () => {
    const loader = join(ROOT, "node_modules", "tsx", "dist", "loader.mjs");
    const tools = await toolsFrom(["--import", loader, join(ROOT, "lib", "mcp-main.ts")], elsewhere);
    expect(tools).toContain("get_app_state");
  }, 60_000);

  it("(the README's old form fails there: tsx is resolved from the working directory)", async () => {
    await expect(toolsFrom(["--import", "tsx", join(ROOT, "lib", "mcp-main.ts")], elsewhere)).rejects.toThrow(
      /Cannot find package 'tsx'/,
    );
  }, 60_000);
});
