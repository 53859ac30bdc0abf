/**
 * session.expect (issue 34, design 4.1): waits until the effect a recorded
 * run saw shows in the app (a window opened or closed, an element with
 * these states or value, present or gone), or throws EFFECT_NOT_SEEN with
 * the last observation.
 *
 * It waits the way waitFor does (act/wait.ts): it looks, and between looks
 * it waits on the app's change events through the app's shared pump, with
 * a slow poll as the safety net. A window is told from the app's window
 * listing; an element by matching its locator (locator/match.ts) over a
 * fresh observation of the window the locator names, then reading the
 * line's printed facts (value, states), as the agent would read them.
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { desktopBackend, listWindows, snapshot as observeOnce } from "../../observe/desktop.js";
import { factsOf } from "../../observe/diff.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { WindowKind, WindowListing } from "../../observe/windows.js";
import type { ElementRecord } from "../../render/records.js";
import { readValue } from "../../render/sanitize.js";
import type { ActEnv } from "../act/env.js";
import { listen, NO_EVENTS_POLL_MS, sleep } from "../act/wait.js";
import type { CallContext } from "../call.js";
import { parseLocator, printLocator } from "../locator/grammar.js";
import { matchLocator } from "../locator/match.js";
import type { Locator } from "../locator/types.js";
import { matchLists, patternOf } from "../pattern.js";

export type Expectation =
  | { window: { title?: string | RegExp; kind?: WindowKind }; opened: true }
  | { window: { title?: string | RegExp; kind?: WindowKind }; closed: true }
  | {
      locator: string | Locator;
      states?: { has?: string[]; lacks?: string[] };
      value?: string | { contains: string };
    }
  | { locator: string | Locator; present: true }
  | { locator: string | Locator; gone: true };

export interface ExpectOptions {
  /** Default 3000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ExpectResult {
  ms: number;
  snapshot: Snapshot;
}

/** Kept for the last look, so a check that fails still says what is there (at most a quarter of the budget). */
const LAST_LOOK_MS = 600;

const WINDOW_KINDS: readonly WindowKind[] = ["window", "dialog", "menu", "popup", "sheet"];

/** One look: whether the effect shows, what is there (for the message), and the observation made. */
interface Look {
  met: boolean;
  now: string;
  snapshot?: Snapshot;
}

interface Compiled {
  describe: string;
  look(look: Looker): Promise<Look>;
}

/** What a check may do while looking: list the app's windows, observe one. */
interface Looker {
  windows(): Promise<WindowListing[]>;
  observe(window?: WindowListing): Promise<Snapshot>;
}

export async function expectIn(
  env: ActEnv,
  ctx: CallContext,
  app: string | number,
  expectation: Expectation,
  options: ExpectOptions,
): Promise<ExpectResult> {
  if (typeof app !== "string" && typeof app !== "number")
    throw invalidArgument("expect needs the app: its name or pid");
  const check = compile(expectation);
  const started = performance.now();
  const backend = env.backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
  const { pid, pump } = await listen(backend, app, ctx);
  const reserve = Math.min(LAST_LOOK_MS, (options.timeoutMs ?? 3000) / 4);
  let last: Snapshot | undefined;
  const made: Snapshot[] = [];
  const looker: Looker = {
    windows: () =>
      ctx.step("read", () =>
        listWindows(
          pid ?? app,
          { deadlineMs: Math.max(1, ctx.remaining()), ...(ctx.signal ? { signal: ctx.signal } : {}) },
          env.backend,
        ),
      ),
    observe: async (window) => {
      const snap = await ctx.step(
        "read",
        () =>
          observeOnce(
            {
              app: pid ?? app,
              ...(window ? { window: { id: window.id } } : {}),
              screenshot: false,
              deadlineMs: Math.max(1, ctx.remaining()),
            },
            env.backend,
          ),
        (late) => late.release(),
      );
      made.push(snap);
      last = snap;
      return snap;
    },
  };
  /** Every observation but the one handed over is this call's own: let go. */
  const letGoBut = (keep: Snapshot | undefined) => {
    for (const s of made.splice(0)) if (s !== keep) void s.release().catch(() => undefined);
  };
  let rounds = 0;
  let said = "";
  try {
    for (;;) {
      const before = pump ? await ctx.step("read", () => pump.current()) : 0;
      const finalLook = ctx.remaining() <= reserve;
      rounds++;
      const look = await check.look(looker);
      said = look.now;
      if (look.met) {
        const snap = look.snapshot ?? (await looker.observe());
        letGoBut(snap);
        env.store.keep(snap, { by: "wait" });
        return { ms: Math.round(performance.now() - started), snapshot: snap };
      }
      if (finalLook) break;
      // Only the latest observation is worth keeping for the error.
      letGoBut(last);
      const left = ctx.remaining() - reserve;
      if (pump) await ctx.step("read", () => pump.next(before, Math.max(0, left)));
      else await ctx.step("read", () => sleep(Math.min(left, NO_EVENTS_POLL_MS)));
    }
  } catch (e) {
    letGoBut(undefined);
    throw e;
  }
  // A window check lists windows only: the last look also shows the app as it is, for `observed`.
  if (!last && ctx.remaining() > 20) {
    try {
      await looker.observe();
    } catch {
      // What is there was said in words; an observation that could not be made is not a reason to say otherwise.
    }
  }
  letGoBut(last);
  // Held for refs into it, but not the app's latest: bare indices keep what they meant.
  if (last) env.store.keep(last, { by: "wait", latest: false });
  throw new AxsnapError(
    "EFFECT_NOT_SEEN",
    `expected ${check.describe}; waited ${Math.round(performance.now() - started)} ms (${rounds} looks), and ${said}`,
    last ? { observed: last } : {},
  );
}

function compile(e: Expectation): Compiled {
  if (e === null || typeof e !== "object" || Array.isArray(e))
    throw invalidArgument(
      "an expectation must be an object: { window, opened }, { window, closed } or { locator, … }",
    );
  if ("window" in e) return compileWindow(e);
  if ("locator" in e) return compileLocator(e);
  throw invalidArgument("an expectation needs window (with opened or closed) or locator");
}

function compileWindow(e: { window: { title?: string | RegExp; kind?: WindowKind } }): Compiled {
  const w = e.window;
  if (w === null || typeof w !== "object")
    throw invalidArgument("window must be an object: { title?, kind? }");
  if (w.kind !== undefined && !WINDOW_KINDS.includes(w.kind))
    throw invalidArgument(`window.kind must be one of ${WINDOW_KINDS.join(", ")}`);
  if (w.title !== undefined && typeof w.title !== "string" && !(w.title instanceof RegExp))
    throw invalidArgument("window.title must be a string or a RegExp");
  const opened = (e as { opened?: unknown }).opened === true;
  const closed = (e as { closed?: unknown }).closed === true;
  if (opened === closed) throw invalidArgument("a window expectation needs opened: true or closed: true");
  const title = w.title;
  const test =
    title instanceof RegExp ? patternOf("window title", title) : title === undefined ? undefined : title;
  const fits = (l: WindowListing) =>
    (w.kind === undefined || l.kind === w.kind) &&
    (test === undefined ||
      (typeof test === "string" ? l.title === test : matchLists("window title", test, [[l.title]])[0]!));
  const name = `${w.kind ?? "window"}${title === undefined ? "" : ` ${printTitle(title)}`}`;
  return {
    describe: `${name} to ${opened ? "open" : "close"}`,
    async look(looker) {
      const windows = await looker.windows();
      const found = windows.find(fits);
      const now = `the app's windows are: ${windows.map((l) => `${l.kind} ${JSON.stringify(l.title)}`).join(", ") || "none"}`;
      if (opened && found) return { met: true, now, snapshot: await looker.observe(found) };
      if (closed && !found) return { met: true, now };
      return { met: false, now };
    },
  };
}

function compileLocator(e: {
  locator: string | Locator;
  states?: { has?: string[]; lacks?: string[] };
  value?: string | { contains: string };
  present?: boolean;
  gone?: boolean;
}): Compiled {
  const locator = typeof e.locator === "string" ? parseLocator(e.locator) : e.locator;
  if (locator === null || typeof locator !== "object" || !Array.isArray(locator.path))
    throw invalidArgument("locator must be a locator string or a { path } object");
  const text = printLocator(locator);
  const gone = e.gone === true;
  const states = e.states;
  if (states !== undefined) {
    if (states === null || typeof states !== "object")
      throw invalidArgument("states must be { has?, lacks? }");
    for (const k of ["has", "lacks"] as const)
      if (
        states[k] !== undefined &&
        (!Array.isArray(states[k]) || states[k].some((s) => typeof s !== "string"))
      )
        throw invalidArgument(`states.${k} must be an array of state words`);
  }
  const value = e.value;
  if (
    value !== undefined &&
    typeof value !== "string" &&
    !(value !== null && typeof value === "object" && typeof value.contains === "string")
  )
    throw invalidArgument("value must be a string or { contains: string }");
  const wants: string[] = [];
  if (states?.has?.length) wants.push(states.has.join(", "));
  if (states?.lacks?.length) wants.push(`not ${states.lacks.join(", not ")}`);
  if (typeof value === "string") wants.push(`value ${JSON.stringify(value)}`);
  else if (value) wants.push(`a value containing ${JSON.stringify(value.contains)}`);
  const reads = (snap: Snapshot, r: ElementRecord): boolean => {
    const facts = factsOf(snap, r.index);
    const have = facts?.states ?? [];
    if (states?.has?.some((s) => !have.includes(s))) return false;
    if (states?.lacks?.some((s) => have.includes(s))) return false;
    // Compared with what the field holds, not with its printed (escaped, labelled) fact.
    const holds = facts?.value === undefined ? undefined : readValue(facts.value);
    if (typeof value === "string" && holds !== value) return false;
    if (typeof value === "object" && !(holds ?? "").includes(value.contains)) return false;
    return true;
  };
  return {
    describe: `${text} ${gone ? "to be gone" : wants.length > 0 ? `to read ${wants.join(", ")}` : "to be there"}`,
    async look(looker) {
      const window = await pickWindow(looker, locator);
      if (window === null) {
        const now = `no window of the app fits ${windowText(locator)}`;
        return gone ? { met: true, now } : { met: false, now };
      }
      const snap = await looker.observe(window);
      const matches = matchLocator(snap, locator);
      if (gone) {
        // Gone is told only from a whole observation: what a cut walk did not reach may still be there.
        const met = snap.complete && matches.length === 0;
        return {
          met,
          now:
            matches.length > 0
              ? `it is there: ${lines(snap, matches)}`
              : "it was not seen, but the observation was cut short",
          snapshot: snap,
        };
      }
      if (matches.length === 0)
        return {
          met: false,
          now: `no element matches it in window ${JSON.stringify(snap.window.title)}`,
          snapshot: snap,
        };
      const hit = matches.find((r) => reads(snap, r));
      if (hit) return { met: true, now: lines(snap, [hit]), snapshot: snap };
      return { met: false, now: `it reads: ${lines(snap, matches)}`, snapshot: snap };
    },
  };
}

/**
 * The window a locator names: by kind and title; when none has the title
 * but exactly one window of that kind is open, that one (a title with a
 * file name in it changes between runs). Undefined: the app's default
 * window (no window segment); null: none fits.
 */
async function pickWindow(looker: Looker, l: Locator): Promise<WindowListing | undefined | null> {
  const w = l.window;
  if (w === undefined) return undefined;
  const windows = await looker.windows();
  const ofKind = w.kind === undefined ? windows : windows.filter((x) => x.kind === w.kind);
  const title = w.title;
  if (title === undefined) return ofKind[0] ?? null;
  const titled = ofKind.filter((x) =>
    title instanceof RegExp
      ? matchLists("window title", patternOf("window title", title), [[x.title]])[0]!
      : x.title === title,
  );
  if (titled.length > 0) return titled[0]!;
  const sameKind = windows.filter((x) => x.kind === (w.kind ?? "window"));
  return sameKind.length === 1 ? sameKind[0]! : null;
}

function windowText(l: Locator): string {
  const w = l.window!;
  return `${w.kind ?? "window"}${w.title === undefined ? "" : ` ${printTitle(w.title)}`}`;
}

function printTitle(t: string | RegExp): string {
  return t instanceof RegExp ? String(t) : JSON.stringify(t);
}

/** The printed lines of these records, as the snapshot text shows them (at most three). */
function lines(snap: Snapshot, records: ElementRecord[]): string {
  const printed = printedLines(snap);
  const out = records
    .slice(0, 3)
    .map((r) => printed.get(r.index) ?? `${r.index} ${r.roleText} ${r.title ?? ""}`.trim());
  return out.join("; ") + (records.length > 3 ? `; and ${records.length - 3} more` : "");
}

function printedLines(snap: Snapshot): Map<number, string> {
  const out = new Map<number, string>();
  const pattern = snap.style === "compact" ? /^ *(\d+): (.*)$/ : /^\t*(\d+)(?: (.*))?$/;
  for (const raw of snap.text.split("\n")) {
    const m = pattern.exec(raw);
    if (m && !out.has(Number(m[1]))) out.set(Number(m[1]), `${m[1]} ${m[2] ?? ""}`.trim());
  }
  return out;
}
