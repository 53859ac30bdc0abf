/**
 * MCP launch_app: starts an app (launchApp) and answers once its first
 * window is accessible, with the pid to pass to get_app_state. Its hints
 * name this server's tools, not the library's functions.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { AxsnapError } from "../errors.js";
import { launchApp } from "../launch.js";
import { guarded } from "./tools.js";
import { windowJson, windowLine, windowOutput } from "./windows.js";

const LAUNCH_DEADLINE_MS = 20_000;

/** The library's phrasings in a launch refusal → this server's tools. */
function mcpHint(e: AxsnapError): AxsnapError {
  const hint = e.hint
    .replace(/listLaunchable\(\)/g, "list_apps with launchable: true")
    .replace(/listApps\(\)/g, "list_apps")
    .replace(/snapshot\(\{ app: (\d+) \}\)/g, "get_app_state with app $1");
  if (hint === e.hint) return e;
  return new AxsnapError(e.code, e.message, {
    hint,
    delivery: e.delivery,
    cause: e,
    ...(e.pid === undefined ? {} : { pid: e.pid }),
  });
}

export function registerLaunchApp(server: McpServer): void {
  server.registerTool(
    "launch_app",
    {
      title: "Launch app",
      description:
        'Starts an app and answers once its first window is accessible, with its pid and name (pass the pid to get_app_state). app: a name or id from list_apps with launchable: true (exact, case-insensitive: "gtk3-widget-factory", "Widget Factory", "gtk3-widget-factory.desktop", a macOS bundle id), or the path of a program. A name that matches nothing is APP_NOT_FOUND naming the closest ones; TIMEOUT means the app was started (its pid is in the error) but showed no window in time: do not launch it again, observe it later.',
      inputSchema: z
        .object({
          app: z.string().min(1).describe("A launchable app's name or id, or the path of a program."),
          args: z
            .array(z.string())
            .max(256)
            .optional()
            .describe(
              "Arguments: files or URIs to open for a desktop entry or bundle; argv for a program path.",
            ),
        })
        .strict(),
      outputSchema: z.object({
        pid: z.number().int(),
        name: z.string(),
        window: windowOutput,
        via: z.enum(["desktop-entry", "bundle", "path"]),
        id: z.string().optional().describe("The desktop entry or bundle started."),
        ms: z.number(),
      }),
      annotations: {
        title: "Launch app",
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args, extra) =>
      guarded(true, async () => {
        let app: Awaited<ReturnType<typeof launchApp>>;
        try {
          app = await launchApp(args.app, {
            ...(args.args ? { args: args.args } : {}),
            deadlineMs: LAUNCH_DEADLINE_MS,
            signal: extra.signal,
          });
        } catch (e) {
          throw e instanceof AxsnapError ? mcpHint(e) : e;
        }
        const from = app.entry ? ` from ${app.entry.id}` : "";
        const text = `started ${app.name}${from}: pid ${app.pid}, first window after ${app.ms} ms:\n${windowLine(app.window)}\nNext: get_app_state with app ${app.pid}.`;
        return {
          content: [{ type: "text", text }],
          structuredContent: {
            pid: app.pid,
            name: app.name,
            window: windowJson(app.window),
            via: app.via,
            ...(app.entry ? { id: app.entry.id } : {}),
            ms: app.ms,
          },
        };
      }),
  );
}
