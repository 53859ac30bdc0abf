/**
 * Waiting for the app instead of sleeping: waitFor observes the app, checks
 * a condition on what it would print, and between observations waits for
 * the app's change events (AT-SPI signals, an AXObserver) rather than a
 * timer; a slow poll is the safety net for changes no event announces. A
 * condition met is shown by the observation that met it, which becomes the
 * app's latest snapshot; time running out is TIMEOUT carrying the last
 * observation (held for its refs, but not latest). Waits on one app share
 * its event pump, its poll clock and their walks (watcher.ts), so pending
 * waits cost the backend's worker about one wait's work.
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { NativeBackend } from "../../native.js";
import {
  desktopBackend,
  listWindows,
  type ObservationOptions,
  snapshot as observeOnce,
} from "../../observe/desktop.js";
import { factsOf } from "../../observe/diff.js";
import { screenshotRequest } from "../../observe/marks.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { WindowListing } from "../../observe/windows.js";
import { normaliseRenderOptions, type RenderOptions } from "../../render/index.js";
import type { ElementRecord } from "../../render/records.js";
import type { CallContext } from "../call.js";
import { fold } from "../pattern.js";
import { hasRole } from "../role-words.js";
import type { ActEnv } from "./env.js";
import type { Target } from "./store.js";
import { type EventPump, letPumpGo, type ObservationShare, pumpOf, type Shared, shareOf } from "./watcher.js";

/**
 * What to wait for. `text`: some printed line's name or value contains it.
 * `element`: an element with this role text and/or name (contains,
 * case-insensitive) is printed. `target`: an element of a held snapshot
 * reads so (its name, its value, a printed state such as "checked" present
 * or absent). `idle`: the app sent no change event for `quietMs`.
 * `window`: one of the app's windows, dialogs, menus or popups (listWindows)
 * has a title containing it. `gone` turns text, element and window around:
 * wait until none is there.
 */
export type WaitCondition =
  | { text: string; gone?: boolean }
  | { element: { role?: string; name?: string }; gone?: boolean }
  | { target: Target; name?: string; value?: string | number; state?: string; notState?: string }
  | { idle: true; quietMs?: number }
  | { window: string; gone?: boolean };

export interface WaitOptions {
  /** How long to wait, in ms (1-600000). Default 10000. The call settles by it. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** How the observation that meets the condition is taken (style, limits, screenshot). Default: a snapshot's defaults. */
  snapshot?: ObservationOptions;
}

export interface WaitResult {
  /** The observation that met the condition; it is the app's latest snapshot now. */
  snapshot: Snapshot;
  /** The element that met it (element, target, text conditions). */
  match?: ElementRecord;
  /** The window that appeared (window condition); the snapshot is of it. */
  window?: WindowListing;
  ms: number;
  /** Observations made. */
  rounds: number;
  /** "events": the app's change events woke the wait; "poll": this platform has none, a timer did. */
  via: "events" | "poll";
}

/** A condition as flat fields (CLI flags, MCP arguments): exactly one of text, role/name, window, idle. */
export interface WaitFields {
  text?: string | undefined;
  role?: string | undefined;
  name?: string | undefined;
  window?: string | undefined;
  idle?: boolean | undefined;
  gone?: boolean | undefined;
}

/** The condition flat fields name; INVALID_ARGUMENT unless exactly one kind is given. */
export function waitConditionOf(f: WaitFields): WaitCondition {
  const kinds = [
    f.text !== undefined,
    f.role !== undefined || f.name !== undefined,
    f.idle === true,
    f.window !== undefined,
  ];
  if (kinds.filter(Boolean).length !== 1)
    throw invalidArgument("give exactly one of: text, role/name, window, idle");
  const gone = f.gone === true;
  if (f.idle === true) return { idle: true };
  if (f.window !== undefined) return { window: f.window, gone };
  if (f.text !== undefined) return { text: f.text, gone };
  return {
    element: {
      ...(f.role === undefined ? {} : { role: f.role }),
      ...(f.name === undefined ? {} : { name: f.name }),
    },
    gone,
  };
}

/** The safety net: an observation at least this often, events or not. */
export const POLL_MS = 1000;
/** Without events, how often the app is observed. */
export const NO_EVENTS_POLL_MS = 250;
const DEFAULT_QUIET_MS = 150;
/** An idle wait that cannot be quiet in time stops this long (at most a quarter of its budget) before its deadline, to look once. */
const LOOK_RESERVE_MS = 300;
/** A look started, or failed, with this little of the wait left is cut by the deadline... */
const DEADLINE_CUT_MS = 20;
/** ...when it failed so: a listing or a read that ran out of time mid-way. */
const DEADLINE_CUT_CODES = new Set(["WINDOW_NOT_FOUND", "APP_NOT_FOUND", "APP_UNRESPONSIVE"]);
/** How a walk that ran out of its deadline ends: reads still out when it passed count as unanswered. */
const DEADLINE_CUTS = new Set<string>(["deadline", "unresponsive"]);

type Check = (snap: Snapshot) => ElementRecord | boolean;

/** Gone is told only from a whole observation: what a cut walk did not reach may still be there. */
function goneFrom(snap: Snapshot, find: (snap: Snapshot) => ElementRecord | undefined): boolean {
  return snap.complete && find(snap) === undefined;
}

/** Validates a condition and makes its check over one observation. */
export function conditionCheck(env: ActEnv, cond: WaitCondition): { check: Check; describe: string } {
  if (cond === null || typeof cond !== "object" || Array.isArray(cond))
    throw invalidArgument(
      "the condition must be an object: { text }, { element }, { target }, { window } or { idle: true }",
    );
  const keys = ["text", "element", "target", "idle", "window"].filter((k) => k in cond);
  if (keys.length !== 1)
    throw invalidArgument(
      `the condition must have exactly one of text, element, target, window, idle; got ${keys.join(", ") || "none"}`,
    );
  if ("gone" in cond && cond.gone !== undefined && typeof cond.gone !== "boolean")
    throw invalidArgument("gone must be true or false");
  if ("text" in cond) {
    if (typeof cond.text !== "string" || cond.text.trim() === "")
      throw invalidArgument("text must be a non-empty string");
    const needle = cond.text.toLowerCase();
    const gone = cond.gone === true;
    const find = (snap: Snapshot) =>
      snap.records.find((r) =>
        [r.title, r.description, factsOf(snap, r.index)?.value].some((t) =>
          t?.toLowerCase().includes(needle),
        ),
      );
    return {
      check: (snap) => (gone ? goneFrom(snap, find) : (find(snap) ?? false)),
      describe: `text ${JSON.stringify(cond.text)} ${gone ? "to disappear" : "to appear"}`,
    };
  }
  if ("element" in cond) {
    const e = cond.element;
    if (e === null || typeof e !== "object" || (e.role === undefined && e.name === undefined))
      throw invalidArgument("element needs a role and/or a name");
    for (const k of ["role", "name"] as const)
      if (e[k] !== undefined && (typeof e[k] !== "string" || e[k].trim() === ""))
        throw invalidArgument(`element.${k} must be a non-empty string`);
    const role = e.role === undefined ? undefined : fold(e.role);
    const name = e.name?.toLowerCase();
    const gone = cond.gone === true;
    const find = (snap: Snapshot) =>
      snap.records.find(
        (r) =>
          (role === undefined || hasRole(role, r, snap.style)) &&
          (name === undefined ||
            (r.identity.name ?? r.title ?? r.description ?? "").toLowerCase().includes(name)),
      );
    return {
      check: (snap) => (gone ? goneFrom(snap, find) : (find(snap) ?? false)),
      describe: `an element${e.role ? ` ${e.role}` : ""}${e.name ? ` named ${JSON.stringify(e.name)}` : ""} ${gone ? "to disappear" : "to appear"}`,
    };
  }
  if ("target" in cond) {
    const wants = (["name", "value", "state", "notState"] as const).filter((k) => cond[k] !== undefined);
    if (wants.length === 0) throw invalidArgument("a target condition needs name, value, state or notState");
    const { record } = env.store.address(cond.target);
    if (record.handle === undefined)
      throw invalidArgument(
        "waiting on a target needs a snapshot observed live, not one rendered from a tree",
      );
    for (const k of ["name", "state", "notState"] as const)
      if (cond[k] !== undefined && typeof cond[k] !== "string")
        throw invalidArgument(`${k} must be a string`);
    if (cond.value !== undefined && typeof cond.value !== "string" && typeof cond.value !== "number")
      throw invalidArgument("value must be a string or a number");
    const check: Check = (snap) => {
      // The handle ledger gives one live element one handle across snapshots of its window.
      const now = snap.records.find((r) => r.handle === record.handle);
      if (!now) return false;
      const facts = factsOf(snap, now.index);
      if (cond.name !== undefined && (now.identity.name ?? "") !== cond.name) return false;
      if (cond.value !== undefined && facts?.value !== String(cond.value)) return false;
      if (cond.state !== undefined && !facts?.states.includes(cond.state)) return false;
      if (cond.notState !== undefined && facts?.states.includes(cond.notState)) return false;
      return now;
    };
    return {
      check,
      describe: `element ${record.index} to read ${wants.map((k) => `${k} ${JSON.stringify(cond[k])}`).join(", ")}`,
    };
  }
  if ("window" in cond) {
    if (typeof cond.window !== "string" || cond.window.trim() === "")
      throw invalidArgument("window must be a non-empty part of a window title");
    // Checked against window listings, not observations (waitFor's window branch).
    return {
      check: () => false,
      describe: `a window titled ${JSON.stringify(cond.window)} ${cond.gone === true ? "to close" : "to open"}`,
    };
  }
  if (cond.idle !== true) throw invalidArgument("idle must be true");
  if (
    cond.quietMs !== undefined &&
    (typeof cond.quietMs !== "number" || !(cond.quietMs >= 10 && cond.quietMs <= 10_000))
  )
    throw invalidArgument("quietMs must be between 10 and 10000");
  return { check: () => true, describe: "the app to go idle" };
}

/** Waits until `cond` holds in `app` (a name or pid, as in snapshot). */
export async function waitFor(
  env: ActEnv,
  ctx: CallContext,
  app: string | number,
  cond: WaitCondition,
  options: WaitOptions,
): Promise<WaitResult> {
  const { check, describe } = conditionCheck(env, cond);
  const asked = options.snapshot ?? {};
  if (asked === null || typeof asked !== "object")
    throw invalidArgument("snapshot must be an object of snapshot options");
  const render = normaliseRenderOptions(asked as RenderOptions);
  const wantShot = screenshotRequest(asked.screenshot, "snapshot.screenshot").capture;
  const started = performance.now();
  const backend = env.backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
  // Listening starts before the first look: a change between that look and the wait still wakes it.
  const { pid: watched, pump } = await listen(backend, app, ctx);
  const events = watched !== undefined;
  let pid = watched;
  let rounds = 0;
  let last: Snapshot | undefined;
  let held: { share: ObservationShare; shared: Shared } | undefined;
  const letGo = () => {
    if (held) held.share.drop(held.shared);
    else if (last) void last.release().catch(() => undefined);
    held = undefined;
    last = undefined;
  };
  const walkKey = JSON.stringify(render);
  /** Observes the app, sharing the walk with the other waits on it woken by the same event or tick. */
  const observe = async (wokeAt: number, stamp: number): Promise<Snapshot> => {
    rounds++;
    const own = () =>
      observeOnce(
        { ...render, app: pid ?? app, screenshot: false, deadlineMs: ctx.remaining() },
        env.backend,
      );
    if (pid === undefined) {
      const snap = await ctx.step("read", own, (late) => late.release());
      letGo();
      last = snap;
      pid = snap.app.pid;
      return snap;
    }
    // A wait past its deadline or aborted takes no part in a walk: it could never let it go.
    ctx.check();
    const share = shareOf(backend, pid, walkKey);
    const endsAt = performance.now() + ctx.remaining();
    const shared = share.acquire(wokeAt, stamp, endsAt, own, rounds === 1);
    const joined = shared.holders > 1;
    /** The walk was given less time than this wait has: another wait's nearer deadline may have cut it. */
    const shorter = () => joined && shared.endsAt < endsAt - 1;
    const ownWalk = async (): Promise<Snapshot> => {
      share.drop(shared);
      const mine = await ctx.step("read", own, (late) => late.release());
      letGo();
      last = mine;
      return mine;
    };
    let snap: Snapshot;
    let waited = false;
    try {
      // Cut by this call's deadline or signal: the walk, when it ends, is this wait's to let go.
      snap = await ctx.step(
        "read",
        () => {
          waited = true;
          return shared.snap;
        },
        () => share.drop(shared),
      );
    } catch (e) {
      // Refused before it waited (deadline passed, aborted): no late handler will let the walk go.
      if (!waited) {
        share.drop(shared);
        throw e;
      }
      if (!shared.failed) {
        // Still under way: `late` lets it go if it succeeds; a walk that fails is let go here.
        shared.snap.catch(() => share.drop(shared));
        throw e;
      }
      if (!shorter() || ctx.expired()) {
        share.drop(shared);
        throw e;
      }
      // The walk had less time than this wait (another's deadline cut it, as a timeout or as a
      // listing that ran out of time): this one still has time for a walk of its own.
      return ownWalk();
    }
    // A walk cut short by another wait's deadline is not what this wait would have seen: look again.
    if (shorter() && !snap.complete && snap.cutBy.some((c) => DEADLINE_CUTS.has(c)) && !ctx.expired())
      return ownWalk();
    letGo();
    held = { share, shared };
    last = snap;
    return snap;
  };
  /** The caller gets `snap` (kept in the store): a shared walk is no longer released by the share. */
  const handOver = (snap: Snapshot): Snapshot => {
    if (held && last === snap) {
      held.shared.handed = true;
      held.share.drop(held.shared);
    }
    held = undefined;
    last = undefined;
    return snap;
  };
  /** The condition held in `snap`: the caller gets it, with the picture it asked for taken now and checked again. */
  const hand = async (snap: Snapshot, hit: ElementRecord | true): Promise<WaitResult | undefined> => {
    if (!wantShot) return result(keep(env, handOver(snap)), hit, started, rounds, events);
    // Not kept until it is known to meet the condition: a picture that does not is the wait's own,
    // neither the app's latest nor in the agent's budget.
    const final = await ctx.step(
      "read",
      () => observeOnce({ ...asked, app: snap.app.pid, deadlineMs: ctx.remaining() }, env.backend),
      (late) => late.release(),
    );
    rounds++;
    letGo();
    last = final;
    const again = check(final);
    if (again === false) return undefined;
    last = undefined;
    return result(keep(env, final), again, started, rounds, events);
  };
  try {
    if ("idle" in cond) {
      if (!events)
        throw new AxsnapError(
          "ACTION_NOT_SUPPORTED",
          "this platform reports no change events, so idle cannot be told",
        );
      const quietMs = cond.quietMs ?? DEFAULT_QUIET_MS;
      const quiet = await quietFor(pump!, quietMs, ctx);
      const snap = await observe(performance.now(), pump!.stamp);
      if (!quiet) throw timeout(describe, started, rounds, snap, env, undefined, handOver);
      const done = await hand(snap, true);
      if (done) return done;
      throw timeout(describe, started, rounds, last ?? snap, env, undefined, handOver);
    }
    if ("window" in cond) {
      const needle = cond.window.trim().toLowerCase();
      const gone = cond.gone === true;
      let seen: WindowListing[] = [];
      for (;;) {
        const before = pump ? await ctx.step("read", () => pump.current()) : undefined;
        seen = await ctx.step("read", () =>
          listWindows(
            pid ?? app,
            { deadlineMs: Math.max(1, ctx.remaining()), ...(ctx.signal ? { signal: ctx.signal } : {}) },
            env.backend,
          ),
        );
        rounds++;
        const found = seen.find((w) => w.title.toLowerCase().includes(needle));
        if (gone ? found === undefined : found !== undefined) {
          // What opened is what the agent sees next: the snapshot is of it.
          const snap = await env.observe({
            ...asked,
            app: pid ?? app,
            ...(found ? { window: { id: found.id } } : {}),
            deadlineMs: ctx.remaining(),
          });
          return { ...result(snap, true, started, rounds + 1, events), ...(found ? { window: found } : {}) };
        }
        if (pump && before !== undefined) await nextEvent(pump, before, ctx);
        else await ctx.step("read", () => sleep(Math.min(ctx.remaining(), NO_EVENTS_POLL_MS)));
        if (await tooLateToLook(ctx))
          throw new AxsnapError(
            "TIMEOUT",
            `waited ${Math.round(performance.now() - started)} ms for ${describe}; it did not happen (${rounds} listings; last: ${seen.map((w) => `${w.kind} "${w.title}"`).join(", ") || "no windows"})`,
            { hint: "listWindows shows what the app has open; wait longer, or act on what is there" },
          );
      }
    }
    let wokeAt = performance.now();
    for (;;) {
      const before = pump ? await ctx.step("read", () => pump.current()) : 0;
      const snap = await observe(wokeAt, before);
      const hit = check(snap);
      if (hit !== false) {
        const done = await hand(snap, hit);
        if (done) return done;
      }
      if (pump) wokeAt = await nextEvent(pump, before, ctx);
      else {
        await ctx.step("read", () => sleep(Math.min(ctx.remaining(), NO_EVENTS_POLL_MS)));
        wokeAt = performance.now();
      }
      // The last observation: a picture taken to hand over that no longer met the condition is newer.
      if (await tooLateToLook(ctx))
        throw timeout(describe, started, rounds, last ?? snap, env, undefined, handOver);
    }
  } catch (e) {
    // The deadline ran out inside an observation: the last complete one is what the caller gets. A
    // walk given almost no time can fail as a window or app not found before it says timeout.
    if (
      e instanceof AxsnapError &&
      e.observed === undefined &&
      last &&
      (e.code === "TIMEOUT" || (ctx.remaining() <= DEADLINE_CUT_MS && DEADLINE_CUT_CODES.has(e.code)))
    )
      throw timeout(describe, started, rounds, last, env, e, handOver);
    if (!(e instanceof AxsnapError && e.observed !== undefined && e.observed === last)) letGo();
    throw e;
  }
}

/**
 * Whether the app sent no change event for `quietMs` before the call's
 * deadline, told from the app's shared pump (no native job holds the worker
 * for the whole wait). Quiet is judged only on what was dispatched: each
 * verdict asks the backend afresh.
 */
async function quietFor(pump: EventPump, quietMs: number, ctx: CallContext): Promise<boolean> {
  const start = performance.now();
  // Time kept for the look after: a wait that times out still says how the app last looked.
  const keepForLook = Math.min(LOOK_RESERVE_MS, ctx.remaining() / 4);
  for (;;) {
    const st = await ctx.step("read", () => pump.fresh());
    const quietSince = Math.max(start, st.lastEventAt ?? start);
    // The app's floor, as settling applies it (core/settle.cc): Chromium's batches come ~170 ms apart.
    const left = Math.max(quietMs, st.quietFloorMs) - (performance.now() - quietSince);
    if (left <= 0) return true;
    if (ctx.remaining() - keepForLook <= left) {
      // It cannot be quiet long enough before the deadline: the call settles by it, not after.
      await ctx.step("read", () => sleep(ctx.remaining() - keepForLook));
      return false;
    }
    await ctx.step("read", () => pump.next(st.stamp, left));
  }
}

/**
 * Waits for the app's next change event or its poll tick (the safety net,
 * every POLL_MS), through the app's shared pump; resolves with when it woke.
 */
export async function nextEvent(pump: EventPump, since: number, ctx: CallContext): Promise<number> {
  if (ctx.expired()) return performance.now();
  return ctx.step("read", () => pump.next(since, Math.max(0, ctx.remaining() - 1)));
}

/**
 * Woken with this little time left, a wait does not look again: a walk or a
 * listing this short could only be cut by the deadline. It waits the rest
 * out and says TIMEOUT with what it last saw.
 */
export async function tooLateToLook(ctx: CallContext): Promise<boolean> {
  if (ctx.expired()) return true;
  if (ctx.remaining() > DEADLINE_CUT_MS) return false;
  await sleep(ctx.remaining() - 1);
  return true;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, Math.max(0, ms)));
}

function result(
  snapshot: Snapshot,
  hit: ElementRecord | true,
  started: number,
  rounds: number,
  events: boolean,
): WaitResult {
  return {
    snapshot,
    ...(hit === true ? {} : { match: hit }),
    ms: Math.round(performance.now() - started),
    rounds,
    via: events ? "events" : "poll",
  };
}

/** The observation that met the condition becomes the app's latest (a wait's own, evicted before the agent's). */
function keep(env: ActEnv, snap: Snapshot): Snapshot {
  env.store.keep(snap, { by: "wait" });
  return snap;
}

function timeout(
  describe: string,
  started: number,
  rounds: number,
  last: Snapshot,
  env: ActEnv,
  cause?: unknown,
  handOver?: (snap: Snapshot) => Snapshot,
): AxsnapError {
  // Held so refs into `observed` work, but not the app's latest: the agent's bare indices keep their meaning.
  env.store.keep(handOver ? handOver(last) : last, { by: "wait", latest: false });
  return new AxsnapError(
    "TIMEOUT",
    `waited ${Math.round(performance.now() - started)} ms for ${describe}; it did not happen (${rounds} observations)`,
    {
      hint: "the error's `observed` snapshot shows the app as last seen; act on it, or wait longer",
      observed: last,
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/**
 * Listens to the app's events for the rest of the call: its pid and its shared pump, both undefined where
 * the platform has no events (then the caller polls). The last call on the app out takes its pump off the map.
 */
export async function listen(
  backend: NativeBackend,
  app: string | number,
  ctx: CallContext,
): Promise<{ pid: number | undefined; pump: EventPump | undefined }> {
  const pid = await watch(backend, app, ctx);
  if (pid === undefined) return { pid, pump: undefined };
  const pump = pumpOf(backend, pid, POLL_MS);
  ctx.defer(() => letPumpGo(backend, pid, pump));
  return { pid, pump };
}

/** Starts listening to the app's events: its pid, or undefined when the platform has none (then the wait polls). */
export async function watch(
  backend: NativeBackend,
  app: string | number,
  ctx: CallContext,
): Promise<number | undefined> {
  try {
    return (await ctx.step("read", () => backend.watch(app, ctx.remaining()))).pid;
  } catch (e) {
    if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "TIMEOUT")) throw e;
    // No events here (ACTION_NOT_SUPPORTED); an app that is not there is said by the first observation.
    return undefined;
  }
}
