/**
 * bench/mcp-http: what MCP over HTTP costs beside stdio (issue 23 §2). Two
 * servers as processes, `axsnap mcp` over stdio and `axsnap mcp --http`
 * (both `node --import tsx lib/mcp-main.ts`), on one private headless
 * desktop with gtk3-widget-factory; the SDK's own clients call
 * get_app_state on it, alternately over one and the other so both meet the
 * same machine, and print the median and p95 round trip of each, without
 * and with the screenshot. Then 20 HTTP clients at once (20 sessions), each
 * calling get_app_state once a round: the round's time (the slowest of the
 * 20), median and p95 over the rounds.
 *
 * `npm run bench:mcp-http` (BENCH_CALLS, BENCH_ROUNDS to change the counts).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";

const CALLS = Number(process.env.BENCH_CALLS ?? 60);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const CLIENTS = 20;
const GTK = "gtk3-widget-factory";

const desktop = await startDesktop();
Object.assign(process.env, desktop.env);
delete process.env.AXSNAP_MCP_TOKEN;
const gtk = await gtkWidgetFactory(desktop);
const env = { ...(process.env as Record<string, string>), ...desktop.env };

const stdio = new Client({ name: "bench-stdio", version: "0" });
await stdio.connect(
  new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/mcp-main.ts"],
    env,
    stderr: "ignore",
  }),
);

const httpProcess = spawn(process.execPath, ["--import", "tsx", "lib/mcp-main.ts", "--http", "127.0.0.1:0"], {
  env,
  stdio: ["ignore", "ignore", "pipe"],
});
const { url, token } = await new Promise<{ url: string; token: string }>((resolve, reject) => {
  let err = "";
  const onData = (d: Buffer) => {
    err += d.toString();
    const m = /on (http:\S+\/mcp) .*token in (\S+\.token)/.exec(err);
    if (!m) return;
    // Read once: the server removes the file when it ends.
    httpProcess.stderr.off("data", onData);
    httpProcess.stderr.resume();
    resolve({ url: m[1]!, token: readFileSync(m[2]!, "utf8").trim() });
  };
  httpProcess.stderr.on("data", onData);
  httpProcess.on("exit", (code) => reject(new Error(`the HTTP server exited (${code}):\n${err}`)));
});

async function httpClient(): Promise<Client> {
  const c = new Client({ name: "bench-http", version: "0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

async function timed(c: Client, screenshot: boolean): Promise<number> {
  const t = performance.now();
  const r = (await c.callTool({
    name: "get_app_state",
    arguments: { app: GTK, screenshot },
  })) as CallToolResult;
  const ms = performance.now() - t;
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return ms;
}

function stats(xs: number[]): { median: number; p95: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { median: at(0.5), p95: at(0.95) };
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

try {
  const http = await httpClient();
  // Warm both: the first snapshot of an app pays for its cache and the modules' first run.
  for (let i = 0; i < 3; i++) {
    await timed(stdio, false);
    await timed(http, false);
  }
  console.log(`get_app_state of ${GTK}, ${CALLS} calls each, alternating stdio and HTTP:`);
  console.log("                         stdio median   stdio p95   HTTP median   HTTP p95");
  for (const screenshot of [false, true]) {
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      a.push(await timed(stdio, screenshot));
      b.push(await timed(http, screenshot));
    }
    const sa = stats(a);
    const sb = stats(b);
    console.log(
      `  ${screenshot ? "with screenshot   " : "text only         "}     ${fmt(sa.median).padStart(10)}  ${fmt(sa.p95).padStart(10)}   ${fmt(sb.median).padStart(10)}  ${fmt(sb.p95).padStart(10)}`,
    );
  }
  await http.close();

  const many = await Promise.all(Array.from({ length: CLIENTS }, () => httpClient()));
  for (const c of many) await timed(c, false);
  const rounds: number[] = [];
  const each: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    each.push(...(await Promise.all(many.map((c) => timed(c, false)))));
    rounds.push(performance.now() - t);
  }
  const sr = stats(rounds);
  const se = stats(each);
  console.log(
    `${CLIENTS} HTTP clients at once (${CLIENTS} sessions), ${ROUNDS} rounds of one get_app_state (text only) each:`,
  );
  console.log(`  round (the slowest of ${CLIENTS}): median ${fmt(sr.median)}, p95 ${fmt(sr.p95)}`);
  console.log(`  each call within a round: median ${fmt(se.median)}, p95 ${fmt(se.p95)}`);
  for (const c of many) await c.close();
} finally {
  await stdio.close();
  httpProcess.kill("SIGTERM");
  await gtk.stop();
  await desktop.stop();
}
