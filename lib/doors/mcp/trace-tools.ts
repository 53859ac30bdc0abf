/**
 * Traces through the MCP door (docs/mcp.md#traces): the start_trace and
 * stop_trace tools, and the names of the traces the server writes.
 *
 * The tools take no path: a client, perhaps remote, perhaps a model obeying
 * text in a window, must not choose where the server writes. They write under
 * the server's --trace-dir (default $XDG_STATE_HOME/axsnap/traces), and the
 * path they answer is the one written, complete once stop_trace answers
 * (stop drains every step before it returns).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { invalidArgument } from "../../model/errors.js";
import type { Session } from "../../session/session.js";
import type { TraceStatus } from "../../session/trace/types.js";
import { bare, guarded } from "./tools.js";

/** $XDG_STATE_HOME/axsnap/traces, else ~/.local/state/axsnap/traces (a relative XDG path is ignored, as the spec says). */
export function defaultTraceDir(): string {
  const xdg = process.env.XDG_STATE_HOME;
  return join(xdg?.startsWith("/") ? xdg : join(homedir(), ".local", "state"), "axsnap", "traces");
}

/** Creates a directory traces go into (only its owner may read it), or refuses saying why. */
export function traceDirReady(dir: string, flag: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw invalidArgument(
      `${flag} ${dir}: cannot create the directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
      "pass a directory you can write to",
    );
  }
}

/** `<yyyymmdd-hhmmss>-<id8>.axtrace` (UTC): sorted by when it began, apart by its session. */
export function traceName(id: string, at = new Date()): string {
  const two = (n: number) => String(n).padStart(2, "0");
  const day = `${at.getUTCFullYear()}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}`;
  const time = `${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}`;
  return `${day}-${time}-${id.replace(/[^0-9A-Za-z]/g, "").slice(0, 8)}.axtrace`;
}

const statusSchema = bare(
  z
    .object({ path: z.string(), runId: z.string().optional(), steps: z.number(), screenshots: z.boolean() })
    .loose(),
);

function statusResult(verb: string, s: TraceStatus) {
  return {
    content: [
      {
        type: "text" as const,
        text: `${verb} ${s.path}${s.runId ? ` (run ${s.runId})` : ""}: ${s.steps} steps; view it with: axsnap trace view ${s.path}`,
      },
    ],
    structuredContent: { ...s },
  };
}

export interface TraceToolSettings {
  /** Where start_trace writes. */
  dir: string;
  /** Screenshots when start_trace is not told. */
  screenshots: boolean;
}

export function registerTraceTools(server: McpServer, session: Session, settings: TraceToolSettings): void {
  server.registerTool(
    "start_trace",
    {
      title: "Start trace",
      description:
        "Records the following calls (what you saw, did and read) to a new trace on the server, for a person to view or replay.",
      inputSchema: bare(
        z.object({ screenshots: z.boolean().optional().describe("Default: the server's.") }).strict(),
      ),
      outputSchema: statusSchema,
      annotations: {
        title: "Start trace",
        readOnlyHint: false,
        destructiveHint: false,
        openWorldHint: false,
      },
    },
    (args) =>
      guarded(false, async () => {
        const on = session.trace.status;
        if (on !== undefined)
          throw invalidArgument(`a trace is already being recorded: ${on.path}`, "call stop_trace first");
        const path = join(settings.dir, traceName(randomBytes(4).toString("hex")));
        const status = await session.trace.start({
          path,
          screenshots: args.screenshots ?? settings.screenshots,
        });
        return statusResult("recording to", status);
      }),
  );

  server.registerTool(
    "stop_trace",
    {
      title: "Stop trace",
      description: "Stops recording; returns the trace's path and its number of steps.",
      inputSchema: bare(z.object({}).strict()),
      outputSchema: statusSchema,
      annotations: { title: "Stop trace", readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    () =>
      guarded(false, async () => {
        const status = await session.trace.stop();
        if (status === undefined)
          throw invalidArgument("no trace is being recorded", "call start_trace first");
        return statusResult("recorded", status);
      }),
  );
}
