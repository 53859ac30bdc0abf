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
 * Limits (lib/doors/mcp/limits.ts): a request line over MCP_REQUEST_LIMIT_BYTES is
 * refused by the transport (lib/doors/mcp/stdio.ts) with a JSON-RPC error and the
 * server reads on; a type_text text or set_value value over MCP_TEXT_LIMIT
 * characters is refused here with INVALID_ARGUMENT, before anything is sent.
 */
import type { Readable, Writable } from "node:stream";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { jsonLines, launchableData, launchableText } from "./doors/lists.js";
import { type CallTracker, callsEnded, traceDoor } from "./doors/mcp/calls.js";
import {
  actionApp,
  elementFields,
  pointFields,
  pointSchema,
  rawField,
  secretField,
  windowField,
} from "./doors/mcp/fields.js";
import { registerFindTool } from "./doors/mcp/find.js";
import { INSTRUCTIONS } from "./doors/mcp/instructions.js";
import { registerLaunchApp } from "./doors/mcp/launch.js";
import { REQUEST_LIMIT_BYTES, TEXT_LIMIT } from "./doors/mcp/limits.js";
import { MCP_DEFAULTS, MCP_USAGE, type McpSettings, parseMcpArgs } from "./doors/mcp/options.js";
import type { McpToolOptions } from "./doors/mcp/public-types.js";
import {
  actionOutputSchema,
  actionReply,
  type ReplyArgs,
  replyFields,
  screenshotForReply,
} from "./doors/mcp/reply.js";
import { LineStdioTransport } from "./doors/mcp/stdio.js";
import {
  ACTS,
  appArgument,
  appOf,
  bare,
  DEADLINE_MS,
  guarded,
  nonEmpty,
  READS,
  showing,
  wholeFrom,
} from "./doors/mcp/tools.js";
import { defaultTraceDir, registerTraceTools } from "./doors/mcp/trace-tools.js";
import { viewFields, viewOptionsOf } from "./doors/mcp/view.js";
import { registerListWindows } from "./doors/mcp/windows.js";
import { invalidArgument } from "./model/errors.js";
import { useDesktop } from "./observe/agent-desktop/use.js";
import { listApps } from "./observe/desktop.js";
import { withNoTreeFixes } from "./observe/linux-checks.js";
import type { Snapshot } from "./observe/snapshot.js";
import { packageVersion } from "./package-version.js";
import { quoted } from "./render/sanitize.js";
import { isLocatorTarget } from "./session/act/store.js";
import { listLaunchable } from "./session/launch/launch.js";
import {
  type ActionResult,
  type ConfirmRequest,
  createSession,
  type Session,
  type Target,
  waitConditionOf,
} from "./session/session.js";

export interface McpServerOptions extends McpToolOptions {
  /** Where requests come from. Default process.stdin. */
  stdin?: Readable;
  /** Where answers go. Default process.stdout (nothing else may write there). */
  stdout?: Writable;
  /**
   * Command-line arguments after `mcp` (e.g. ["--confirm-destructive"]), parsed by lib/doors/mcp/options.ts
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

/** `raw` belongs to points: given with an element it would mean nothing, so it is refused. */
function rawFor(raw: boolean | undefined, point: boolean, what: string): { raw?: boolean } {
  if (raw === undefined) return {};
  if (!point) throw invalidArgument(`${what}: raw applies to x/y points only, not to elements`);
  return { raw };
}

type ElementArgs = {
  element_index?: number | undefined;
  ref?: string | undefined;
  locator?: string | undefined;
};
type PointArgs = ElementArgs & { x?: number | undefined; y?: number | undefined };

/** The element an action names: a bare index, a ref or a locator (exactly one), or none. */
function targetOf(args: ElementArgs, what = "the element"): Target | undefined {
  const given = [args.element_index, args.ref, args.locator].filter((v) => v !== undefined).length;
  if (given > 1)
    throw invalidArgument(
      `${what}: give one of element_index, ref or locator, not ${given === 2 ? "both" : "all three"}`,
      "pass the ref alone when you have one (it names the snapshot you read), else the locator alone",
    );
  if (args.locator !== undefined) return { locator: args.locator };
  return args.ref ?? args.element_index;
}

function requiredTarget(args: ElementArgs, what = "the element"): Target {
  const t = targetOf(args, what);
  if (t === undefined)
    throw invalidArgument(
      `${what}: give element_index, ref or locator`,
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
    throw invalidArgument(
      `${what}: give an element (element_index, ref or locator) or a point (x, y), not both`,
    );
  if (target !== undefined) return { target };
  if (hasX) return { point: { x: args.x!, y: args.y! } };
  throw invalidArgument(
    `${what}: give element_index, ref, locator, or x and y`,
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
  traceDoor(server);
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
      const located = target !== undefined && isLocatorTarget(target);
      const reply = actionReply(result, { mode: replies, screenshots, args, atPixels, replyTokens, located });
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
        "Lists the running apps (name, pid) to pass to get_app_state. noTree: no accessibility tree (e.g. xterm): its snapshot is text read off its pixels; noTreeCause and fix say why (tell the user the fix).",
      inputSchema: bare(
        z
          .object({
            launchable: z
              .boolean()
              .optional()
              .describe("List what launch_app can start instead: id, tab, name a line."),
          })
          .strict(),
      ),
      outputSchema: bare(appsOutputSchema),
      annotations: { title: "List apps", ...READS },
    },
    (args, extra) =>
      guarded(false, async () => {
        if (args.launchable === true) {
          const entries = await listLaunchable({ deadlineMs: DEADLINE_MS, signal: extra.signal });
          return {
            content: [{ type: "text", text: launchableText(entries) || "nothing to launch was found" }],
            structuredContent: { launchable: entries.map(launchableData) },
          };
        }
        const listed = await listApps({ deadlineMs: DEADLINE_MS, signal: extra.signal });
        const apps = process.platform === "linux" ? withNoTreeFixes(listed) : listed;
        return {
          content: [{ type: "text", text: jsonLines(apps) }],
          structuredContent: { apps },
        };
      }),
  );

  server.registerTool(
    "get_app_state",
    {
      title: "Get app state",
      description:
        "Observes an app's window: its elements as numbered lines (the number is the element_index), headed by the snapshot id, and a screenshot. It becomes the app's latest snapshot; secure values print as •••. A big window: skeleton, depth or max_tokens, then root to open a line that ends \"(+N elements)\".",
      inputSchema: bare(
        z
          .object({
            app: appArgument,
            style: z.enum(["tree", "compact"]).optional().describe('"compact": shorter lines, same indices.'),
            text_limit: showing(z.union([wholeFrom(1), z.literal("max")]), {
              anyOf: undefined,
              type: ["integer", "string"],
            })
              .optional()
              .describe('Characters per text (default 500), or "max".'),
            max_tree_nodes: wholeFrom(1).optional().describe("Default 1200."),
            max_tree_depth: z.number().int().min(1).max(512).optional().describe("Default 64."),
            screenshot: z.boolean().optional().describe("Default true."),
            marks: z.boolean().optional().describe("Number the elements on the screenshot."),
            window: windowField,
            ocr: showing(z.union([z.literal("auto"), z.boolean()]), {
              anyOf: undefined,
              enum: ["auto", true, false],
            })
              .optional()
              .describe(
                'Text read off the pixels as "text (ocr)" lines; "auto" (default): where the tree is thin.',
              ),
            ...viewFields,
          })
          .strict(),
      ),
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
        "Waits, instead of sleeping, until a text, an element or a window shows (or, with gone, is gone) or the app is idle; then returns its state like get_app_state. TIMEOUT: an error with the state last seen.",
      inputSchema: bare(
        z
          .object({
            app: appArgument,
            text: nonEmpty().optional().describe("In an element's name or value (any case)."),
            role: nonEmpty().optional().describe('Either style\'s words, e.g. "push button" or "button".'),
            name: nonEmpty().optional().describe("Part of an element's name."),
            gone: z.boolean().optional().describe("Wait for it to go."),
            idle: z.boolean().optional().describe("No change event for 150 ms."),
            window: windowField,
            timeout_ms: z.number().int().min(1).max(120_000).optional().describe("Default 10000."),
            screenshot: z.boolean().optional().describe("Default true."),
          })
          .strict(),
      ),
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
      description:
        "Clicks an element (its own press action, else the mouse at its centre) or a point x/y. Replies with the changes.",
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            ...elementFields,
            ...pointFields,
            click_count: z.number().int().min(1).max(2).optional().describe("2: a double click."),
            mouse_button: z.enum(["left", "right"]).optional(),
            raw: rawField,
            ...replyFields,
          })
          .strict(),
      ),
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
      description:
        'Performs one of the actions printed after "Secondary Actions:" on an element\'s line (e.g. "Raise", "expand or contract"). Replies with the changes.',
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            ...elementFields,
            action: nonEmpty().describe("Its name as printed (any case)."),
            ...replyFields,
          })
          .strict(),
      ),
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
      description:
        'Replaces the value of an element printed "settable" (a text field, slider, spin button); type_text adds to a text instead. Replies with the changes and the value read back.',
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            ...elementFields,
            value: z
              .union([z.string(), z.number()])
              .describe(`A number for sliders and spin buttons; a text of at most ${TEXT_LIMIT} characters.`),
            secret: secretField,
            ...replyFields,
          })
          .strict(),
      ),
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
          return session.setValue(requiredTarget(args), value, {
            ...opts(args.app, extra.signal),
            ...fresh,
            ...(args.secret === true ? { secret: true } : {}),
          });
        },
      ),
  );

  server.registerTool(
    "type_text",
    {
      title: "Type text",
      description:
        "Types text at the end of an element (focused first) or, without one, where the app's keyboard focus is. Replies with the changes.",
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            text: nonEmpty().describe(`At most ${TEXT_LIMIT} characters.`),
            secret: secretField,
            ...elementFields,
            ...replyFields,
          })
          .strict(),
      ),
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
            ...(args.secret === true ? { secret: true } : {}),
          });
        },
      ),
  );

  server.registerTool(
    "press_key",
    {
      title: "Press key",
      description:
        'Presses a key or combination where the app\'s focus is: "Return", "Escape", "Tab", "ctrl+a", "ctrl+shift+t", "Page_Down", "F5". Replies with the changes.',
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            key: nonEmpty().describe('Modifiers joined by "+".'),
            ...replyFields,
          })
          .strict(),
      ),
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
      description:
        "Scrolls an element (a list, scroll area, document) by pages, with its scroll actions or else the wheel over it, or the wheel at a point x/y. Replies with the changes.",
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            ...elementFields,
            ...pointFields,
            direction: z.enum(["up", "down", "left", "right"]),
            pages: z.number().int().min(1).max(50).optional().describe("Default 1."),
            raw: rawField,
            ...replyFields,
          })
          .strict(),
      ),
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
      description:
        "Drags with the left button from one place to another in an app: both ends elements or both points. Replies with the changes.",
      inputSchema: bare(
        z
          .object({
            app: actionApp,
            from: pointSchema,
            to: pointSchema,
            raw: rawField,
            ...replyFields,
          })
          .strict(),
      ),
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
  registerTraceTools(server, session, {
    dir: settings.traceDir ?? defaultTraceDir(),
    screenshots: settings.traceScreenshots ?? MCP_DEFAULTS.traceScreenshots,
  });

  return server;
}

/** The server's settings: the options' fields over the parsed command line (lib/doors/mcp/options.ts). */
export function mcpSettingsOf(options: McpServerOptions, parsed: McpSettings): McpSettings {
  return {
    confirmDestructive: options.confirmDestructive === true || parsed.confirmDestructive,
    actionScreenshots: options.actionScreenshots ?? parsed.actionScreenshots,
    replies: options.replies ?? parsed.replies,
    allowLaunchPaths: options.allowLaunchPaths === true || parsed.allowLaunchPaths,
    replyTokens: options.replyTokens ?? parsed.replyTokens,
    traceScreenshots: options.traceScreenshots ?? parsed.traceScreenshots,
    ...definedOf("trace", options.trace ?? parsed.trace),
    ...definedOf("traceDir", options.traceDir ?? parsed.traceDir),
  };
}

function definedOf<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [k in K]?: V });
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
 * `--http [HOST:]PORT` it serves MCP over HTTP instead (lib/doors/mcp/http.ts),
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
  // A client ends its server with SIGTERM once stdin's end is not enough (the SDK's waits 2 s):
  // close as when stdin ends, so a trace's last steps are written before the process goes.
  // Only when serving this process's own stdio: a host that passes its streams keeps its signals.
  const stop = () => void server.close();
  const own = stdout === process.stdout;
  if (own) {
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  }
  try {
    if (settings.trace !== undefined)
      await session.trace.start({ path: settings.trace, screenshots: settings.traceScreenshots });
    await server.connect(transport);
    await closed;
  } finally {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
    // The close aborted the calls in flight: let them end (and their steps be written) first.
    await callsEnded(server);
    await session.close().catch(() => undefined);
    restoreLog();
  }
}

/** `axsnap mcp --http`: serves until SIGINT or SIGTERM, then closes every session. */
async function runOverHttp(settings: McpSettings, parsed: ReturnType<typeof parseMcpArgs>): Promise<void> {
  // Loaded only here: the SDK's HTTP pieces (and hono's adapter) cost a stdio server nothing.
  const { startMcpHttpServer } = await import("./doors/mcp/http.js");
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
