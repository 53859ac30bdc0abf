/**
 * get_app_state's view arguments (issue 19 §2, §4): a subtree (`root`), a
 * depth, a skeleton, a token budget. One place for their schema and their
 * mapping onto the library's snapshot options.
 */
import { z } from "zod";
import type { SnapshotOptions } from "../../observe/desktop.js";
import { MIN_MAX_TOKENS } from "../../render/index.js";
import { showing, wholeFrom } from "./tools.js";

export const viewFields = {
  root: showing(z.union([z.string().min(1), wholeFrom(0)]), { anyOf: undefined, type: ["string", "integer"] })
    .optional()
    .describe("Only this element's subtree (a ref or element_index)."),
  depth: z
    .number()
    .int()
    .min(0)
    .max(512)
    .optional()
    .describe("Print down to this depth (0: the window line)."),
  skeleton: z.boolean().optional().describe("Only its regions and the focused branch; much shorter."),
  max_tokens: wholeFrom(MIN_MAX_TOKENS)
    .optional()
    .describe("Fit in about this many tokens, same style (whole, else long texts cut, else an outline)."),
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
