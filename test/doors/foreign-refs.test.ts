/**
 * A ref whose snapshot this session let go and a ref whose snapshot it never
 * took are refused with SNAPSHOT_NOT_FOUND, each saying which (issue 33 §8):
 * a client that starts a new MCP server per call (the MCP Inspector's CLI
 * mode) hands the second server a ref of the first, and "no longer holds"
 * would send it looking for a snapshot that was never there. Through the
 * library (one session, another session) and through MCP (two servers, each
 * over its own session, as two server processes are), on the fake Editor.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/model/errors.js";
import { button, useFakeSessions } from "../support/editor.js";
import { errorOf, textOf, useMcpClients } from "../support/mcp.js";

const sessions = useFakeSessions();
const connect = useMcpClients();

async function refusal(p: Promise<unknown>): Promise<AxsnapError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof AxsnapError)) throw new Error(`not refused with an AxsnapError: ${String(e)}`);
  return e;
}

describe("library: a ref the session let go, and one it never took", () => {
  it("an evicted snapshot's ref says the session let it go, and keeps only the latest of each app", async () => {
    const { s } = sessions.open(
      { apps: [{ name: "Editor", pid: 77, windows: [{ title: "W", root: { role: "frame", title: "W" } }] }] },
      { session: { keepSnapshots: 2 } },
    );
    const first = await s.snapshot({ app: "Editor", screenshot: false });
    for (let i = 0; i < 3; i++) await s.snapshot({ app: "Editor", screenshot: false });
    const e = await refusal(s.click(`@${first.id}:e0`));
    expect(e.code).toBe("SNAPSHOT_NOT_FOUND");
    expect(e.message).toMatch(new RegExp(`let snapshot ${first.id} go`));
    expect(e.message).toMatch(/keeps the 2 latest snapshots of each app/);
    expect(e.message).not.toMatch(/never took/);
    expect(e.hint).toMatch(/take a new snapshot/);
    expect(e.delivery).toBe("not_delivered");
  });

  it("a ref of another session's snapshot says this session never took it, and that refs live as long as their session", async () => {
    const a = sessions.setup([button("Go", 120)]).s;
    const b = sessions.setup([button("Go", 120)]).s;
    const snap = await a.snapshot({ app: "Editor", screenshot: false });
    await b.snapshot({ app: "Editor", screenshot: false });
    const e = await refusal(b.click(`@${snap.id}:e1`));
    expect(e.code).toBe("SNAPSHOT_NOT_FOUND");
    expect(e.message).toMatch(new RegExp(`this session never took snapshot ${snap.id}`));
    expect(e.message).not.toMatch(/no longer/);
    expect(e.hint).toMatch(/as long as the session that took/);
    // A record of the other session's snapshot is the same refusal.
    const rec = await refusal(b.click(snap.records[1]!));
    expect(rec.message).toMatch(/never took/);
  });
});

describe("MCP: a ref from another server", () => {
  const call = async (c: Client, name: string, args: Record<string, unknown>) =>
    (await c.callTool({ name, arguments: args })) as CallToolResult;
  const idOf = (r: CallToolResult) => /Snapshot (s[a-z0-9]{7})/.exec(textOf(r))![1]!;

  it("a ref the first server printed, given to a second server: never held here, refs live one MCP session, what to do", async () => {
    const first = await connect(sessions.setup([button("Go", 120)]).s);
    const second = await connect(sessions.setup([button("Go", 120)]).s);
    const id = idOf(await call(first, "get_app_state", { app: "Editor", screenshot: false }));
    const body = errorOf(await call(second, "click", { ref: `@${id}:e1` }));
    expect(body.code).toBe("SNAPSHOT_NOT_FOUND");
    expect(body.message).toMatch(new RegExp(`never took snapshot ${id}`));
    expect(body.message).not.toMatch(/no longer holds/);
    expect(body.hint).toMatch(/one MCP session/);
    expect(body.hint).toMatch(/get_app_state/);
    expect(body.hint).toMatch(/server per call/);
    expect(body.hint).toMatch(/axsnap CLI/);
    console.log(`a foreign ref over MCP: ${body.message}\n  hint: ${body.hint}`);
  });

  it("a ref the same server let go: said so, with get_app_state", async () => {
    const c = await connect(sessions.setup([button("Go", 120)]).s);
    const id = idOf(await call(c, "get_app_state", { app: "Editor", screenshot: false }));
    for (let i = 0; i < 5; i++) await call(c, "get_app_state", { app: "Editor", screenshot: false });
    const body = errorOf(await call(c, "click", { ref: `@${id}:e1` }));
    expect(body.code).toBe("SNAPSHOT_NOT_FOUND");
    expect(body.message).toMatch(new RegExp(`let snapshot ${id} go`));
    expect(body.hint).toMatch(/call get_app_state/);
    expect(body.hint).not.toMatch(/server per call/);
  });
});
