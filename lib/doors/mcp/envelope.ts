/**
 * What makes a parsed JSON-RPC message one this server refuses before the
 * SDK sees it, shared by both transports (stdio, HTTP) so a client meets the
 * same refusals whichever it speaks: not JSON-RPC 2.0 is -32600, a request
 * this server answers whose params do not fit the method is -32602 (the SDK
 * itself answers those -32603, internal error).
 */
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { sanitize } from "../../render/sanitize.js";

export type Id = string | number | null;

interface ParamsSchema {
  safeParse(
    value: unknown,
  ):
    | { success: true }
    | { success: false; error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } };
}

/** The requests this server answers, whose params are checked before the SDK parses them. */
const REQUESTS = new Map<string, ParamsSchema>([
  ["initialize", InitializeRequestSchema],
  ["ping", PingRequestSchema],
  ["tools/list", ListToolsRequestSchema],
  ["tools/call", CallToolRequestSchema],
]);

/**
 * What makes a parsed message not a JSON-RPC 2.0 message, or undefined when it is one. `unit`
 * is what carries one message on the transport ("a line", "a request body").
 */
export function envelopeProblem(value: unknown, unit = "a line"): string | undefined {
  if (Array.isArray(value)) return `a batch (an array) is not supported: send one message ${unit}`;
  if (typeof value !== "object" || value === null) return "a message is one JSON object";
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return '"jsonrpc" must be "2.0"';
  if ("method" in m && typeof m.method !== "string") return '"method" must be a string';
  if ("id" in m && !isId(m.id) && !(m.id === null && "error" in m))
    return '"id" must be a string or an integer';
  if (!JSONRPCMessageSchema.safeParse(value).success)
    return "not a JSON-RPC 2.0 request, notification or response (its fields: jsonrpc, id, method, params; or result or error)";
  return undefined;
}

/** What makes a request's params unfit for its method, or undefined when they fit (or the method is not ours). */
export function paramsProblem(message: JSONRPCMessage): string | undefined {
  const schema = REQUESTS.get((message as { method: string }).method);
  const checked = schema?.safeParse(message);
  if (checked === undefined || checked.success) return undefined;
  return checked.error.issues
    .map((i) => `${i.path.map(String).join(".") || "the request"}: ${i.message}`)
    .join("; ");
}

export function isId(v: unknown): v is string | number {
  return typeof v === "string" || (typeof v === "number" && Number.isSafeInteger(v));
}

/** The id of a parsed message, or null when it has none a reply could carry. */
export function idOf(value: unknown): Id {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const id = (value as { id?: unknown }).id;
  return isId(id) ? id : null;
}

/** A method name from the client, fit for one log line. */
export function printable(method: string): string {
  return sanitize(method, 80);
}
