/**
 * bench/wayland-doors: what one snapshot costs an agent through each door on
 * the agent's Wayland desktop against the agent's X11 desktop, same app
 * (gtk3-widget-factory), same screen size (1920x1080): the CLI's `snapshot
 * --app PID --screenshot FILE` (its stdout) and MCP get_app_state over stdio
 * (its text, its structuredContent, its image). Text by o200k, an image by
 * width×height/750, as bench/observe-doors.ts counts them.
 *
 * Each desktop is started and stopped by the CLI (`axsnap desktop start NAME
 * [--wayland]`), the app launched through it; a runtime directory of this
 * run's own holds the state, and every command runs in its own process
 * (AXSNAP_DAEMON=off), so nothing is left running.
 *
 *   tsx bench/wayland-doors.ts
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const CLI = fileURLToPath(new URL("../lib/cli.ts", import.meta.url));
const runtime = mkdtempSync(join(tmpdir(), "axsnap-bench-doors-"));
const env: Record<string, string> = {
  ...(process.env as Record<string, string>),
  XDG_RUNTIME_DIR: runtime,
  AXSNAP_DAEMON: "off",
};

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CLI, ...args], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

async function must(args: string[]): Promise<string> {
  const r = await cli(args);
  if (r.code !== 0) throw new Error(`axsnap ${args.join(" ")}: exit ${r.code}\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

const tokens = (s: string) => encode(s).length;
const imageTokens = (w: number, h: number) => Math.round((w * h) / 750);

/** PNG width and height from its IHDR. */
function pngSize(file: string): { w: number; h: number } {
  const b = readFileSync(file);
  return { w: b.readUInt32BE(16), h: b.readUInt32BE(20) };
}

interface Row {
  desktop: string;
  elements: number;
  cliText: number;
  cliImage: string;
  mcpText: number;
  mcpStructured: string;
  mcpImage: string;
}

async function measure(name: string, wayland: boolean): Promise<Row> {
  await must(["desktop", "start", name, "--size", "1920x1080", ...(wayland ? ["--wayland"] : [])]);
  try {
    // Under load the first answer of a new app can be late (APP_UNRESPONSIVE, with the pid): then look until it answers.
    const launched = JSON.parse(
      (await cli(["--json", "--desktop", name, "launch", "gtk3-widget-factory"])).stdout,
    );
    const pid = String(launched.data?.pid ?? launched.error?.pid);
    if (pid === "undefined") throw new Error(`launch on ${name}: ${JSON.stringify(launched)}`);
    const file = join(runtime, `${name}.png`);
    // A first walk, as an agent's first look: what is counted is a snapshot of the settled window.
    const end = Date.now() + 60_000;
    while ((await cli(["--desktop", name, "snapshot", "--app", pid])).code !== 0)
      if (Date.now() > end) throw new Error(`gtk3-widget-factory (pid ${pid}) on ${name} never answered`);
    const out = await must(["--desktop", name, "snapshot", "--app", pid, "--screenshot", file]);
    const shot = pngSize(file);

    const client = new Client({ name: "axsnap-bench-wayland-doors", version: "0.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", CLI, "mcp", "--desktop", name],
        env,
        stderr: "ignore",
      }),
    );
    try {
      const r = (await client.callTool({
        name: "get_app_state",
        arguments: { app: Number(pid) },
      })) as CallToolResult;
      if (r.isError) throw new Error(`get_app_state on ${name}: ${JSON.stringify(r.content)}`);
      const text = r.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
      const image = r.content.find((b) => b.type === "image") as { data: string } | undefined;
      const png = image ? Buffer.from(image.data, "base64") : undefined;
      const mw = png ? png.readUInt32BE(16) : 0;
      const mh = png ? png.readUInt32BE(20) : 0;
      return {
        desktop: wayland ? "Wayland (gnome-shell)" : "X11 (Xvfb)",
        elements: out.split("\n").filter((l) => /^\t*\d+ /.test(l)).length,
        cliText: tokens(out),
        cliImage: `${imageTokens(shot.w, shot.h)} (${shot.w}x${shot.h})`,
        mcpText: tokens(text),
        mcpStructured:
          r.structuredContent === undefined ? "none" : String(tokens(JSON.stringify(r.structuredContent))),
        mcpImage: png ? `${imageTokens(mw, mh)} (${mw}x${mh})` : "none",
      };
    } finally {
      await client.close();
    }
  } finally {
    await cli(["desktop", "stop", name]);
  }
}

try {
  const rows = [await measure("benchx", false), await measure("benchw", true)];
  const head = ["desktop", "lines", "CLI text", "CLI image", "MCP text", "MCP structured", "MCP image"];
  console.log("one snapshot of gtk3-widget-factory, o200k tokens (image: w×h/750)");
  console.log(head.join("\t"));
  for (const r of rows)
    console.log(
      [r.desktop, r.elements, r.cliText, r.cliImage, r.mcpText, r.mcpStructured, r.mcpImage].join("\t"),
    );
} finally {
  rmSync(runtime, { recursive: true, force: true });
}
