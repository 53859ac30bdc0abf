/**
 * MCP list_windows: an app's windows, dialogs, open menus and popups, as
 * listWindows gives them. Registered by createMcpServer (lib/mcp.ts).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { listWindows } from "../../observe/desktop.js";
import type { WindowListing } from "../../observe/windows.js";
import { appArgument, appOf, bare, DEADLINE_MS, guarded, READS } from "./tools.js";

const rect = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() });

/** One window as list_windows returns it (structuredContent.windows[i]). */
export const windowOutput = z.object({
  index: z.number().int(),
  id: z.string(),
  title: z.string(),
  kind: z.enum(["window", "dialog", "menu", "popup", "sheet"]),
  role: z.string(),
  frame: rect,
  active: z.boolean(),
  minimized: z.boolean(),
  visible: z.boolean(),
  modal: z.boolean(),
  /** Its content is shown inside its parent window's snapshot (a menu bar's open menu). */
  inParent: z.boolean(),
});

export function windowJson(w: WindowListing): z.infer<typeof windowOutput> {
  return {
    index: w.index,
    id: w.id,
    title: w.title,
    kind: w.kind,
    role: w.role,
    frame: w.frame,
    active: w.active,
    minimized: w.minimized,
    visible: w.visible,
    modal: w.modal,
    inParent: w.inParent,
  };
}

/** One line a window: what an agent reads to pick one. */
export function windowLine(w: WindowListing): string {
  const flags = [w.active && "active", w.modal && "modal", w.minimized && "minimized", !w.visible && "hidden"]
    .filter(Boolean)
    .join(", ");
  return `${w.index} ${w.kind} ${JSON.stringify(w.title)}${flags ? ` (${flags})` : ""} id ${w.id}`;
}

export function registerListWindows(server: McpServer): void {
  server.registerTool(
    "list_windows",
    {
      title: "List windows",
      description:
        "Lists an app's windows, dialogs, open menus and popups, one a line (index, kind, title, state, id); pass a title as get_app_state's window to observe that one.",
      inputSchema: bare(z.object({ app: appArgument }).strict()),
      outputSchema: bare(z.object({ windows: z.array(windowOutput) })),
      annotations: { title: "List windows", ...READS },
    },
    (args, extra) =>
      guarded(false, async () => {
        const windows = await listWindows(appOf(args.app)!, {
          deadlineMs: DEADLINE_MS,
          signal: extra.signal,
        });
        const text =
          windows.length === 0 ? "the app has no windows open" : windows.map(windowLine).join("\n");
        return {
          content: [{ type: "text", text }],
          structuredContent: { windows: windows.map(windowJson) },
        };
      }),
  );
}
