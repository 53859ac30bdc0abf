/**
 * Sessions: the recent snapshots of each app, the time of the last
 * observation, the confirm callback and the safety policy; and the actions,
 * each reaching exactly the element that was printed, or refusing and saying
 * why (refs-and-actions.md).
 *
 * Resolution is three-valued: the held handle still shows the same identity →
 * use it; else, if the record was proven unique, observe again and count
 * matches (one → use it, none → STALE_REF, many → AMBIGUOUS_TARGET, an
 * incomplete observation → IDENTITY_UNPROVEN); else STALE_REF. Right before
 * acting, the identity is read once more (confirm landed).
 */

import { CallContext, callBudget } from "./call.js";
import {
  type LiveObservation,
  liveObservation,
  type ObservationOptions,
  snapshot as observe,
  type SnapshotOptions,
} from "./desktop.js";
import { diffSnapshots, type SnapshotChanges } from "./diff.js";
import { AxsnapError, type Delivery, invalidArgument, type Retry } from "./errors.js";
import type { RawNode } from "./model.js";
import type { NativeBackend, NativePointerEvent } from "./native.js";
import { activating, nonInserting, textActivates } from "./policy/keys.js";
import { destructiveWordIn, normalizeForMatch } from "./policy/normalize.js";
import type { ElementRecord, IdentityPredicate } from "./records.js";
import { prettyActionName } from "./render/actions.js";
import { normaliseRenderOptions, type RenderOptions } from "./render/index.js";
import { identityOf } from "./render/plan.js";
import { isSecure } from "./render/roles.js";
import { cut } from "./render/sanitize.js";
import type { Snapshot } from "./snapshot.js";

export interface ConfirmRequest {
  action: string;
  app: string;
  index: number;
  name: string;
  reason: string;
}

export interface SessionOptions {
  /** Asked before a destructive action; without it such actions are refused. */
  confirm?: (request: ConfirmRequest) => boolean | Promise<boolean>;
  /** Coordinate and synthetic input need an observation of the app at most this old. Default 60 s. */
  staleAfterMs?: number;
  /** Words that make a target destructive (matched case-insensitively in its name). */
  destructiveWords?: string[];
  /** Snapshots kept per app. Default 5; older ones are released. */
  keepSnapshots?: number;
  /** Deadline for each native step. Default 5 s. */
  deadlineMs?: number;
  /** A backend other than the desktop's (tests: the fake backend). @internal */
  backend?: NativeBackend;
}

export const DEFAULT_DESTRUCTIVE_WORDS = [
  "delete",
  "remove",
  "send",
  "sign out",
  "log out",
  "logout",
  "erase",
  "empty trash",
  "删除",
  "移除",
  "发送",
  "退出登录",
  "注销",
  "清空",
];

/** A target: a bare index (latest snapshot of the app), a ref "@s…:e12", or a record of a held snapshot. */
export type Target = number | string | ElementRecord;

export interface ActionResult {
  action: string;
  delivery: Delivery;
  retry: Retry;
  channel: "semantic" | "synthetic";
  notes: string[];
  target?: { snapshotId: string; index: number };
  /** A fresh snapshot of the app after the action, unless turned off. */
  snapshot?: Snapshot;
  /** With a fresh snapshot: what changed from the snapshot acted on to it (diff.ts), keyed by live handle. */
  changes?: SnapshotChanges;
  /**
   * With a fresh snapshot: what an agent reads. `changes.text` when it is shorter than the fresh
   * snapshot's text, else that text; the full snapshot is always `snapshot.text`.
   */
  text?: string;
}

export interface ActOptions {
  /** Which app a bare index refers to; default the app of the session's latest snapshot. */
  app?: string | number;
  /**
   * The fresh snapshot after acting: true (default) takes it with the options of the snapshot acted
   * on (style, screenshot, limits); an object overrides some of them; false takes none.
   */
  snapshot?: boolean | ObservationOptions;
  /** This call's deadline in ms (1-600000); default the session's deadlineMs. The call settles by it. */
  deadlineMs?: number;
  /** Aborts the call: it settles with ABORTED; its delivery says whether anything had been sent. */
  signal?: AbortSignal;
}

/** Which snapshot's screenshot the pixels belong to: `of`, else the latest of `app`. */
export interface PixelOptions extends ActOptions {
  of?: Snapshot;
}

interface Resolved {
  /** The snapshot the agent addressed (never a transient re-observation). */
  snapshot: Snapshot;
  record: ElementRecord;
  live: LiveObservation;
  handle: number;
  how: "live" | "reobserved";
  /** The element as last read live (states decide "disabled", "secure now"). */
  node: RawNode;
  notes: string[];
}

/** What resolve() found: the element as the agent addressed it, and how it was reached. */
export interface ResolvedTarget {
  snapshotId: string;
  index: number;
  role: string;
  name?: string;
  /** "live": the held handle still shows the identity; "reobserved": found again by its identity. */
  how: "live" | "reobserved";
  notes: string[];
}

/** Errors of a live focus read that say more than "could not read": they pass through unchanged. */
const PASS_THROUGH = new Set([
  "ABORTED",
  "TIMEOUT",
  "APP_NOT_FOUND",
  "WINDOW_NOT_FOUND",
  "ACCESSIBILITY_UNAVAILABLE",
]);

/** How long to wait for web content to show the focus that flushes its pending changes. */
const WEB_FLUSH_MS = 400;
/** Roles of a web document's root: below one, the tree is a browser's mirror of the page. */
const WEB_ROOTS = new Set(["document web", "AXWebArea"]);

/** Whether the element with this handle lies inside web content in the observed tree. */
function inWebContent(root: RawNode, handle: number): boolean {
  const stack: { node: RawNode; web: boolean }[] = [{ node: root, web: false }];
  while (stack.length > 0) {
    const { node, web } = stack.pop()!;
    const here = web || WEB_ROOTS.has(node.role);
    if (node.handle === handle) return here && !WEB_ROOTS.has(node.role);
    if (node.children) for (const c of node.children) stack.push({ node: c, web: here });
  }
  return false;
}

/** Notes are for an agent to read: one is cut at the text limit, like a printed field. */
const NOTE_LIMIT = 500;
/** Characters per synthetic typing job: each checks the live focus first and lets other calls run between. */
const TYPE_CHUNK = 32;

const REF = /^@(s[a-z0-9]{7}):e(\d{1,9})$/;
const PRESS_ACTIONS = [
  "AXPress",
  "AXConfirm",
  "AXOpen",
  "click",
  "press",
  "activate",
  "toggle",
  "jump",
  "doDefault",
];
const MENU_ACTIONS = ["AXShowMenu", "showContextMenu", "show menu", "popup"];
/**
 * A refusal that delivered nothing: only then may another way of doing the
 * same thing follow (selecting a row, then pressing; pressing, then clicking).
 */
function refusedUndelivered(e: unknown): e is AxsnapError {
  return (
    e instanceof AxsnapError &&
    (e.code === "ACTION_NOT_SUPPORTED" || e.code === "ACTION_FAILED") &&
    e.delivery === "not_delivered"
  );
}

const ROW_ROLES = new Set(["AXRow", "table row", "list item", "tree item", "table cell"]);
/** Text entries: a click puts the caret in them (focus), never their "activate" action, which submits. */
const ENTRY_ROLES = new Set([
  "AXTextField",
  "AXTextArea",
  "text",
  "entry",
  "password text",
  "spin button",
  "terminal",
]);
/** Roles where "go to the end" keys move a caret rather than doing something else. */
const TEXT_ROLES = new Set([
  "AXTextField",
  "AXTextArea",
  "AXComboBox",
  "text",
  "entry",
  "password text",
  "terminal",
  "paragraph",
  "document text",
  "combo box",
  "spin button",
]);

function sameIdentity(a: IdentityPredicate, b: IdentityPredicate): boolean {
  return a.role === b.role && a.subrole === b.subrole && a.identifier === b.identifier && a.name === b.name;
}

function countMatches(root: RawNode, id: IdentityPredicate, out: RawNode[]): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (sameIdentity(identityOf(node), id)) out.push(node);
    if (node.children) for (const c of node.children) stack.push(c);
  }
}

function findAction(actions: readonly string[], wanted: readonly string[]): string | undefined {
  for (const w of wanted) {
    const hit = actions.find((a) => a.toLowerCase() === w.toLowerCase());
    if (hit !== undefined) return hit;
  }
  return undefined;
}

export class Session {
  private readonly byApp = new Map<string, Snapshot[]>();
  private readonly byId = new Map<string, Snapshot>();
  private readonly owner = new WeakMap<ElementRecord, Snapshot>();
  private readonly lastObserved = new Map<string, number>();
  private latest: Snapshot | undefined;
  private readonly opts: Required<Omit<SessionOptions, "confirm" | "backend">> &
    Pick<SessionOptions, "confirm" | "backend">;

  constructor(options: SessionOptions = {}) {
    if (options === null || typeof options !== "object")
      throw invalidArgument("session options must be an object");
    if (options.confirm !== undefined && typeof options.confirm !== "function")
      throw invalidArgument("confirm must be a function");
    const words = options.destructiveWords ?? DEFAULT_DESTRUCTIVE_WORDS;
    // A word that is only invisible characters or blanks would match every name.
    if (!Array.isArray(words) || words.some((w) => typeof w !== "string" || normalizeForMatch(w) === ""))
      throw invalidArgument("destructiveWords must be an array of non-empty strings");
    this.opts = {
      staleAfterMs: positive("staleAfterMs", options.staleAfterMs, 60_000),
      keepSnapshots: positive("keepSnapshots", options.keepSnapshots, 5, true),
      deadlineMs: positive("deadlineMs", options.deadlineMs, 5000),
      // Kept as given: the confirm request names the word as configured; matching normalises both sides.
      destructiveWords: words.slice(),
      ...(options.confirm ? { confirm: options.confirm } : {}),
      ...(options.backend ? { backend: options.backend } : {}),
    };
  }

  /** Observes an app and keeps the snapshot for later refs; it becomes the app's latest. */
  async snapshot(options: SnapshotOptions): Promise<Snapshot> {
    const snap = await observe(options, this.opts.backend);
    this.keep(snap);
    return snap;
  }

  private appKey(snap: Snapshot): string {
    return String(snap.app.pid);
  }

  private keep(snap: Snapshot): void {
    const key = this.appKey(snap);
    const list = this.byApp.get(key) ?? [];
    list.push(snap);
    while (list.length > this.opts.keepSnapshots) {
      const old = list.shift()!;
      this.byId.delete(old.id);
      void old.release();
    }
    this.byApp.set(key, list);
    this.byId.set(snap.id, snap);
    for (const rec of snap.records) this.owner.set(rec, snap);
    this.lastObserved.set(key, Date.now());
    this.latest = snap;
  }

  /**
   * The latest snapshot of an app. A name must name one app: when the
   * session holds snapshots of several running instances with that name, a
   * bare index could mean either, so it is refused (AMBIGUOUS_APP) with their pids.
   */
  private latestOf(app: string | number | undefined): Snapshot {
    if (app === undefined) {
      if (!this.latest) throw new AxsnapError("SNAPSHOT_NOT_FOUND", "the session has no snapshot yet");
      return this.latest;
    }
    const matches: Snapshot[] = [];
    for (const list of this.byApp.values()) {
      const snap = list.at(-1);
      if (snap && (snap.app.pid === app || snap.app.name.toLowerCase() === String(app).toLowerCase()))
        matches.push(snap);
    }
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_APP",
        `the session observed ${matches.length} apps named ${String(app)}: ${matches.map((s) => `${s.app.name} (pid ${s.app.pid})`).join(", ")}`,
        { hint: `pass the pid of the one you mean, e.g. { app: ${matches[0]!.app.pid} }` },
      );
    if (matches[0]) return matches[0];
    throw new AxsnapError("SNAPSHOT_NOT_FOUND", `the session has no snapshot of ${String(app)}`);
  }

  /** The snapshot and record a target names, without touching the app. */
  address(target: Target, app?: string | number): { snapshot: Snapshot; record: ElementRecord } {
    let snap: Snapshot;
    let index: number;
    if (typeof target === "number") {
      if (!Number.isInteger(target) || target < 0 || target > 1e9)
        throw invalidArgument(
          `an index must be a whole number >= 0, got ${target}`,
          "use an index printed in the snapshot text",
        );
      snap = this.latestOf(app);
      index = target;
    } else if (typeof target === "string") {
      const t = target.trim();
      if (/^\d{1,9}$/.test(t)) return this.address(Number(t), app);
      if (/^@e\d+$/.test(t))
        throw invalidArgument(
          `the ref ${t} does not say which snapshot it came from`,
          'use the full ref "@<snapshot id>:e<index>" printed for the snapshot, or a bare index',
        );
      const m = REF.exec(t);
      if (!m)
        throw invalidArgument(
          `not a target: ${JSON.stringify(target)}`,
          'use an index (12) or a ref ("@s8f3k2p9:e12")',
        );
      const found = this.byId.get(m[1]!);
      if (!found) throw new AxsnapError("SNAPSHOT_NOT_FOUND", `the session no longer holds snapshot ${m[1]}`);
      snap = found;
      index = Number(m[2]);
    } else if (
      target !== null &&
      typeof target === "object" &&
      typeof (target as ElementRecord).index === "number"
    ) {
      const owner = this.owner.get(target as ElementRecord);
      if (!owner || !this.byId.has(owner.id))
        throw new AxsnapError(
          "SNAPSHOT_NOT_FOUND",
          "that record belongs to a snapshot this session does not hold",
        );
      snap = owner;
      index = (target as ElementRecord).index;
    } else {
      throw invalidArgument(
        `not a target: ${String(target)}`,
        'use an index (12) or a ref ("@s8f3k2p9:e12")',
      );
    }
    if (snap.released) throw new AxsnapError("SNAPSHOT_NOT_FOUND", `snapshot ${snap.id} was released`);
    const record = snap.records[index];
    if (!record)
      throw new AxsnapError(
        "ELEMENT_NOT_FOUND",
        `snapshot ${snap.id} printed no element ${index} (0-${snap.records.length - 1})`,
      );
    return { snapshot: snap, record };
  }

  /** A call's budget: the session's deadline unless the call names its own, and its signal. */
  private context(options: { deadlineMs?: number; signal?: AbortSignal } | undefined): CallContext {
    const b = callBudget(options, this.opts.deadlineMs);
    const ctx = new CallContext(b.deadlineMs, b.signal);
    ctx.check();
    return ctx;
  }

  /** Runs one action under its call context; the context's cleanups run however it ends. */
  private async act<T>(
    options: { deadlineMs?: number; signal?: AbortSignal } | undefined,
    body: (ctx: CallContext) => Promise<T>,
  ): Promise<T> {
    checkSnapshotOption((options as ActOptions | undefined)?.snapshot);
    const ctx = this.context(options);
    try {
      return await body(ctx);
    } finally {
      await ctx.close();
    }
  }

  /**
   * Reads what a handle shows now, asked of the app (never a cache): the
   * node, "gone" when the element no longer exists, or "unknown" when it
   * could not be read (the app did not answer). Unknown is never folded into
   * gone or into a match.
   */
  private async nodeNow(
    live: LiveObservation,
    handle: number,
    ctx: CallContext,
  ): Promise<RawNode | "gone" | "unknown"> {
    try {
      const read = await ctx.step(
        "read",
        () => live.backend.readElement(handle, 4, ctx.remaining()),
        (late) => releaseLater(live, late.handles),
      );
      releaseLater(live, read.handles);
      return read.node;
    } catch (e) {
      if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "ACCESSIBILITY_UNAVAILABLE"))
        throw e;
      const code = e instanceof AxsnapError ? e.code : "";
      return code === "STALE_REF" || code === "APP_NOT_FOUND" ? "gone" : "unknown";
    }
  }

  /**
   * Checks a target without acting: proves the live element is the one
   * observed (three-valued), or throws the error an action would.
   */
  async resolve(target: Target, options: ActOptions = {}): Promise<ResolvedTarget> {
    return this.act(options, async (ctx) => {
      const r = await this.resolveIn(target, options, ctx);
      const name = r.record.identity.name;
      return {
        snapshotId: r.snapshot.id,
        index: r.record.index,
        role: r.record.role,
        ...(name === undefined ? {} : { name }),
        how: r.how,
        notes: [...r.notes],
      };
    });
  }

  /**
   * Resolution inside an action. A re-observation made here is transient: it
   * is released when the call ends and never becomes the app's latest
   * snapshot, so a refused action leaves the agent's bare indices meaning
   * what the snapshot it read printed (refs-and-actions.md, "A refusal does
   * not move latest").
   */
  private async resolveIn(target: Target, options: ActOptions, ctx: CallContext): Promise<Resolved> {
    const { snapshot: snap, record } = this.address(target, options.app);
    const live = liveObservation(snap);
    if (!live || record.handle === undefined)
      throw new AxsnapError(
        "STALE_REF",
        "that snapshot has no live elements (it was rendered from a tree, not observed)",
      );
    const now = await this.nodeNow(live, record.handle, ctx);
    if (typeof now === "object" && sameIdentity(identityOf(now), record.identity))
      return { snapshot: snap, record, live, handle: record.handle, how: "live", node: now, notes: [] };
    if (now === "unknown")
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${record.index} could not be read (the app did not answer); nothing was sent`,
        { hint: "wait a moment and take a new snapshot" },
      );
    if (!record.proof.unique)
      throw new AxsnapError(
        "STALE_REF",
        `element ${record.index} changed and was not proven unique when observed (${record.proof.reason}); nothing was sent`,
        { hint: "take a new snapshot and pick the element again" },
      );
    const fresh = await ctx.step(
      "read",
      () => observe({ app: snap.app.pid, screenshot: false, deadlineMs: ctx.remaining() }, this.opts.backend),
      (late) => late.release(),
    );
    ctx.defer(() => void fresh.release().catch(() => undefined));
    const freshLive = liveObservation(fresh)!;
    if (!fresh.complete)
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${record.index} changed, and the new observation was incomplete (${fresh.cutBy.join(", ")}), so it cannot be found again with certainty; nothing was sent`,
      );
    const matches: RawNode[] = [];
    countMatches(freshLive.raw.root, record.identity, matches);
    if (freshLive.raw.menuBar) countMatches(freshLive.raw.menuBar, record.identity, matches);
    if (matches.length === 0)
      throw new AxsnapError("STALE_REF", `element ${record.index} is gone from the window; nothing was sent`);
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_TARGET",
        `${matches.length} elements now match element ${record.index}; nothing was sent`,
      );
    const match = matches[0]!;
    if (match.handle === undefined)
      throw new AxsnapError("IDENTITY_UNPROVEN", "the matching element has no live handle; nothing was sent");
    const printed = fresh.records.find((r) => r.handle === match.handle);
    // The agent's own snapshot stays the reference: the result names the element as it addressed it.
    const moved: ElementRecord = printed ? withFrameOf(record, printed) : record;
    const notes = [
      printed
        ? `element ${record.index} moved; found again by its identity (element ${printed.index} of a new observation)`
        : `element ${record.index} moved; found again by its identity`,
    ];
    return {
      snapshot: snap,
      record: moved,
      live: freshLive,
      handle: match.handle,
      how: "reobserved",
      node: match,
      notes,
    };
  }

  /** Right before acting: the identity once more, live; a change means nothing is sent. */
  private async confirmLanded(r: Resolved, ctx: CallContext, readNow?: RawNode): Promise<void> {
    // A node read live a moment ago (the web flush's last read) is that read: one round trip less
    // between the check and the action.
    const now = readNow ?? (await this.nodeNow(r.live, r.handle, ctx));
    if (now === "unknown")
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${r.record.index} could not be read just before acting; nothing was sent`,
      );
    if (now === "gone" || !sameIdentity(identityOf(now), r.record.identity))
      throw new AxsnapError(
        "STALE_REF",
        `element ${r.record.index} changed just before acting; nothing was sent`,
      );
    r.node = now;
  }

  /**
   * Web content's accessibility tree lags the page: Chromium sends most
   * changes to the browser in batches up to ~150 ms late, so a live read can
   * show a button's old name well after the page renamed it (measured here:
   * clicks that met a label changed 46-143 ms earlier). A focus change is
   * sent at once, with every change pending before it: so the element is
   * focused first, and once the live tree shows it focused, the identity read
   * that follows is no older than that moment. Only for elements inside web
   * content; elsewhere the tree is the app's own and current.
   */
  private async flushWebTree(r: Resolved, ctx: CallContext, notes: string[]): Promise<RawNode | undefined> {
    if (!inWebContent(r.live.raw.root, r.handle)) return undefined;
    try {
      await ctx.step("read", () => r.live.backend.focus(r.handle, ctx.remaining()));
    } catch (e) {
      if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "TIMEOUT")) throw e;
      notes.push("the web element could not be focused before acting, so its live name may lag the page");
      return undefined;
    }
    const until = performance.now() + Math.min(WEB_FLUSH_MS, ctx.remaining() / 2);
    for (;;) {
      const now = await this.nodeNow(r.live, r.handle, ctx);
      // Not the element any more (gone, renamed): the identity check that follows says so.
      if (typeof now !== "object" || now.states?.focused === true)
        return typeof now === "object" ? now : undefined;
      if (performance.now() >= until) break;
      await new Promise((done) => setTimeout(done, 1));
    }
    notes.push("the page did not show the element focused in time, so its live name may lag the page");
    return undefined;
  }

  /** A disabled element is not acted on: the app would ignore it, and "delivered" would be a lie. */
  private guardEnabled(r: Resolved): void {
    if (r.node.states?.enabled === false)
      throw new AxsnapError(
        "NOT_ENABLED",
        `element ${r.record.index} (${r.record.roleText}) is disabled; nothing was sent`,
      );
  }

  private async guardDestructive(
    action: string,
    r: { snapshot: Snapshot; record: ElementRecord },
  ): Promise<void> {
    // Both sides are normalised (NFKC, case, invisible characters, look-alikes):
    // "Del\u00ADete", "Dеlete" with a Cyrillic е and "ＤＥＬＥＴＥ" all read as "Delete".
    const word = destructiveWordIn(
      `${r.record.title ?? ""} ${r.record.description ?? ""}`,
      this.opts.destructiveWords,
    );
    if (word === undefined) return;
    const request: ConfirmRequest = {
      action,
      app: r.snapshot.app.name,
      index: r.record.index,
      name: (r.record.title ?? r.record.description ?? "").trim(),
      reason: `the target's name contains "${word}"`,
    };
    if (!this.opts.confirm)
      throw new AxsnapError(
        "POLICY_DENIED",
        `"${request.name}" looks destructive (${request.reason}); nothing was sent`,
        {
          hint: "ask the user to do it, or create the session with a confirm callback",
        },
      );
    if (!(await this.opts.confirm(request)))
      throw new AxsnapError(
        "POLICY_DENIED",
        `the confirm callback declined "${request.name}"; nothing was sent`,
      );
  }

  private guardFresh(snap: Snapshot): void {
    const at = this.lastObserved.get(this.appKey(snap)) ?? snap.takenAt;
    const age = Date.now() - at;
    if (age > this.opts.staleAfterMs)
      throw new AxsnapError(
        "STALE_OBSERVATION",
        `the last observation of ${snap.app.name} is ${Math.round(age / 1000)} s old`,
      );
  }

  /**
   * The element that has keyboard focus in the app now, asked live: key
   * events go there, whatever the snapshot said. null = nothing has focus.
   * Focus that cannot be read refuses the keys: they could land in a
   * password field.
   */
  private async liveFocus(snap: Snapshot, live: LiveObservation, ctx: CallContext): Promise<RawNode | null> {
    let read: Awaited<ReturnType<NativeBackend["focusedElement"]>>;
    try {
      read = await ctx.step(
        "read",
        () => live.backend.focusedElement(snap.app.pid, 1, ctx.remaining()),
        (late) => late && releaseLater(live, late.handles),
      );
    } catch (e) {
      // The app or its window being gone is its own answer: nothing can be sent there at all.
      if (e instanceof AxsnapError && PASS_THROUGH.has(e.code)) throw e;
      throw new AxsnapError(
        "POLICY_DENIED",
        `where key events would go could not be read (${(e as Error).message}); nothing was sent`,
        { hint: "take a new snapshot, click the field you mean, then type again", cause: e },
      );
    }
    if (read === null) return null;
    releaseLater(live, read.handles);
    return read.node;
  }

  /**
   * The key guards, on the live focus: no characters into a secure field,
   * and keys that could press a destructive control go through confirm.
   * Returns the focus (null when nothing has it).
   */
  private async guardKeys(
    action: string,
    snap: Snapshot,
    live: LiveObservation,
    ctx: CallContext,
    keys: { text: string } | { combo: string },
    expected?: Resolved,
  ): Promise<RawNode | null> {
    const focus = await this.liveFocus(snap, live, ctx);
    const inserts = "text" in keys || !nonInserting(keys.combo);
    // Keys typed with no focused element go wherever the app puts focus next (its default widget,
    // perhaps a password field): nothing is typed blind.
    if (focus === null) {
      if (!inserts) return null;
      throw new AxsnapError("POLICY_DENIED", "no element of the app has keyboard focus; nothing was typed", {
        hint: "click the field you mean first (take a new snapshot to find it), then type",
      });
    }
    // Typing into a target: every chunk must still go to it, not to where focus moved meanwhile.
    if (expected && !(await this.focusIsOn(expected, focus, ctx)))
      throw new AxsnapError(
        "ACTION_FAILED",
        `keyboard focus left element ${expected.record.index} (${expected.record.roleText}) while typing; the rest was not typed`,
        { hint: "take a new snapshot, then type the rest into the field you mean" },
      );
    if (inserts && isSecure(focus))
      throw new AxsnapError(
        "POLICY_DENIED",
        `the focused element is a secure text field (${describe(focus)}); nothing was sent`,
        { hint: "ask the user to enter it" },
      );
    const field = TEXT_ROLES.has(focus.role);
    const presses = "text" in keys ? textActivates(keys.text, field) : activating(keys.combo) || !field;
    if (presses) {
      // The live name decides (the element may have been renamed since the snapshot); the printed
      // index only names it in the confirm request.
      const printed = snap.records.find((r) => r.handle !== undefined && r.handle === focus.handle);
      const record = {
        index: printed?.index ?? -1,
        ...(focus.title === undefined ? {} : { title: focus.title }),
        ...(focus.description === undefined ? {} : { description: focus.description }),
      } as ElementRecord;
      await this.guardDestructive(action, { snapshot: snap, record });
    }
    return focus;
  }

  /** Whether the live focus is the resolved element, or inside it (a combo box's entry). */
  private async focusIsOn(r: Resolved, focus: RawNode, ctx: CallContext): Promise<boolean> {
    if (focus.handle === undefined) return false;
    if (focus.handle === r.handle) return true;
    const inside = await ctx.step(
      "read",
      () => r.live.backend.readElement(r.handle, 3, ctx.remaining()),
      (late) => releaseLater(r.live, late.handles),
    );
    releaseLater(r.live, inside.handles);
    return inside.handles.includes(focus.handle);
  }

  private async finish(
    action: string,
    snap: Snapshot,
    record: ElementRecord | undefined,
    channel: "semantic" | "synthetic",
    delivery: Delivery,
    notes: string[],
    options: ActOptions,
    ctx: CallContext,
  ): Promise<ActionResult> {
    const result: ActionResult = {
      action,
      delivery,
      retry: delivery === "not_delivered" ? "safe" : "unsafe",
      channel,
      notes: notes.map((n) => cut(n, NOTE_LIMIT)),
      ...(record ? { target: { snapshotId: snap.id, index: record.index } } : {}),
    };
    if (options.snapshot !== false) {
      try {
        // The fresh snapshot is the agent's new view: it becomes the app's latest.
        // Inside the call's own deadline: the call settles by it, fresh snapshot included.
        const kept = liveObservation(snap)?.options ?? {};
        const asked =
          typeof options.snapshot === "object" && options.snapshot !== null ? options.snapshot : {};
        result.snapshot = await this.snapshot({
          ...kept,
          ...asked,
          app: snap.app.pid,
          deadlineMs: ctx.remaining(),
          ...(ctx.signal ? { signal: ctx.signal } : {}),
        });
      } catch (e) {
        result.notes.push(cut(`no fresh snapshot after the action: ${(e as Error).message}`, NOTE_LIMIT));
      }
      if (result.snapshot) {
        result.changes = diffSnapshots(snap, result.snapshot);
        const full = result.snapshot.text;
        result.text = result.changes.text.length < full.length ? result.changes.text : full;
      }
      const changed = result.snapshot && record ? changedAround(record, result.snapshot) : undefined;
      if (changed) result.notes.push(cut(changed, NOTE_LIMIT));
    }
    return result;
  }

  /** Clicks an element: its press action where it has one, else a synthetic click at its click point. */
  async click(
    target: Target,
    options: ActOptions & { button?: "left" | "right"; count?: 1 | 2 } = {},
  ): Promise<ActionResult> {
    const button = options.button ?? "left";
    const count = options.count ?? 1;
    if (button !== "left" && button !== "right") throw invalidArgument('button must be "left" or "right"');
    if (count !== 1 && count !== 2) throw invalidArgument("count must be 1 or 2");
    return this.act(options, async (ctx) => {
      const addressed = this.address(target, options.app);
      await this.guardDestructive("click", addressed);
      const r = await this.resolveIn(target, options, ctx);
      const notes = [...r.notes];
      await this.confirmLanded(r, ctx, await this.flushWebTree(r, ctx, notes));
      this.guardEnabled(r);
      // A text field is clicked to put the caret in it: its only action ("activate") would submit its form.
      if (button === "left" && count === 1 && ENTRY_ROLES.has(r.record.role)) {
        try {
          await ctx.step("semantic", () => r.live.backend.focus(r.handle, ctx.remaining()));
          if (await this.focusLanded(r, ctx))
            return this.finish(
              "click",
              r.snapshot,
              r.record,
              "semantic",
              "delivered_verified",
              notes,
              options,
              ctx,
            );
          notes.push("the field did not take focus; clicked at its point instead");
        } catch (e) {
          if (!refusedUndelivered(e)) throw e;
          notes.push(`the field could not be focused (${e.message}); clicked at its point instead`);
        }
        return this.pointerAt(r, { kind: "click", button: 1, count: 1 }, notes, options, "click", ctx);
      }
      const semantic =
        count === 1
          ? findAction(r.record.actions, button === "left" ? PRESS_ACTIONS : MENU_ACTIONS)
          : undefined;
      // A row is clicked by selecting it in its list; a row that cannot be selected falls through to press.
      if (button === "left" && count === 1 && ROW_ROLES.has(r.record.role)) {
        try {
          const uncertain = await this.semanticCall(ctx, () =>
            r.live.backend.select(r.handle, ctx.remaining()),
          );
          return this.finishSemantic("click", r, notes, uncertain, options, ctx);
        } catch (e) {
          if (!refusedUndelivered(e)) throw e;
          notes.push(`the row could not be selected in its list (${e.message})`);
        }
      }
      if (semantic !== undefined) {
        try {
          const uncertain = await this.semanticCall(ctx, () =>
            r.live.backend.doAction(r.handle, semantic, ctx.remaining()),
          );
          return this.finishSemantic("click", r, notes, uncertain, options, ctx);
        } catch (e) {
          if (!refusedUndelivered(e)) throw e;
          notes.push(`the element refused ${semantic} (${e.message}); clicked by coordinates instead`);
        }
      } else if (count === 1) {
        notes.push("the element has no press action; clicked by coordinates");
      }
      return this.pointerAt(
        r,
        { kind: "click", button: button === "left" ? 1 : 3, count },
        notes,
        options,
        "click",
        ctx,
      );
    });
  }

  /**
   * Whether keyboard focus is now on the resolved element (or inside it: a
   * combo box's entry), asked live.
   */
  private async focusLanded(r: Resolved, ctx: CallContext): Promise<boolean> {
    let focus: RawNode | null;
    try {
      focus = await this.liveFocus(r.snapshot, r.live, ctx);
    } catch (e) {
      if (e instanceof AxsnapError && e.code === "POLICY_DENIED") return false;
      throw e;
    }
    return focus !== null && this.focusIsOn(r, focus, ctx);
  }

  /**
   * Runs a semantic call. An app can answer with an error after it acted (an
   * AXPress that opens a modal answers when the modal returns), or not answer
   * in time after the request left; both are "delivery_uncertain", and must
   * never lead to a second, synthetic attempt: the note says what happened.
   */
  private async semanticCall(ctx: CallContext, call: () => Promise<void>): Promise<string | undefined> {
    try {
      await ctx.step("semantic", call);
      return undefined;
    } catch (e) {
      if (e instanceof AxsnapError && e.code !== "ABORTED" && e.delivery === "delivery_uncertain")
        return `${e.message}; it may have happened, so it was not tried again`;
      throw e;
    }
  }

  private finishSemantic(
    action: string,
    r: Resolved,
    notes: string[],
    uncertain: string | undefined,
    options: ActOptions,
    ctx: CallContext,
  ): Promise<ActionResult> {
    if (uncertain !== undefined)
      return this.finish(
        action,
        r.snapshot,
        r.record,
        "semantic",
        "delivery_uncertain",
        [...notes, uncertain],
        options,
        ctx,
      );
    return this.finish(action, r.snapshot, r.record, "semantic", "delivered_unverified", notes, options, ctx);
  }

  private async pointerAt(
    r: Resolved,
    event: Omit<NativePointerEvent, "x" | "y">,
    notes: string[],
    options: ActOptions,
    action: string,
    ctx: CallContext,
  ): Promise<ActionResult> {
    this.guardFresh(r.snapshot);
    const p = r.record.clickPoint;
    if (!p) throw new AxsnapError("ACTION_NOT_SUPPORTED", `element ${r.record.index} has no frame to click`);
    const point = this.clamp(r.live, p.x, p.y, notes);
    await ctx.step("input", () =>
      r.live.backend.pointer(r.live.window, { ...event, x: point.x, y: point.y }, ctx.remaining()),
    );
    return this.finish(
      action,
      r.snapshot,
      r.record,
      "synthetic",
      "delivered_unverified",
      notes,
      options,
      ctx,
    );
  }

  private clamp(live: LiveObservation, x: number, y: number, notes: string[]): { x: number; y: number } {
    const f = live.window.frame;
    const cx = Math.min(Math.max(x, f.x), f.x + f.w - 1);
    const cy = Math.min(Math.max(y, f.y), f.y + f.h - 1);
    if (cx !== x || cy !== y)
      notes.push(
        `the point (${Math.round(x)}, ${Math.round(y)}) is outside the window; used (${Math.round(cx)}, ${Math.round(cy)})`,
      );
    return { x: cx, y: cy };
  }

  /** Sets an element's value; refuses secure fields and elements whose value cannot be set. */
  async setValue(target: Target, value: string | number, options: ActOptions = {}): Promise<ActionResult> {
    if (typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value)))
      throw invalidArgument("value must be a string or a finite number");
    return this.act(options, async (ctx) => {
      const addressed = this.address(target, options.app);
      if (addressed.record.secure)
        throw new AxsnapError(
          "POLICY_DENIED",
          "setting a secure text field is not allowed; nothing was sent",
          {
            hint: "ask the user to enter it",
          },
        );
      if (!addressed.record.settable)
        throw new AxsnapError(
          "NOT_SETTABLE",
          `element ${addressed.record.index} (${addressed.record.roleText}) cannot be set`,
        );
      const r = await this.resolveIn(target, options, ctx);
      await this.confirmLanded(r, ctx);
      this.guardEnabled(r);
      if (isSecure(r.node))
        throw new AxsnapError("POLICY_DENIED", "the field is secure now; nothing was sent", {
          hint: "ask the user to enter it",
        });
      const uncertain = await this.semanticCall(ctx, () =>
        typeof value === "number"
          ? r.live.backend.setNumber(r.handle, value, ctx.remaining())
          : r.live.backend.setText(r.handle, value, ctx.remaining()),
      );
      // An uncertain answer is settled by the read-back below, when it can be.
      const notes = uncertain === undefined ? [...r.notes] : [...r.notes, uncertain];
      let delivery: Delivery = uncertain === undefined ? "delivered_unverified" : "delivery_uncertain";
      const back = await this.readBack(r, ctx);
      if (typeof back === "object" && (back.value === value || String(back.value) === String(value))) {
        delivery = "delivered_verified";
        // The value is there: the app's error answer did not matter.
        if (uncertain !== undefined) notes.splice(notes.indexOf(uncertain), 1);
      } else if (typeof back === "object")
        notes.push(`the value read back is ${JSON.stringify(back.value ?? null)}`);
      else notes.push(`the value could not be read back: ${back}`);
      return this.finish("setValue", r.snapshot, r.record, "semantic", delivery, notes, options, ctx);
    });
  }

  /** The element's own node after a write, live; a string says why it could not be read. */
  private async readBack(r: Resolved, ctx: CallContext): Promise<RawNode | string> {
    try {
      const read = await ctx.step(
        "read",
        () => r.live.backend.readElement(r.handle, 0, ctx.remaining()),
        (late) => releaseLater(r.live, late.handles),
      );
      releaseLater(r.live, read.handles);
      return read.node;
    } catch (e) {
      if (e instanceof AxsnapError && e.code === "ABORTED") throw e;
      return (e as Error).message;
    }
  }

  /** Runs an element's named action, by raw ("AXScrollDownByPage") or pretty ("Scroll Down") name. */
  async performAction(target: Target, name: string, options: ActOptions = {}): Promise<ActionResult> {
    if (typeof name !== "string" || name.trim() === "")
      throw invalidArgument("the action name must be a non-empty string");
    return this.act(options, async (ctx) => {
      const addressed = this.address(target, options.app);
      const wanted = name.trim().toLowerCase();
      const raw = addressed.record.actions.find(
        (a) => a.toLowerCase() === wanted || prettyActionName(a).toLowerCase() === wanted,
      );
      if (raw === undefined)
        throw new AxsnapError(
          "ACTION_NOT_SUPPORTED",
          `element ${addressed.record.index} has no action "${name}"`,
          {
            hint: `its actions: ${addressed.record.actions.map(prettyActionName).join(", ") || "none"}`,
          },
        );
      await this.guardDestructive("performAction", addressed);
      // The action's own name can be the destructive part ("Remove" on a row named "Inbox").
      const pretty = prettyActionName(raw);
      await this.guardDestructive("performAction", {
        snapshot: addressed.snapshot,
        record: { ...addressed.record, title: pretty, description: raw },
      });
      const r = await this.resolveIn(target, options, ctx);
      await this.confirmLanded(r, ctx, await this.flushWebTree(r, ctx, r.notes));
      this.guardEnabled(r);
      const uncertain = await this.semanticCall(ctx, () =>
        r.live.backend.doAction(r.handle, raw, ctx.remaining()),
      );
      return this.finishSemantic("performAction", r, [...r.notes], uncertain, options, ctx);
    });
  }

  /**
   * Presses a key combination in the app's window ("ctrl+shift+t"). The keys
   * go where focus is, so the live focus is checked first: a combo that can
   * insert text is refused in a secure field, and one that can press a
   * destructive control goes through confirm.
   */
  async pressKey(combo: string, options: ActOptions = {}): Promise<ActionResult> {
    if (typeof combo !== "string" || combo.trim() === "")
      throw invalidArgument("the key must be a non-empty string");
    return this.act(options, async (ctx) => {
      const snap = this.latestOf(options.app);
      this.guardFresh(snap);
      const live = liveObservation(snap);
      if (!live) throw new AxsnapError("STALE_REF", "that snapshot was not observed live");
      await this.guardKeys("pressKey", snap, live, ctx, { combo: combo.trim() });
      await ctx.step("input", () => live.backend.keys(live.window, combo.trim(), ctx.remaining()));
      return this.finish("pressKey", snap, undefined, "synthetic", "delivered_unverified", [], options, ctx);
    });
  }

  /**
   * Types text. With a target that is an editable text field, the text is
   * inserted at the end of its content (semantic; what is there is never
   * rewritten). Otherwise the target (if any) is focused, focus is verified
   * live to be on it, and the text goes in as synthetic key events, in
   * chunks that each check the live focus and the deadline.
   */
  async typeText(text: string, options: ActOptions & { target?: Target } = {}): Promise<ActionResult> {
    if (typeof text !== "string" || text.length === 0)
      throw invalidArgument("text must be a non-empty string");
    return this.act(options, async (ctx) => {
      if (options.target === undefined) {
        const snap = this.latestOf(options.app);
        const live = liveObservation(snap);
        if (!live) throw new AxsnapError("STALE_REF", "that snapshot was not observed live");
        this.guardFresh(snap);
        const notes: string[] = [];
        await this.typeChunks(snap, live, text, notes, ctx);
        return this.finish(
          "typeText",
          snap,
          undefined,
          "synthetic",
          "delivered_unverified",
          notes,
          options,
          ctx,
        );
      }
      const addressed = this.address(options.target, options.app);
      if (addressed.record.secure)
        throw new AxsnapError(
          "POLICY_DENIED",
          "typing into a secure text field is not allowed; nothing was sent",
          {
            hint: "ask the user to enter it",
          },
        );
      const r = await this.resolveIn(options.target, options, ctx);
      await this.confirmLanded(r, ctx);
      this.guardEnabled(r);
      if (isSecure(r.node))
        throw new AxsnapError("POLICY_DENIED", "the field is secure now; nothing was sent", {
          hint: "ask the user to enter it",
        });
      const notes = [...r.notes];
      if (r.record.settable && TEXT_ROLES.has(r.record.role)) {
        if (textActivates(text, true)) await this.guardDestructive("typeText", r);
        try {
          const uncertain = await this.semanticCall(ctx, () =>
            r.live.backend.insertText(r.handle, text, ctx.remaining()),
          );
          const back = await this.readBack(r, ctx);
          const verified =
            uncertain === undefined && typeof back === "object" && String(back.value ?? "").endsWith(text);
          if (verified)
            return this.finish(
              "typeText",
              r.snapshot,
              r.record,
              "semantic",
              "delivered_verified",
              notes,
              options,
              ctx,
            );
          return this.finishSemantic("typeText", r, notes, uncertain, options, ctx);
        } catch (e) {
          if (
            !refusedUndelivered(e) &&
            !(e instanceof AxsnapError && e.code === "NOT_SETTABLE" && e.delivery === "not_delivered")
          )
            throw e;
          notes.push(`the field cannot insert text (${(e as Error).message}); typed with key events instead`);
        }
      }
      this.guardFresh(r.snapshot);
      try {
        await ctx.step("semantic", () => r.live.backend.focus(r.handle, ctx.remaining()));
      } catch (e) {
        if (!refusedUndelivered(e)) throw e;
      }
      if (!(await this.focusLanded(r, ctx)))
        throw new AxsnapError(
          "ACTION_FAILED",
          `element ${r.record.index} (${r.record.roleText}) did not take keyboard focus; nothing was typed`,
          {
            hint: "click the field you mean first, take a new snapshot, then type",
            delivery: "not_delivered",
          },
        );
      // Typing continues the field's text, as the semantic path does: the cursor goes to the end first
      // (cmd+Down on macOS, where End only scrolls). Only in a focused text element: elsewhere the
      // same keys mean something else (cmd+Down opens the selection in Finder).
      if (TEXT_ROLES.has(r.record.role)) {
        const toEnd = r.live.raw.platform === "macos" ? "cmd+down" : "ctrl+End";
        try {
          await ctx.step("input", () => r.live.backend.keys(r.live.window, toEnd, ctx.remaining()));
        } catch (e) {
          // Only a refusal that sent nothing lets typing go on (at the caret, wherever it is).
          if (!(e instanceof AxsnapError) || e.delivery !== "not_delivered" || PASS_THROUGH.has(e.code))
            throw e;
          notes.push(`could not move the caret to the end (${e.message}); typed at the caret`);
        }
      }
      await this.typeChunks(r.snapshot, r.live, text, notes, ctx, r);
      return this.finish(
        "typeText",
        r.snapshot,
        r.record,
        "synthetic",
        "delivered_unverified",
        notes,
        options,
        ctx,
      );
    });
  }

  /**
   * Synthetic typing in chunks. Before each chunk the live focus is checked
   * (focus may move into a password field mid-way); each chunk is its own
   * native job, so a long text does not hold the backend's queue (a
   * concurrent snapshot runs between chunks). A cut run says how much went in.
   */
  private async typeChunks(
    snap: Snapshot,
    live: LiveObservation,
    text: string,
    notes: string[],
    ctx: CallContext,
    target?: Resolved,
  ): Promise<void> {
    const chars = Array.from(text);
    let typed = 0;
    try {
      for (let i = 0; i < chars.length; i += TYPE_CHUNK) {
        const chunk = chars.slice(i, i + TYPE_CHUNK).join("");
        await this.guardKeys("typeText", snap, live, ctx, { text: chunk }, target);
        try {
          const out = await ctx.step("input", () =>
            live.backend.typeText(live.window, chunk, ctx.remaining()),
          );
          typed += out.typed;
        } catch (e) {
          typed += Number((e as { cause?: { typed?: unknown } }).cause?.typed ?? 0) || 0;
          throw e;
        }
      }
    } catch (e) {
      if (typed === 0 || !(e instanceof AxsnapError)) throw e;
      // A run the deadline cut is a timeout, whatever the native layer called it.
      const code = ctx.expired() && e.code === "ACTION_FAILED" ? "TIMEOUT" : e.code;
      throw new AxsnapError(code, `${e.message}; ${typed} of ${chars.length} characters were typed`, {
        delivery: "delivery_uncertain",
        hint: "take a new snapshot to see what was typed before typing the rest",
        cause: e,
      });
    }
    if (chars.length > TYPE_CHUNK)
      notes.push(`typed ${typed} characters in ${Math.ceil(chars.length / TYPE_CHUNK)} chunks`);
  }

  /** Scrolls an element by pages: its scroll-by-page action where it has one, else wheel events over it. */
  async scroll(
    target: Target,
    direction: "up" | "down" | "left" | "right",
    pages = 1,
    options: ActOptions = {},
  ): Promise<ActionResult> {
    if (!["up", "down", "left", "right"].includes(direction))
      throw invalidArgument('direction must be "up", "down", "left" or "right"');
    if (!Number.isInteger(pages) || pages < 1 || pages > 50)
      throw invalidArgument("pages must be a whole number from 1 to 50");
    return this.act(options, async (ctx) => {
      const r = await this.resolveIn(target, options, ctx);
      await this.confirmLanded(r, ctx);
      const name = `AXScroll${direction[0]!.toUpperCase()}${direction.slice(1)}ByPage`;
      const semantic = findAction(r.record.actions, [name, `scroll ${direction}`]);
      if (semantic !== undefined) {
        for (let i = 0; i < pages; i++) {
          const uncertain = await this.semanticCall(ctx, () =>
            r.live.backend.doAction(r.handle, semantic, ctx.remaining()),
          );
          // One page in doubt ends the scroll: repeating it could overshoot.
          if (uncertain !== undefined)
            return this.finishSemantic(
              "scroll",
              r,
              [...r.notes, `stopped at page ${i + 1} of ${pages}`],
              uncertain,
              options,
              ctx,
            );
        }
        return this.finish(
          "scroll",
          r.snapshot,
          r.record,
          "semantic",
          "delivered_unverified",
          [...r.notes],
          options,
          ctx,
        );
      }
      const steps = pages * 5;
      const dx = direction === "left" ? -steps : direction === "right" ? steps : 0;
      const dy = direction === "up" ? -steps : direction === "down" ? steps : 0;
      const notes = [...r.notes, `no scroll action; sent ${steps} wheel steps`];
      return this.pointerAt(r, { kind: "wheel", dx, dy }, notes, options, "scroll", ctx);
    });
  }

  /** Drags from one element to another with synthetic mouse events. */
  async drag(from: Target, to: Target, options: ActOptions = {}): Promise<ActionResult> {
    return this.act(options, async (ctx) => {
      const from0 = this.address(from, options.app);
      const to0 = this.address(to, options.app);
      // One drag, one app: the end point is clamped into the start's window, so another app's element cannot be meant.
      if (from0.snapshot.app.pid !== to0.snapshot.app.pid)
        throw invalidArgument(
          `a drag stays in one app: element ${from0.record.index} is in pid ${from0.snapshot.app.pid}, element ${to0.record.index} in pid ${to0.snapshot.app.pid}`,
        );
      await this.guardDestructive("drag", from0);
      await this.guardDestructive("drag", to0);
      const a = await this.resolveIn(from, options, ctx);
      const b = await this.resolveIn(to, options, ctx);
      this.guardFresh(a.snapshot);
      const p = a.record.clickPoint;
      const q = b.record.clickPoint;
      if (!p || !q)
        throw new AxsnapError("ACTION_NOT_SUPPORTED", "both elements need a frame to drag between");
      await this.confirmLanded(a, ctx);
      await this.confirmLanded(b, ctx);
      const notes = [...a.notes, ...b.notes];
      const start = this.clamp(a.live, p.x, p.y, notes);
      const end = this.clamp(a.live, q.x, q.y, notes);
      await ctx.step("input", () =>
        a.live.backend.pointer(
          a.live.window,
          { kind: "drag", x: start.x, y: start.y, toX: end.x, toY: end.y, button: 1 },
          ctx.remaining(),
        ),
      );
      return this.finish(
        "drag",
        a.snapshot,
        a.record,
        "synthetic",
        "delivered_unverified",
        notes,
        options,
        ctx,
      );
    });
  }

  /** Screenshot pixels of a snapshot → a screen point, clamped into its window. */
  private pixels(
    x: number,
    y: number,
    options: PixelOptions,
    notes: string[],
  ): { snap: Snapshot; live: LiveObservation; x: number; y: number } {
    for (const [k, v] of [
      ["x", x],
      ["y", y],
    ] as const)
      if (typeof v !== "number" || !Number.isFinite(v))
        throw invalidArgument(`${k} must be a finite number of screenshot pixels`);
    const snap = options.of ?? this.latestOf(options.app);
    const live = liveObservation(snap);
    if (!live)
      throw invalidArgument("coordinates need a snapshot observed live, not one rendered from a tree");
    const shot = snap.screenshot;
    if (!shot) {
      // Asked without a screenshot: the caller's mistake. Asked with one and none came: the display's fault.
      const failed = live.raw.walk.notes?.find((n) => /screenshot|capture|display/i.test(n));
      if (failed)
        throw new AxsnapError(
          "ACTION_FAILED",
          `the snapshot has no screenshot (${failed}); nothing was sent`,
          {
            hint: "the window could not be captured; take a new snapshot, or act by index instead of pixels",
          },
        );
      throw invalidArgument(
        "coordinates need a snapshot taken with a screenshot",
        "take a snapshot with screenshot: true and use its pixel coordinates",
      );
    }
    this.guardFresh(snap);
    const p = this.clamp(
      live,
      shot.windowOrigin.x + x / shot.scale,
      shot.windowOrigin.y + y / shot.scale,
      notes,
    );
    return { snap, live, ...p };
  }

  private atPixels(
    action: string,
    x: number,
    y: number,
    event: Omit<NativePointerEvent, "x" | "y">,
    options: PixelOptions,
    to?: { x: number; y: number },
  ): Promise<ActionResult> {
    return this.act(options, async (ctx) => {
      const notes: string[] = [];
      const at = this.pixels(x, y, options, notes);
      const end = to ? this.pixels(to.x, to.y, options, notes) : undefined;
      // Hit-test the point: the element under it gets the same safety rules as a click by index.
      const hit = hitTest(at.snap, at.x, at.y);
      if (hit) {
        notes.push(
          `the point is on element ${hit.index} (${hit.roleText}${hit.title ? ` ${hit.title}` : ""})`,
        );
        if (hit.secure && event.kind === "click" && action !== "rightClickAt")
          notes.push("it is a secure field: typing into it will be refused");
        await this.guardDestructive(action, { snapshot: at.snap, record: hit });
      }
      await ctx.step("input", () =>
        at.live.backend.pointer(
          at.live.window,
          { ...event, x: at.x, y: at.y, ...(end ? { toX: end.x, toY: end.y } : {}) },
          ctx.remaining(),
        ),
      );
      return this.finish(
        action,
        at.snap,
        undefined,
        "synthetic",
        "delivered_unverified",
        notes,
        options,
        ctx,
      );
    });
  }

  /** Clicks at a point of a snapshot's screenshot, in screenshot pixels (not window points). */
  clickAt(
    x: number,
    y: number,
    options: PixelOptions & { button?: "left" | "right"; count?: 1 | 2 } = {},
  ): Promise<ActionResult> {
    if (options.count !== undefined && options.count !== 1 && options.count !== 2)
      throw invalidArgument("count must be 1 or 2");
    return this.atPixels(
      "clickAt",
      x,
      y,
      { kind: "click", button: options.button === "right" ? 3 : 1, count: options.count ?? 1 },
      options,
    );
  }

  rightClickAt(x: number, y: number, options: PixelOptions = {}): Promise<ActionResult> {
    return this.atPixels("rightClickAt", x, y, { kind: "click", button: 3, count: 1 }, options);
  }

  doubleClickAt(x: number, y: number, options: PixelOptions = {}): Promise<ActionResult> {
    return this.atPixels("doubleClickAt", x, y, { kind: "click", button: 1, count: 2 }, options);
  }

  /** Wheel steps at a point in screenshot pixels: positive dy scrolls down, positive dx right. */
  scrollAt(
    x: number,
    y: number,
    delta: { dx?: number; dy?: number },
    options: PixelOptions = {},
  ): Promise<ActionResult> {
    const dx = delta?.dx ?? 0;
    const dy = delta?.dy ?? 0;
    if (![dx, dy].every((v) => Number.isInteger(v) && Math.abs(v) <= 100) || (dx === 0 && dy === 0))
      throw invalidArgument("scrollAt needs whole wheel steps dx and/or dy between -100 and 100");
    return this.atPixels("scrollAt", x, y, { kind: "wheel", dx, dy }, options);
  }

  dragAt(
    from: { x: number; y: number },
    to: { x: number; y: number },
    options: PixelOptions = {},
  ): Promise<ActionResult> {
    if (!from || !to) throw invalidArgument("dragAt needs a from and a to point in screenshot pixels");
    return this.atPixels("dragAt", from.x, from.y, { kind: "drag", button: 1 }, options, to);
  }

  /** Releases every snapshot the session holds. */
  async close(): Promise<void> {
    for (const list of this.byApp.values()) for (const s of list) await s.release();
    this.byApp.clear();
    this.byId.clear();
    this.latest = undefined;
  }
}

/**
 * Lets go of handles without waiting: a release queues behind other calls on
 * the backend's worker, and a call must not wait on someone else's job to
 * settle by its deadline.
 */
function releaseLater(live: LiveObservation, handles: number[]): void {
  if (handles.length > 0) void live.backend.release(handles).catch(() => undefined);
}

/** The `snapshot` option of an action, checked before anything is sent (a bad one would fail only after). */
function checkSnapshotOption(value: unknown): void {
  if (value === undefined || typeof value === "boolean") return;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalidArgument("snapshot must be true, false or an object of snapshot options");
  const o = value as Record<string, unknown>;
  for (const k of ["app", "deadlineMs", "signal"])
    if (k in o)
      throw invalidArgument(
        `snapshot.${k} cannot be set: the fresh snapshot is of the same app, in the call's budget`,
      );
  if (o.screenshot !== undefined && typeof o.screenshot !== "boolean")
    throw invalidArgument("snapshot.screenshot must be true or false");
  normaliseRenderOptions(o as RenderOptions);
}

/** The addressed record, at the place where the element is now. */
function withFrameOf(record: ElementRecord, now: ElementRecord): ElementRecord {
  const { frame: _f, screenFrame: _s, clickPoint: _c, ...rest } = record;
  return {
    ...rest,
    ...(now.frame ? { frame: now.frame } : {}),
    ...(now.screenFrame ? { screenFrame: now.screenFrame } : {}),
    ...(now.clickPoint ? { clickPoint: now.clickPoint } : {}),
  };
}

/**
 * The one race no client can close: an app may change an element between
 * the last live check and the moment it handles the action (Chromium's tree
 * lags the page by a few milliseconds). When the fresh snapshot shows the
 * same element under another identity, the result says so.
 */
function changedAround(record: ElementRecord, fresh: Snapshot): string | undefined {
  if (record.handle === undefined) return undefined;
  const now = fresh.records.find((r) => r.handle === record.handle);
  if (!now || sameIdentity(now.identity, record.identity)) return undefined;
  return `element ${record.index} reads as ${now.roleText} "${now.identity.name ?? ""}" right after the action (it was "${record.identity.name ?? ""}"): the app changed it around the action, so check which one it reached`;
}

/** "push button "OK"": how a live node is named in a message. */
function describe(node: RawNode): string {
  const name = node.title ?? node.description;
  return name ? `${node.role} "${cut(name, 60)}"` : node.role;
}

/** The smallest printed element whose frame holds the screen point: the most specific one. */
function hitTest(snap: Snapshot, x: number, y: number): ElementRecord | undefined {
  let best: ElementRecord | undefined;
  for (const rec of snap.records) {
    const f = rec.screenFrame;
    if (!f || f.w <= 0 || f.h <= 0 || x < f.x || y < f.y || x >= f.x + f.w || y >= f.y + f.h) continue;
    if (!best || f.w * f.h <= best.screenFrame!.w * best.screenFrame!.h) best = rec;
  }
  return best;
}

/**
 * A count or a number of milliseconds, at least 1: a fraction below 1 would
 * keep no snapshot, or give every native step no time at all.
 */
function positive(name: string, value: number | undefined, fallback: number, whole = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1)
    throw invalidArgument(
      `${name} must be ${whole ? "a whole number" : "a number"} of at least 1, got ${String(value)}`,
    );
  if (whole && !Number.isInteger(value))
    throw invalidArgument(`${name} must be a whole number of at least 1, got ${String(value)}`);
  return value;
}

/**
 * Finds an element again, by a record's identity, in a fresh live snapshot of
 * its app: step 2 of resolution (refs-and-actions.md), for a record kept
 * outside any session (the CLI's store, another process), which has no live
 * handle to try first. Returns the fresh snapshot's record of the one match.
 * None → STALE_REF; several → AMBIGUOUS_TARGET; an incomplete fresh
 * observation → IDENTITY_UNPROVEN. A record not proven unique when observed
 * cannot be told from its twins without its handle: AMBIGUOUS_TARGET when
 * several match, else STALE_REF (never a guess by index or path).
 */
export function findAgain(
  record: Pick<ElementRecord, "index" | "identity" | "proof">,
  fresh: Snapshot,
): ElementRecord {
  const live = liveObservation(fresh);
  if (!live) throw invalidArgument("findAgain needs a snapshot observed live, not one rendered from a tree");
  if (!fresh.complete)
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${record.index} cannot be found again with certainty: the new observation was incomplete (${fresh.cutBy.join(", ")}); nothing was sent`,
    );
  const matches: RawNode[] = [];
  countMatches(live.raw.root, record.identity, matches);
  if (live.raw.menuBar) countMatches(live.raw.menuBar, record.identity, matches);
  if (!record.proof.unique) {
    const why =
      record.proof.reason === "duplicates"
        ? `${record.proof.matches} elements had its identity when it was observed`
        : "its observation was incomplete";
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_TARGET",
        `element ${record.index} was not proven unique (${why}) and ${matches.length} elements match it now; nothing was sent`,
      );
    throw new AxsnapError(
      "STALE_REF",
      `element ${record.index} was not proven unique (${why}), so it cannot be found again by its identity; nothing was sent`,
    );
  }
  if (matches.length === 0)
    throw new AxsnapError("STALE_REF", `element ${record.index} is gone from the window; nothing was sent`);
  if (matches.length > 1)
    throw new AxsnapError(
      "AMBIGUOUS_TARGET",
      `${matches.length} elements now match element ${record.index}; nothing was sent`,
    );
  const handle = matches[0]!.handle;
  const printed =
    handle === undefined
      ? undefined
      : (fresh.records.find((r) => r.handle === handle && sameIdentity(r.identity, record.identity)) ??
        fresh.records.find((r) => r.handle === handle));
  if (!printed)
    throw new AxsnapError(
      "IDENTITY_UNPROVEN",
      `element ${record.index} matches an element the new observation did not print; nothing was sent`,
    );
  return printed;
}

export function createSession(options?: SessionOptions): Session {
  return new Session(options);
}
