/**
 * MCP `find_elements`: the session's find (lib/session/find.ts) as a tool. The reply
 * is the find text (the lines that matched, with refs) and the same matches
 * as structured content; the observation behind the refs is kept by the
 * session, so click, set_value and the other tools take them as any ref.
 * Read-only: observing never acts on the app.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import {
  DEFAULT_FIND_LIMIT,
  type FindResult,
  findText,
  MAX_FIND_LIMIT,
  matchData,
  queryFromDoor,
} from "../../session/find.js";
// No length bounds in the schema: find refuses a long pattern itself, with a hint (the transport bounds the request).
import { PATTERN_LIMIT } from "../../session/pattern.js";
import type { Session } from "../../session/session.js";
import { windowField } from "./fields.js";
import { appArgument, appOf, bare, DEADLINE_MS, errorResult, nonEmpty, READS, showing } from "./tools.js";

const TERMS = {
  snapshot: "get_app_state",
  limit: "limit",
  act: "act on one with click, set_value, type_text or any tool that takes a ref",
};

const inputSchema = bare(
  z
    .object({
      app: appArgument,
      role: nonEmpty()
        .optional()
        .describe('Either style\'s words, e.g. "push button" or "button" (whole, any case).'),
      name: nonEmpty()
        .optional()
        .describe(`Part of the name (any case), or "/regex/flags" (at most ${PATTERN_LIMIT} characters).`),
      exact: z.boolean().optional().describe("The whole name, case and all."),
      text: nonEmpty()
        .optional()
        .describe("Part of anything it says (name, value, row text...), or /regex/flags."),
      states: showing(z.array(z.string().min(1).max(44)).min(1).max(16), {
        minItems: undefined,
        maxItems: undefined,
        items: { type: "string" },
      })
        .optional()
        .describe('As printed, e.g. ["checked", "enabled", "!selected"] ("!": not).'),
      limit: z
        .number()
        .int()
        .min(1)
        .max(MAX_FIND_LIMIT)
        .optional()
        .describe(`Default ${DEFAULT_FIND_LIMIT}.`),
      window: windowField,
    })
    .strict(),
);

const matchSchema = z.object({
  index: z.number().int(),
  ref: z.string(),
  role: z.string(),
  name: z.string().optional(),
  line: z.string(),
  ancestors: z.array(z.string()),
  locator: z.string().optional(),
});

const outputSchema = z.object({
  snapshot_id: z.string(),
  app: z.string(),
  pid: z.number().int(),
  window: z.string(),
  complete: z.boolean(),
  total: z.number().int(),
  more: z.number().int(),
  matches: z.array(matchSchema),
});

function structured(r: FindResult): z.infer<typeof outputSchema> {
  const snap = r.snapshot;
  return {
    snapshot_id: snap.id,
    app: snap.app.name,
    pid: snap.app.pid,
    window: snap.window.title,
    complete: snap.complete,
    total: r.total,
    more: r.more,
    matches: r.matches.map(matchData),
  };
}

/** Registers `find_elements` on the server, over the server's session. */
export function registerFindTool(server: McpServer, session: Session): void {
  server.registerTool(
    "find_elements",
    {
      title: "Find elements",
      description:
        "Finds elements in an app's window by role, name, text and/or states, instead of reading it all: only the matching lines, each with its ref and the elements it sits in. None matched: it lists the roles and states there are.",
      inputSchema,
      outputSchema: bare(outputSchema),
      annotations: { title: "Find elements", ...READS },
    },
    async (args, extra) => {
      try {
        const query = queryFromDoor(args);
        const r = await session.find(appOf(args.app)!, query, {
          deadlineMs: DEADLINE_MS,
          signal: extra.signal,
          ...(args.limit === undefined ? {} : { limit: args.limit }),
          ...(args.window === undefined ? {} : { window: { title: args.window } }),
        });
        return {
          content: [{ type: "text", text: findText(r, TERMS) }],
          structuredContent: structured(r),
        };
      } catch (e) {
        return errorResult(e, false);
      }
    },
  );
}
