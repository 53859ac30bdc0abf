/**
 * The MCP server's stdio framing and JSON-RPC envelope, byte by byte: what a
 * client sends that no SDK client would (a line over the request limit, a
 * request without params, "jsonrpc": "1.0", a line that is not JSON) is
 * answered with a JSON-RPC error, and the server answers the next request.
 * First over a pipe to `lib/mcp-main.ts` (no desktop: nothing here reaches a
 * tool), then in process, where each write is one chunk the server reads, to
 * pin down the framing (a request in many chunks, many in one, CRLF, a huge
 * line and a good one in the same chunk).
 */
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LineSkim } from "../../lib/doors/mcp/skim.js";
import { runMcpServer } from "../../lib/mcp.js";
import { type RawServer, type RpcPeer, rpcPeer, spawnRawServer } from "../support/mcp-raw.js";

/** The documented limit of one request line (docs/mcp.md, docs/internals/doors.md). */
const REQUEST_LIMIT = 4 * 1024 * 1024;
const BIG = 11 * 1024 * 1024;

const ping = (id: string | number) => ({ jsonrpc: "2.0", id, method: "ping" });

async function pong(peer: RpcPeer, id: string | number): Promise<void> {
  await peer.write(ping(id));
  expect(await peer.answer(id)).toEqual({ jsonrpc: "2.0", id, result: {} });
}

function tooLarge(bytes: number) {
  return {
    code: -32600,
    message: `request too large: ${bytes} bytes on one line, over the limit of ${REQUEST_LIMIT}`,
    data: expect.objectContaining({
      code: "INVALID_ARGUMENT",
      limitBytes: REQUEST_LIMIT,
      bytes,
      delivery: "not_delivered",
      retry: "safe",
      hint: expect.stringMatching(/type_text/),
    }),
  };
}

describe("the MCP server over a pipe, a line over the request limit", () => {
  let server: RawServer;

  beforeAll(async () => {
    server = spawnRawServer();
    await server.initialize();
  }, 30_000);

  afterAll(async () => {
    await server?.close();
  });

  it("an 11 MB get_app_state line (id first) is refused with its id, and a ping after it is answered", async () => {
    const line = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_app_state","arguments":{"app":"gtk3-widget-factory","window":"${"w".repeat(BIG)}"}}}\n`;
    const bytes = Buffer.byteLength(line) - 1;
    await server.write(line);
    expect(await server.answer(7)).toEqual({ jsonrpc: "2.0", id: 7, error: tooLarge(bytes) });
    await pong(server, "after-get-app-state");
    await server.stderrMatching(
      `axsnap mcp: refused request 7 (tools/call): ${bytes} bytes on one line, over the limit of ${REQUEST_LIMIT}; still serving`,
    );
  }, 30_000);

  it("an 11 MB type_text line as the SDK's client orders it (id last) is refused with its id; the next ping answered", async () => {
    const request = {
      method: "tools/call",
      params: { name: "type_text", arguments: { app: "gtk3-widget-factory", text: "t".repeat(BIG) } },
      jsonrpc: "2.0",
      id: "big-type",
    };
    const line = `${JSON.stringify(request)}\n`;
    // The ping follows in the same write: the reader must find it right after the huge line.
    await server.write(`${line}${JSON.stringify(ping("right-after"))}\n`);
    expect(await server.answer("big-type")).toEqual({
      jsonrpc: "2.0",
      id: "big-type",
      error: tooLarge(Buffer.byteLength(line) - 1),
    });
    expect(await server.answer("right-after")).toEqual({ jsonrpc: "2.0", id: "right-after", result: {} });
    await server.stderrMatching(/refused request "big-type" \(tools\/call\): \d+ bytes/);
  }, 30_000);

  it("an 11 MB line that is not JSON is refused with id null; the server goes on", async () => {
    await server.write(`${"x".repeat(BIG)}\n`);
    expect(await server.answer(null)).toEqual({ jsonrpc: "2.0", id: null, error: tooLarge(BIG) });
    await pong(server, 8);
  }, 30_000);
});

describe("the MCP server's JSON-RPC envelope, over a pipe", () => {
  let server: RawServer;

  beforeAll(async () => {
    server = spawnRawServer();
    await server.initialize();
  }, 30_000);

  afterAll(async () => {
    await server?.close();
  });

  it("a tools/call without params is invalid params (-32602), not an internal error", async () => {
    await server.write({ jsonrpc: "2.0", id: 9, method: "tools/call" });
    const r = await server.answer(9);
    expect(r.error).toMatchObject({ code: -32602, message: expect.stringMatching(/params/) });
    await server.write({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { arguments: {} } });
    expect((await server.answer(10)).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/name/),
    });
    await pong(server, 11);
  }, 30_000);

  it('"jsonrpc": "1.0", none, or not a string: -32600 invalid request, with the id', async () => {
    await server.write({ jsonrpc: "1.0", id: 12, method: "ping" });
    expect(await server.answer(12)).toEqual({
      jsonrpc: "2.0",
      id: 12,
      error: { code: -32600, message: 'invalid request: "jsonrpc" must be "2.0"' },
    });
    await server.write({ id: "no-version", method: "ping" });
    expect((await server.answer("no-version")).error).toMatchObject({ code: -32600 });
    await server.write({ jsonrpc: 2, id: 13, method: "ping" });
    expect((await server.answer(13)).error).toMatchObject({ code: -32600 });
    await server.write({ jsonrpc: "2.0", id: 14, method: 5 });
    expect((await server.answer(14)).error).toMatchObject({
      code: -32600,
      message: 'invalid request: "method" must be a string',
    });
    await server.write("[]\n");
    expect((await server.answer(null)).error).toMatchObject({ code: -32600 });
    await pong(server, 15);
    await server.stderrMatching(/axsnap mcp: invalid request 12: "jsonrpc" must be "2.0"/);
  }, 30_000);

  it("malformed JSON is a parse error (-32700, id null); the server goes on", async () => {
    await server.write('{"jsonrpc":"2.0","id":16,"method":\n');
    expect(await server.answer(null)).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^parse error: /) },
    });
    await pong(server, 17);
  }, 30_000);
});

describe("the MCP server's framing, chunk by chunk", () => {
  let stdin: PassThrough;
  let peer: RpcPeer;
  let done: Promise<void>;

  beforeAll(async () => {
    stdin = new PassThrough();
    const stdout = new PassThrough();
    peer = rpcPeer(stdin, stdout);
    done = runMcpServer({ stdin, stdout });
    await peer.initialize();
  });

  afterAll(async () => {
    stdin.end();
    await done;
  });

  it("a request split into one-byte chunks", async () => {
    for (const b of Buffer.from(`${JSON.stringify(ping("bytes"))}\n`)) await peer.write(Buffer.from([b]));
    expect(await peer.answer("bytes")).toMatchObject({ result: {} });
  });

  it("a character of several bytes split across chunks", async () => {
    const line = Buffer.from(`${JSON.stringify({ ...ping("é"), jsonrpc: "2.0" })}\n`);
    const at = line.indexOf(Buffer.from("é")) + 1;
    await peer.write(line.subarray(0, at));
    await peer.write(line.subarray(at));
    expect(await peer.answer("é")).toMatchObject({ result: {} });
  });

  it("several requests in one chunk, CRLF line ends and blank lines among them", async () => {
    await peer.write(
      `${JSON.stringify(ping(1))}\r\n\r\n${JSON.stringify(ping(2))}\n\n${JSON.stringify(ping(3))}\r\n`,
    );
    for (const id of [1, 2, 3]) expect(await peer.answer(id)).toEqual({ jsonrpc: "2.0", id, result: {} });
  });

  it("a line of exactly the limit is read; one byte more is refused", async () => {
    const head = '{"jsonrpc":"2.0","id":"edge","method":"ping","params":{"_meta":{"pad":"';
    const tail = '"}}}';
    const pad = (n: number) => "p".repeat(n - head.length - tail.length);
    await peer.write(`${head}${pad(REQUEST_LIMIT)}${tail}\r\n`);
    expect(await peer.answer("edge")).toMatchObject({ result: {} });
    await peer.write(`${head}${pad(REQUEST_LIMIT + 1)}${tail}\n`);
    expect(await peer.answer("edge")).toMatchObject({ error: tooLarge(REQUEST_LIMIT + 1) });
  });

  it('a huge line in many chunks (escapes cut by chunk ends, an "id" inside params), its id in the last one, then a good line in the same chunk', async () => {
    const body = `{"method":"tools/call","params":{"name":"type_text","arguments":{"id":"inner","text":"${'a\\"b\\\\'.repeat(BIG / 6)}"}},"jsonrpc":"2.0","id":"chunked"}`;
    const bytes = Buffer.from(body);
    for (let i = 0; i < bytes.length - 10; i += 65_536)
      await peer.write(bytes.subarray(i, Math.min(i + 65_536, bytes.length - 10)));
    await peer.write(
      Buffer.concat([bytes.subarray(bytes.length - 10), Buffer.from(`\n${JSON.stringify(ping("next"))}\n`)]),
    );
    expect(await peer.answer("chunked")).toMatchObject({ error: tooLarge(bytes.length) });
    expect(await peer.answer("next")).toMatchObject({ result: {} });
  });

  it("an oversized notification gets no answer; the next request does", async () => {
    const note = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"message":"${"m".repeat(BIG)}"}}\n`;
    const before = peer.lines.length;
    await peer.write(`${note}${JSON.stringify(ping("after-note"))}\n`);
    expect(await peer.answer("after-note")).toMatchObject({ result: {} });
    expect(peer.lines.length).toBe(before + 1);
  });
});

describe("what the skim of an oversized line reads, three bytes at a time", () => {
  const skim = (line: string) => {
    const s = new LineSkim();
    const b = Buffer.from(line);
    for (let i = 0; i < b.length; i += 3) s.push(b.subarray(i, i + 3));
    return s.result();
  };

  it.each([
    [
      '{"jsonrpc":"2.0","id":"a\\"b","method":"tools\\/call"}',
      { kind: "request", id: 'a"b', method: "tools/call" },
    ],
    [
      '{"id" : 42 , "method" : "x", "params":{"id":7,"method":"no"}}',
      { kind: "request", id: 42, method: "x" },
    ],
    [
      '{"method":"notifications/x","params":{"id":1}}',
      { kind: "notification", id: null, method: "notifications/x" },
    ],
    ['{"id":3,"result":{}}', { kind: "response", id: 3, method: undefined }],
    [`{"id":"${"q".repeat(1000)}","method":"x"}`, { kind: "request", id: null, method: "x" }],
    ['{"id":1.5,"method":"x"}', { kind: "request", id: null, method: "x" }],
    ['{"id":{"a":1},"method":"x"}', { kind: "request", id: null, method: "x" }],
    ['[{"id":1,"method":"x"}]', { kind: "unknown", id: null, method: undefined }],
    ['{"id":1,"method":"x"} {"id":2}', { kind: "unknown", id: null, method: undefined }],
    ['{"id":1,"method":"x"', { kind: "unknown", id: null, method: undefined }],
  ])("%s", (line, expected) => {
    expect(skim(line)).toEqual(expected);
  });
});
