/**
 * axsnap as an MCP server (stdio): the computer-use tool set (list_apps,
 * get_app_state, click, perform_secondary_action, set_value, type_text,
 * press_key, scroll, drag) over one Session that lives as long as the server.
 *
 * Every action answers with its reply (lib/doors/reply.ts, shared with the
 * CLI): the action line, notes, how the app settled, the surfaces it opened or
 * closed, and the diff of the fresh snapshot (or the whole of it when a surface
 * opened, or asked with reply: "full"); the screenshot only when asked
 * (screenshot: true, or --action-screenshots); the same as structured content.
 * A refused action is a tool result with `isError: true` carrying the
 * AxsnapError's code, message, hint, delivery and retry as JSON: never a
 * protocol error. Arguments are checked by zod schemas (the SDK answers a
 * call that fails them with an `isError` result naming the field); what a
 * schema cannot say (one target, not two) is checked here and answered as
 * INVALID_ARGUMENT.
 *
 * Destructive targets go through the session's confirm callback: refused by
 * default, allowed when the server was started with --confirm-destructive.
 *
 * Limits (lib/mcp/limits.ts): a request line over MCP_REQUEST_LIMIT_BYTES is
 * refused by the transport (lib/mcp/stdio.ts) with a JSON-RPC error and the
 * server reads on; a type_text text or set_value value over MCP_TEXT_LIMIT
 * characters is refused here with INVALID_ARGUMENT, before anything is sent.
 */
import { readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { useDesktop } from "./agent-desktop/use.js";
import { listApps } from "./desktop.js";
import { invalidArgument } from "./errors.js";
import { listLaunchable } from "./launch.js";
import { withNoTreeFixes } from "./linux-checks.js";
import type { CallTracker } from "./mcp/calls.js";
import { registerFindTool } from "./mcp/find.js";
import { registerLaunchApp } from "./mcp/launch.js";
import { REQUEST_LIMIT_BYTES, TEXT_LIMIT } from "./mcp/limits.js";
import { MCP_DEFAULTS, MCP_USAGE, type McpSettings, parseMcpArgs } from "./mcp/options.js";
import type { McpToolOptions } from "./mcp/public-types.js";
import {
  actionOutputSchema,
  actionReply,
  type ReplyArgs,
  replyFields,
  screenshotForReply,
} from "./mcp/reply.js";
import { LineStdioTransport } from "./mcp/stdio.js";
import { ACTS, appArgument, appOf, appSchema, DEADLINE_MS, guarded, READS } from "./mcp/tools.js";
import { viewFields, viewOptionsOf } from "./mcp/view.js";
import { registerListWindows } from "./mcp/windows.js";
import { quoted } from "./render/sanitize.js";
import {
  type ActionResult,
  type ConfirmRequest,
  createSession,
  type Session,
  type Target,
  waitConditionOf,
} from "./session.js";
import type { Snapshot } from "./snapshot.js";

export interface McpServerOptions extends McpToolOptions {
  /** Where requests come from. Default process.stdin. */
  stdin?: Readable;
  /** Where answers go. Default process.stdout (nothing else may write there). */
  stdout?: Writable;
  /**
   * Command-line arguments after `mcp` (e.g. ["--confirm-destructive"]), parsed by lib/mcp/options.ts
   * (unknown ones are refused); the fields above win over them.
   */
  argv?: readonly string[];
}

export { MCP_USAGE };

/** Bytes in one request line (its line end not counted); a longer one is refused with a JSON-RPC error. */
export const MCP_REQUEST_LIMIT_BYTES = REQUEST_LIMIT_BYTES;
/** Characters in type_text's text and set_value's value; a longer one is refused with INVALID_ARGUMENT. */
export const MCP_TEXT_LIMIT = TEXT_LIMIT;

/** Wheel steps per page when scrolling at a point (as the session does for an element without scroll actions). */
const WHEEL_STEPS_PER_PAGE = 5;

const ELEMENT_HELP =
  'element_index is the number at the start of a line in the latest get_app_state text of that app (the snapshot an action returns becomes the latest too). ref is "@<snapshot id>:e<N>" (e.g. "@s8f3k2p9:e12"), built from the snapshot id printed at the top of a snapshot: it is safer than a bare index because it names the observation you read, so if the UI changed since, the action is refused (STALE_REF, nothing sent) instead of reaching whatever now has that number. Pass one of them.';

const RESULT_HELP =
  'Returns a reply: first "<action> <ref>: <delivery> (<channel>), retry <retry>", notes, how the app settled ("settled: quiet after 152 ms"), the windows, menus and dialogs it opened or closed; then one line naming the fresh snapshot the session took, which is the app\'s latest now, and what follows of it. "snapshot <id>, changes since <old id>:" is followed by only the lines that changed (by default), each numbered as in the fresh snapshot: act on one by that element_index or "@<id>:e<N>"; "- N" lines are gone, numbered as in <old id>; lines not shown did not change and kept their numbers (unless the line says some got new numbers: reach those by their old refs); then a summary line. "snapshot <id>: the whole window …:" is followed by the whole snapshot (when a menu, popup or dialog opened, when it is shorter than its changes, or with reply: "full"); when that would be longer than the server\'s reply budget (about 500 tokens unless started with --reply-tokens) it says "shortened to the reply budget" and prints the fullest view that fits, indices kept: its last line says what was collapsed and how to open it (get_app_state with root), and reply: "full" prints all. No screenshot unless screenshot: true; x/y stay in the pixels of the last screenshot you received of the app. The same comes as structured content (snapshotId, changes with refs, settled, opened, closed, shows). delivery: "not_delivered" (nothing reached the app), "delivered_unverified" (sent; check the effect in the fresh snapshot), "delivered_verified" (sent and the new state read back) or "delivery_uncertain" (it may or may not have happened: look before repeating). retry: "safe" only when nothing was delivered; "unsafe" means do not repeat it blindly. channel: "semantic" (the element\'s own action or value) or "synthetic" (mouse or key events). notes: what happened on the way. A refusal is an error result with code, message, hint, delivery and retry: follow the hint.';

const SAFETY_HELP =
  "Targets whose name says delete, remove, send, sign out, log out, logout, erase or empty trash are refused with POLICY_DENIED unless the user started the server with --confirm-destructive; secure fields (passwords, PINs) are never typed into or set. When refused, ask the user to do it.";

const APP_HELP =
  "The app (name or pid) whose latest snapshot a bare element_index or x/y refers to; default the app observed last. Not needed with a ref.";

const INSTRUCTIONS = `axsnap shows one window of a desktop app as numbered text lines, one UI element a line, plus a screenshot, and acts on exactly the element printed on a line.
Start with list_apps (launch_app starts one that is not running; list_apps with launchable: true lists what it can start), then get_app_state for the app. find_elements returns only the lines that match a role, name, text or state, with refs, instead of the whole window; list_windows lists an app's windows, dialogs, menus and popups. Act by element_index (the number at the start of a line of the latest snapshot of that app) or, safer, by ref "@<snapshot id>:e<N>". x/y are pixels of the latest screenshot of that app.
Every action returns delivery/retry, how the app settled, what opened or closed, then "snapshot <id>, changes since <old id>:" and the lines that changed, numbered as in that fresh snapshot (now the latest; "@<id>:e<N>" refs are formed from its id; lines not shown did not change and kept their numbers), or "snapshot <id>: the whole window" (shortened to a reply budget when long, indices kept): read it before the next step. reply: "full" returns the whole window, screenshot: true its picture. Errors carry a code and a hint; follow the hint. ${SAFETY_HELP}`;

const elementFields = {
  element_index: z.number().int().min(0).optional().describe("Index printed at the start of a line."),
  ref: z.string().min(1).optional().describe('Ref "@<snapshot id>:e<N>", e.g. "@s8f3k2p9:e12".'),
};

const pixel = z.number().finite().describe("Screenshot pixels of the latest snapshot of the app.");
const rawPixels = z
  .boolean()
  .optional()
  .describe(
    "With x/y only. A point is refused (STALE_REF) when the element under it now is not the one the screenshot showed there (the window changed, or changed when the pointer arrived: it is checked again with the pointer there, before the press); raw: true sends the input to whatever is there now. The safety checks (destructive names, disabled controls) still run on it.",
  );

/** `raw` belongs to points: given with an element it would mean nothing, so it is refused. */
function rawFor(raw: boolean | undefined, point: boolean, what: string): { raw?: boolean } {
  if (raw === undefined) return {};
  if (!point) throw invalidArgument(`${what}: raw applies to x/y points only, not to elements`);
  return { raw };
}

const pointSchema = z
  .object({
    ...elementFields,
    x: pixel.optional(),
    y: pixel.optional(),
  })
  .strict();

type ElementArgs = { element_index?: number | undefined; ref?: string | undefined };
type PointArgs = ElementArgs & { x?: number | undefined; y?: number | undefined };

/** The element an action names: a ref or a bare index (exactly one), or none. */
function targetOf(args: ElementArgs, what = "the element"): Target | undefined {
  if (args.element_index !== undefined && args.ref !== undefined)
    throw invalidArgument(
      `${what}: give element_index or ref, not both`,
      "pass the ref alone when you have one; it names the snapshot you read",
    );
  return args.ref ?? args.element_index;
}

function requiredTarget(args: ElementArgs, what = "the element"): Target {
  const t = targetOf(args, what);
  if (t === undefined)
    throw invalidArgument(
      `${what}: give element_index or ref`,
      "take the index from the latest get_app_state text of the app, or its ref @<snapshot id>:e<index>",
    );
  return t;
}

/** Either an element or a point (x and y together), never both. */
function elementOrPoint(
  args: PointArgs,
  what: string,
): { target: Target } | { point: { x: number; y: number } } {
  const target = targetOf(args, what);
  const hasX = args.x !== undefined;
  const hasY = args.y !== undefined;
  if (hasX !== hasY) throw invalidArgument(`${what}: give both x and y, in screenshot pixels`);
  if (target !== undefined && hasX)
    throw invalidArgument(`${what}: give an element (element_index or ref) or a point (x, y), not both`);
  if (target !== undefined) return { target };
  if (hasX) return { point: { x: args.x!, y: args.y! } };
  throw invalidArgument(
    `${what}: give element_index, ref, or x and y`,
    "prefer an element from the latest get_app_state text; x/y are pixels of its screenshot",
  );
}

/** A text to type or set, within TEXT_LIMIT characters (code points, as typing counts them). */
function limitedText(tool: string, field: string, text: string, hint: string): string {
  // UTF-16 units are never fewer than code points: most texts need no count.
  if (text.length <= TEXT_LIMIT) return text;
  let chars = 0;
  for (const _ of text) chars++;
  if (chars <= TEXT_LIMIT) return text;
  throw invalidArgument(
    `${tool}: ${field} is ${chars} characters, over the limit of ${TEXT_LIMIT}; nothing was ${tool === "type_text" ? "typed" : "set"}`,
    hint,
  );
}

const TYPE_HINT = `type it in several type_text calls of at most ${TEXT_LIMIT} characters each, reading the fresh snapshot between them`;
const SET_HINT = `set at most ${TEXT_LIMIT} characters, then add the rest with type_text calls of at most ${TEXT_LIMIT} characters each`;

/** What an action given as an element or a point acts on, for the reply's screenshot. */
function onOf(at: Target | undefined | { target: Target } | { point: unknown }): {
  target?: Target;
  atPixels: boolean;
} {
  if (at === undefined) return { atPixels: false };
  if (typeof at === "object" && "point" in at) return { atPixels: true };
  const target = typeof at === "object" && "target" in at ? at.target : at;
  return { target: target as Target, atPixels: false };
}

/** list_apps' structured content: the apps, as its text block lists them. */
/** What runs (`apps`), or with `launchable: true` what can be started (`launchable`). */
const appsOutputSchema = z.object({
  apps: z
    .array(
      z.object({
        name: z.string(),
        pid: z.number(),
        bundleId: z.string().optional(),
        responsive: z.boolean().optional(),
        noTree: z.boolean().optional(),
        noTreeCause: z.string().optional(),
        fix: z.string().optional(),
      }),
    )
    .optional(),
  launchable: z
    .array(
      z.object({
        id: z.string(),
        name: z.string(),
        executable: z.string().optional(),
        path: z.string().optional(),
        hidden: z.boolean().optional(),
      }),
    )
    .optional(),
});

function ref(snapshotId: string, index: number): string {
  return `@${snapshotId}:e${index}`;
}

/**
 * The snapshot as a model reads it: its id and how refs look, the text, and
 * the screenshot. The app name is sanitised and quoted, as in the snapshot's
 * own header: a name cannot forge a header line.
 */
function snapshotContent(snap: Snapshot): CallToolResult["content"] {
  const head = [
    `Snapshot ${snap.id} of ${quoted(snap.app.name, 100)} (pid ${snap.app.pid}), style ${snap.style}${snap.complete ? "" : `, incomplete (cut by ${snap.cutBy.join(", ")})`}.`,
    `Refs look like @${snap.id}:e<N> for the element printed as N here (e.g. ${ref(snap.id, 0)} for line 0); a bare element_index means the latest snapshot of this app.`,
  ];
  const shot = snap.screenshot;
  head.push(
    shot
      ? `Screenshot: ${shot.pixelWidth}x${shot.pixelHeight} px (the image that follows); x/y arguments are in these pixels.${shot.marks ? " The numbered boxes on it are element indices, each on its element's frame." : ""}`
      : "No screenshot with this snapshot.",
  );
  const content: CallToolResult["content"] = [{ type: "text", text: `${head.join("\n")}\n\n${snap.text}` }];
  if (shot)
    content.push({ type: "image", data: Buffer.from(shot.data).toString("base64"), mimeType: "image/png" });
  return content;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

/** The MCP server over a session (not connected): the tool set of this module. */
export function createMcpServer(
  session: Session,
  settings: Partial<McpSettings> = {},
  tracker?: CallTracker,
): McpServer {
  const server = new McpServer(
    { name: "axsnap", version: packageVersion() },
    { instructions: INSTRUCTIONS, capabilities: { tools: {} } },
  );
  tracker?.watch(server);
  const replies = settings.replies ?? MCP_DEFAULTS.replies;
  const screenshots = settings.actionScreenshots ?? MCP_DEFAULTS.actionScreenshots;
  const replyTokens = settings.replyTokens ?? MCP_DEFAULTS.replyTokens;
  /**
   * Runs an action and answers with its reply. `on` is what it acts on (for the screenshot the
   * reply may need); `run` gets the fresh snapshot's options to add to the action's own.
   */
  const act = (
    args: ReplyArgs & { app?: string | number | undefined },
    on: () => { target?: Target; atPixels: boolean },
    run: (fresh: { snapshot?: { screenshot: boolean } }) => Promise<ActionResult>,
  ) =>
    guarded(true, async () => {
      const { target, atPixels } = on();
      // Captured only for a reply that may attach it. Auto decides after the action, on the
      // fresh tree, so in auto every fresh snapshot is captured and attached when the rule says.
      const wanted = args.screenshot ?? screenshots !== "never";
      const result = await run(screenshotForReply(session, target, appOf(args.app), wanted));
      const reply = actionReply(result, { mode: replies, screenshots, args, atPixels, replyTokens });
      if (reply.content.some((c) => c.type === "image")) noteShown(result.snapshot);
      return reply;
    });
  /**
   * The snapshot whose screenshot the client last received, by app pid: x/y
   * are in the pixels the agent saw, so a point action maps through it (and
   * its guards compare with what it showed there), not through a later
   * snapshot whose screenshot was never attached, or that has none.
   */
  const shown = new Map<number, Snapshot>();
  const noteShown = (snap: Snapshot | undefined) => {
    if (snap?.screenshot) shown.set(snap.app.pid, snap);
  };
  const seenFor = (app: string | number | undefined): { of?: Snapshot } => {
    try {
      const seen = shown.get(session.address(0, appOf(app)).snapshot.app.pid);
      return seen && !seen.released ? { of: seen } : {};
    } catch {
      // No snapshot of the app: the action says so itself.
      return {};
    }
  };
  const opts = (app: string | number | undefined, signal: AbortSignal) => {
    const a = appOf(app);
    // The agent read every reply: an action by an older ref answers with the changes since the latest.
    return { signal, changesFrom: "latest" as const, ...(a !== undefined ? { app: a } : {}) };
  };

  server.registerTool(
    "list_apps",
    {
      title: "List apps",
      description:
        "Lists the desktop apps the accessibility service knows, as JSON [{ name, pid, bundleId?, noTree?, noTreeCause?, fix? }]; noTree: true is an app with no accessibility tree (an X11 client such as xterm): get_app_state shows its window and the text read off its pixels, which you click by element_index or x/y. noTreeCause and fix: it has no tree because of how it was started (tell the user the fix: restarting it gives it one). Pass a name (or, when several share it, the pid) to get_app_state. With launchable: true, the apps that can be started instead, as JSON [{ id, name, executable, path, hidden }], for launch_app.",
      inputSchema: z
        .object({
          launchable: z
            .boolean()
            .optional()
            .describe("List what launch_app can start (desktop entries, app bundles) instead of what runs."),
        })
        .strict(),
      outputSchema: appsOutputSchema,
      annotations: { title: "List apps", ...READS },
    },
    (args, extra) =>
      guarded(false, async () => {
        if (args.launchable === true) {
          const entries = await listLaunchable({ deadlineMs: DEADLINE_MS, signal: extra.signal });
          return {
            content: [{ type: "text", text: JSON.stringify(entries, null, 2) }],
            structuredContent: { launchable: entries },
          };
        }
        const listed = await listApps({ deadlineMs: DEADLINE_MS, signal: extra.signal });
        const apps = process.platform === "linux" ? withNoTreeFixes(listed) : listed;
        return {
          content: [{ type: "text", text: JSON.stringify(apps, null, 2) }],
          structuredContent: { apps },
        };
      }),
  );

  server.registerTool(
    "get_app_state",
    {
      title: "Get app state",
      description: `Observes one window of an app: its UI elements as numbered text lines (one element a line, indented by depth; the number at the start of a line is its element_index), and a PNG screenshot of the window (actions reply with what changed, without a screenshot unless asked). The text starts with the snapshot id and says how refs look (@<snapshot id>:e<N>). Call it before acting on an app and whenever you are unsure what the window shows; it becomes the app's latest snapshot, which bare element indices refer to. Secure field values are shown as •••.`,
      inputSchema: z
        .object({
          app: appArgument,
          style: z
            .enum(["tree", "compact"])
            .optional()
            .describe('"tree" (default): full lines; "compact": a shorter action view, same indices.'),
          text_limit: z
            .union([z.number().int().min(1), z.literal("max")])
            .optional()
            .describe('Cut each text at this many characters (default 500), or "max".'),
          max_tree_nodes: z
            .number()
            .int()
            .min(1)
            .optional()
            .describe("Print at most this many elements (default 1200)."),
          max_tree_depth: z
            .number()
            .int()
            .min(1)
            .max(512)
            .optional()
            .describe("Walk at most this deep (default 64)."),
          screenshot: z.boolean().optional().describe("Attach a screenshot (default true)."),
          marks: z
            .boolean()
            .optional()
            .describe(
              "Draw each element's index on its frame in the screenshot, as a numbered box (default false); the screenshots of actions on this snapshot (when attached) are marked too.",
            ),
          window: z
            .string()
            .min(1)
            .optional()
            .describe(
              "Observe the app's window, dialog, menu or popup with this title (or part of it) instead of the one the user faces.",
            ),
          ocr: z
            .union([z.literal("auto"), z.boolean()])
            .optional()
            .describe(
              'Read text off the window\'s pixels into the snapshot as "text (ocr)" lines you can click: "auto" (default) only where the tree is thin (a window whose tree names almost nothing, a canvas, a terminal), true always, false never.',
            ),
          ...viewFields,
        })
        .strict(),
      annotations: { title: "Get app state", ...READS },
    },
    (args, extra) =>
      guarded(false, async () => {
        const snap = await session.snapshot({
          app: appOf(args.app)!,
          screenshot: args.screenshot === false ? false : args.marks === true ? { marks: true } : true,
          deadlineMs: DEADLINE_MS,
          signal: extra.signal,
          ...(args.style !== undefined ? { style: args.style } : {}),
          ...(args.text_limit !== undefined ? { textLimit: args.text_limit } : {}),
          ...(args.max_tree_nodes !== undefined ? { maxNodes: args.max_tree_nodes } : {}),
          ...(args.max_tree_depth !== undefined ? { maxDepth: args.max_tree_depth } : {}),
          ...(args.window !== undefined ? { window: { title: args.window } } : {}),
          ...(args.ocr !== undefined ? { ocr: args.ocr } : {}),
          ...viewOptionsOf(args),
        });
        noteShown(snap);
        return { content: snapshotContent(snap) };
      }),
  );

  server.registerTool(
    "wait_for",
    {
      title: "Wait for",
      description:
        "Waits until something happens in an app, instead of sleeping: text appears (or is gone), an element with a role and/or name appears (or is gone), or the app goes idle (no change events for a moment). Returns the app's state once it holds, like get_app_state; on timeout an error (TIMEOUT) with the state as last seen. Use it after an action that starts something slow (a download, a dialog opening, a page loading).",
      inputSchema: z
        .object({
          app: appSchema.describe("The app: its name or its pid."),
          text: z
            .string()
            .min(1)
            .optional()
            .describe("Some element's name or value contains this (case-insensitive)."),
          role: z.string().min(1).optional().describe('An element with this role text, e.g. "push button".'),
          name: z.string().min(1).optional().describe("An element whose name contains this."),
          gone: z.boolean().optional().describe("Wait until the text or element is no longer shown."),
          idle: z.boolean().optional().describe("Wait until the app sends no change event for 150 ms."),
          window: z
            .string()
            .min(1)
            .optional()
            .describe(
              "A window, dialog, menu or popup whose title contains this opens (or, with gone, closes).",
            ),
          timeout_ms: z
            .number()
            .int()
            .min(1)
            .max(120_000)
            .optional()
            .describe("How long to wait (default 10000)."),
          screenshot: z.boolean().optional().describe("Attach a screenshot (default true)."),
        })
        .strict(),
      annotations: { title: "Wait for", ...READS },
    },
    (args, extra) =>
      guarded(false, async () => {
        const condition = waitConditionOf(args);
        const met = await session.waitFor(appOf(args.app)!, condition, {
          timeoutMs: args.timeout_ms ?? 10_000,
          signal: extra.signal,
          snapshot: { screenshot: args.screenshot ?? true },
        });
        const content = snapshotContent(met.snapshot);
        return {
          content: [
            {
              type: "text" as const,
              text: `met after ${met.ms} ms (${met.rounds} observations, woken by ${met.via})`,
            },
            ...content,
          ],
        };
      }),
  );

  server.registerTool(
    "click",
    {
      title: "Click",
      description: `Clicks an element (its own press action where it has one, else a mouse click at its centre) or a point (x, y in pixels of the latest screenshot of the app). ${ELEMENT_HELP} ${RESULT_HELP} ${SAFETY_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          ...elementFields,
          x: pixel.optional(),
          y: pixel.optional(),
          click_count: z.number().int().min(1).max(2).optional().describe("1 (default) or 2 (double click)."),
          mouse_button: z.enum(["left", "right"]).optional().describe('"left" (default) or "right".'),
          raw: rawPixels,
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Click", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => onOf(elementOrPoint(args, "click")),
        (fresh) => {
          const at = elementOrPoint(args, "click");
          const o = {
            ...opts(args.app, extra.signal),
            ...fresh,
            ...rawFor(args.raw, "point" in at, "click"),
            ...("point" in at ? seenFor(args.app) : {}),
            button: args.mouse_button ?? "left",
            count: (args.click_count ?? 1) as 1 | 2,
          };
          return "target" in at ? session.click(at.target, o) : session.clickAt(at.point.x, at.point.y, o);
        },
      ),
  );

  server.registerTool(
    "perform_secondary_action",
    {
      title: "Perform secondary action",
      description: `Performs one of an element's named actions, as listed after "Secondary Actions:" on its line (e.g. "Raise", "Scroll Down", "expand or contract"); any case, raw or printed name. ${ELEMENT_HELP} ${RESULT_HELP} ${SAFETY_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          ...elementFields,
          action: z.string().min(1).describe("The action's name as printed on the element's line."),
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Perform secondary action", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => ({ target: requiredTarget(args), atPixels: false }),
        (fresh) =>
          session.performAction(requiredTarget(args), args.action, {
            ...opts(args.app, extra.signal),
            ...fresh,
          }),
      ),
  );

  server.registerTool(
    "set_value",
    {
      title: "Set value",
      description: `Sets the value of a settable element (printed "(settable, …)": a text field, a slider, a spin button), replacing what it holds; the result is delivered_verified when the new value was read back. To add to a text, use type_text. ${ELEMENT_HELP} ${RESULT_HELP} ${SAFETY_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          ...elementFields,
          value: z
            .union([z.string(), z.number()])
            .describe(`The new value (a number for sliders); a text of at most ${TEXT_LIMIT} characters.`),
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Set value", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => ({ target: requiredTarget(args), atPixels: false }),
        (fresh) => {
          const value =
            typeof args.value === "string"
              ? limitedText("set_value", "value", args.value, SET_HINT)
              : args.value;
          return session.setValue(requiredTarget(args), value, { ...opts(args.app, extra.signal), ...fresh });
        },
      ),
  );

  server.registerTool(
    "type_text",
    {
      title: "Type text",
      description: `Types text. With an element, it is focused first and the text is inserted at its end; without one, the text goes to whatever has keyboard focus in the app (refused when nothing is focused). Refused with POLICY_DENIED, nothing sent, when the target or the focused element is a secure field. ${ELEMENT_HELP} ${RESULT_HELP} ${SAFETY_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          text: z
            .string()
            .min(1)
            .describe(
              `The text to type: at most ${TEXT_LIMIT} characters (type a longer one in several calls).`,
            ),
          ...elementFields,
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Type text", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => onOf(targetOf(args)),
        (fresh) => {
          const text = limitedText("type_text", "text", args.text, TYPE_HINT);
          const target = targetOf(args);
          return session.typeText(text, {
            ...opts(args.app, extra.signal),
            ...fresh,
            ...(target !== undefined ? { target } : {}),
          });
        },
      ),
  );

  server.registerTool(
    "press_key",
    {
      title: "Press key",
      description: `Presses a key or a combination in the app that has focus there, e.g. "Return", "Escape", "Tab", "ctrl+a", "ctrl+shift+t", "Page_Down", "F5". ${RESULT_HELP} ${SAFETY_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          key: z.string().min(1).describe('The key or combination, modifiers joined by "+".'),
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Press key", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => ({ atPixels: false }),
        (fresh) => session.pressKey(args.key, { ...opts(args.app, extra.signal), ...fresh }),
      ),
  );

  server.registerTool(
    "scroll",
    {
      title: "Scroll",
      description: `Scrolls an element (a list, a scroll area, a document) by pages, with its own scroll actions where it has them, else mouse wheel steps over it; or scrolls with the wheel at a point (x, y in screenshot pixels). ${ELEMENT_HELP} ${RESULT_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          ...elementFields,
          x: pixel.optional(),
          y: pixel.optional(),
          direction: z.enum(["up", "down", "left", "right"]),
          pages: z.number().int().min(1).max(50).optional().describe("How many pages (default 1)."),
          raw: rawPixels,
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Scroll", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => onOf(elementOrPoint(args, "scroll")),
        (fresh) => {
          const at = elementOrPoint(args, "scroll");
          const pages = args.pages ?? 1;
          const o = {
            ...opts(args.app, extra.signal),
            ...fresh,
            ...rawFor(args.raw, "point" in at, "scroll"),
            ...("point" in at ? seenFor(args.app) : {}),
          };
          if ("target" in at) return session.scroll(at.target, args.direction, pages, o);
          const steps = Math.min(100, pages * WHEEL_STEPS_PER_PAGE);
          const dx = args.direction === "left" ? -steps : args.direction === "right" ? steps : 0;
          const dy = args.direction === "up" ? -steps : args.direction === "down" ? steps : 0;
          return session.scrollAt(at.point.x, at.point.y, { dx, dy }, o);
        },
      ),
  );

  server.registerTool(
    "drag",
    {
      title: "Drag",
      description: `Drags with the left mouse button from one place to another in the same app: both ends elements ({ element_index } or { ref }) or both points ({ x, y } in pixels of the latest screenshot of the app). ${ELEMENT_HELP} ${RESULT_HELP} ${SAFETY_HELP}`,
      inputSchema: z
        .object({
          app: appSchema.optional().describe(APP_HELP),
          from: pointSchema.describe("Where the drag starts: { element_index }, { ref } or { x, y }."),
          to: pointSchema.describe("Where it ends: { element_index }, { ref } or { x, y }."),
          raw: rawPixels,
          ...replyFields,
        })
        .strict(),
      outputSchema: actionOutputSchema,
      annotations: { title: "Drag", ...ACTS },
    },
    (args, extra) =>
      act(
        args,
        () => onOf(elementOrPoint(args.from, "drag from")),
        (fresh) => {
          const from = elementOrPoint(args.from, "drag from");
          const to = elementOrPoint(args.to, "drag to");
          const o = {
            ...opts(args.app, extra.signal),
            ...fresh,
            ...rawFor(args.raw, "point" in from, "drag"),
            ...("point" in from ? seenFor(args.app) : {}),
          };
          if ("target" in from && "target" in to) return session.drag(from.target, to.target, o);
          if ("point" in from && "point" in to) return session.dragAt(from.point, to.point, o);
          throw invalidArgument(
            "drag: give both ends as elements or both as points",
            "use the element indices of the latest snapshot for both ends, or pixels of its screenshot for both",
          );
        },
      ),
  );

  registerFindTool(server, session);
  registerListWindows(server);
  registerLaunchApp(server, settings.allowLaunchPaths ?? MCP_DEFAULTS.allowLaunchPaths);

  return server;
}

/** The server's settings: the options' fields over the parsed command line (lib/mcp/options.ts). */
export function mcpSettingsOf(options: McpServerOptions, parsed: McpSettings): McpSettings {
  return {
    confirmDestructive: options.confirmDestructive === true || parsed.confirmDestructive,
    actionScreenshots: options.actionScreenshots ?? parsed.actionScreenshots,
    replies: options.replies ?? parsed.replies,
    allowLaunchPaths: options.allowLaunchPaths === true || parsed.allowLaunchPaths,
    replyTokens: options.replyTokens ?? parsed.replyTokens,
  };
}

/**
 * One MCP server and the axsnap session it serves (its latest snapshots, its refs), as both
 * transports serve them: stdio composes one for its life, HTTP one per MCP session. The
 * caller connects the server and closes the session when its client is gone.
 */
export function composeMcpServer(
  settings: McpSettings,
  tracker?: CallTracker,
): { server: McpServer; session: Session } {
  const session = createSession({
    deadlineMs: DEADLINE_MS,
    // A diff reply leaves the unchanged lines' refs in the snapshots read before: keep
    // enough of them for an agent that acts on a line it read several replies ago.
    keepSnapshots: 20,
    ...(settings.confirmDestructive
      ? {
          confirm: (r: ConfirmRequest) => {
            process.stderr.write(
              `axsnap mcp: ${r.action} on ${JSON.stringify(r.name)} in ${r.app} allowed by --confirm-destructive (${r.reason})\n`,
            );
            return true;
          },
        }
      : {}),
  });
  return { server: createMcpServer(session, settings, tracker), session };
}

/**
 * Runs the MCP server on stdio until the client closes its end (stdin ends)
 * or the transport closes; then releases the session's snapshots. With
 * `--http [HOST:]PORT` it serves MCP over HTTP instead (lib/mcp/http.ts),
 * until SIGINT or SIGTERM.
 */
export async function runMcpServer(options: McpServerOptions = {}): Promise<void> {
  const parsed = parseMcpArgs(options.argv ?? []);
  const settings = mcpSettingsOf(options, parsed);
  const desktop = options.desktop ?? parsed.desktop;
  // Before any session and its backend: the backend reads DISPLAY and the bus when it connects.
  if (desktop !== undefined) useDesktop(desktop);
  if (parsed.http !== undefined) return runOverHttp(settings, parsed);
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  // stdout carries the protocol: anything logged there would corrupt it.
  const restoreLog = stdout === process.stdout ? divertConsoleLog() : () => undefined;
  const { server, session } = composeMcpServer(settings);
  const transport = new LineStdioTransport(stdin, stdout);
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
  });
  try {
    await server.connect(transport);
    await closed;
  } finally {
    await session.close().catch(() => undefined);
    restoreLog();
  }
}

/** `axsnap mcp --http`: serves until SIGINT or SIGTERM, then closes every session. */
async function runOverHttp(settings: McpSettings, parsed: ReturnType<typeof parseMcpArgs>): Promise<void> {
  // Loaded only here: the SDK's HTTP pieces (and hono's adapter) cost a stdio server nothing.
  const { startMcpHttpServer } = await import("./mcp/http.js");
  const http = await startMcpHttpServer(
    {
      ...parsed.http!,
      allowRemote: parsed.allowRemote,
      allowedHosts: parsed.allowedHosts,
      allowedOrigins: parsed.allowedOrigins,
      settings,
    },
    composeMcpServer,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await http.close();
}

function divertConsoleLog(): () => void {
  const { log, info, debug } = console;
  console.log = console.info = console.debug = (...args: unknown[]) => console.error(...args);
  return () => {
    console.log = log;
    console.info = info;
    console.debug = debug;
  };
}
