/**
 * The fresh snapshot after an MCP action captures the window only when the
 * reply will attach the picture: the call's screenshot: true, the server's
 * --action-screenshots always, or auto (whose rule reads the fresh tree, so
 * it captures every time and attaches when the rule says). With the default
 * never, an action on a snapshot that had a screenshot (get_app_state takes
 * one by default) captures nothing: a capture costs tens of ms on a real
 * desktop. Counted as the screenshot requests the fake backend receives.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import type { McpSettings } from "../../lib/doors/mcp/options.js";
import type { NativeBackend } from "../../lib/native.js";
import { button, editorDesktop, useFakeSessions, withMethod } from "../support/editor.js";
import { errorOf, useMcpClients } from "../support/mcp.js";

const sessions = useFakeSessions();
const connect = useMcpClients();

/** A client of a server over the Editor whose backend counts the captures it is asked for. */
async function server(settings: Partial<McpSettings> = {}) {
  let captures = 0;
  const counting = (b: NativeBackend) =>
    withMethod(b, "snapshot", (snapshot) => (request) => {
      if (request.screenshot) captures++;
      return snapshot(request);
    });
  const { s } = sessions.open(
    editorDesktop([button("Open", 120), button("Save", 140), button("Close", 160), button("Quit", 180)]),
    { wrap: counting },
  );
  const client = await connect(s, settings);
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    return r;
  };
  const refusal = async (name: string, args: Record<string, unknown>) =>
    errorOf((await client.callTool({ name, arguments: args })) as CallToolResult);
  return { call, refusal, captures: () => captures };
}

const images = (r: CallToolResult) => r.content.filter((c) => c.type === "image").length;

describe("an action's fresh snapshot captures only for a reply that attaches it", () => {
  it("never (the default): an action after get_app_state, which took a screenshot, captures nothing", async () => {
    const { call, captures } = await server();
    const look = await call("get_app_state", { app: "Editor" });
    expect({ image: images(look), captures: captures() }).toEqual({ image: 1, captures: 1 });
    const click = await call("click", { app: "Editor", element_index: 1 });
    expect({ image: images(click), captures: captures() }).toEqual({ image: 0, captures: 1 });
  });

  it("never: x/y after such an action stay in the pixels of the screenshot the client received", async () => {
    const { call } = await server();
    const look = await call("get_app_state", { app: "Editor" });
    const [w] = /Screenshot: (\d+)x\d+ px/
      .exec((look.content[0] as { text: string }).text)!
      .slice(1)
      .map(Number);
    const scale = w! / 800;
    await call("click", { app: "Editor", element_index: 1 });
    // Save's centre, screen (220, 150) in the window at (100, 100), in the pixels of the image received.
    const click = await call("click", { app: "Editor", x: 120 * scale, y: 50 * scale });
    expect(click.structuredContent).toMatchObject({
      action: "clickAt",
      delivery: "delivered_unverified",
      notes: ["the point is on element 2 (push button Save)"],
    });
    // Without any screenshot received, a point is still refused, nothing sent.
    const fresh = await server();
    await fresh.call("get_app_state", { app: "Editor", screenshot: false });
    const e = await fresh.refusal("click", { app: "Editor", x: 100, y: 25 });
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT", delivery: "not_delivered" });
  });

  it("never: with marks too", async () => {
    const { call, captures } = await server();
    await call("get_app_state", { app: "Editor", marks: true });
    await call("click", { app: "Editor", element_index: 1 });
    expect(captures()).toBe(1);
  });

  it("never: the call's screenshot: true captures and attaches", async () => {
    const { call, captures } = await server();
    await call("get_app_state", { app: "Editor", screenshot: false });
    const click = await call("click", { app: "Editor", element_index: 1, screenshot: true });
    expect({ image: images(click), captures: captures() }).toEqual({ image: 1, captures: 1 });
  });

  it("always: captures and attaches, after a snapshot with or without a screenshot", async () => {
    const { call, captures } = await server({ actionScreenshots: "always" });
    await call("get_app_state", { app: "Editor", screenshot: false });
    const first = await call("click", { app: "Editor", element_index: 1 });
    const second = await call("click", { app: "Editor", element_index: 2 });
    expect({ images: images(first) + images(second), captures: captures() }).toEqual({
      images: 2,
      captures: 2,
    });
  });

  it("always: the call's screenshot: false captures nothing", async () => {
    const { call, captures } = await server({ actionScreenshots: "always" });
    await call("get_app_state", { app: "Editor" });
    const click = await call("click", { app: "Editor", element_index: 1, screenshot: false });
    expect({ image: images(click), captures: captures() }).toEqual({ image: 0, captures: 1 });
  });

  it("auto: captures for every action (its rule reads the fresh tree), attaching when the rule says", async () => {
    const { call, captures } = await server({ actionScreenshots: "auto" });
    await call("get_app_state", { app: "Editor", screenshot: false });
    // Nothing changes on the fake's click: auto attaches (the tree shows nothing of it).
    const click = await call("click", { app: "Editor", element_index: 1 });
    expect({ image: images(click), captures: captures() }).toEqual({ image: 1, captures: 1 });
  });
});
