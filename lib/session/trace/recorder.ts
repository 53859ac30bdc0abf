/**
 * The recorder behind the Session (docs/trace.md): turns each action and
 * observation into a step line, and each snapshot it saw into a snapshot
 * line (once per id), with the targets' printed lines and locators and the
 * changes each action caused, located so that export and replay need no live
 * snapshot. Everything is built while the call returns (its snapshots may be
 * released right after) and handed to the writer's queue, or, inside a door
 * call, kept until the door's reply is known.
 */

import { AxsnapError, unexpectedErrorJson } from "../../model/errors.js";
import { liveObservation } from "../../observe/desktop.js";
import { factsOf } from "../../observe/diff.js";
import { screenshotRequest } from "../../observe/marks.js";
import { detachScreenshot, type Snapshot } from "../../observe/snapshot.js";
import type { Change } from "../../observe/snapshot-types.js";
import type { ElementRecord } from "../../render/records.js";
import type { ActionResult } from "../act/result.js";
import { isLocatorTarget, locatorTargetText, type SnapshotStore, type Target } from "../act/store.js";
import { nameOf } from "../find.js";
import { locatorOf } from "../locator/compute.js";
import { printLocator } from "../locator/grammar.js";
import { locatorIndex } from "../locator/match.js";
import { currentDoorCall } from "./door.js";
import { type MaskedField, mapStrings, maskedFields, maskLines, maskSnapshotText } from "./masking.js";
import { type MaskEntry, MaskFile, maskKey, type SecretMask } from "./masks.js";
import type { ActStart, SessionRecorder, StepRecording } from "./recording.js";
import { Scrubber, SECRET_MARK } from "./scrub.js";
import type {
  TraceBatch,
  TraceChange,
  TraceError,
  TraceResult,
  TraceSnapshotLine,
  TraceStepLine,
  TraceSurface,
  TraceTarget,
} from "./types.js";

/** What the recorder needs of its Session. */
export interface TraceHost {
  readonly store: SnapshotStore;
}

/** Changes kept per kind (added, changed, removed) with their locators. */
export const CHANGES_KEPT = 20;

/** Where the recorder's steps go: the writer's queue (sink.ts), built when it is written. */
export type TraceOut = (step: () => { entries: object[]; files: TraceBatch["files"] }) => void;

/** A step before the appender numbers it. */
type Step = Omit<TraceStepLine, "n" | "runId" | "secret"> & { secret?: { env?: string } };

interface Built {
  /** Snapshot lines, and the snapshot each was made from (index-aligned). */
  lines: object[];
  snaps: Snapshot[];
  files: TraceBatch["files"];
  /** Other snapshots the step's strings print lines of (the diff's `from`). */
  involved: Snapshot[];
  /** The field a secret went into, as a mask: made when the queue is written (a locator costs). */
  maskOf?: () => SecretMask | undefined;
}

const PIXEL_METHODS = new Set(["clickAt", "rightClickAt", "doubleClickAt", "scrollAt", "dragAt"]);

export class Recorder implements SessionRecorder {
  /** Snapshot ids this recorder has written a line for. */
  private readonly seen = new Set<string>();
  readonly scrub = new Scrubber();
  /** Masks of the fields secrets went into: this recorder's own, and the trace's (any process's). */
  private readonly own: SecretMask[] = [];
  private readonly maskFile: MaskFile | undefined;
  private masks: readonly SecretMask[] = [];
  private masksFrom: { file: readonly SecretMask[]; own: number } = { file: [], own: 0 };

  /** `traceDir`: where other processes' masks are read from (masks.ts). */
  constructor(
    private readonly host: TraceHost,
    readonly screenshots: boolean,
    private readonly out: TraceOut,
    traceDir?: string,
  ) {
    this.maskFile = traceDir === undefined ? undefined : new MaskFile(traceDir);
  }

  begin(start: ActStart): StepRecording {
    try {
      return this.recording(start);
    } catch {
      // A trace must never fail the call it records: this step goes unrecorded.
      const { secret: _secret, ...options } = start.options;
      return { options, done: () => undefined };
    }
  }

  private recording(start: ActStart): StepRecording {
    const t0 = performance.now();
    const secret = secretOf(start);
    if (secret) this.scrub.add(secret.value);
    const addressed = start.targets.map((t, i) => this.address(t, start.locators[i], start.options.app));
    let before = addressed.find((a) => a.snapshot)?.snapshot;
    let pointRecord: ElementRecord | undefined;
    if (before === undefined && start.targets.length === 0) {
      const of = (start.options as { of?: unknown }).of;
      before = isSnapshot(of) ? of : this.latest(start.options.app);
      if (before && PIXEL_METHODS.has(start.method)) pointRecord = underPoint(before, start.args);
    }
    const built: Built = { lines: [], snaps: [], files: [], involved: [] };
    if (before) this.snapshotLine(before, built);
    const field = secret ? addressed.find((a) => a.snapshot && a.record) : undefined;
    if (field) built.maskOf = () => this.maskOf(field.snapshot!, field.record!);
    // Locators are the costly part: built when the queue is written, from records that never change.
    const targetsOf = (): TraceTarget[] => {
      const out = addressed.map((a) =>
        a.snapshot && a.record ? this.target(a.snapshot, a.record) : a.unresolved!,
      );
      if (before && pointRecord) out.push(this.target(before, pointRecord));
      return out;
    };
    const { secret: _secret, ...actOptions } = start.options;
    let options = actOptions;
    let forced = false;
    if (this.screenshots && actOptions.snapshot !== false) {
      const asked = typeof actOptions.snapshot === "object" ? actOptions.snapshot : {};
      const kept = before ? liveObservation(before)?.options : undefined;
      const wanted = screenshotRequest(asked.screenshot ?? kept?.screenshot).capture;
      if (!wanted) {
        options = { ...actOptions, snapshot: { ...asked, screenshot: true } };
        forced = true;
      }
    }
    let traceMs = performance.now() - t0;
    const scope = currentDoorCall();
    return {
      options,
      done: (result, error) => {
        const t1 = performance.now();
        try {
          const fresh = result?.snapshot;
          if (fresh) this.snapshotLine(fresh, built);
          if (fresh && forced) {
            detachScreenshot(fresh);
            // Its own options stay the caller's: an action on it takes no screenshot either.
            const live = liveObservation(fresh);
            if (live) live.options = { ...live.options, screenshot: false };
          }
          const traced = result ? this.result(result, before, built) : undefined;
          const step: Step = {
            kind: "step",
            pid: process.pid,
            door: "api",
            call: start.method,
            args: this.apiArgs(start, secret !== undefined),
            method: start.method,
            startedAt: epochOf(start.startedAt),
            ...(before ? { before: before.id } : {}),
            ...(fresh ? { after: fresh.id } : {}),
            ...pointOf(start),
            ...(typeof start.args.keys === "string" ? { keys: start.args.keys } : {}),
            ...(start.method === "typeText" && typeof start.args.text === "string"
              ? { text: secret ? SECRET_MARK : start.args.text }
              : {}),
            ...(secret ? { secret: secret.env === undefined ? {} : { env: secret.env } } : {}),
            ...(traced ? { result: traced.result } : {}),
            ...(result === undefined ? { error: errorOf(error) } : {}),
            timings: {
              ms: round(performance.now() - start.startedAt),
              locateMs: round(start.locateMs),
              ...(result?.settled ? { settleMs: result.settled.ms } : {}),
            },
          };
          traceMs += performance.now() - t1;
          this.emit(
            () => {
              const targets = targetsOf();
              // In the order the format documents: targets before what the call did.
              const { result: done, error: failed, timings, ...rest } = step;
              const full: Step = {
                ...rest,
                targets,
                ...(done ? { result: done } : {}),
                ...(failed ? { error: failed } : {}),
                timings,
              };
              if (traced && full.result) traced.locate(full.result, targets[0]);
              return full;
            },
            built,
            scope,
            traceMs,
          );
        } catch {
          // A trace must never fail the call it records.
        }
      },
    };
  }

  observed(
    method: string,
    args: Record<string, unknown>,
    snap: Snapshot | undefined,
    options: { read?: number[]; error?: unknown; startedAt?: number } = {},
  ): void {
    const t0 = performance.now();
    try {
      const built: Built = { lines: [], snaps: [], files: [], involved: [] };
      if (snap) this.snapshotLine(snap, built);
      const startedAt = options.startedAt ?? t0;
      const step: Step = {
        kind: "step",
        pid: process.pid,
        door: "api",
        call: method,
        args: plain(args) as Record<string, unknown>,
        method,
        startedAt: epochOf(startedAt),
        ...(snap ? { after: snap.id } : {}),
        ...(options.read ? { read: options.read } : {}),
        ...(options.error !== undefined ? { error: errorOf(options.error) } : {}),
        timings: { ms: round(t0 - startedAt) },
      };
      this.emit(() => step, built, currentDoorCall(), performance.now() - t0);
    } catch {
      // A trace must never fail the call it records.
    }
  }

  /**
   * Handed on: at once, or when the door call ends (with its reply). The step
   * is finished (located, scrubbed) when the queue is written; `traceMs` is
   * what the recorder cost the call itself.
   */
  private emit(
    stepOf: () => Step,
    built: Built,
    scope: ReturnType<typeof currentDoorCall>,
    traceMs: number,
  ): void {
    const args = scope ? (plain(scope.call.args) as Record<string, unknown>) : undefined;
    const finish = (reply: string | undefined) => () => {
      const masks: MaskEntry[] = [];
      const mask = built.maskOf?.();
      if (mask) {
        masks.push({ kind: "mask", mask });
        if (!this.own.some((m) => maskKey(m) === maskKey(mask))) this.own.push(mask);
      }
      this.refreshMasks();
      let step = stepOf();
      if (scope) {
        step.door = scope.call.door;
        step.call = scope.call.call;
        step.args = args!;
      }
      if (reply !== undefined) step.reply = reply;
      step.timings.traceMs = round(traceMs, 2);
      const lines = built.lines.map((l, i) =>
        this.scrubSnapshot(l as TraceSnapshotLine, built.snaps[i]!, built),
      );
      const fields: MaskedField[] = [];
      for (const snap of [...built.snaps, ...built.involved]) fields.push(...maskedFields(snap, this.masks));
      if (fields.length > 0) step = mapStrings(step, (x) => maskLines(x, fields));
      return { entries: [...masks, ...lines, this.scrub.deep(step)], files: built.files };
    };
    if (!scope) this.out(finish(undefined));
    else scope.pending.push({ flush: (reply) => this.out(finish(reply)) });
  }

  /** A snapshot's text masked and scrubbed; one that showed a secret keeps no screenshot. */
  private scrubSnapshot(line: TraceSnapshotLine, snap: Snapshot, built: Built): TraceSnapshotLine {
    const fields = maskedFields(snap, this.masks);
    const text = maskSnapshotText(snap, line.text, fields);
    if (fields.length === 0 && !this.scrub.shows(text)) return line;
    if (line.shot && "file" in line.shot) {
      const file = line.shot.file;
      built.files = built.files.filter((f) => f.name !== file);
    }
    return { ...line, text: this.scrub.text(text), shot: { withheld: "secret" } };
  }

  /** The mask of the field a secret went into; none where its locator would print the secret (or none exists). */
  private maskOf(snap: Snapshot, record: ElementRecord): SecretMask | undefined {
    const locator = locatorText(snap, record);
    if (locator === undefined || this.scrub.shows(locator)) return undefined;
    const kind = snap.window.kind ?? "window";
    return { locator, app: snap.app.name, window: { title: snap.window.title, kind } };
  }

  /** The masks in force now: the trace's file is read again only when it changed. */
  private refreshMasks(): void {
    const file = this.maskFile?.current() ?? [];
    if (file === this.masksFrom.file && this.own.length === this.masksFrom.own) return;
    this.masksFrom = { file, own: this.own.length };
    const byKey = new Map<string, SecretMask>();
    for (const m of [...this.own, ...file]) byKey.set(maskKey(m), m);
    this.masks = [...byKey.values()];
  }

  /** A masked field of `snap` at `index`, if any. */
  private masked(snap: Snapshot, index: number): MaskedField | undefined {
    return maskedFields(snap, this.masks).find((f) => f.index === index);
  }

  /** A snapshot's line (and its PNG), the first time this recorder sees it. */
  private snapshotLine(snap: Snapshot, built: Built): void {
    if (this.seen.has(snap.id)) return;
    this.seen.add(snap.id);
    const w = snap.window;
    const shot = this.screenshots ? snap.screenshot : undefined;
    const file = `shots/${snap.id}.png`;
    const line: TraceSnapshotLine = {
      kind: "snapshot",
      id: snap.id,
      takenAt: snap.takenAt,
      app: { name: snap.app.name, pid: snap.app.pid },
      window: {
        ...(w.id === undefined ? {} : { id: w.id }),
        title: w.title,
        kind: (w.kind ?? "window") as NonNullable<TraceSnapshotLine["window"]>["kind"],
        frame: w.frame,
        scale: w.scale,
      },
      style: snap.style,
      complete: snap.complete,
      text: snap.text,
      ...(shot
        ? { shot: { file, pixelWidth: shot.pixelWidth, pixelHeight: shot.pixelHeight, scale: shot.scale } }
        : {}),
    };
    built.lines.push(line);
    built.snaps.push(snap);
    if (shot) built.files.push({ name: file, data: shot.data });
  }

  /** The snapshot and record a target names now; what can be said of one that names none. */
  private address(
    t: Target,
    locator: string | undefined,
    app: string | number | undefined,
  ): { snapshot?: Snapshot; record?: ElementRecord; unresolved?: TraceTarget } {
    if (!isLocatorTarget(t)) {
      try {
        return this.host.store.address(t, app);
      } catch {
        // Recorded as far as it can be: the step's error says why it named nothing.
      }
    }
    const ref = typeof t === "string" ? /^@(s[a-z0-9]{7}):e(\d{1,9})$/.exec(t) : null;
    return {
      unresolved: {
        snapshot: ref ? ref[1]! : "",
        index: ref ? Number(ref[2]) : typeof t === "number" ? t : -1,
        line: "",
        role: "",
        roleText: "",
        ancestors: [],
        ...(locator === undefined ? {} : { locator }),
      },
    };
  }

  private latest(app: string | number | undefined): Snapshot | undefined {
    try {
      return this.host.store.latestOf(app);
    } catch {
      return undefined;
    }
  }

  private target(snap: Snapshot, record: ElementRecord): TraceTarget {
    const facts = factsOf(snap, record.index);
    const name = nameOf(record);
    const locator = locatorText(snap, record);
    const masked = this.masked(snap, record.index);
    const value = masked ? masked.masked : facts?.value;
    return {
      snapshot: snap.id,
      index: record.index,
      line: masked ? masked.maskedLine : (printedLine(snap, record.index) ?? ""),
      role: record.role,
      roleText: record.roleText,
      ...(name === undefined ? {} : { name }),
      ancestors: ancestorsOf(snap, record),
      ...(locator === undefined ? {} : { locator }),
      ...(record.frame ? { frame: record.frame } : {}),
      ...(value === undefined ? {} : { value }),
      ...(facts && facts.states.length > 0 ? { states: facts.states } : {}),
    };
  }

  /** The door's arguments for an API call: the method's own, and its targets as given. */
  private apiArgs(start: ActStart, secret: boolean): Record<string, unknown> {
    const args = plain(start.args) as Record<string, unknown>;
    if (secret) {
      if ("text" in args) args.text = SECRET_MARK;
      if ("value" in args) args.value = SECRET_MARK;
    }
    const given = start.targets.map((t, i) => start.locators[i] ?? targetText(t, this.host));
    if (given.length === 1) args.target = given[0];
    else if (given.length > 1) args.targets = given;
    return args;
  }

  /** What the reply said, now; its changes' locators when the queue is written (`locate`). */
  private result(
    r: ActionResult,
    before: Snapshot | undefined,
    built: Built,
  ): { result: TraceResult; locate(into: TraceResult, target: TraceTarget | undefined): void } {
    const out: TraceResult = {
      action: r.action,
      delivery: r.delivery,
      retry: r.retry,
      channel: r.channel,
      notes: [...r.notes],
    };
    if (r.settled) out.settled = { mode: r.settled.mode, ms: r.settled.ms, events: r.settled.events };
    if (r.opened) out.opened = r.opened.map(surface);
    if (r.closed) out.closed = r.closed.map(surface);
    const diff = r.changes;
    const fresh = r.snapshot;
    // The snapshot the diff is from: looked up now, while the session still holds it.
    const from = r.changesFrom === before?.id ? before : this.held(r.changesFrom);
    if (from) built.involved.push(from);
    if (fresh) built.involved.push(fresh);
    if (diff) out.changesText = diff.text;
    if (r.applied !== undefined) out.applied = r.applied;
    if (r.value !== undefined) out.value = r.value;
    if (r.exited) out.exited = { name: r.exited.name, pid: r.exited.pid };
    const kept = diff
      ? {
          changed: diff.changed.slice(0, CHANGES_KEPT),
          added: diff.added.slice(0, CHANGES_KEPT),
          removed: diff.removed.slice(0, CHANGES_KEPT),
        }
      : undefined;
    return {
      result: out,
      locate: (into, target) => {
        if (!kept || !fresh) return;
        const rec =
          target && before && before.id === target.snapshot ? before.records[target.index] : undefined;
        const targetKey = rec?.handle === undefined ? undefined : `h${rec.handle}`;
        const changes: TraceChange[] = [];
        for (const c of kept.changed) changes.push(this.change("changed", c, fresh, targetKey));
        for (const c of kept.added) changes.push(this.change("added", c, fresh, targetKey));
        for (const c of kept.removed) changes.push(this.change("removed", c, from, targetKey));
        into.changes = changes;
      },
    };
  }

  private change(
    kind: TraceChange["kind"],
    c: Change,
    snap: Snapshot | undefined,
    targetKey: string | undefined,
  ): TraceChange {
    const record = snap?.records[c.index];
    const facts = snap ? factsOf(snap, c.index) : undefined;
    const locator = snap && record ? locatorText(snap, record) : undefined;
    const value = snap && this.masked(snap, c.index) ? this.masked(snap, c.index)!.masked : facts?.value;
    return {
      kind,
      line: c.line,
      ...(locator === undefined ? {} : { locator }),
      ...(c.fields ? { fields: [...c.fields] } : {}),
      ...(value === undefined ? {} : { value }),
      ...(facts && facts.states.length > 0 ? { states: facts.states } : {}),
      ...(targetKey !== undefined && c.key === targetKey ? { target: true } : {}),
    };
  }

  /** A snapshot the session still holds, by id. */
  private held(id: string | undefined): Snapshot | undefined {
    if (id === undefined) return undefined;
    try {
      return this.host.store.address(`@${id}:e0`).snapshot;
    } catch {
      return undefined;
    }
  }
}

function secretOf(start: ActStart): { value: string; env?: string } | undefined {
  const s = start.options.secret;
  if (s === undefined || s === false) return undefined;
  const value = start.method === "typeText" ? start.args.text : start.args.value;
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  return typeof s === "string" ? { value: String(value), env: s } : { value: String(value) };
}

function isSnapshot(v: unknown): v is Snapshot {
  return v !== null && typeof v === "object" && typeof (v as Snapshot).id === "string" && "records" in v;
}

/** The record under a pixel step's point (in screenshot pixels of `snap`). */
function underPoint(snap: Snapshot, args: Record<string, unknown>): ElementRecord | undefined {
  const shot = snap.screenshot;
  const { x, y } = args;
  if (!shot || typeof x !== "number" || typeof y !== "number") return undefined;
  const sx = shot.windowOrigin.x + x / shot.scale;
  const sy = shot.windowOrigin.y + y / shot.scale;
  let best: ElementRecord | undefined;
  for (const r of snap.records) {
    const f = r.screenFrame;
    if (r.ocr !== undefined || !f || sx < f.x || sy < f.y || sx >= f.x + f.w || sy >= f.y + f.h) continue;
    if (!best || f.w * f.h <= best.screenFrame!.w * best.screenFrame!.h) best = r;
  }
  return best;
}

function pointOf(start: ActStart): Pick<TraceStepLine, "point"> {
  const { x, y, to } = start.args as { x?: unknown; y?: unknown; to?: { x: number; y: number } };
  if (!PIXEL_METHODS.has(start.method) || typeof x !== "number" || typeof y !== "number") return {};
  return { point: { x, y, ...(to ? { to: { x: to.x, y: to.y } } : {}) } };
}

function surface(w: { title?: string; kind: TraceSurface["kind"]; role?: string }): TraceSurface {
  return { ...(w.title ? { title: w.title } : {}), kind: w.kind, ...(w.role ? { role: w.role } : {}) };
}

function errorOf(e: unknown): TraceError {
  if (e instanceof AxsnapError) {
    const { pid: _pid, ...json } = e.toJSON();
    return json;
  }
  return unexpectedErrorJson(e, true);
}

/** A target as the caller gave it: a ref, an index, a record's ref. */
function targetText(t: Target, host: TraceHost): string | number {
  if (typeof t === "number" || typeof t === "string") return t;
  if (isLocatorTarget(t)) return locatorTargetText(t);
  try {
    const a = host.store.address(t);
    return `@${a.snapshot.id}:e${a.record.index}`;
  } catch {
    return t.index;
  }
}

const locators = new WeakMap<Snapshot, Map<number, string | undefined>>();

/** The shortest locator of a record in its snapshot, printed; cached per snapshot. */
export function locatorText(snap: Snapshot, record: ElementRecord): string | undefined {
  let cache = locators.get(snap);
  if (!cache) {
    cache = new Map();
    locators.set(snap, cache);
  }
  if (cache.has(record.index)) return cache.get(record.index);
  let text: string | undefined;
  try {
    const l = locatorOf(snap, record);
    text = l === undefined ? undefined : printLocator(l);
  } catch {
    text = undefined;
  }
  cache.set(record.index, text);
  return text;
}

/** The ancestors that say something, outermost first, as locator steps print them. */
function ancestorsOf(snap: Snapshot, record: ElementRecord): string[] {
  const contexts = locatorIndex(snap).contexts[record.index] ?? [];
  return [...contexts].reverse().map((i) => {
    const r = snap.records[i]!;
    const name = nameOf(r);
    return name === undefined ? r.roleText : `${r.roleText} ${JSON.stringify(name)}`;
  });
}

const printed = new WeakMap<Snapshot, Map<number, string>>();

/** A record's printed line without its indent and index (as diff.ts reads lines). */
export function printedLine(snap: Snapshot, index: number): string | undefined {
  let lines = printed.get(snap);
  if (!lines) {
    lines = new Map();
    const pattern = snap.style === "compact" ? /^ *(\d+): (.*)$/ : /^\t*(\d+)(?: (.*))?$/;
    for (const raw of snap.text.split("\n")) {
      const m = pattern.exec(raw);
      if (!m) continue;
      const i = Number(m[1]);
      if (i < snap.records.length && !lines.has(i)) lines.set(i, m[2] ?? "");
    }
    printed.set(snap, lines);
  }
  return lines.get(index);
}

/** A value as JSON keeps it: snapshots by id, records by index, patterns as text, signals left out. */
function plain(v: unknown, depth = 0): unknown {
  if (v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  if (v === undefined || typeof v === "function" || typeof v === "symbol" || typeof v === "bigint")
    return undefined;
  if (v instanceof RegExp) return `/${v.source}/${v.flags}`;
  if (depth > 6 || v instanceof Uint8Array) return undefined;
  if (typeof AbortSignal !== "undefined" && v instanceof AbortSignal) return undefined;
  if (Array.isArray(v)) return v.map((x) => plain(x, depth + 1) ?? null);
  if (isSnapshot(v)) return `@${v.id}`;
  const o = v as Record<string, unknown>;
  if (typeof o.index === "number" && typeof o.roleText === "string" && Array.isArray(o.path)) return o.index;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    const p = plain(x, depth + 1);
    if (p !== undefined) out[k] = p;
  }
  return out;
}

/** performance.now() as ms since the epoch. */
function epochOf(t: number): number {
  return Math.round(Date.now() - (performance.now() - t));
}

function round(ms: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(ms * f) / f;
}
