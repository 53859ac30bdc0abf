/**
 * The MCP server's stdio transport: our own, not the SDK's
 * StdioServerTransport, which buffers everything it has not parsed yet and,
 * past 10 MB, closes itself without a word, so the server never answers
 * again; and which drops a line that is not JSON or not JSON-RPC 2.0 without
 * an answer.
 *
 * Here every line gets its answer or goes on to the SDK: a line over
 * REQUEST_LIMIT_BYTES is skimmed, not kept, and refused with -32600 (its id
 * when the skim could read it); a line that is not JSON is -32700; one that
 * is not a JSON-RPC 2.0 message is -32600; a request this server answers
 * whose params do not fit the method is -32602 (the SDK itself answers those
 * -32603, internal error). Each refusal is one line on stderr, and the server
 * reads on. stdout carries nothing but JSON-RPC messages, one a line.
 */
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { envelopeProblem, type Id, idOf, paramsProblem, printable } from "./envelope.js";
import { REQUEST_LIMIT_BYTES, TEXT_LIMIT } from "./limits.js";
import { LineReader, type OversizedLine } from "./lines.js";

const OVERSIZED_HINT = `send at most ${REQUEST_LIMIT_BYTES} bytes on one line; a text to type or set is at most ${TEXT_LIMIT} characters: type a longer one in several type_text calls`;

export interface LineTransportOptions {
  /** Bytes per request line. Default REQUEST_LIMIT_BYTES. */
  limitBytes?: number;
  /** Where a refusal is said, one line each. Default process.stderr. */
  log?: (line: string) => void;
}

export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly reader: LineReader;
  private readonly limit: number;
  private readonly log: (line: string) => void;
  private started = false;
  private closed = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    options: LineTransportOptions = {},
  ) {
    this.limit = options.limitBytes ?? REQUEST_LIMIT_BYTES;
    this.log = options.log ?? ((line) => void process.stderr.write(`${line}\n`));
    this.reader = new LineReader(this.limit, {
      line: (text) => this.onLine(text),
      oversized: (line) => this.onOversized(line),
    });
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("LineStdioTransport already started");
    this.started = true;
    this.stdin.on("data", this.onData);
    this.stdin.on("error", this.onStreamError);
    // A client that closed its end is gone: the server's life ends with it.
    this.stdin.on("end", this.onEnd);
    this.stdin.on("close", this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off("data", this.onData);
    this.stdin.off("error", this.onStreamError);
    this.stdin.off("end", this.onEnd);
    this.stdin.off("close", this.onEnd);
    // Let the process end when nobody else reads stdin.
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string) => {
    this.reader.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  };

  private readonly onStreamError = (e: Error) => this.onerror?.(e);

  private readonly onEnd = () => void this.close();

  private onLine(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      this.log(`axsnap mcp: a line of ${Buffer.byteLength(text)} bytes is not JSON; still serving`);
      this.refuse(null, ErrorCode.ParseError, `parse error: ${(e as Error).message}`);
      return;
    }
    const problem = envelopeProblem(value);
    if (problem !== undefined) {
      const id = idOf(value);
      this.log(`axsnap mcp: invalid request${id === null ? "" : ` ${JSON.stringify(id)}`}: ${problem}`);
      this.refuse(id, ErrorCode.InvalidRequest, `invalid request: ${problem}`);
      return;
    }
    const message = value as JSONRPCMessage;
    const bad = "method" in message && "id" in message ? paramsProblem(message) : undefined;
    if (bad !== undefined) {
      const id = (message as { id: string | number }).id;
      const method = (message as { method: string }).method;
      this.log(`axsnap mcp: invalid params in request ${JSON.stringify(id)} (${printable(method)}): ${bad}`);
      this.refuse(id, ErrorCode.InvalidParams, `invalid params: ${bad}`);
      return;
    }
    this.onmessage?.(message);
  }

  private onOversized({ bytes, skimmed }: OversizedLine): void {
    const size = `${bytes} bytes on one line, over the limit of ${this.limit}`;
    const method = skimmed.method === undefined ? "" : ` (${printable(skimmed.method)})`;
    // Nobody waits for an answer to a notification or a response: say it on stderr only.
    if (skimmed.kind === "notification" || skimmed.kind === "response") {
      this.log(`axsnap mcp: dropped a ${skimmed.kind}${method}: ${size}; still serving`);
      return;
    }
    const what = skimmed.id === null ? "a line" : `request ${JSON.stringify(skimmed.id)}`;
    this.log(`axsnap mcp: refused ${what}${method}: ${size}; still serving`);
    this.refuse(skimmed.id, ErrorCode.InvalidRequest, `request too large: ${size}`, {
      code: "INVALID_ARGUMENT",
      limitBytes: this.limit,
      bytes,
      hint: OVERSIZED_HINT,
      delivery: "not_delivered",
      retry: "safe",
    });
  }

  private refuse(id: Id, code: number, message: string, data?: Record<string, unknown>): void {
    // JSON-RPC: an error whose request's id could not be read carries id null.
    const error = { code, message, ...(data ? { data } : {}) };
    void this.send({ jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage);
  }
}
