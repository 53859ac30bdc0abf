/**
 * The trace format (types.ts, docs/trace.md "Format") as zod schemas: the
 * tests check every line the recorder writes and every JSON example of the
 * docs page against them. Kept out of the reader and the writers, so that the
 * CLI never loads zod to append or read a trace.
 */
import { z } from "zod";
import { ERROR_CODES } from "../../model/errors.js";

const rect = z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() });
const windowKind = z.enum(["window", "dialog", "menu", "popup", "sheet"]);
const delivery = z.enum([
  "not_delivered",
  "delivered_unverified",
  "delivered_verified",
  "delivery_uncertain",
]);
const retry = z.enum(["safe", "unsafe"]);

export const traceHeaderSchema = z.object({
  format: z.literal("axsnap-trace"),
  version: z.number().int().min(1),
  runId: z.string().min(1),
  createdAt: z.string(),
  axsnap: z.string(),
  platform: z.string(),
  screenshots: z.boolean(),
});

export const traceSnapshotSchema = z.object({
  kind: z.literal("snapshot"),
  id: z.string().min(1),
  takenAt: z.number(),
  app: z.object({ name: z.string(), pid: z.number().int() }),
  window: z
    .object({
      id: z.string().optional(),
      title: z.string().optional(),
      kind: windowKind,
      frame: rect.optional(),
      scale: z.number().optional(),
    })
    .optional(),
  style: z.enum(["tree", "compact"]),
  complete: z.boolean(),
  text: z.string(),
  shot: z
    .union([
      z.object({
        file: z.string().regex(/^shots\/[A-Za-z0-9]+\.png$/),
        pixelWidth: z.number().int().positive(),
        pixelHeight: z.number().int().positive(),
        scale: z.number().positive(),
      }),
      z.object({ withheld: z.literal("secret") }),
    ])
    .optional(),
});

const candidate = z.object({
  ref: z.string(),
  locator: z.string(),
  line: z.string(),
  ancestors: z.array(z.string()),
  why: z.string().optional(),
});

const target = z.object({
  snapshot: z.string(),
  index: z.number().int().min(-1),
  line: z.string(),
  role: z.string(),
  roleText: z.string(),
  name: z.string().optional(),
  ancestors: z.array(z.string()),
  locator: z.string().optional(),
  frame: rect.optional(),
  value: z.string().optional(),
  states: z.array(z.string()).optional(),
});

const surface = z.object({ title: z.string().optional(), kind: windowKind, role: z.string().optional() });

const change = z.object({
  kind: z.enum(["added", "removed", "changed"]),
  line: z.string(),
  locator: z.string().optional(),
  fields: z.array(z.string()).optional(),
  value: z.string().optional(),
  states: z.array(z.string()).optional(),
  target: z.boolean().optional(),
});

const result = z.object({
  action: z.string(),
  delivery,
  retry,
  channel: z.enum(["semantic", "synthetic"]),
  notes: z.array(z.string()),
  settled: z
    .object({ mode: z.enum(["quiet", "cap", "none"]), ms: z.number(), events: z.number() })
    .optional(),
  opened: z.array(surface).optional(),
  closed: z.array(surface).optional(),
  changesText: z.string().optional(),
  changes: z.array(change).optional(),
  applied: z.boolean().optional(),
  value: z.union([z.string(), z.number(), z.boolean()]).optional(),
  exited: z.object({ name: z.string(), pid: z.number() }).optional(),
});

const error = z.object({
  code: z.enum([...ERROR_CODES, "INTERNAL"]),
  message: z.string(),
  hint: z.string(),
  delivery,
  retry,
  candidates: z.array(candidate).optional(),
  matches: z.array(candidate).optional(),
});

const point = z.object({ x: z.number(), y: z.number() });

export const traceStepSchema = z
  .object({
    kind: z.literal("step"),
    n: z.number().int().positive(),
    runId: z.string().min(1),
    pid: z.number().int(),
    door: z.enum(["api", "cli", "mcp"]),
    call: z.string(),
    args: z.record(z.string(), z.unknown()),
    method: z.string(),
    startedAt: z.number(),
    before: z.string().optional(),
    after: z.string().optional(),
    targets: z.array(target).optional(),
    read: z.array(z.number().int()).optional(),
    point: point.extend({ to: point.optional() }).optional(),
    keys: z.string().optional(),
    text: z.string().optional(),
    secret: z.object({ env: z.string().min(1) }).optional(),
    result: result.optional(),
    error: error.optional(),
    timings: z.object({
      ms: z.number(),
      locateMs: z.number().optional(),
      settleMs: z.number().optional(),
      traceMs: z.number().optional(),
    }),
    reply: z.string().optional(),
  })
  .refine((s) => !(s.result && s.error), { message: "a step has a result or an error, not both" });

/** One line of `steps.jsonl`. */
export const traceLineSchema = z.union([traceSnapshotSchema, traceStepSchema]);

/** `secrets.json` (masks.ts): the fields secrets went into, by locator; never a secret. */
export const traceMasksSchema = z.object({
  masks: z.array(
    z.object({
      locator: z.string().min(1),
      app: z.string(),
      window: z.object({ title: z.string(), kind: windowKind }),
    }),
  ),
});
