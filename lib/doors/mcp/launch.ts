/**
 * MCP launch_app: starts an app (launchApp) and answers once its first
 * window is accessible, with the pid to pass to get_app_state. Its hints
 * name this server's tools, not the library's functions. A path (a program
 * with any argv: "/bin/sh -c ...") is refused unless the server was started
 * with --allow-launch-paths: what the model asks runs as the user, and the
 * model may be obeying text it read in a window.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { AxsnapError } from "../../model/errors.js";
import { launchApp } from "../../session/launch/launch.js";
import { MAX_APP_NAME } from "../../session/launch/match.js";
import { bare, guarded } from "./tools.js";
import { windowJson, windowLine, windowOutput } from "./windows.js";

const LAUNCH_DEADLINE_MS = 20_000;

function pathRefusal(app: string): AxsnapError {
  return new AxsnapError(
    "INVALID_ARGUMENT",
    `launch_app starts listed apps by name or id; ${JSON.stringify(app)} is a path, and this server was not started with --allow-launch-paths`,
    {
      hint: "pass a name or id from list_apps with launchable: true; a program by path needs the server started with --allow-launch-paths",
    },
  );
}

export function registerLaunchApp(server: McpServer, allowPaths: boolean): void {
  server.registerTool(
    "launch_app",
    {
      title: "Launch app",
      description:
        "Starts an app and answers with its pid once its first window is accessible. TIMEOUT: it started (the error has its pid) but showed no window in time: do not launch it again, observe it later.",
      inputSchema: bare(
        z
          .object({
            app: z
              .string()
              .min(1)
              .max(MAX_APP_NAME)
              .describe(
                `A name or id from list_apps with launchable: true (any case)${allowPaths ? ", or a program's path" : ""}.`,
              ),
            args: z
              .array(z.string())
              .max(256)
              .optional()
              .describe(`Files or URIs to open${allowPaths ? "; argv for a program path" : ""}.`),
          })
          .strict(),
      ),
      outputSchema: bare(
        z.object({
          pid: z.number().int(),
          name: z.string(),
          window: windowOutput,
          via: z.enum(["desktop-entry", "bundle", "path"]),
          id: z.string().optional(),
          ms: z.number(),
        }),
      ),
      annotations: {
        title: "Launch app",
        readOnlyHint: false,
        // It starts a process that acts as the user; with --allow-launch-paths, any program.
        destructiveHint: true,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    (args, extra) =>
      guarded(true, async () => {
        if (!allowPaths && args.app.includes("/")) throw pathRefusal(args.app.trim());
        const app = await launchApp(args.app, {
          ...(args.args ? { args: args.args } : {}),
          deadlineMs: LAUNCH_DEADLINE_MS,
          signal: extra.signal,
        });
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
