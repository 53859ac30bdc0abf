/**
 * What every MCP tool of the server shares, wherever it is registered: the
 * call deadline, how an app argument reads, the annotations, and how a
 * refusal or failure becomes a tool result the model can read (never a
 * protocol error).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AxsnapError } from "../errors.js";
import { mcpHint } from "./hints.js";

/** Each call's deadline: a snapshot of a big window on a loaded machine takes a few seconds. */
export const DEADLINE_MS = 8000;

/** Annotations of a tool that acts on the app (MCP tool annotations: hints for the client). */
export const ACTS = { readOnlyHint: false, destructiveHint: true, openWorldHint: false } as const;
/** Annotations of a tool that only observes. */
export const READS = { readOnlyHint: true, openWorldHint: false } as const;

/** An app argument: its name or its pid (appOf reads a string of digits as a pid). */
export const appSchema = z.union([z.string().min(1), z.number().int().positive()]);

/** The app argument of a tool that needs one, described for the model. */
export const appArgument = appSchema.describe(
  "The app: its name (case-insensitive; a unique prefix works) or its pid.",
);

/** An app by name or pid; a string of digits is a pid. */
export function appOf(app: string | number | undefined): string | number | undefined {
  if (typeof app === "string" && /^\d{1,10}$/.test(app.trim())) return Number(app.trim());
  return app;
}

/**
 * A refusal or a failure as a tool result the model can read: never a protocol error. Its hint
 * names this server's tools and arguments, not the library's calls.
 */
export function errorResult(e: unknown, acting: boolean): CallToolResult {
  const body =
    e instanceof AxsnapError
      ? { ...e.toJSON(), hint: mcpHint(e.hint) }
      : {
          code: "INTERNAL_ERROR",
          message: e instanceof Error ? e.message : String(e),
          hint: acting
            ? "an unexpected failure: take a new snapshot with get_app_state to see whether the action happened"
            : "an unexpected failure: try again, or take a new snapshot with get_app_state",
          // Nothing is known about what an unexpected failure in an action did.
          delivery: acting ? "delivery_uncertain" : "not_delivered",
          retry: acting ? "unsafe" : "safe",
        };
  return { isError: true, content: [{ type: "text", text: JSON.stringify(body, null, 2) }] };
}

/** Runs a tool's body; whatever it throws is answered as errorResult. */
export async function guarded(acting: boolean, body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (e) {
    return errorResult(e, acting);
  }
}
