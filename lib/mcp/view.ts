/**
 * get_app_state's view arguments (issue 19 §2, §4): a subtree (`root`), a
 * depth, a skeleton, a token budget. One place for their schema and their
 * mapping onto the library's snapshot options.
 */
import { z } from "zod";
import type { SnapshotOptions } from "../desktop.js";
import { MIN_MAX_TOKENS } from "../render/index.js";

export const viewFields = {
  root: z
    .union([z.string().min(1), z.number().int().min(0)])
    .optional()
    .describe(
      'Only this element\'s subtree, as a snapshot of its own (line 0 is the element): a ref "@<snapshot id>:e<N>" or an element_index of the app\'s latest snapshot. Use it to open a line that ends with "(+N elements)".',
    ),
  depth: z
    .number()
    .int()
    .min(0)
    .max(512)
    .optional()
    .describe(
      'Print the tree down to this depth (0: the window line only); a container cut there ends with "(+N elements)" and keeps its index: open it with root.',
    ),
  skeleton: z
    .boolean()
    .optional()
    .describe(
      'An outline of the window: its regions (toolbars, lists, tables, tab lists, the document) and the branch holding focus, the rest collapsed into "(+N elements)" lines to open with root. Much shorter than the whole tree.',
    ),
  max_tokens: z
    .number()
    .int()
    .min(MIN_MAX_TOKENS)
    .optional()
    .describe(
      "At most about this many text tokens, in the same style: the whole if it fits, else its long texts cut, else a skeleton as deep as fits; the last line says what was cut or collapsed and how to open it (root).",
    ),
};

type ViewArgs = {
  root?: string | number | undefined;
  depth?: number | undefined;
  skeleton?: boolean | undefined;
  max_tokens?: number | undefined;
};

export function viewOptionsOf(
  args: ViewArgs,
): Pick<SnapshotOptions, "root" | "depth" | "skeleton" | "maxTokens"> {
  const root =
    typeof args.root === "string" && /^\d{1,9}$/.test(args.root.trim())
      ? Number(args.root.trim())
      : args.root;
  return {
    ...(root !== undefined ? { root } : {}),
    ...(args.depth !== undefined ? { depth: args.depth } : {}),
    ...(args.skeleton !== undefined ? { skeleton: args.skeleton } : {}),
    ...(args.max_tokens !== undefined ? { maxTokens: args.max_tokens } : {}),
  };
}
