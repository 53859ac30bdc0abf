/**
 * MCP hints speak MCP: every hint an MCP tool can return names the server's
 * tools and their arguments (list_apps, get_app_state with root, window,
 * max_tree_nodes), never the library's calls (`listWindows(app)`,
 * `snapshot({ root })`, `{ app: 1234 }`, maxNodes) nor the command line's
 * (`axsnap snapshot --root`). The library's hints are read from its source
 * (test/support/hints.ts), the server's own from lib/doors/mcp*, each passed
 * through the one translation every tool's error result goes through; then
 * the same over a client of the server, on the fake Editor.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { mcpHint } from "../../lib/doors/mcp/hints.js";
import { AxsnapError, ERROR_CODES } from "../../lib/model/errors.js";
import { button, EDITOR_FRAME, useFakeSessions } from "../support/editor.js";
import { libraryHints, mcpDoorHints } from "../support/hints.js";
import { errorOf, useMcpClients } from "../support/mcp.js";

/** The words of another door: a library call or a command line. */
const OTHER_DOORS = [
  /listWindows|listApps|listLaunchable|launchApp|createSession/,
  /\bsnapshot\(/,
  /\{ ?app:/,
  /\bwindow: \{/,
  /\bwindow option\b/,
  /maxNodes|maxDepth|maxTokens|deadlineMs|timeoutMs/,
  /confirm callback/,
  /`observed`/,
  /\b(?:waitFor|setValue|pressKey|typeText|clickAt|performAction)\b/,
  /\bby (?:its )?index\b/,
  /`?axsnap (?:snapshot|apps|windows|click|call|find|launch)\b/,
  /--(?:app|window|root|max-nodes|deadline|timeout|raw|screenshot|json)\b/,
  // MCP says which tool takes a snapshot.
  /take a (?:new )?snapshot/i,
];

function otherDoorIn(hint: string): RegExp | undefined {
  return OTHER_DOORS.find((re) => re.test(hint));
}

describe("MCP hints name MCP tools", () => {
  it("reads the server's own hints too", () => {
    expect(mcpDoorHints().some((h) => /--allow-launch-paths/.test(h.hint))).toBe(true);
  });

  it("every code's default hint, through mcpHint, speaks MCP", () => {
    const bad: string[] = [];
    for (const code of ERROR_CODES) {
      const hint = mcpHint(new AxsnapError(code, "m").hint);
      const re = otherDoorIn(hint);
      if (re) bad.push(`${code}: ${re} in "${hint}"`);
    }
    expect(bad).toEqual([]);
  });

  it("every hint the library and the server write, through mcpHint, speaks MCP", () => {
    const bad: string[] = [];
    for (const { where, hint } of [...libraryHints(), ...mcpDoorHints()]) {
      const translated = mcpHint(hint);
      const re = otherDoorIn(translated);
      if (re) bad.push(`${where}: ${re} in "${translated}"`);
    }
    expect(bad).toEqual([]);
  });

  it("names the tools and arguments that do what the library's calls do", () => {
    expect(mcpHint('pass { app: "gedit" } or { app: 1234 }; listApps() shows what is running')).toBe(
      'pass app: "gedit" or app: 1234; list_apps shows what is running',
    );
    expect(mcpHint("the operation took too long; try again, or ask for fewer elements with maxNodes")).toBe(
      "the operation took too long; try again, or ask for fewer elements with max_tree_nodes",
    );
    expect(mcpHint("the element is gone; take a new snapshot and pick the element again")).toBe(
      "the element is gone; call get_app_state and pick the element again",
    );
  });
});

describe("MCP hints, through a client of the server over the fake Editor", () => {
  const sessions = useFakeSessions();
  const connect = useMcpClients();

  /** The error result's hint (the tool must have refused). */
  async function hintOf(c: Client, name: string, args: Record<string, unknown>): Promise<string> {
    return errorOf((await c.callTool({ name, arguments: args })) as CallToolResult).hint;
  }

  const panel = {
    role: "panel",
    title: "Tools",
    frame: EDITOR_FRAME,
    children: [button("Open", 120), button("Save", 140)],
  };

  it("a click inside a collapsed line: get_app_state with root, not the CLI's command or snapshot({ root })", async () => {
    const { s } = sessions.setup([button("Top", 100), panel]);
    const c = await connect(s);
    const outline = await c.callTool({ name: "get_app_state", arguments: { app: "Editor", depth: 1 } });
    expect(outline.isError).toBeFalsy();
    const snap = s.address(0, "Editor").snapshot;
    const open = snap.records.find((r) => r.title === "Open")!;
    const tools = snap.records.find((r) => r.title === "Tools")!;
    const hint = await hintOf(c, "click", { app: "Editor", element_index: open.index });
    expect(hint).toBe(
      `open it with get_app_state with root "@${snap.id}:e${tools.index}" and act on what that prints`,
    );
  });

  it("an app that does not run: list_apps, not listApps()", async () => {
    const { s } = sessions.setup([button("Top", 100)]);
    const hint = await hintOf(await connect(s), "get_app_state", { app: "Nothing" });
    expect(otherDoorIn(hint), hint).toBeUndefined();
    expect(hint).toContain("list_apps");
  });

  it("a window the app does not have: list_windows and get_app_state without window", async () => {
    const { s } = sessions.setup([button("Top", 100)]);
    const hint = await hintOf(await connect(s), "get_app_state", { app: "Editor", window: "Save" });
    expect(otherDoorIn(hint), hint).toBeUndefined();
    expect(hint).toContain("list_windows");
    expect(hint).toContain("get_app_state without window");
  });
});
