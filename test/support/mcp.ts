/**
 * The MCP server as a client of the SDK sees it, in this process: a client
 * of createMcpServer over a session (an in-memory transport pair), closed
 * after each test; a client of an HTTP endpoint; and what its results say
 * (the text, a refusal's JSON).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect } from "vitest";
import type { McpSettings } from "../../lib/doors/mcp/options.js";
import { createMcpServer } from "../../lib/mcp.js";
import type { Session } from "../../lib/session/session.js";

/** A result's text blocks, one a line. */
export const textOf = (r: CallToolResult): string =>
  r.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");

/** A client connected to an axsnap MCP HTTP endpoint with its bearer token; the caller closes it. */
export async function httpClient(url: string, token: string, name = "axsnap-http-test"): Promise<Client> {
  const c = new Client({ name, version: "0.0.0" });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return c;
}

/** A refusal's body (code, message, hint, delivery, retry): the result must be an error. */
export function errorOf(r: CallToolResult): Record<string, unknown> & { code: string; hint: string } {
  expect(r.isError, textOf(r)).toBe(true);
  return JSON.parse(textOf(r));
}

/** Connects clients to servers over sessions, closing them after each test of this file. */
export function useMcpClients(): (s: Session, settings?: Partial<McpSettings>) => Promise<Client> {
  const clients: Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });
  return async (s, settings = {}) => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "axsnap-test", version: "0.0.0" });
    await Promise.all([createMcpServer(s, settings).connect(b), client.connect(a)]);
    clients.push(client);
    return client;
  };
}
