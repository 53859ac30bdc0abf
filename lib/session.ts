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
import {
  type LiveObservation,
  liveObservation,
  snapshot as observe,
  type SnapshotOptions,
} from "./desktop.js";
import { AxsnapError, type Delivery, invalidArgument, type Retry } from "./errors.js";
import type { RawNode } from "./model.js";
import { callNative, type NativeBackend, type NativePointerEvent } from "./native.js";
import { destructiveWordIn, normalizeForMatch } from "./policy/normalize.js";
import type { ElementRecord, IdentityPredicate } from "./records.js";
import { prettyActionName } from "./render/actions.js";
import { identityOf } from "./render/plan.js";
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
  /** A backend other than the desktop's (tests: the fake backend). */
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
}

export interface ActOptions {
  /** Which app a bare index refers to; default the app of the session's latest snapshot. */
  app?: string | number;
  /** Take a fresh snapshot after acting. Default true. */
  snapshot?: boolean;
}

/** Which snapshot's screenshot the pixels belong to: `of`, else the latest of `app`. */
export interface PixelOptions extends ActOptions {
  of?: Snapshot;
}

interface Resolved {
  snapshot: Snapshot;
  record: ElementRecord;
  live: LiveObservation;
  handle: number;
  how: "live" | "reobserved";
  notes: string[];
}

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

  /** Observes an app and keeps the snapshot for later refs. */
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

  private latestOf(app: string | number | undefined): Snapshot {
    if (app === undefined) {
      if (!this.latest) throw new AxsnapError("SNAPSHOT_NOT_FOUND", "the session has no snapshot yet");
      return this.latest;
    }
    for (const list of this.byApp.values()) {
      const snap = list.at(-1);
      if (snap && (snap.app.pid === app || snap.app.name.toLowerCase() === String(app).toLowerCase()))
        return snap;
    }
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

  /**
   * Reads the identity a handle shows now: the identity, "gone" when the
   * element no longer exists, or "unknown" when it could not be read (the app
   * did not answer). Unknown is never folded into gone or into a match.
   */
  private async identityNow(
    live: LiveObservation,
    handle: number,
  ): Promise<IdentityPredicate | "gone" | "unknown"> {
    try {
      const read = await callNative(() => live.backend.readElement(handle, 4, this.opts.deadlineMs));
      await live.backend.release(read.handles);
      return identityOf(read.node);
    } catch (e) {
      const code = e instanceof AxsnapError ? e.code : "";
      return code === "APP_UNRESPONSIVE" || code === "TIMEOUT" ? "unknown" : "gone";
    }
  }

  /** Finds the live element a target names, proving it is the one observed (three-valued). */
  async resolve(target: Target, options: ActOptions = {}): Promise<Resolved> {
    const { snapshot: snap, record } = this.address(target, options.app);
    const live = liveObservation(snap);
    if (!live || record.handle === undefined)
      throw new AxsnapError(
        "STALE_REF",
        "that snapshot has no live elements (it was rendered from a tree, not observed)",
      );
    const now = await this.identityNow(live, record.handle);
    if (typeof now === "object" && sameIdentity(now, record.identity))
      return { snapshot: snap, record, live, handle: record.handle, how: "live", notes: [] };
    if (now === "unknown")
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${record.index} could not be read (the app did not answer)`,
        {
          hint: "wait a moment and take a new snapshot",
        },
      );
    if (!record.proof.unique)
      throw new AxsnapError(
        "STALE_REF",
        `element ${record.index} changed and was not proven unique when observed (${record.proof.reason})`,
        { hint: "take a new snapshot and pick the element again" },
      );
    const fresh = await this.snapshot({
      app: snap.app.pid,
      screenshot: false,
      deadlineMs: this.opts.deadlineMs,
    });
    const freshLive = liveObservation(fresh)!;
    if (!fresh.complete)
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        "the new observation was incomplete, so the element cannot be found again with certainty",
      );
    const matches: RawNode[] = [];
    countMatches(freshLive.raw.root, record.identity, matches);
    if (freshLive.raw.menuBar) countMatches(freshLive.raw.menuBar, record.identity, matches);
    if (matches.length === 0)
      throw new AxsnapError("STALE_REF", `element ${record.index} is gone from the window`);
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_TARGET",
        `${matches.length} elements now match element ${record.index}`,
      );
    const handle = matches[0]!.handle;
    if (handle === undefined)
      throw new AxsnapError("IDENTITY_UNPROVEN", "the matching element has no live handle");
    // The result names the element as the new snapshot printed it, when it printed it.
    const printed = fresh.records.find((r) => r.handle === handle);
    const notes = [
      printed
        ? `element ${record.index} moved; found again as ${printed.index} in snapshot ${fresh.id}`
        : `element ${record.index} moved; found again by its identity in snapshot ${fresh.id}`,
    ];
    return printed
      ? { snapshot: fresh, record: printed, live: freshLive, handle, how: "reobserved", notes }
      : { snapshot: snap, record, live: freshLive, handle, how: "reobserved", notes };
  }

  private async confirmLanded(r: Resolved): Promise<void> {
    const now = await this.identityNow(r.live, r.handle);
    if (now === "unknown")
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${r.record.index} could not be read just before acting; nothing was sent`,
      );
    if (now === "gone" || !sameIdentity(now, r.record.identity))
      throw new AxsnapError(
        "STALE_REF",
        `element ${r.record.index} changed just before acting; nothing was sent`,
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

  private async finish(
    action: string,
    snap: Snapshot,
    record: ElementRecord | undefined,
    channel: "semantic" | "synthetic",
    delivery: Delivery,
    notes: string[],
    options: ActOptions,
  ): Promise<ActionResult> {
    const result: ActionResult = {
      action,
      delivery,
      retry: delivery === "not_delivered" ? "safe" : "unsafe",
      channel,
      notes,
      ...(record ? { target: { snapshotId: snap.id, index: record.index } } : {}),
    };
    if (options.snapshot !== false) {
      try {
        result.snapshot = await this.snapshot({ app: snap.app.pid, deadlineMs: this.opts.deadlineMs });
      } catch (e) {
        notes.push(`no fresh snapshot after the action: ${(e as Error).message}`);
      }
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
    const addressed = this.address(target, options.app);
    await this.guardDestructive("click", addressed);
    const r = await this.resolve(target, options);
    const notes = [...r.notes];
    const semantic =
      count === 1
        ? findAction(r.record.actions, button === "left" ? PRESS_ACTIONS : MENU_ACTIONS)
        : undefined;
    await this.confirmLanded(r);
    // A row is clicked by selecting it in its list; a row that cannot be selected falls through to press.
    if (button === "left" && count === 1 && ROW_ROLES.has(r.record.role)) {
      try {
        const uncertain = await this.semanticCall(() =>
          r.live.backend.select(r.handle, this.opts.deadlineMs),
        );
        return this.finishSemantic("click", r, notes, uncertain, options);
      } catch (e) {
        if (!refusedUndelivered(e)) throw e;
        notes.push(`the row could not be selected in its list (${e.message})`);
      }
    }
    if (semantic !== undefined) {
      try {
        const uncertain = await this.semanticCall(() =>
          r.live.backend.doAction(r.handle, semantic, this.opts.deadlineMs),
        );
        return this.finishSemantic("click", r, notes, uncertain, options);
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
    );
  }

  /**
   * Runs a semantic call. An app can answer with an error after it acted (an
   * AXPress that opens a modal answers when the modal returns); the backend
   * reports that as delivery "delivery_uncertain", and it must never lead to a
   * second, synthetic attempt: the note it returns says what happened.
   */
  private async semanticCall(call: () => Promise<void>): Promise<string | undefined> {
    try {
      await callNative(call);
      return undefined;
    } catch (e) {
      if (e instanceof AxsnapError && e.delivery === "delivery_uncertain")
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
      );
    return this.finish(action, r.snapshot, r.record, "semantic", "delivered_unverified", notes, options);
  }

  private async pointerAt(
    r: Resolved,
    event: Omit<NativePointerEvent, "x" | "y">,
    notes: string[],
    options: ActOptions,
    action: string,
  ): Promise<ActionResult> {
    this.guardFresh(r.snapshot);
    const p = r.record.clickPoint;
    if (!p) throw new AxsnapError("ACTION_NOT_SUPPORTED", `element ${r.record.index} has no frame to click`);
    const point = this.clamp(r.live, p.x, p.y, notes);
    await callNative(() => r.live.backend.pointer(r.live.window, { ...event, x: point.x, y: point.y }));
    return this.finish(action, r.snapshot, r.record, "synthetic", "delivered_unverified", notes, options);
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
    const addressed = this.address(target, options.app);
    if (addressed.record.secure)
      throw new AxsnapError("POLICY_DENIED", "setting a secure text field is not allowed; nothing was sent", {
        hint: "ask the user to enter it",
      });
    if (!addressed.record.settable)
      throw new AxsnapError(
        "NOT_SETTABLE",
        `element ${addressed.record.index} (${addressed.record.roleText}) cannot be set`,
      );
    const r = await this.resolve(target, options);
    await this.confirmLanded(r);
    const uncertain = await this.semanticCall(() =>
      typeof value === "number"
        ? r.live.backend.setNumber(r.handle, value, this.opts.deadlineMs)
        : r.live.backend.setText(r.handle, value, this.opts.deadlineMs),
    );
    // An uncertain answer is settled by the read-back below, when it can be.
    const notes = uncertain === undefined ? [...r.notes] : [...r.notes, uncertain];
    let delivery: Delivery = uncertain === undefined ? "delivered_unverified" : "delivery_uncertain";
    try {
      const read = await r.live.backend.readElement(r.handle, 0, this.opts.deadlineMs);
      await r.live.backend.release(read.handles);
      if (read.node.value === value || String(read.node.value) === String(value)) {
        delivery = "delivered_verified";
        // The value is there: the app's error answer did not matter.
        if (uncertain !== undefined) notes.splice(notes.indexOf(uncertain), 1);
      } else notes.push(`the value read back is ${JSON.stringify(read.node.value ?? null)}`);
    } catch (e) {
      notes.push(`the value could not be read back: ${(e as Error).message}`);
    }
    return this.finish("setValue", r.snapshot, r.record, "semantic", delivery, notes, options);
  }

  /** Runs an element's named action, by raw ("AXScrollDownByPage") or pretty ("Scroll Down") name. */
  async performAction(target: Target, name: string, options: ActOptions = {}): Promise<ActionResult> {
    if (typeof name !== "string" || name.trim() === "")
      throw invalidArgument("the action name must be a non-empty string");
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
    const r = await this.resolve(target, options);
    await this.confirmLanded(r);
    const uncertain = await this.semanticCall(() =>
      r.live.backend.doAction(r.handle, raw, this.opts.deadlineMs),
    );
    if (uncertain !== undefined)
      return this.finishSemantic("performAction", r, [...r.notes], uncertain, options);
    return this.finish(
      "performAction",
      r.snapshot,
      r.record,
      "semantic",
      "delivered_unverified",
      [...r.notes],
      options,
    );
  }

  /** Presses a key combination in the app's window ("ctrl+shift+t"). */
  async pressKey(combo: string, options: ActOptions = {}): Promise<ActionResult> {
    if (typeof combo !== "string" || combo.trim() === "")
      throw invalidArgument("the key must be a non-empty string");
    const snap = this.latestOf(options.app);
    this.guardFresh(snap);
    const live = liveObservation(snap);
    if (!live) throw new AxsnapError("STALE_REF", "that snapshot was not observed live");
    await callNative(() => live.backend.keys(live.window, combo.trim()));
    return this.finish("pressKey", snap, undefined, "synthetic", "delivered_unverified", [], options);
  }

  /**
   * Types text. With a target that is a settable, non-secure text field, the
   * value becomes old value + text (semantic); otherwise the target (if any)
   * is focused and the text goes in as synthetic key events.
   */
  async typeText(text: string, options: ActOptions & { target?: Target } = {}): Promise<ActionResult> {
    if (typeof text !== "string" || text.length === 0)
      throw invalidArgument("text must be a non-empty string");
    if (options.target === undefined) {
      const snap = this.latestOf(options.app);
      const live = liveObservation(snap);
      if (!live) throw new AxsnapError("STALE_REF", "that snapshot was not observed live");
      const focused = snap.focusedIndex === undefined ? undefined : snap.records[snap.focusedIndex];
      if (focused?.secure)
        throw new AxsnapError(
          "POLICY_DENIED",
          "the focused element is a secure text field; nothing was typed",
          {
            hint: "ask the user to enter it",
          },
        );
      this.guardFresh(snap);
      await callNative(() => live.backend.typeText(live.window, text));
      return this.finish("typeText", snap, undefined, "synthetic", "delivered_unverified", [], options);
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
    const r = await this.resolve(options.target, options);
    await this.confirmLanded(r);
    const notes = [...r.notes];
    if (r.record.settable) {
      const read = await callNative(() => r.live.backend.readElement(r.handle, 0, this.opts.deadlineMs));
      await r.live.backend.release(read.handles);
      // Only a value actually read can be continued; an unread one is not "".
      if (typeof read.node.value === "string") {
        const next = (read.node.value ?? "") + text;
        try {
          const uncertain = await this.semanticCall(() =>
            r.live.backend.setText(r.handle, next, this.opts.deadlineMs),
          );
          return this.finishSemantic("typeText", r, notes, uncertain, options);
        } catch (e) {
          if (!(e instanceof AxsnapError) || e.code !== "NOT_SETTABLE") throw e;
          notes.push("the field refused its value; typed with key events instead");
        }
      }
    }
    this.guardFresh(r.snapshot);
    const focused = await callNative(() => r.live.backend.focus(r.handle, this.opts.deadlineMs)).then(
      () => true,
      () => {
        notes.push("the element did not take focus; typed into whatever has it");
        return false;
      },
    );
    // Typing continues the field's text, as the semantic path does: the cursor goes to the end first
    // (cmd+Down on macOS, where End only scrolls). Only in a focused text element: elsewhere the
    // same keys mean something else (cmd+Down opens the selection in Finder).
    if (focused && TEXT_ROLES.has(r.record.role)) {
      const toEnd = r.live.raw.platform === "macos" ? "cmd+down" : "ctrl+End";
      await callNative(() => r.live.backend.keys(r.live.window, toEnd)).catch(() => undefined);
    }
    await callNative(() => r.live.backend.typeText(r.live.window, text));
    return this.finish("typeText", r.snapshot, r.record, "synthetic", "delivered_unverified", notes, options);
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
    const r = await this.resolve(target, options);
    await this.confirmLanded(r);
    const name = `AXScroll${direction[0]!.toUpperCase()}${direction.slice(1)}ByPage`;
    const semantic = findAction(r.record.actions, [name, `scroll ${direction}`]);
    if (semantic !== undefined) {
      for (let i = 0; i < pages; i++) {
        const uncertain = await this.semanticCall(() =>
          r.live.backend.doAction(r.handle, semantic, this.opts.deadlineMs),
        );
        // One page in doubt ends the scroll: repeating it could overshoot.
        if (uncertain !== undefined)
          return this.finishSemantic(
            "scroll",
            r,
            [...r.notes, `stopped at page ${i + 1} of ${pages}`],
            uncertain,
            options,
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
      );
    }
    const steps = pages * 5;
    const dx = direction === "left" ? -steps : direction === "right" ? steps : 0;
    const dy = direction === "up" ? -steps : direction === "down" ? steps : 0;
    const notes = [...r.notes, `no scroll action; sent ${steps} wheel steps`];
    return this.pointerAt(r, { kind: "wheel", dx, dy }, notes, options, "scroll");
  }

  /** Drags from one element to another with synthetic mouse events. */
  async drag(from: Target, to: Target, options: ActOptions = {}): Promise<ActionResult> {
    const a = await this.resolve(from, options);
    const b = await this.resolve(to, options);
    this.guardFresh(a.snapshot);
    const p = a.record.clickPoint;
    const q = b.record.clickPoint;
    if (!p || !q) throw new AxsnapError("ACTION_NOT_SUPPORTED", "both elements need a frame to drag between");
    await this.confirmLanded(a);
    const notes = [...a.notes, ...b.notes];
    const start = this.clamp(a.live, p.x, p.y, notes);
    const end = this.clamp(a.live, q.x, q.y, notes);
    await callNative(() =>
      a.live.backend.pointer(a.live.window, {
        kind: "drag",
        x: start.x,
        y: start.y,
        toX: end.x,
        toY: end.y,
        button: 1,
      }),
    );
    return this.finish("drag", a.snapshot, a.record, "synthetic", "delivered_unverified", notes, options);
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
    const shot = snap.screenshot;
    if (!live || !shot)
      throw new AxsnapError("INVALID_ARGUMENT", "coordinates need a live snapshot with a screenshot", {
        hint: "take a snapshot with screenshot: true and use its pixel coordinates",
      });
    this.guardFresh(snap);
    const p = this.clamp(
      live,
      shot.windowOrigin.x + x / shot.scale,
      shot.windowOrigin.y + y / shot.scale,
      notes,
    );
    return { snap, live, ...p };
  }

  private async atPixels(
    action: string,
    x: number,
    y: number,
    event: Omit<NativePointerEvent, "x" | "y">,
    options: PixelOptions,
    to?: { x: number; y: number },
  ): Promise<ActionResult> {
    const notes: string[] = [];
    const at = this.pixels(x, y, options, notes);
    const end = to ? this.pixels(to.x, to.y, options, notes) : undefined;
    // Hit-test the point: the element under it gets the same safety rules as a click by index.
    const hit = hitTest(at.snap, at.x, at.y);
    if (hit) {
      notes.push(`the point is on element ${hit.index} (${hit.roleText}${hit.title ? ` ${hit.title}` : ""})`);
      if (hit.secure && event.kind === "click" && action !== "rightClickAt")
        notes.push("it is a secure field: typing into it will be refused");
      await this.guardDestructive(action, { snapshot: at.snap, record: hit });
    }
    await callNative(() =>
      at.live.backend.pointer(at.live.window, {
        ...event,
        x: at.x,
        y: at.y,
        ...(end ? { toX: end.x, toY: end.y } : {}),
      }),
    );
    return this.finish(action, at.snap, undefined, "synthetic", "delivered_unverified", notes, options);
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

export function createSession(options?: SessionOptions): Session {
  return new Session(options);
}
