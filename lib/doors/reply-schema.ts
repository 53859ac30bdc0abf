/**
 * The data of an action's reply as a zod schema: doors/reply.ts fills it
 * (the MCP action tools' lean output schema names its fields). Kept apart from the
 * composer so that the CLI, which prints replies but validates nothing with
 * them, never loads zod (about 50 ms of a command's start).
 */
import { z } from "zod";

const settledSchema = z.object({
  mode: z.enum(["quiet", "cap", "none"]),
  ms: z.number(),
  events: z.number(),
  quietMs: z.number().optional(),
});

const surfaceSchema = z.object({
  id: z.string(),
  title: z.string(),
  kind: z.string(),
  role: z.string(),
  modal: z.boolean(),
  visible: z.boolean(),
  inParent: z.boolean(),
});

const changeSchema = z.object({
  /** Index in the fresh snapshot (added, changed) or in the snapshot the changes are from (removed). */
  index: z.number(),
  /**
   * The element as printed: `@<fresh id>:eN` (added, changed), `@<from id>:eN` (removed: gone now).
   * Absent for an element the fresh snapshot printed only inside a collapsed line (`inside`).
   */
  ref: z.string().optional(),
  /** Added, changed: the index of the collapsed line the text folds this change into (`[inside: …]`). */
  inside: z.number().optional(),
  /** That collapsed line's ref: the address to open (`root`) or act on; the element has none of its own. */
  insideRef: z.string().optional(),
  role: z.string(),
  name: z.string().optional(),
  line: z.string(),
  fields: z.array(z.string()).optional(),
  /** With "states" among the fields: the states gained and lost, as printed (`checked`, `focused`…). */
  states: z.object({ added: z.array(z.string()), removed: z.array(z.string()) }).optional(),
  previousIndex: z.number().optional(),
  previousLine: z.string().optional(),
});

const changesSchema = z.object({
  /** The snapshot the changes are from (the one acted on) and the fresh one they lead to. */
  from: z.string(),
  to: z.string(),
  summary: z.string(),
  added: z.array(changeSchema),
  removed: z.array(changeSchema),
  changed: z.array(changeSchema),
  unchanged: z.number(),
  renumbered: z.number(),
  note: z.string().optional(),
  /**
   * MCP: how many changes the lists leave out to keep the structured content within the reply
   * budget (they hold what the text shows, first the changed, then the added, then the removed);
   * the text, `reply: "full"` or get_app_state show the rest. Absent when none is left out.
   */
  omitted: z.number().optional(),
});

/** What the reply knows beyond the action line, as data: the same in `--json` and MCP structured content. */
export const replyDataSchema = z.object({
  settled: settledSchema.optional(),
  opened: z.array(surfaceSchema).optional(),
  closed: z.array(surfaceSchema).optional(),
  /** The app's process ended after the action: `closed` lists its windows, and no fresh snapshot came. */
  exited: z.object({ name: z.string(), pid: z.number() }).optional(),
  changes: changesSchema.optional(),
  /** What the reply printed of the fresh snapshot: its changes, the whole of it, or the whole through the reply budget. */
  shows: z.enum(["diff", "whole", "budget"]).optional(),
  /** setValue: whether the element holds the value asked for once read back; false when the app changed it (a step, a range) or kept another. */
  applied: z.boolean().optional(),
  /** setValue: the value the element holds once read back, when it could be read. */
  value: z.union([z.string(), z.number(), z.boolean()]).optional(),
});
export type ReplyData = z.infer<typeof replyDataSchema>;
export type SurfaceData = z.infer<typeof surfaceSchema>;
export type ChangeData = z.infer<typeof changeSchema>;
