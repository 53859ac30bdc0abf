/**
 * Issue 33 §6 through the MCP door on a real app: mousepad's File > Save
 * As... opens a GTK file chooser, a dialog longer than the server's 500-token
 * reply budget. The reply prints it shortened in the tree's words (`push
 * button Cancel`, as get_app_state prints it), never compact (`button
 * "Cancel"`), and says it was shortened; find_elements by the compact word
 * `button` then finds the same push buttons as by `push button`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf, useMcpClients } from "../support/mcp.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let session: Session;
let app: App;
const mcpClient = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  session = createSession({ deadlineMs: 10_000 });
  app = await startApp(desktop, "mousepad", [], { name: "mousepad", timeoutMs: 60_000 });
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await app?.stop();
  await desktop?.stop();
});

const line = (re: string) => new RegExp(`^\\d+ ${re}`);

interface Found {
  total: number;
  matches: { ref: string; role: string; line: string }[];
}

describe("mousepad's Save As dialog over the reply budget (MCP)", () => {
  it(
    "the reply keeps the tree's role words and says it was shortened; find_elements role button finds its push buttons",
    async () => {
      const client = await mcpClient(session);
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as Parameters<typeof textOf>[0];
        expect(r.isError, `${name} ${JSON.stringify(args)}: ${textOf(r)}`).toBeFalsy();
        return r;
      };
      let text = textOf(await call("get_app_state", { app: app.pid, screenshot: false }));
      text = textOf(
        await call("click", {
          app: app.pid,
          element_index: indexIn(text, line("menu (\\([^)]*\\) )?File$")),
        }),
      );
      const opened = await call("click", {
        app: app.pid,
        element_index: indexIn(text, line("menu item (\\([^)]*\\) )?Save As\\.\\.\\.")),
      });
      const reply = textOf(opened);
      try {
        // Precondition: the dialog is over the budget, and the reply printed it shortened.
        expect((opened.structuredContent as { shows?: string }).shows, reply).toBe("budget");
        expect(reply).toMatch(/\(it just opened\), shortened to the reply budget of 500 tokens/);
        expect(reply).toMatch(/^\((Shortened to fit|Could not fit) 500 tokens/m);
        // The tree's lines and words, as get_app_state prints them: no compact line, no compact word.
        expect(reply).toMatch(/^\t*\d+ push button /m);
        expect(reply).not.toMatch(/^ *\d+: /m);
        expect(reply).not.toMatch(/^\s*\d+ button /m);

        const byWord = (await call("find_elements", { app: app.pid, role: "button" }))
          .structuredContent as unknown as Found;
        const byTree = (await call("find_elements", { app: app.pid, role: "push button" }))
          .structuredContent as unknown as Found;
        expect(byWord.total, "find_elements role button").toBeGreaterThan(0);
        expect(byWord.total).toBe(byTree.total);
        expect(byWord.matches.map((m) => m.line)).toEqual(byTree.matches.map((m) => m.line));
        for (const m of byWord.matches) expect(m.role).toBe("push button");
        expect(byWord.matches.map((m) => m.line)).toContainEqual(
          expect.stringMatching(/^push button .*Cancel/),
        );
      } finally {
        await client.callTool({ name: "press_key", arguments: { app: app.pid, key: "Escape" } });
      }
    },
    TIMEOUT,
  );
});
