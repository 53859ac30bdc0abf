/**
 * What every MCP tool of the server shares, wherever it is registered: the
 * call deadline, how an app argument reads, the annotations, and how a
 * refusal or failure becomes a tool result the model can read (never a
 * protocol error).
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { AxsnapError, unexpectedErrorJson } from "../../model/errors.js";
import { mcpHint } from "./hints.js";

/** Each call's deadline: a snapshot of a big window on a loaded machine takes a few seconds. */
export const DEADLINE_MS = 8000;

/** Annotations of a tool that acts on the app (MCP tool annotations: hints for the client). */
export const ACTS = { readOnlyHint: false, destructiveHint: true, openWorldHint: false } as const;
/** Annotations of a tool that only observes. */
export const READS = { readOnlyHint: true, openWorldHint: false } as const;

/**
 * A schema whose JSON Schema (what the tool list shows a model) says less than zod checks: zod
 * writes an integer's safe bounds and every branch of a union into it, about ten tokens a field,
 * paid on every turn of every conversation. The server still checks all of it, and answers a call
 * that fails with an isError result naming the field. `json` replaces keys of the generated
 * schema (zod merges a schema's metadata into it); an undefined one is left out.
 */
export function showing<T extends z.ZodType>(schema: T, json: Record<string, unknown>): T {
  return schema.meta(json) as T;
}

/**
 * A tool's input or output schema without its "$schema" line (about 13 tokens a schema, twice a
 * tool): MCP reads a schema without one as JSON Schema 2020-12 (SEP-1613), which means by these
 * schemas' keywords (type, enum, minimum, items, anyOf...) what draft-07, the one zod names, means.
 */
export function bare<T extends z.ZodType>(schema: T): T {
  return showing(schema, { $schema: undefined });
}

/** A whole number from `min` up, shown as just that (no 2^53 bound). */
export function wholeFrom(min: number): z.ZodNumber {
  return showing(z.number().int().min(min), { maximum: undefined });
}

/** A text that is not empty, shown as a string. */
export function nonEmpty(): z.ZodString {
  return showing(z.string().min(1), { minLength: undefined });
}

/** An app argument: its name or its pid (appOf reads a string of digits as a pid). */
export const appSchema = showing(z.union([z.string().min(1), z.number().int().positive()]), {
  anyOf: undefined,
  type: ["string", "integer"],
});

/** The app argument of a tool that needs one, described for the model. */
export const appArgument = appSchema.describe("Name (any case; a unique prefix works) or pid.");

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
      : { ...unexpectedErrorJson(e, acting), hint: mcpHint(unexpectedErrorJson(e, acting).hint) };
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
