/**
 * The input fields the action tools share, defined once: what they mean at
 * length (targets, refs, pixels, raw) is in the server's instructions
 * (lib/doors/mcp/instructions.ts), so each field says only enough to be filled in.
 * Every word here is paid in the tool list on every turn, once per tool.
 */
import { z } from "zod";
import { appSchema, nonEmpty, wholeFrom } from "./tools.js";

/** Which app's latest snapshot a bare index or a point means; not needed with a ref. */
export const actionApp = appSchema.optional().describe("Name or pid; default: the app observed last.");

export const elementFields = {
  element_index: wholeFrom(0).optional().describe("Line number in the app's latest snapshot."),
  ref: nonEmpty().optional().describe('"@<snapshot id>:e<N>"'),
  locator: nonEmpty().optional().describe("See instructions."),
};

/** type_text's and set_value's: kept out of traces (docs/trace.md#secrets). */
export const secretField = z.boolean().optional().describe("A password or token: never recorded.");

const pixel = z.number().finite().optional();
export const pointFields = {
  x: pixel.describe("Screenshot pixels."),
  y: pixel.describe("Screenshot pixels."),
};

export const rawField = z.boolean().optional().describe("x/y only: no STALE_REF check.");

/** A window, dialog, menu or popup to observe (or wait for), by part of its title. */
export const windowField = nonEmpty().optional().describe("Part of a window, dialog, menu or popup title.");

/** One end of a drag: an element or a point (its fields as the tool's own, said there). */
export const pointSchema = z
  .object({
    element_index: wholeFrom(0).optional(),
    ref: nonEmpty().optional(),
    locator: nonEmpty().optional(),
    x: pixel,
    y: pixel,
  })
  .strict()
  .describe("{ element_index }, { ref }, { locator } or { x, y }");
