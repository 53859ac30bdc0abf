/**
 * MCP `find_elements`: the session's find (lib/find.ts) as a tool. The reply
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
} from "../find.js";
// No length bounds in the schema: find refuses a long pattern itself, with a hint (the transport bounds the request).
import { PATTERN_LIMIT } from "../pattern.js";
import type { Session } from "../session.js";
import { appArgument, appOf, DEADLINE_MS, errorResult, READS } from "./tools.js";

const TERMS = {
  snapshot: "get_app_state",
  limit: "limit",
  act: "act on one with click, set_value, type_text or any tool that takes a ref",
};

const inputSchema = z
  .object({
    app: appArgument,
    role: z
      .string()
      .min(1)
      .optional()
      .describe('The role in either style\'s words, e.g. "push button" or "button" (whole, any case).'),
    name: z
      .string()
      .min(1)
      .optional()
      .describe(
        `A part of the element's name, in any case; or a regular expression written "/source/flags" (at most ${PATTERN_LIMIT} characters), e.g. "/^page \\\\d$/i".`,
      ),
    exact: z.boolean().optional().describe("With a plain name: the whole name must be it, case and all."),
    text: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A part of anything the element says (name, description, value, row text), in any case; or /regex/flags.",
      ),
    states: z
      .array(z.string().min(1).max(44))
      .min(1)
      .max(16)
      .optional()
      .describe(
        'States its line must print, e.g. ["checked"], ["focused"], ["selected"], ["disabled"]; "enabled" = not disabled; "!checked" = not checked.',
      ),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_FIND_LIMIT)
      .optional()
      .describe(
        `Most matches returned (default ${DEFAULT_FIND_LIMIT}); the reply says how many more matched.`,
      ),
    window: z
      .string()
      .min(1)
      .optional()
      .describe("Search the app's window, dialog, menu or popup with this title (or part of it)."),
  })
  .strict();

const matchSchema = z.object({
  index: z.number().int(),
  ref: z.string(),
  role: z.string(),
  name: z.string().optional(),
  line: z.string(),
  ancestors: z.array(z.string()),
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
      description: `Finds elements in one window of an app by role, name, text and states, instead of reading the whole window: observes it once (no screenshot) and returns only the lines that matched, each with its ref "@<snapshot id>:e<N>" and the elements it sits in. Act on a ref with click, set_value, type_text and the other tools, as on any ref (the observation is now the app's latest). At most limit matches (default ${DEFAULT_FIND_LIMIT}); the reply says how many more matched. Give at least one of role, name, text, states; when nothing matches, the reply lists the roles and states the window has.`,
      inputSchema,
      outputSchema,
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
