/**
 * bench/mcp-oversized: an 11 MB MCP request line, then a ping, against the
 * server process (`node --import tsx lib/mcp-main.ts`, no desktop: the
 * refusal never reaches a tool). For each variant (get_app_state with its id
 * first; type_text as the SDK's client orders it, id last; a line that is not
 * JSON): the time from the first byte written to the error answer, and to
 * the ping's answer; the server's resident memory before, after, and its
 * peak (VmRSS, VmHWM from /proc). Also the skim alone over 11 MB in process.
 *
 *   npx tsx bench/mcp-oversized.ts          (RUNS=3 by default)
 */
import { readFileSync } from "node:fs";
import { REQUEST_LIMIT_BYTES } from "../lib/doors/mcp/limits.js";
import { LineReader } from "../lib/doors/mcp/lines.js";
import { spawnRawServer } from "../test/support/mcp-raw.js";
import { median } from "./getitems_floor.js";

const RUNS = Number(process.env.RUNS ?? 3);
const BIG = 11 * 1024 * 1024;
const now = () => performance.now();

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

const variants: { name: string; id: string | null; line: () => string }[] = [
  {
    name: "get_app_state, id first",
    id: "a",
    line: () =>
      `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"get_app_state","arguments":{"app":"x","window":"${"w".repeat(BIG)}"}}}\n`,
  },
  {
    name: "type_text, id last (SDK order)",
    id: "b",
    line: () =>
      `${JSON.stringify({ method: "tools/call", params: { name: "type_text", arguments: { text: "t".repeat(BIG) } }, jsonrpc: "2.0", id: "b" })}\n`,
  },
  { name: "not JSON", id: null, line: () => `${"x".repeat(BIG)}\n` },
];

const mb = (n: number) => n.toFixed(1);
const server = spawnRawServer();
await server.initialize();
const pid = server.child.pid!;
console.log(`limit ${REQUEST_LIMIT_BYTES} bytes a line; server pid ${pid}; ${RUNS} runs each`);
const start = memory(pid);
console.log(`server memory after initialize: rss ${mb(start.rss)} MB, peak ${mb(start.peak)} MB`);
let pings = 0;
for (const v of variants) {
  const toError: number[] = [];
  const toPing: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const line = v.line();
    const id = `ping-${pings++}`;
    const t0 = now();
    const written = server.write(`${line}${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`);
    const answer = await server.answer(v.id);
    toError.push(now() - t0);
    if (answer.error?.code !== -32600) throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    await server.answer(id);
    toPing.push(now() - t0);
    await written;
  }
  const m = memory(pid);
  console.log(
    `${v.name}: ${(Buffer.byteLength(v.line()) / 1048576).toFixed(1)} MB line; error answer ${median(toError).toFixed(0)} ms, ping answered ${median(toPing).toFixed(0)} ms after the first byte (median); server rss ${mb(m.rss)} MB, peak ${mb(m.peak)} MB`,
  );
}
await server.close();
console.log(server.stderr().trim().split("\n").slice(-1)[0]);

// The skim alone: 11 MB through the line reader in 64 KiB chunks, as a pipe delivers them.
const line = Buffer.from(variants[1]!.line());
const times: number[] = [];
for (let r = 0; r < 5; r++) {
  let seen: unknown;
  const reader = new LineReader(REQUEST_LIMIT_BYTES, { line: () => undefined, oversized: (o) => (seen = o) });
  const t0 = now();
  for (let i = 0; i < line.length; i += 65_536) reader.push(line.subarray(i, i + 65_536));
  times.push(now() - t0);
  if (!seen) throw new Error("the reader saw no oversized line");
}
console.log(
  `line reader + skim over ${(line.length / 1048576).toFixed(1)} MB in process: ${median(times).toFixed(1)} ms (median of 5)`,
);
