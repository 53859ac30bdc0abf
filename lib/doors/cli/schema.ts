/**
 * The one schema of a stored snapshot file, checked on every read. A file in
 * the session directory is input like any other: another axsnap version, a
 * process that died mid-write, or a hand edit can leave anything there, and
 * what is read from it decides which element an action reaches. So every
 * field the CLI uses is checked for its type before anything is sent; the
 * first problem is named by its path ("records.3.identity: …"). The
 * StoredSnapshot type is this schema's, so what is written and what is read
 * cannot drift apart.
 */
import { z } from "zod";
import { STORE_FORMAT, STORE_VERSION } from "./store-format.js";

const rect = z.object({
  x: z.number().finite(),
  y: z.number().finite(),
  w: z.number().finite(),
  h: z.number().finite(),
});
const point = z.object({ x: z.number().finite(), y: z.number().finite() });
const index = z.number().int().min(0);

/** One printed index: how to find the element again (identity, proof), and what it offers. */
const storedRecord = z.object({
  index,
  role: z.string(),
  subrole: z.string().exactOptional(),
  roleText: z.string(),
  identity: z.object({
    role: z.string(),
    subrole: z.string().exactOptional(),
    identifier: z.string().exactOptional(),
    name: z.string().exactOptional(),
    nameFrom: z.enum(["title", "description", "rowText", "linkText"]).exactOptional(),
  }),
  proof: z.union([
    z.object({ unique: z.literal(true) }),
    z.object({ unique: z.literal(false), reason: z.enum(["incomplete", "duplicates"]), matches: index }),
  ]),
  pathRoot: z.enum(["window", "menuBar"]),
  path: z.array(index),
  frame: rect.exactOptional(),
  screenFrame: rect.exactOptional(),
  clickPoint: point.exactOptional(),
  actions: z.array(z.string()),
  settable: z.boolean(),
  secure: z.boolean(),
  synthetic: z.union([z.literal(false), z.literal("text-summary"), z.literal("summary-text")]),
  /** An outline or a budget did not print it: the index of the collapsed line that holds it. */
  inside: index.exactOptional(),
  /** Text read off the pixels (its identity's name is the text): click-at compares it with what is there now. */
  ocr: z
    .object({
      confidence: z.number().finite(),
      ink: z.string().max(20_000).exactOptional(),
      unsure: z.literal(true).exactOptional(),
    })
    .exactOptional(),
});

/** The render options a snapshot was taken with: a re-observation uses the same ones. */
const storedOptions = z.object({
  style: z.enum(["tree", "compact"]),
  textLimit: z.union([z.literal("max"), z.number().int().min(1)]),
  maxNodes: z.number().int().min(1),
  maxDepth: z.number().int().min(1),
  /** --window: the snapshot was asked for the app's window with this title (or part of one). */
  window: z.string().min(1).exactOptional(),
  /** --depth, --skeleton, --max-tokens: what the text printed of the window (records are always all of it). */
  depth: z.number().int().min(0).exactOptional(),
  skeleton: z.literal(true).exactOptional(),
  maxTokens: z.number().int().min(1).exactOptional(),
  /** --root: the ref (as given) whose subtree the snapshot is. */
  root: z.string().min(1).exactOptional(),
  /** --ocr: text from the pixels, when not the default "auto" (a re-observation reads the same). */
  ocr: z.union([z.literal("auto"), z.boolean()]).exactOptional(),
});

export const storedSnapshotSchema = z.object({
  format: z.literal(STORE_FORMAT),
  version: z.literal(STORE_VERSION),
  id: z.string().min(1),
  /** ms since the epoch. */
  takenAt: z.number().int().positive(),
  app: z.object({
    name: z.string().min(1),
    pid: z.number().int().positive(),
    bundleId: z.string().exactOptional(),
  }),
  /**
   * The window it was taken of. `id` is its listWindows id: on Linux its AT-SPI
   * path, which other processes see too; "e" + a handle where the platform has
   * none (then it means nothing to another process).
   */
  window: z.object({
    id: z.string(),
    title: z.string(),
    kind: z.enum(["window", "dialog", "menu", "popup", "sheet"]),
    frame: rect,
    scale: z.number().finite().positive(),
  }),
  options: storedOptions,
  complete: z.boolean(),
  cutBy: z.array(z.string()),
  /** The coordinate contract of its screenshot, and where the PNG was written; absent without one. */
  screenshot: z
    .object({
      pixelWidth: z.number().int().positive(),
      pixelHeight: z.number().int().positive(),
      scale: z.number().finite().positive(),
      windowOrigin: point,
      path: z.string().exactOptional(),
    })
    .exactOptional(),
  // A ref's index is its position: what the printing process numbered it.
  records: z
    .array(storedRecord)
    .refine((rs) => rs.every((r, i) => r.index === i), "each record's index must be its position"),
});

export type StoredSnapshot = z.infer<typeof storedSnapshotSchema>;
export type StoredRecord = z.infer<typeof storedRecord>;
export type StoredOptions = z.infer<typeof storedOptions>;

/** A parsed file as a stored snapshot (unknown keys dropped), or the problem: its path and what is wrong. */
export function parseStored(value: unknown): { stored: StoredSnapshot } | { problem: string } {
  const r = storedSnapshotSchema.safeParse(value);
  if (r.success) return { stored: r.data };
  const issue = r.error.issues[0]!;
  const path = issue.path.map(String).join(".");
  return { problem: `${path === "" ? "" : `${path}: `}${issue.message}` };
}
