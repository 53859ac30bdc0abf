/**
 * The MCP server spoken to line by line, as the SDK's client never would:
 * raw bytes on its stdin, every stdout line parsed as it comes (a line that
 * is not JSON fails the test: stdout is the protocol), stderr kept. For
 * requests too big, malformed or not JSON-RPC 2.0.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import type { Readable, Writable } from "node:stream";

export type RpcId = string | number | null;

export interface RpcMessage {
  jsonrpc?: unknown;
  id?: RpcId;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

export interface RpcPeer {
  /** Writes an object as one line, or a string or bytes as they are (add the newline yourself). */
  write(data: string | Buffer | object): Promise<void>;
  /** The next answer carrying this id not taken yet (null: an answer with id null). */
  answer(id: RpcId): Promise<RpcMessage>;
  /** Every stdout line so far, parsed. */
  readonly lines: RpcMessage[];
  /** The MCP handshake: initialize (id "init") and the initialized notification. */
  initialize(): Promise<RpcMessage>;
}

export interface RawServer extends RpcPeer {
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /**
   * stderr once it matches (a separate pipe: what the server wrote there before an answer may
   * arrive after it); rejects after `ms` with what came.
   */
  stderrMatching(pattern: RegExp | string, ms?: number): Promise<string>;
  /** Ends stdin and waits for the process to exit. */
  close(): Promise<void>;
}

/** A peer over any pair of streams: `input` is the server's stdin, `output` its stdout. */
export function rpcPeer(input: Writable, output: Readable): RpcPeer & { fail(e: Error): void } {
  const lines: RpcMessage[] = [];
  const taken = new Set<RpcMessage>();
  const waiters: { id: RpcId; resolve: (m: RpcMessage) => void; reject: (e: Error) => void }[] = [];
  let failure: Error | undefined;
  let pending = "";

  const fail = (e: Error) => {
    failure ??= e;
    for (const w of waiters.splice(0)) w.reject(failure);
  };
  const settle = () => {
    for (let i = 0; i < waiters.length; ) {
      const w = waiters[i]!;
      const m = lines.find((l) => !taken.has(l) && (l.id ?? null) === w.id);
      if (!m) {
        i++;
        continue;
      }
      taken.add(m);
      waiters.splice(i, 1);
      w.resolve(m);
    }
  };

  output.setEncoding("utf8");
  output.on("data", (d: string) => {
    pending += d;
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        lines.push(JSON.parse(line) as RpcMessage);
      } catch {
        fail(new Error(`stdout carried a line that is not JSON: ${line.slice(0, 200)}`));
      }
    }
    settle();
  });

  const peer = {
    lines,
    fail,
    write: (data: string | Buffer | object) =>
      new Promise<void>((resolve, reject) => {
        const bytes = typeof data === "string" || Buffer.isBuffer(data) ? data : `${JSON.stringify(data)}\n`;
        input.write(bytes, (e) => (e ? reject(e) : resolve()));
      }),
    answer: (id: RpcId) =>
      new Promise<RpcMessage>((resolve, reject) => {
        if (failure) return reject(failure);
        waiters.push({ id, resolve, reject });
        settle();
      }),
    async initialize() {
      await peer.write({
        jsonrpc: "2.0",
        id: "init",
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "axsnap-raw-test", version: "0.0.0" },
        },
      });
      const init = await peer.answer("init");
      await peer.write({ jsonrpc: "2.0", method: "notifications/initialized" });
      return init;
    },
  };
  return peer;
}

/** `node --import tsx lib/mcp-main.ts` with `env` added to this process's environment. */
export function spawnRawServer(env: Record<string, string> = {}, args: string[] = []): RawServer {
  const child = spawn(process.execPath, ["--import", "tsx", "lib/mcp-main.ts", ...args], {
    env: { ...(process.env as Record<string, string>), ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const peer = rpcPeer(child.stdin, child.stdout);
  let err = "";
  const watchers = new Set<() => void>();
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => {
    err += d;
    for (const w of [...watchers]) w();
  });
  const matches = (pattern: RegExp | string) =>
    typeof pattern === "string" ? err.includes(pattern) : pattern.test(err);
  child.once("exit", (code, signal) => peer.fail(new Error(`the server exited (${code ?? signal})`)));
  // A server gone early must fail the test by its message, not by an EPIPE thrown elsewhere.
  child.stdin.on("error", (e) => peer.fail(e));
  return {
    ...peer,
    child,
    stderr: () => err,
    stderrMatching: (pattern: RegExp | string, ms = 10_000) =>
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (!matches(pattern)) return;
          clearTimeout(timer);
          watchers.delete(check);
          resolve(err);
        };
        const timer = setTimeout(() => {
          watchers.delete(check);
          reject(new Error(`stderr never matched ${String(pattern)} in ${ms} ms; it holds:\n${err}`));
        }, ms);
        watchers.add(check);
        check();
      }),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      await exited;
    },
  };
}
