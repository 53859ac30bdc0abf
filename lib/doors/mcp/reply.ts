/**
 * An action's reply as MCP content: the reply composed by doors/reply.ts as
 * one text block, the screenshot as an image block only when it is wanted
 * (the call's `screenshot`, else the server's `--action-screenshots`), and
 * the same data as structured content, under the action tools' output schema.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Delivery, Retry } from "../../model/errors.js";
import type { InputRoute } from "../../native.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { ActionResult } from "../../session/act/result.js";
import type { Session, Target } from "../../session/session.js";
import {
  type ActionScreenshots,
  composeReply,
  DEFAULT_REPLY_TOKENS,
  type DoorWords,
  type ReplyMode,
  replyText,
  screenshotWanted,
  withinBudget,
} from "../reply.js";
import type { ReplyData } from "../reply-schema.js";
import { bare } from "./tools.js";

export const MCP_WORDS: DoorWords = {
  whole: 'reply: "full"',
  idle: "wait_for with idle: true",
  apps: "list_apps lists the apps that run (launch_app starts one)",
  snapshot: "get_app_state",
};

/** The arguments every action tool takes for its reply. */
export const replyFields = {
  reply: z.enum(["diff", "full"]).optional().describe('"full": the whole window.'),
  screenshot: z.boolean().optional().describe("Attach the fresh screenshot."),
};

export interface ReplyArgs {
  reply?: ReplyMode | undefined;
  screenshot?: boolean | undefined;
}

/** The structured content of an action's reply: its result, and what the reply knows (shared with the CLI's --json). */
export type ActionData = ReplyData & {
  action: string;
  /** What was acted on, as a ref of the snapshot acted on. */
  target?: string;
  delivery: Delivery;
  retry: Retry;
  channel: "semantic" | "synthetic";
  route?: InputRoute;
  notes: string[];
  /** The fresh snapshot: the app's latest now, what a bare element_index means. */
  snapshotId?: string;
  screenshot?: { pixelWidth: number; pixelHeight: number; attached: boolean };
};

/** A field of the output schema named, its shape left to the data: the schema is paid in the tool list on every turn. */
const some = z.unknown().optional();

/**
 * The action tools' output schema, as lean as says what an agent reads: the
 * result's fields typed, the rest of ActionData only named (ReplyData's
 * shapes are in lib/doors/reply-schema.ts and docs/mcp.md), and open to more,
 * so what actionReply fills always validates (the server checks it with this
 * schema, a client with its JSON Schema: test/doors/mcp-tool-list-tokens.test.ts).
 */
export const actionOutputSchema = bare(
  z
    .object({
      action: z.string(),
      target: z.string().optional(),
      delivery: z.enum(["not_delivered", "delivered_unverified", "delivered_verified", "delivery_uncertain"]),
      retry: z.enum(["safe", "unsafe"]),
      channel: z.enum(["semantic", "synthetic"]),
      route: z.string().optional(),
      notes: z.array(z.string()),
      snapshotId: z.string().optional(),
      changes: z
        .unknown()
        .optional()
        .describe("{ from, to, summary, added, removed, changed: [{ index, ref, role, name, line }] }"),
      settled: some,
      opened: some,
      closed: some,
      exited: some,
      shows: some,
      applied: some,
      value: some,
      screenshot: some,
    } satisfies Record<keyof ActionData, z.ZodType>)
    .loose(),
);

/**
 * The fresh snapshot's screenshot option: captured only for a reply that may
 * attach it (`wanted`), since a capture costs tens of ms; taken when the
 * snapshot acted on had none, else kept as it was (marks included). Best
 * effort: an unknown target is the action's own error to give.
 */
export function screenshotForReply(
  session: Session,
  target: Target | undefined,
  app: string | number | undefined,
  wanted: boolean,
): { snapshot?: { screenshot: boolean } } {
  if (!wanted) return { snapshot: { screenshot: false } };
  try {
    // Without a target, the action is on the app's latest snapshot (keys, pixels): its first line names it.
    return session.address(target ?? 0, app).snapshot.screenshot ? {} : { snapshot: { screenshot: true } };
  } catch {
    return {};
  }
}

/** The reply's lines about the fresh snapshot besides the one naming it: only an attached screenshot's size. */
function head(snap: Snapshot, attached: boolean): string[] {
  const shot = snap.screenshot;
  return shot && attached
    ? [`screenshot ${shot.pixelWidth}x${shot.pixelHeight} px attached; x/y are in its pixels`]
    : [];
}

/** An action's result as the tool's answer. */
export function actionReply(
  result: ActionResult,
  o: {
    mode: ReplyMode;
    screenshots: ActionScreenshots;
    args: ReplyArgs;
    atPixels: boolean;
    /** The server's reply budget (0: none). */
    replyTokens?: number;
    /** The target was a locator: the snapshot it was found in, which the agent never read, is the diff's base. */
    located?: boolean;
  },
): CallToolResult {
  const budget = o.replyTokens ?? DEFAULT_REPLY_TOKENS;
  const mode = o.args.reply ?? o.mode;
  const reply = composeReply(result, {
    mode,
    words: MCP_WORDS,
    ...(budget > 0 ? { replyTokens: budget } : {}),
  });
  const fresh = result.snapshot;
  const shot = fresh?.screenshot;
  const attach = shot !== undefined && screenshotWanted(result, o.screenshots, o.args.screenshot, o.atPixels);
  const extra: string[] = [];
  // The diff's base is the snapshot the locator was found in, which the agent never read.
  if (o.located && result.target)
    extra.push(
      `the locator was found in snapshot ${result.target.snapshotId}, taken for it and not shown to you: changes are since it`,
    );
  if (fresh && !shot && o.args.screenshot === true)
    extra.push("no screenshot came with the fresh snapshot (see the notes); call get_app_state for one");
  const text = replyText({ ...reply, notes: [...reply.notes, ...extra] }, fresh ? head(fresh, attach) : []);
  const structured: ActionData = {
    action: result.action,
    ...(result.target ? { target: `@${result.target.snapshotId}:e${result.target.index}` } : {}),
    delivery: result.delivery,
    retry: result.retry,
    channel: result.channel,
    ...(result.route ? { route: result.route } : {}),
    notes: reply.notes,
    ...(fresh ? { snapshotId: fresh.id } : {}),
    ...(shot
      ? { screenshot: { pixelWidth: shot.pixelWidth, pixelHeight: shot.pixelHeight, attached: attach } }
      : {}),
    ...reply.data,
  };
  const content: CallToolResult["content"] = [{ type: "text", text }];
  // The same budget as the text's: none for the full reply, or a server started with --reply-tokens 0.
  const bounded = mode === "full" || budget <= 0 ? structured : withinBudget(structured, budget);
  if (attach && shot)
    content.push({ type: "image", data: Buffer.from(shot.data).toString("base64"), mimeType: "image/png" });
  return { content, structuredContent: bounded };
}
