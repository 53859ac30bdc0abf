/**
 * The MCP server over HTTP (issue 23 §2), as clients see it: the SDK's own
 * Client and StreamableHTTPClientTransport against createMcpHttpServer in
 * this process, on this file's headless desktop with gtk3-widget-factory;
 * raw HTTP (node:http, fetch) for what no SDK client sends (no token, a
 * foreign Origin or Host, 10 MB bodies, JSON that is not JSON), and the
 * `axsnap mcp --http` entry point as a process. A refused request must leave
 * the app as it was: each is a click that would change it, and the app's
 * state is read again after.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import { dirname } from "node:path";
import { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createMcpHttpServer, type McpHttpServer } from "../../lib/index.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { indexIn, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { httpClient } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";
/** The documented limit of one request body (docs/mcp-http.md), as of one stdio line. */
const BODY_LIMIT = 4 * 1024 * 1024;
const TEN_MB = 10 * 1024 * 1024;

let desktop: Desktop;
let gtk: App;
let server: McpHttpServer;
const logged: string[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
  delete process.env.AXSNAP_MCP_TOKEN;
  server = await createMcpHttpServer({ log: (l) => logged.push(l) });
}, TIMEOUT);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await server?.close();
  await gtk?.stop();
  await desktop?.stop();
  console.log(`server log (last lines):\n${logged.slice(-12).join("\n")}`);
});

async function connect(token = server.token, url = server.url): Promise<Client> {
  const c = await httpClient(url, token);
  clients.push(c);
  return c;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

const texts = (r: CallToolResult): string[] => r.content.flatMap((b) => (b.type === "text" ? [b.text] : []));

function snapshotText(r: CallToolResult): string {
  const t = texts(r).find((s) => /^Snapshot s[a-z0-9]{7} /.test(s));
  if (t === undefined) throw new Error(`no snapshot in the result:\n${texts(r).join("\n")}`);
  return t;
}

function errorOf(r: CallToolResult): Record<string, unknown> {
  expect(r.isError, texts(r).join("\n")).toBe(true);
  return JSON.parse(texts(r)[0]!) as Record<string, unknown>;
}

/** Which of the two radio buttons is on, read through a client with the token. */
async function pageOn(c: Client): Promise<string> {
  const text = snapshotText(await call(c, "get_app_state", { app: GTK, screenshot: false }));
  const on = /radio button (Page \d), Value: on/.exec(text);
  if (!on) throw new Error(`no radio button on:\n${text}`);
  return on[1]!;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request as node:http sends it: any Host and Origin header, any body. */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<RawAnswer> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, method, path, headers, setHost: !("Host" in headers) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** The JSON-RPC message of an answer: a JSON body, or the first SSE data line. */
function messageOf(a: { body: string }): Record<string, unknown> {
  const data = /^data: (.*)$/m.exec(a.body);
  return JSON.parse(data ? data[1]! : a.body) as Record<string, unknown>;
}

const MCP_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

/** A session of its own over raw HTTP: initialize, then the initialized notification. */
async function rawSession(): Promise<string> {
  const init = await fetch(server.url, {
    method: "POST",
    headers: { ...MCP_HEADERS, Authorization: `Bearer ${server.token}` },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    }),
  });
  expect(init.status).toBe(200);
  const sid = init.headers.get("mcp-session-id");
  expect(sid).toMatch(/^[0-9a-f-]{36}$/);
  await init.text();
  const note = await fetch(server.url, {
    method: "POST",
    headers: { ...MCP_HEADERS, Authorization: `Bearer ${server.token}`, "Mcp-Session-Id": sid! },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  expect(note.status).toBe(202);
  return sid!;
}

/** A tools/call as raw JSON-RPC. */
const toolCall = (id: number | string, name: string, args: Record<string, unknown>) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

async function until(what: string, ok: () => boolean, ms = 5000): Promise<number> {
  const start = performance.now();
  while (!ok()) {
    if (performance.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
  return performance.now() - start;
}

describe("MCP over HTTP: the tools", () => {
  it(
    "serves the same tools as stdio, each described the same",
    async () => {
      const http = await connect();
      const stdio = new Client({ name: "axsnap-stdio", version: "0.0.0" });
      await stdio.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", "lib/mcp-main.ts"],
          env: { ...(process.env as Record<string, string>), ...desktop.env },
          stderr: "pipe",
        }),
      );
      try {
        const [a, b] = await Promise.all([http.listTools(), stdio.listTools()]);
        expect(a.tools.length).toBe(15);
        expect(a.tools).toEqual(b.tools);
        expect(http.getInstructions()).toBe(stdio.getInstructions());
      } finally {
        await stdio.close();
      }
    },
    TIMEOUT,
  );

  it(
    "get_app_state, then click by ref: Page 2 is on in the reply and in the app",
    async () => {
      const c = await connect();
      const state = await call(c, "get_app_state", { app: GTK });
      expect(state.isError).toBeFalsy();
      expect(state.content.some((b) => b.type === "image")).toBe(true);
      const text = snapshotText(state);
      const id = snapshotIdIn(text);
      const page2 = indexIn(text, /^\d+ radio button Page 2\b/);
      const r = await call(c, "click", { ref: `@${id}:e${page2}` });
      expect(r.isError, texts(r).join("\n")).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ action: "click", target: `@${id}:e${page2}` });
      expect(texts(r)[0]).toMatch(/radio button Page 2, Value: on/);
      expect(await pageOn(c)).toBe("Page 2");
    },
    TIMEOUT,
  );
});

describe("MCP over HTTP: who may ask", () => {
  let c: Client;
  let sid: string;
  let clickPage1: string;

  beforeAll(async () => {
    c = await connect();
    sid = await rawSession();
    // A click on Page 1 in the raw session: refused, it must change nothing (Page 2 stays on).
    const seen = await fetch(server.url, {
      method: "POST",
      headers: { ...MCP_HEADERS, Authorization: `Bearer ${server.token}`, "Mcp-Session-Id": sid },
      body: toolCall(1, "get_app_state", { app: GTK, screenshot: false }),
    });
    const text = (
      (messageOf({ body: await seen.text() }).result as CallToolResult).content[0] as { text: string }
    ).text;
    clickPage1 = toolCall(2, "click", {
      app: GTK,
      element_index: indexIn(text, /^\d+ radio button Page 1\b/),
    });
    expect(await pageOn(c)).toBe("Page 2");
  }, TIMEOUT);

  it(
    "no token, or a wrong one: 401 with WWW-Authenticate: Bearer, and nothing acts",
    async () => {
      const none = await raw("POST", "/mcp", { ...MCP_HEADERS, "Mcp-Session-Id": sid }, clickPage1);
      expect(none.status).toBe(401);
      expect(none.headers["www-authenticate"]).toBe('Bearer realm="axsnap"');
      expect(messageOf(none)).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
      const wrong = await raw(
        "POST",
        "/mcp",
        { ...MCP_HEADERS, "Mcp-Session-Id": sid, Authorization: `Bearer ${server.token.slice(0, -1)}x` },
        clickPage1,
      );
      expect(wrong.status).toBe(401);
      expect(wrong.headers["www-authenticate"]).toBe('Bearer realm="axsnap", error="invalid_token"');
      const basic = await raw(
        "POST",
        "/mcp",
        { ...MCP_HEADERS, Authorization: `Basic ${server.token}` },
        clickPage1,
      );
      expect(basic.status).toBe(401);
      // The SDK's client without the token cannot even start a session.
      await expect(connect("not-the-token-at-all")).rejects.toMatchObject({ code: 401 });
      expect(await pageOn(c)).toBe("Page 2");
      expect(logged.some((l) => l.includes(server.token))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    "a foreign Origin, or a Host this server does not answer to: 403, with the right token, and nothing acts",
    async () => {
      const auth = { ...MCP_HEADERS, "Mcp-Session-Id": sid, Authorization: `Bearer ${server.token}` };
      const origin = await raw("POST", "/mcp", { ...auth, Origin: "http://evil.example" }, clickPage1);
      expect(origin.status).toBe(403);
      expect(messageOf(origin)).toMatchObject({
        error: { code: -32000, message: expect.stringMatching(/Origin/) },
      });
      const host = await raw("POST", "/mcp", { ...auth, Host: `evil.example:${server.port}` }, clickPage1);
      expect(host.status).toBe(403);
      expect(messageOf(host)).toMatchObject({ error: { message: expect.stringMatching(/Host header/) } });
      // DNS rebinding: the attacker's name resolves to 127.0.0.1, but the Host header carries the name.
      const rebound = await raw("GET", "/status", { ...auth, Host: "attacker.example" });
      expect(rebound.status).toBe(403);
      expect(await pageOn(c)).toBe("Page 2");
      // The server's own origin and names pass.
      const own = await raw("GET", "/status", { ...auth, Origin: `http://localhost:${server.port}` });
      expect(own.status).toBe(200);
      const local = await raw("GET", "/status", { ...auth, Host: `localhost:${server.port}` });
      expect(local.status).toBe(200);
    },
    TIMEOUT,
  );

  it("GET /healthz answers without the token; /status needs it", async () => {
    const h = await raw("GET", "/healthz", {});
    expect(h.status).toBe(200);
    expect(JSON.parse(h.body)).toEqual({
      ok: true,
      sessions: expect.any(Number),
      uptime: expect.any(Number),
    });
    expect(JSON.parse(h.body).sessions).toBeGreaterThanOrEqual(2);
    expect((await raw("GET", "/status", {})).status).toBe(401);
    const s = await raw("GET", "/status", { Authorization: `Bearer ${server.token}` });
    expect(JSON.parse(s.body)).toMatchObject({
      ok: true,
      calls: { active: 0, done: expect.any(Number), cancelled: expect.any(Number) },
      maxBodyBytes: BODY_LIMIT,
    });
  });

  it(
    "DELETE ends the session: its id is then 404, and the server counts one session fewer",
    async () => {
      const other = await rawSession();
      const before = server.status().sessions;
      const del = await raw("DELETE", "/mcp", {
        "Mcp-Session-Id": other,
        Authorization: `Bearer ${server.token}`,
      });
      expect(del.status).toBe(200);
      expect(server.status().sessions).toBe(before - 1);
      const again = await raw(
        "POST",
        "/mcp",
        { ...MCP_HEADERS, "Mcp-Session-Id": other, Authorization: `Bearer ${server.token}` },
        toolCall(3, "list_apps", {}),
      );
      expect(again.status).toBe(404);
      expect(messageOf(again)).toMatchObject({ id: 3, error: { code: -32001 } });
    },
    TIMEOUT,
  );
});

describe("MCP over HTTP: many clients", () => {
  it(
    "20 clients at once, each with its own session and refs: a ref from one is SNAPSHOT_NOT_FOUND in another",
    async () => {
      const t0 = performance.now();
      const many = await Promise.all(Array.from({ length: 20 }, () => connect()));
      const connectMs = performance.now() - t0;
      const t1 = performance.now();
      const states = await Promise.all(
        many.map((c) => call(c, "get_app_state", { app: GTK, screenshot: false })),
      );
      const roundMs = performance.now() - t1;
      const ids = states.map((s) => snapshotIdIn(snapshotText(s)));
      expect(new Set(ids).size).toBe(20);
      const page2 = indexIn(snapshotText(states[0]!), /^\d+ radio button Page 2\b/);
      // Each client's own ref resolves (a subtree rooted at it); its neighbour's does not exist there.
      const own = await Promise.all(
        many.map((c, i) =>
          call(c, "get_app_state", { app: GTK, root: `@${ids[i]}:e${page2}`, screenshot: false }),
        ),
      );
      for (const r of own) expect(snapshotText(r)).toMatch(/radio button Page 2/);
      const foreign = await Promise.all(
        many.map((c, i) => call(c, "click", { ref: `@${ids[(i + 1) % 20]}:e${page2}` })),
      );
      for (const r of foreign)
        expect(errorOf(r)).toMatchObject({ code: "SNAPSHOT_NOT_FOUND", delivery: "not_delivered" });
      console.log(
        `20 clients: connected in ${connectMs.toFixed(0)} ms; one get_app_state each, at once: ${roundMs.toFixed(0)} ms for the round`,
      );
    },
    TIMEOUT,
  );

  it(
    "a client that goes away mid-call: its call is cancelled (ABORTED, counted), and the server serves the others",
    async () => {
      const other = await connect();
      const sid = await rawSession();
      const before = server.status().calls;
      const gone = new AbortController();
      const waiting = fetch(server.url, {
        method: "POST",
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${server.token}`, "Mcp-Session-Id": sid },
        body: toolCall(7, "wait_for", {
          app: GTK,
          text: "a text this window never shows",
          timeout_ms: 60_000,
        }),
        signal: gone.signal,
      })
        .then((r) => r.text())
        .then(
          () => "answered",
          (e: Error) => e.name,
        );
      await until("the wait is running", () => server.status().calls.active > before.active);
      await sleep(300);
      gone.abort();
      expect(await waiting).toBe("AbortError");
      // The handler itself ends, by its signal, long before its 60 s: not merely its answer dropped.
      const ms = await until(
        "the call ended by its signal",
        () => server.status().calls.cancelled > before.cancelled,
      );
      expect(server.status().calls.active).toBe(before.active);
      expect(ms).toBeLessThan(2000);
      expect(logged.join("\n")).toMatch(/request 7 \(tools\/call\) cancelled: its client went away/);
      // The others are served meanwhile, and so is the same session.
      expect(await pageOn(other)).toBe("Page 2");
      const same = await fetch(server.url, {
        method: "POST",
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${server.token}`, "Mcp-Session-Id": sid },
        body: toolCall(8, "list_apps", {}),
      });
      expect(messageOf({ body: await same.text() })).toMatchObject({
        id: 8,
        result: { content: expect.any(Array) },
      });
      console.log(
        `a client gone mid-wait_for: its call ended ${ms.toFixed(0)} ms after its connection closed`,
      );
    },
    TIMEOUT,
  );
});

describe("MCP over HTTP: bodies no client should send", () => {
  let sid: string;
  const auth = () => ({ ...MCP_HEADERS, "Mcp-Session-Id": sid, Authorization: `Bearer ${server.token}` });

  beforeAll(async () => {
    sid = await rawSession();
  });

  it(
    "a 10 MB body is 413 with a JSON-RPC error, declared or streamed; the server serves on",
    async () => {
      const big = toolCall(20, "type_text", { app: GTK, text: "t".repeat(TEN_MB) });
      const declared = await raw("POST", "/mcp", auth(), big);
      expect(declared.status).toBe(413);
      expect(messageOf(declared)).toEqual({
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: `request too large: ${Buffer.byteLength(big)} bytes, over the limit of ${BODY_LIMIT}`,
          data: expect.objectContaining({
            code: "INVALID_ARGUMENT",
            limitBytes: BODY_LIMIT,
            delivery: "not_delivered",
          }),
        },
      });
      // Chunked, no Content-Length: refused once more than the limit arrived.
      const streamed = await fetch(server.url, {
        method: "POST",
        headers: auth(),
        body: Readable.toWeb(Readable.from([Buffer.from(big)])) as ReadableStream,
        duplex: "half",
      } as RequestInit);
      expect(streamed.status).toBe(413);
      expect(await streamed.json()).toMatchObject({
        error: {
          code: -32600,
          message: `request too large: more than ${BODY_LIMIT} bytes, over the limit of ${BODY_LIMIT}`,
        },
      });
      expect((await raw("GET", "/healthz", {})).status).toBe(200);
    },
    TIMEOUT,
  );

  it("JSON that is not JSON, not JSON-RPC, or with params that do not fit: 400 with stdio's errors", async () => {
    const notJson = await raw("POST", "/mcp", auth(), '{"jsonrpc":"2.0","id":1,');
    expect(notJson.status).toBe(400);
    expect(messageOf(notJson)).toMatchObject({
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^parse error/) },
    });
    const batch = await raw("POST", "/mcp", auth(), `[${toolCall(1, "list_apps", {})}]`);
    expect(messageOf(batch)).toMatchObject({
      error: { code: -32600, message: expect.stringMatching(/batch/) },
    });
    const v1 = await raw("POST", "/mcp", auth(), JSON.stringify({ jsonrpc: "1.0", id: 12, method: "ping" }));
    expect(messageOf(v1)).toMatchObject({ id: 12, error: { code: -32600 } });
    const noParams = await raw(
      "POST",
      "/mcp",
      auth(),
      JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call" }),
    );
    expect(noParams.status).toBe(400);
    expect(messageOf(noParams)).toMatchObject({
      id: 9,
      error: { code: -32602, message: expect.stringMatching(/params/) },
    });
    const ping = await raw(
      "POST",
      "/mcp",
      auth(),
      JSON.stringify({ jsonrpc: "2.0", id: 10, method: "ping" }),
    );
    expect(messageOf(ping)).toEqual({ jsonrpc: "2.0", id: 10, result: {} });
  });
});

describe("MCP over HTTP: where it listens, and the token", () => {
  it("a host that is not loopback is refused without allowRemote (POLICY_DENIED, with the hint)", async () => {
    const e = await createMcpHttpServer({ host: "0.0.0.0", log: () => undefined }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AxsnapError);
    expect(e).toMatchObject({ code: "POLICY_DENIED", hint: expect.stringMatching(/--allow-remote/) });
    const wild = await createMcpHttpServer({
      host: "0.0.0.0",
      allowRemote: true,
      log: () => undefined,
    }).catch((x: unknown) => x);
    expect(wild).toMatchObject({ code: "INVALID_ARGUMENT", hint: expect.stringMatching(/--allowed-host/) });
  });

  it(
    "remote mode: listening on every address, a Host it was told of passes, another is 403; the token still required",
    async () => {
      const remote = await createMcpHttpServer({
        host: "0.0.0.0",
        allowRemote: true,
        allowedHosts: ["desk.example"],
        token: "a-token-of-enough-length",
        log: () => undefined,
      });
      try {
        const get = (headers: Record<string, string>) =>
          new Promise<number>((resolve, reject) => {
            const r = request(
              {
                host: "127.0.0.1",
                port: remote.port,
                path: "/status",
                headers,
                setHost: !("Host" in headers),
              },
              (res) => {
                res.resume();
                resolve(res.statusCode ?? 0);
              },
            );
            r.on("error", reject);
            r.end();
          });
        const bearer = { Authorization: "Bearer a-token-of-enough-length" };
        expect(await get({ ...bearer, Host: `desk.example:${remote.port}` })).toBe(200);
        expect(await get({ ...bearer, Host: `other.example:${remote.port}` })).toBe(403);
        expect(await get({ Host: `desk.example:${remote.port}` })).toBe(401);
        expect(remote.tokenFile).toBeUndefined();
      } finally {
        await remote.close();
      }
    },
    TIMEOUT,
  );

  it("a generated token is in a file only the user can read (0600, in a 0700 directory), removed at close", async () => {
    expect(server.tokenFile).toBeDefined();
    const file = server.tokenFile!;
    expect(dirname(file)).toBe(`${process.env.XDG_RUNTIME_DIR}/axsnap`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file)).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, "utf8").trim()).toBe(server.token);
    expect(server.token.length).toBeGreaterThanOrEqual(40);
    const second = await createMcpHttpServer({ log: () => undefined });
    expect(second.token).not.toBe(server.token);
    await second.close();
    expect(existsSync(second.tokenFile!)).toBe(false);
  });

  it("AXSNAP_MCP_TOKEN is the token when set (no file); a short one is refused", async () => {
    process.env.AXSNAP_MCP_TOKEN = "from-the-environment-0123456789";
    try {
      const s = await createMcpHttpServer({ log: () => undefined });
      expect(s.token).toBe("from-the-environment-0123456789");
      expect(s.tokenFile).toBeUndefined();
      await s.close();
      process.env.AXSNAP_MCP_TOKEN = "short";
      await expect(createMcpHttpServer({ log: () => undefined })).rejects.toMatchObject({
        code: "INVALID_ARGUMENT",
      });
    } finally {
      delete process.env.AXSNAP_MCP_TOKEN;
    }
  });
});

describe("createMcpHttpServer from the package's entry point", () => {
  it("import of lib/index.ts loads none of the MCP SDK, its HTTP adapter or zod", async () => {
    const p = spawn(
      process.execPath,
      [
        "--import",
        "./test/support/module-log.mjs",
        "--import",
        "tsx",
        "-e",
        "const m = await import('./lib/index.ts'); console.log('export ' + typeof m.createMcpHttpServer);",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    p.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    expect(await new Promise((resolve) => p.on("exit", resolve))).toBe(0);
    expect(out).toContain("export function");
    expect(out).toMatch(/loaded \S+\/lib\/doors\/mcp-http\.ts/);
    expect(out).not.toMatch(/modelcontextprotocol|@hono|\/zod\//);
  }, 60_000);
});

describe("axsnap mcp --http, the process", () => {
  let child: ChildProcess | undefined;

  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it(
    "prints its URL and token file on stderr, serves the tools, and on SIGTERM ends with its file gone",
    async () => {
      child = spawn(process.execPath, ["--import", "tsx", "lib/mcp-main.ts", "--http", "127.0.0.1:0"], {
        env: { ...process.env, ...desktop.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let err = "";
      child.stderr!.on("data", (d: Buffer) => {
        err += d.toString();
      });
      const exited = new Promise<number | null>((resolve) => child!.on("exit", (code) => resolve(code)));
      await until("the server says where it serves", () => /token in \S+\.token/.test(err), 30_000);
      const url = /on (http:\/\/127\.0\.0\.1:\d+\/mcp) \(loopback only\)/.exec(err)![1]!;
      const file = /token in (\S+\.token)/.exec(err)![1]!;
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const c = await connect(readFileSync(file, "utf8").trim(), url);
      expect((await c.listTools()).tools.map((t) => t.name)).toContain("get_app_state");
      expect(await pageOn(c)).toBe("Page 2");
      await c.close();
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(existsSync(file)).toBe(false);
    },
    TIMEOUT,
  );

  it("a host that is not loopback without --allow-remote: refused with the hint, exit 1", async () => {
    const p = spawn(process.execPath, ["--import", "tsx", "lib/mcp-main.ts", "--http", "0.0.0.0:0"], {
      env: { ...process.env, ...desktop.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let err = "";
    p.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => p.on("exit", resolve));
    expect(code).toBe(1);
    expect(err).toMatch(/not a loopback address/);
    expect(err).toMatch(/--allow-remote/);
    const usage = spawn(process.execPath, ["--import", "tsx", "lib/mcp-main.ts", "--allow-remote"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(await new Promise((resolve) => usage.on("exit", resolve))).toBe(2);
  }, 60_000);
});
