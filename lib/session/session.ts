/**
 * Sessions: the public face of acting. A session holds the recent snapshots
 * of each app (act/store.ts), the safety policy and the call budget, and
 * runs each action as one call context (call.ts). The steps live in lib/session/act/:
 *
 *   store.ts    which snapshot and record a target names (bare index, ref, record)
 *   resolve.ts  reaching the printed element live, three-valued (refs-and-actions.md)
 *   guards.ts   destructive names, disabled, stale observations, secure fields, live key focus
 *   deliver.ts  semantic calls, synthetic pointer events, chunked typing
 *   element.ts  click, performAction, scroll, drag
 *   values.ts   setValue
 *   typing.ts   pressKey, typeText
 *   pixels.ts   input at screenshot pixels
 *   result.ts   the result, the fresh snapshot and the diff an agent reads
 */

import { AxsnapError, invalidArgument } from "../model/errors.js";
import { normalizeForMatch } from "../model/policy/normalize.js";
import type { NativeBackend } from "../native.js";
import { type DesktopRef, useDesktop } from "../observe/agent-desktop/use.js";
import { liveObservation, snapshot as observe, type SnapshotOptions } from "../observe/desktop.js";
import type { Snapshot } from "../observe/snapshot.js";
import type { RenderScope } from "../render/index.js";
import type { ElementRecord } from "../render/records.js";
import * as element from "./act/element.js";
import type { ActEnv, ConfirmRequest, Policy } from "./act/env.js";
import { DEFAULT_DESTRUCTIVE_WORDS } from "./act/guards.js";
import { answered, explainHeld } from "./act/held.js";
import { atPixels, type PixelOptions } from "./act/pixels.js";
import { resolveIn } from "./act/resolve.js";
import { type ActionResult, type ActOptions, checkActOptions } from "./act/result.js";
import { rememberScope, scopeIn, windowOfRoot } from "./act/root.js";
import { isLocatorTarget, locatorTargetText, SnapshotStore, type Target } from "./act/store.js";
import * as typing from "./act/typing.js";
import * as values from "./act/values.js";
import { type WaitCondition, type WaitOptions, type WaitResult, waitFor } from "./act/wait.js";
import { forgetObserver, observeApp } from "./act/watches.js";
import { CallContext, callBudget } from "./call.js";
import {
  checkFindQuery,
  type FindOptions,
  type FindQuery,
  type FindResult,
  findIn,
  limitOf,
  refuseFindViews,
} from "./find.js";
import { type Located, type LocateOptions, locateIn } from "./locator/locate.js";
import type { Locator } from "./locator/types.js";
import { TraceControl } from "./trace/control.js";
import { type Expectation, type ExpectOptions, type ExpectResult, expectIn } from "./trace/expect.js";
import type { SecretOption } from "./trace/recording.js";
import type { TraceOptions } from "./trace/types.js";

export type { ClickOptions } from "./act/element.js";
export type { ConfirmRequest } from "./act/env.js";
export { DEFAULT_DESTRUCTIVE_WORDS } from "./act/guards.js";
export type { PixelOptions } from "./act/pixels.js";
export { findAgain } from "./act/resolve.js";
export type { ActionResult, ActOptions, SettleOptions } from "./act/result.js";
export type { LocatorTarget, Target } from "./act/store.js";
export type { WaitCondition, WaitOptions, WaitResult } from "./act/wait.js";
export { waitConditionOf } from "./act/wait.js";
export type { Located, LocateOptions } from "./locator/locate.js";
export type { Expectation, ExpectOptions, ExpectResult } from "./trace/expect.js";
export type { SecretOption } from "./trace/recording.js";

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
  /**
   * Snapshots shared with the sessions before and after this one in one
   * process (the CLI's warm process, lib/doors/cli/held.ts): this session keeps
   * its snapshots there (bounded as that store is), reaches refs into the
   * ones kept there by its elements, and releases none of them.
   * @internal
   */
  shared?: SharedSnapshots;
  /**
   * An agent's desktop (its name, or the handle startDesktop returned) to
   * observe and act on: this process is put on it (useDesktop) before its
   * first observation. One process reaches one desktop.
   */
  desktop?: DesktopRef;
  /** Records the session to this trace directory from the start (docs/trace.md); see session.trace. */
  trace?: string | TraceOptions;
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

type Budget = { deadlineMs?: number; signal?: AbortSignal };

/**
 * Snapshots kept beyond one session (SessionOptions.shared): the sessions
 * made with it keep theirs here and leave them held when they close; the
 * apps of these snapshots stay watched (their change events counted, which
 * an action's settling needs) until close() lets them all go.
 * @internal
 */
export class SharedSnapshots {
  readonly store: SnapshotStore;
  /** The backends the snapshots came from: their apps are unwatched there on close. */
  readonly backends = new Set<NativeBackend>();

  constructor(keepPerApp: number) {
    this.store = new SnapshotStore(keepPerApp);
  }

  /** Releases every snapshot held; the apps no session observes are no longer watched. */
  async close(): Promise<void> {
    await this.store.close();
    await forgetObserver(this, this.backends);
  }
}

export class Session {
  private readonly store: SnapshotStore;
  private readonly env: ActEnv;
  private readonly deadlineMs: number;
  /** The backends this session's snapshots came from: its apps are unwatched there when it closes. */
  private readonly backends = new Set<NativeBackend>();
  private readonly shared: SharedSnapshots | undefined;
  /** Recording this session to a trace (docs/trace.md): start, stop, status. */
  readonly trace: TraceControl;

  constructor(options: SessionOptions = {}) {
    if (options === null || typeof options !== "object")
      throw invalidArgument("session options must be an object");
    if (options.confirm !== undefined && typeof options.confirm !== "function")
      throw invalidArgument("confirm must be a function");
    if (options.desktop !== undefined) useDesktop(options.desktop);
    const words = options.destructiveWords ?? DEFAULT_DESTRUCTIVE_WORDS;
    // A word that is only invisible characters or blanks would match every name.
    if (!Array.isArray(words) || words.some((w) => typeof w !== "string" || normalizeForMatch(w) === ""))
      throw invalidArgument("destructiveWords must be an array of non-empty strings");
    const policy: Policy = {
      staleAfterMs: positive("staleAfterMs", options.staleAfterMs, 60_000),
      // Kept as given: the confirm request names the word as configured; matching normalises both sides.
      destructiveWords: words.slice(),
      ...(options.confirm ? { confirm: options.confirm } : {}),
    };
    const keep = positive("keepSnapshots", options.keepSnapshots, 5, true);
    if (options.shared !== undefined && !(options.shared instanceof SharedSnapshots))
      throw invalidArgument("shared must be a SharedSnapshots");
    this.shared = options.shared;
    this.store = this.shared?.store ?? new SnapshotStore(keep);
    this.deadlineMs = positive("deadlineMs", options.deadlineMs, 5000);
    const backend = options.backend;
    this.env = {
      store: this.store,
      policy,
      backend,
      observe: (o) => this.observeKept(o),
    };
    this.trace = new TraceControl({ store: this.store }, options.trace);
  }

  /**
   * Observes an app and keeps the snapshot for later refs; it becomes the app's latest.
   * With `root`, only that element's subtree (act/root.ts).
   */
  async snapshot(options: SnapshotOptions): Promise<Snapshot> {
    const startedAt = performance.now();
    let snap: Snapshot;
    try {
      snap = await this.observeKept(options);
    } catch (e) {
      this.trace.recorder?.observed("snapshot", { ...options }, undefined, { error: e, startedAt });
      throw e;
    }
    this.trace.recorder?.observed("snapshot", { ...options }, snap, { startedAt });
    return snap;
  }

  /**
   * snapshot() without its trace step: the observations an action or a wait
   * makes for its own result are recorded as part of that step.
   */
  private async observeKept(options: SnapshotOptions): Promise<Snapshot> {
    let snap: Snapshot;
    try {
      snap =
        options?.root !== undefined ? await this.subtree(options) : await observe(options, this.env.backend);
    } catch (e) {
      throw explainHeld(this.store, options?.app, e);
    }
    answered(this.store, snap.app.pid);
    this.store.keep(snap);
    this.observes(snap);
    return snap;
  }

  /**
   * Finds elements in an app's window by role, name, text and states
   * (lib/session/find.ts has the rules): observes once, like snapshot (no screenshot
   * unless asked), and returns the matching lines with refs into that
   * observation. It is kept like any snapshot (refs into it act and are
   * checked as any ref; it becomes the app's latest) once the query was
   * matched; a query refused before or while matching keeps nothing.
   */
  async find(app: string | number, query: FindQuery, options: FindOptions = {}): Promise<FindResult> {
    if (options === null || typeof options !== "object")
      throw invalidArgument("find options must be an object");
    refuseFindViews(options);
    const startedAt = performance.now();
    const compiled = checkFindQuery(query);
    const { limit, ...observation } = options;
    limitOf(limit);
    const snap = await observe({ screenshot: false, ...observation, app }, this.env.backend);
    let result: FindResult;
    try {
      result = findIn(snap, compiled, limit === undefined ? {} : { limit });
    } catch (e) {
      await snap.release();
      throw e;
    }
    this.store.keep(snap);
    this.observes(snap);
    this.trace.recorder?.observed("find", { app, query, ...options }, snap, {
      read: result.matches.map((m) => m.index),
      startedAt,
    });
    return result;
  }

  private async subtree(options: SnapshotOptions): Promise<Snapshot> {
    const { root, ...rest } = options;
    if (rest.window !== undefined)
      throw invalidArgument(
        "pass root or window, not both",
        "root observes the window its snapshot was taken of",
      );
    const addressed = this.store.address(root!, options.app);
    const window = windowOfRoot(addressed.snapshot);
    let scope: RenderScope | undefined;
    const snap = await observe(
      { ...rest, app: addressed.snapshot.app.pid, ...(window ? { window } : {}) },
      this.env.backend,
      (raw) => {
        scope = scopeIn(addressed, raw);
        return scope;
      },
    );
    if (snap.records.length === 0) {
      await snap.release();
      throw new AxsnapError(
        "STALE_REF",
        `element ${addressed.record.index} of snapshot ${addressed.snapshot.id} is no longer shown in its window`,
        { hint: `take a new snapshot of ${addressed.snapshot.app.name}` },
      );
    }
    rememberScope(snap, scope);
    // An action on it takes its fresh snapshot of the same subtree: rooted at this one's line 0.
    const live = liveObservation(snap);
    if (live) live.options.root = snap.records[0]!;
    return snap;
  }

  /** The snapshot and record a target names, without touching the app. */
  address(target: Target, app?: string | number): { snapshot: Snapshot; record: ElementRecord } {
    return this.store.address(target, app);
  }

  /** Runs one call under its context (deadline, signal); the context's cleanups run however it ends. */
  private async run<T>(options: Budget | undefined, body: (ctx: CallContext) => Promise<T>): Promise<T> {
    checkActOptions(options as ActOptions | undefined);
    const b = callBudget(options, this.deadlineMs);
    const ctx = new CallContext(b.deadlineMs, b.signal);
    ctx.check();
    try {
      return await body(ctx);
    } finally {
      await ctx.close();
    }
  }

  /**
   * Runs one action: locates its locator targets first (each in its own
   * time, outside the action's deadline), then acts on the records found,
   * recorded as one step when a trace is on.
   */
  private async act(
    method: string,
    args: Record<string, unknown>,
    targets: Target[],
    options: ActOptions & SecretOption,
    body: (ctx: CallContext, targets: Target[], options: ActOptions) => Promise<ActionResult>,
  ): Promise<ActionResult> {
    checkActOptions(options);
    const startedAt = performance.now();
    const { secret: _secret, ...actOptions } = options;
    let located: { target: Target; locator?: string }[];
    try {
      located = await this.located(targets, options);
    } catch (e) {
      this.trace.recorder
        ?.begin({
          method,
          args,
          targets,
          locators: targets.map((t) => (isLocatorTarget(t) ? locatorTargetText(t) : undefined)),
          options,
          startedAt,
          locateMs: performance.now() - startedAt,
        })
        .done(undefined, e);
      throw e;
    }
    const recording = this.trace.recorder?.begin({
      method,
      args,
      targets: located.map((l) => l.target),
      locators: located.map((l) => l.locator),
      options,
      startedAt,
      locateMs: performance.now() - startedAt,
    });
    const acting = recording?.options ?? actOptions;
    try {
      const result = await this.run(acting, (ctx) =>
        body(
          ctx,
          located.map((l) => l.target),
          acting,
        ),
      );
      const locator = located[0]?.locator;
      if (locator !== undefined && result.target) result.target.locator = locator;
      recording?.done(result, undefined);
      return result;
    } catch (e) {
      recording?.done(undefined, e);
      throw e;
    }
  }

  /** The targets with each locator target replaced by the record it names now. */
  private async located(
    targets: Target[],
    options: ActOptions,
  ): Promise<{ target: Target; locator?: string }[]> {
    const out: { target: Target; locator?: string }[] = [];
    for (const t of targets) {
      if (!isLocatorTarget(t)) {
        out.push({ target: t });
        continue;
      }
      const found = await this.locateKept(
        t.locator,
        {
          ...(options.app === undefined ? {} : { app: options.app }),
          ...(t.timeoutMs === undefined ? {} : { timeoutMs: t.timeoutMs }),
          ...(options.signal ? { signal: options.signal } : {}),
        },
        false,
      );
      out.push({ target: found.record, locator: found.locator });
    }
    return out;
  }

  /**
   * Finds the one element a locator names (docs/trace.md): observes the window
   * it names, waiting on the app's change events until the element appears,
   * or refuses with ELEMENT_NOT_FOUND (naming the closest candidates) or
   * AMBIGUOUS_TARGET (the matches, each with the locator that tells it
   * apart). The observation is kept (the app's latest); the record acts like
   * any ref.
   */
  async locate(locator: string | Locator, options: LocateOptions = {}): Promise<Located> {
    return this.locateKept(locator, options, true);
  }

  /**
   * locate(), recorded as a step of its own only when it was asked for: an
   * action's locating is part of the action's step (its `locateMs`).
   */
  private async locateKept(
    locator: string | Locator,
    options: LocateOptions,
    recorded: boolean,
  ): Promise<Located> {
    if (options === null || typeof options !== "object")
      throw invalidArgument("locate options must be an object");
    const timeoutMs = timeoutOf(options.timeoutMs, 5000);
    const startedAt = performance.now();
    const args = { locator: locatorTargetText({ locator }), ...options };
    try {
      const found = await this.run(
        { deadlineMs: timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
        (ctx) => locateIn(this.env, ctx, locator, { ...options, timeoutMs }),
      );
      this.store.keep(found.snapshot);
      this.observes(found.snapshot);
      if (recorded)
        this.trace.recorder?.observed("locate", args, found.snapshot, {
          read: [found.record.index],
          startedAt,
        });
      return found;
    } catch (e) {
      const observed = e instanceof AxsnapError ? e.observed : undefined;
      if (observed) this.observes(observed);
      if (recorded) this.trace.recorder?.observed("locate", args, observed, { error: e, startedAt });
      throw e;
    }
  }

  /**
   * Waits until an effect shows in an app (a window opened or closed, an
   * element present, gone, or with these states or value), or throws
   * EFFECT_NOT_SEEN with the last observation. Exported programs
   * (`axsnap trace export --to ts`) check each step with it.
   */
  async expect(
    app: string | number,
    expectation: Expectation,
    options: ExpectOptions = {},
  ): Promise<ExpectResult> {
    if (options === null || typeof options !== "object")
      throw invalidArgument("expect options must be an object");
    const timeoutMs = timeoutOf(options.timeoutMs, 3000);
    const result = await this.run(
      { deadlineMs: timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
      (ctx) => expectIn(this.env, ctx, app, expectation, { ...options, timeoutMs }),
    );
    this.observes(result.snapshot);
    return result;
  }

  /**
   * Checks a target without acting: proves the live element is the one
   * observed (three-valued), or throws the error an action would.
   */
  async resolve(target: Target, options: ActOptions = {}): Promise<ResolvedTarget> {
    const [t] = await this.located([target], options);
    return this.run(options, async (ctx) => {
      const r = await resolveIn(this.env, t!.target, options.app, ctx);
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

  /** Clicks an element: its press action where it has one, else a synthetic click at its click point. */
  async click(target: Target, options: element.ClickOptions = {}): Promise<ActionResult> {
    if (options.button !== undefined && options.button !== "left" && options.button !== "right")
      throw invalidArgument('button must be "left" or "right"');
    if (options.count !== undefined && options.count !== 1 && options.count !== 2)
      throw invalidArgument("count must be 1 or 2");
    return this.act("click", {}, [target], options, (ctx, [t], o) => element.click(this.env, ctx, t!, o));
  }

  /** Sets an element's value; refuses secure fields and elements whose value cannot be set. */
  async setValue(
    target: Target,
    value: string | number,
    options: ActOptions & SecretOption = {},
  ): Promise<ActionResult> {
    if (typeof value !== "string" && !(typeof value === "number" && Number.isFinite(value)))
      throw invalidArgument("value must be a string or a finite number");
    return this.act("setValue", { value }, [target], options, (ctx, [t], o) =>
      values.setValue(this.env, ctx, t!, value, o),
    );
  }

  /** Runs an element's named action, by raw ("AXScrollDownByPage") or pretty ("Scroll Down") name. */
  async performAction(target: Target, name: string, options: ActOptions = {}): Promise<ActionResult> {
    if (typeof name !== "string" || name.trim() === "")
      throw invalidArgument("the action name must be a non-empty string");
    return this.act("performAction", { name }, [target], options, (ctx, [t], o) =>
      element.performAction(this.env, ctx, t!, name, o),
    );
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
    return this.act("pressKey", { keys: combo.trim() }, [], options, (ctx, _t, o) =>
      typing.pressKey(this.env, ctx, combo.trim(), o),
    );
  }

  /**
   * Types text. With a target that is an editable text field, the text is
   * inserted at the end of its content (semantic; what is there is never
   * rewritten). Otherwise the target (if any) is focused, focus is verified
   * live to be on it, and the text goes in as synthetic key events, in
   * chunks that each check the live focus and the deadline.
   */
  async typeText(
    text: string,
    options: ActOptions & SecretOption & { target?: Target } = {},
  ): Promise<ActionResult> {
    if (typeof text !== "string" || text.length === 0)
      throw invalidArgument("text must be a non-empty string");
    const { target, ...rest } = options;
    const targets = target === undefined ? [] : [target];
    return this.act("typeText", { text }, targets, rest, (ctx, [t], o) =>
      typing.typeText(this.env, ctx, text, t === undefined ? o : { ...o, target: t }),
    );
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
    return this.act("scroll", { direction, pages }, [target], options, (ctx, [t], o) =>
      element.scroll(this.env, ctx, t!, direction, pages, o),
    );
  }

  /** Drags from one element to another with synthetic mouse events. */
  async drag(from: Target, to: Target, options: ActOptions = {}): Promise<ActionResult> {
    return this.act("drag", {}, [from, to], options, (ctx, [f, t], o) =>
      element.drag(this.env, ctx, f!, t!, o),
    );
  }

  /** Clicks at a point of a snapshot's screenshot, in screenshot pixels (not window points). */
  clickAt(
    x: number,
    y: number,
    options: PixelOptions & { button?: "left" | "right"; count?: 1 | 2 } = {},
  ): Promise<ActionResult> {
    if (options.count !== undefined && options.count !== 1 && options.count !== 2)
      throw invalidArgument("count must be 1 or 2");
    const event = {
      kind: "click",
      button: options.button === "right" ? 3 : 1,
      count: options.count ?? 1,
    } as const;
    return this.act(
      "clickAt",
      { x, y, button: event.button, count: event.count },
      [],
      options,
      (ctx, _t, o) => atPixels(this.env, ctx, "clickAt", x, y, event, o),
    );
  }

  rightClickAt(x: number, y: number, options: PixelOptions = {}): Promise<ActionResult> {
    return this.act("rightClickAt", { x, y }, [], options, (ctx, _t, o) =>
      atPixels(this.env, ctx, "rightClickAt", x, y, { kind: "click", button: 3, count: 1 }, o),
    );
  }

  doubleClickAt(x: number, y: number, options: PixelOptions = {}): Promise<ActionResult> {
    return this.act("doubleClickAt", { x, y }, [], options, (ctx, _t, o) =>
      atPixels(this.env, ctx, "doubleClickAt", x, y, { kind: "click", button: 1, count: 2 }, o),
    );
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
    return this.act("scrollAt", { x, y, dx, dy }, [], options, (ctx, _t, o) =>
      atPixels(this.env, ctx, "scrollAt", x, y, { kind: "wheel", dx, dy }, o),
    );
  }

  dragAt(
    from: { x: number; y: number },
    to: { x: number; y: number },
    options: PixelOptions = {},
  ): Promise<ActionResult> {
    if (!from || !to) throw invalidArgument("dragAt needs a from and a to point in screenshot pixels");
    return this.act("dragAt", { x: from.x, y: from.y, to: { x: to.x, y: to.y } }, [], options, (ctx, _t, o) =>
      atPixels(this.env, ctx, "dragAt", from.x, from.y, { kind: "drag", button: 1 }, o, to),
    );
  }

  /**
   * Waits until a condition holds in an app (a name or pid, as in snapshot):
   * text or an element appears or disappears, a held element reads a name,
   * value or state, or the app goes idle. Woken by the app's change events,
   * with a slow poll as a safety net. Resolves with the observation that met
   * it (now the app's latest); TIMEOUT carries the last one as `observed`.
   */
  async waitFor(
    app: string | number,
    condition: WaitCondition,
    options: WaitOptions = {},
  ): Promise<WaitResult> {
    if (options === null || typeof options !== "object")
      throw invalidArgument("wait options must be an object");
    const timeoutMs = timeoutOf(options.timeoutMs, 10_000);
    const startedAt = performance.now();
    return this.run({ deadlineMs: timeoutMs, ...(options.signal ? { signal: options.signal } : {}) }, (ctx) =>
      waitFor(this.env, ctx, app, condition, options),
    ).then(
      (result) => {
        // The observation that met the condition is kept: the session observes its app now.
        this.observes(result.snapshot);
        this.trace.recorder?.observed("waitFor", { app, condition, ...options }, result.snapshot, {
          startedAt,
        });
        return result;
      },
      (e: unknown) => {
        const observed = e instanceof AxsnapError ? e.observed : undefined;
        if (observed) this.observes(observed);
        this.trace.recorder?.observed("waitFor", { app, condition, ...options }, observed, {
          error: e,
          startedAt,
        });
        throw e;
      },
    );
  }

  /**
   * Releases every snapshot the session holds (none of shared ones: they stay
   * held there); the apps no other session observes are no longer watched.
   */
  async close(): Promise<void> {
    // Every step written before the snapshots they name are let go.
    await this.trace.stop();
    if (!this.shared) await this.store.close();
    await forgetObserver(this, this.backends);
  }

  /**
   * The session keeps a snapshot of this app: its change events are listened
   * to, queued right behind the snapshot, so events an action then causes are
   * counted and the wait before its fresh snapshot ends when they stop
   * (act/result.ts), until the session closes.
   */
  private observes(snap: Snapshot): void {
    const live = liveObservation(snap);
    if (!live) return;
    this.backends.add(live.backend);
    observeApp(live.backend, snap.app.pid, this);
    if (this.shared) {
      // Watched as long as its snapshots are held, by the sessions to come too.
      this.shared.backends.add(live.backend);
      observeApp(live.backend, snap.app.pid, this.shared);
    }
  }
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

/** A locator target as text, for a trace or an error. */
/** A wait's own bound: the caller's, checked, or the method's default. */
function timeoutOf(asked: unknown, fallback: number): number {
  const timeoutMs = asked ?? fallback;
  if (typeof timeoutMs !== "number" || !(timeoutMs >= 1 && timeoutMs <= 600_000))
    throw invalidArgument(`timeoutMs must be between 1 and 600000, got ${String(timeoutMs)}`);
  return timeoutMs;
}

export function createSession(options?: SessionOptions): Session {
  return new Session(options);
}
