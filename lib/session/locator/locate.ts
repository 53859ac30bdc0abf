/**
 * session.locate (issue 34, design 2.4): observes the window a locator names
 * and returns the one element it names, waiting on the app's change events
 * until it appears, or refuses with ELEMENT_NOT_FOUND (the closest
 * candidates) or AMBIGUOUS_TARGET (the matches, each with the locator that
 * tells it apart).
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { desktopBackend, listWindows, snapshot as observeOnce } from "../../observe/desktop.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { WindowListing } from "../../observe/windows.js";
import type { ElementRecord } from "../../render/records.js";
import { quoted } from "../../render/sanitize.js";
import type { ActEnv } from "../act/env.js";
import { listen, NO_EVENTS_POLL_MS, nextEvent, sleep, tooLateToLook } from "../act/wait.js";
import type { CallContext } from "../call.js";
import { fold, matchLists, patternOf } from "../pattern.js";
import { candidateOf, candidatesFor, type NearHint } from "./candidates.js";
import { parseLocator, printLocator } from "./grammar.js";
import { matchLocator } from "./match.js";
import type { Locator } from "./types.js";

export interface LocateOptions {
  /** The app when the locator names none (a name or pid). */
  app?: string | number;
  /** How long to wait for the element to appear. Default 5000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
  maxNodes?: number;
  /** The recorded record, so candidates can be ranked by place too (replay). @internal */
  near?: NearHint;
}

export interface Located {
  /** The observation it was found in; kept by the session (the app's latest). */
  snapshot: Snapshot;
  record: ElementRecord;
  /** "@s…:e12" */
  ref: string;
  /** The locator as asked, printed. */
  locator: string;
  ms: number;
  /** Observations made while waiting. */
  rounds: number;
  notes: string[];
}

/** Walk ends that a later look may not share: the deadline or a slow app cut it, not the window's size. */
const TRANSIENT_CUTS = new Set<string>(["deadline", "unresponsive"]);

/** The locator as an object, checked; a string parses (INVALID_ARGUMENT with a caret line). */
function locatorOfInput(input: string | Locator): Locator {
  if (typeof input === "string") return parseLocator(input);
  if (input === null || typeof input !== "object" || !Array.isArray(input.path))
    throw invalidArgument("a locator must be a string or { app?, window?, path: [...] }");
  // Printed and parsed back: the object form obeys the same grammar as the string.
  return parseLocator(printLocator(input));
}

function windowTitleMatches(title: string | RegExp | undefined, w: WindowListing): boolean {
  if (title === undefined) return true;
  if (typeof title === "string") return w.title === title;
  return matchLists("window title", patternOf("window title", title), [[w.title]])[0]!;
}

function windowSaid(w: WindowListing): string {
  return `${w.kind} ${quoted(w.title, 100)}`;
}

type WindowPick = { window: WindowListing; note?: string } | { none: true } | { several: WindowListing[] };

/**
 * The window a locator's window segment names (design 2.2): the kind and the
 * title; with no title matching but exactly one window of that kind, that
 * one, with a note (a title that holds a file name changes between runs).
 */
function pickWindow(want: NonNullable<Locator["window"]>, windows: WindowListing[]): WindowPick {
  const ofKind = windows.filter((w) => want.kind === undefined || w.kind === want.kind);
  const titled = ofKind.filter((w) => windowTitleMatches(want.title, w));
  if (titled.length === 1) return { window: titled[0]! };
  if (titled.length > 1) return { several: titled };
  const kind = want.kind ?? "window";
  const sameKind = windows.filter((w) => w.kind === kind);
  if (sameKind.length === 1 && want.title !== undefined) {
    const recorded = want.title instanceof RegExp ? `/${want.title.source}/${want.title.flags}` : want.title;
    return {
      window: sameKind[0]!,
      note: `window title differs: recorded ${JSON.stringify(recorded)}, now ${JSON.stringify(sameKind[0]!.title)}`,
    };
  }
  return { none: true };
}

/** The locator without its app and window: the window is picked from the listing, the path matched in it. */
function pathOnly(l: Locator): Locator {
  return { path: l.path };
}

/** "push button "Save"" as a message says what was looked for. */
function lastSaid(l: Locator): string {
  const last = l.path.at(-1);
  return last === undefined ? "the window itself" : printLocator({ path: [last] });
}

/**
 * Observes the window `locator` names and returns the one element it names,
 * waiting on the app's change events (the slow poll as the safety net) until
 * it appears. Several matches refuse at once (AMBIGUOUS_TARGET); none by the
 * deadline is ELEMENT_NOT_FOUND with the closest candidates; an incomplete
 * observation never gives a verdict (IDENTITY_UNPROVEN). The returned
 * snapshot is not kept here: the Session keeps it (the app's latest).
 * Every other observation made is released, or kept (not latest) when an
 * error carries it as `observed`.
 */
export async function locateIn(
  env: ActEnv,
  ctx: CallContext,
  input: string | Locator,
  options: LocateOptions,
): Promise<Located> {
  const locator = locatorOfInput(input);
  const said = printLocator(locator);
  // A pid names one instance of the locator's app; a name in the locator otherwise wins.
  const app = typeof options.app === "number" ? options.app : (locator.app ?? options.app);
  if (app === undefined || app === "")
    throw invalidArgument(
      `the locator ${said} names no app`,
      "start it with app=NAME (app=mousepad >> …), or pass { app } to locate",
    );
  if (options.maxNodes !== undefined && (typeof options.maxNodes !== "number" || !(options.maxNodes >= 1)))
    throw invalidArgument("maxNodes must be a positive number");
  const started = performance.now();
  const backend = env.backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
  // Listening starts before the first look: a change between that look and the wait still wakes it.
  const listening = await listen(backend, app, ctx);
  let pid = listening.pid;
  const pump = listening.pump;
  let rounds = 0;
  let last: Snapshot | undefined;
  let lastWindows: WindowListing[] | undefined;
  const notes: string[] = [];
  const letGo = () => {
    if (last) void last.release().catch(() => undefined);
    last = undefined;
  };
  /** An error that carries the last observation: held (refs in it act) but not the app's latest. */
  const keepFor = (snap: Snapshot): Snapshot => {
    env.store.keep(snap, { by: "wait", latest: false });
    if (last === snap) last = undefined;
    return snap;
  };
  const where = (snap: Snapshot) => `window ${quoted(snap.window.title, 100)} of ${snap.app.name}`;
  const waited = () =>
    `waited ${Math.round(performance.now() - started)} ms, ${rounds} observation${rounds === 1 ? "" : "s"}`;
  const notFound = (snap: Snapshot): AxsnapError => {
    const candidates = candidatesFor(snap, locator, options.near);
    const closest = candidates
      .map(
        (c) =>
          `${c.locator === "" ? c.line : printLocator({ path: parseLocator(c.locator).path.slice(-1) })} (${c.ref})${c.why ? ` · ${c.why}` : ""}`,
      )
      .join("; ");
    return new AxsnapError(
      "ELEMENT_NOT_FOUND",
      `no element matches ${lastSaid(locator)} in ${where(snap)} (${waited()})`,
      {
        hint:
          candidates.length > 0
            ? `closest: ${closest}; act on a candidate's ref or locator if it is the one, or read the window with snapshot`
            : "read the window with snapshot or find, and write the locator from what it prints (record.locator)",
        observed: keepFor(snap),
        candidates,
      },
    );
  };
  const unproven = (snap: Snapshot): AxsnapError =>
    new AxsnapError(
      "IDENTITY_UNPROVEN",
      `the observation of ${where(snap)} was incomplete (cut by ${snap.cutBy.join(", ")}), so it cannot show that ${lastSaid(locator)} is there, or that it is the only one (${waited()})`,
      {
        hint: "raise maxNodes (or narrow the window), then locate again",
        observed: keepFor(snap),
      },
    );
  const noWindow = (): AxsnapError => {
    const w = locator.window!;
    const listed = (lastWindows ?? []).map(windowSaid).join(", ") || "no windows";
    return new AxsnapError(
      "WINDOW_NOT_FOUND",
      `no window of ${String(app)} matches ${printLocator({ window: w, path: [] })} (${waited()}; open: ${listed})`,
      {
        hint: "listWindows shows what the app has open; open the window first, or fix the locator's window segment",
      },
    );
  };
  /** The deadline passed: the verdict from what was last seen. */
  const verdict = (): AxsnapError => {
    if (!last)
      return locator.window !== undefined
        ? noWindow()
        : new AxsnapError("TIMEOUT", `could not observe ${String(app)} in time (${waited()})`);
    if (!last.complete) return unproven(last);
    return notFound(last);
  };
  try {
    for (;;) {
      const before = pump ? await ctx.step("read", () => pump.current()) : undefined;
      let windowId: string | undefined;
      let picked = true;
      if (locator.window !== undefined) {
        const windows = await ctx.step("read", () =>
          listWindows(
            pid ?? app,
            { deadlineMs: Math.max(1, ctx.remaining()), ...(ctx.signal ? { signal: ctx.signal } : {}) },
            env.backend,
          ),
        );
        lastWindows = windows;
        const pick = pickWindow(locator.window, windows);
        if ("several" in pick)
          throw new AxsnapError(
            "AMBIGUOUS_TARGET",
            `${pick.several.length} windows of ${String(app)} match ${printLocator({ window: locator.window, path: [] })}: ${pick.several.map(windowSaid).join("; ")}`,
            {
              hint: "give the window's whole title, or its kind (window:dialog=…), so that one window matches",
            },
          );
        if ("none" in pick) picked = false;
        else {
          windowId = pick.window.id;
          if (pick.note !== undefined && !notes.includes(pick.note)) notes.push(pick.note);
        }
      }
      if (picked) {
        rounds++;
        const observing = ctx.step(
          "read",
          () =>
            observeOnce(
              {
                app: pid ?? app,
                ...(windowId === undefined ? {} : { window: { id: windowId } }),
                ...(options.maxNodes === undefined ? {} : { maxNodes: options.maxNodes }),
                screenshot: false,
                deadlineMs: ctx.remaining(),
              },
              env.backend,
            ),
          (late) => late.release(),
        );
        // The window picked closed before it was walked: it is not there, so look again.
        const snap = await observing.catch((e: unknown) => {
          if (
            e instanceof AxsnapError &&
            e.code === "WINDOW_NOT_FOUND" &&
            windowId !== undefined &&
            !ctx.expired()
          )
            return undefined;
          throw e;
        });
        if (snap === undefined) {
          picked = false;
        } else {
          letGo();
          last = snap;
          pid ??= snap.app.pid;
          if (locator.app !== undefined && fold(locator.app) !== fold(snap.app.name))
            throw invalidArgument(
              `the locator names app ${locator.app}, but ${String(app)} is ${snap.app.name} (pid ${snap.app.pid})`,
            );
          const matches = matchLocator(snap, pathOnly(locator));
          if (matches.length > 1) {
            // Several are several even in a partial observation: the locator needs narrowing, not waiting.
            const each = matches.map((m) => candidateOf(snap, m));
            throw new AxsnapError(
              "AMBIGUOUS_TARGET",
              `${matches.length} elements match ${lastSaid(locator)}: ${each.map((c) => `${c.locator === "" ? c.line : relative(c.locator)} (${c.ref})`).join("; ")}`,
              {
                hint: "use the locator of the one you mean (each match's locator is in `matches`), or act on its ref",
                observed: keepFor(snap),
                matches: each,
              },
            );
          }
          if (snap.complete && matches.length === 1) {
            const record = matches[0]!;
            last = undefined;
            return {
              snapshot: snap,
              record: record as ElementRecord,
              ref: `@${snap.id}:e${record.index}`,
              locator: said,
              ms: Math.round(performance.now() - started),
              rounds,
              notes,
            };
          }
          // Cut by the window's size, not by time: looking again gives the same cut.
          if (!snap.complete && !snap.cutBy.some((c) => TRANSIENT_CUTS.has(c))) throw unproven(snap);
        }
      }
      if (pump && before !== undefined) await nextEvent(pump, before, ctx);
      else await ctx.step("read", () => sleep(Math.min(ctx.remaining(), NO_EVENTS_POLL_MS)));
      if (await tooLateToLook(ctx)) throw verdict();
    }
  } catch (e) {
    // The deadline ran out inside a listing or an observation: the verdict is what was last seen.
    if (e instanceof AxsnapError && e.code === "TIMEOUT" && e.observed === undefined && ctx.expired()) {
      const v = verdict();
      if (v.code !== "TIMEOUT") {
        letGo();
        throw v;
      }
    }
    letGo();
    throw e;
  }
}

/** A match's locator without its app and window segments: what tells it apart in this window. */
function relative(locator: string): string {
  return printLocator(pathOnly(parseLocator(locator)));
}
