/**
 * The commands, over one library Session and the store. A `Runner` lives for
 * one process: one command, or the steps of `axsnap call` (one Session, so a
 * bare index in a later step means that element of the latest snapshot the
 * sequence printed).
 *
 * In the warm process, a ref into a snapshot an earlier command printed
 * is reached by the live element it kept (lib/doors/cli/held.ts), as the
 * library reaches its own refs, once the store says the ref still exists.
 *
 * A ref from another process: its snapshot is not in this process's
 * Session, so it is looked up in the store; the app (by the stored pid) is
 * observed again with the stored render options, in the window the ref was
 * printed in (named by its stored id, with its kind and frame checked:
 * window.ts), and the element is found by its stored identity with
 * the library's rules (`findAgain`: one match, else STALE_REF,
 * AMBIGUOUS_TARGET or IDENTITY_UNPROVEN). The action then goes to the match
 * as a ref of the new observation, through every check the library makes on
 * any target (live identity, confirm landed, guards).
 */

import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { listApps, listWindows, permissionsIn } from "../../observe/desktop.js";
import { sameInk } from "../../observe/ocr/ink.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { sameIdentity } from "../../render/identity.js";
import { ocrLineAt, ocrTextKey } from "../../session/act/ocr-line.js";
import { recordAt } from "../../session/act/pixels.js";
import type { LocatorTarget } from "../../session/act/store.js";
import {
  type ActionResult,
  type ActOptions,
  createSession,
  findAgain,
  type Session,
  SharedSnapshots,
  waitConditionOf,
} from "../../session/session.js";
import { inDoorCall } from "../../session/trace/door.js";
import type { TraceOptions } from "../../session/trace/types.js";
import type { Caller } from "./caller.js";
import { daemonDisabled } from "./daemon-address.js";
import { runFind } from "./find.js";
import type { Globals, Step, Target } from "./grammar.js";
import { type HeldSnapshots, KEEP_PER_APP } from "./held.js";
import { launchableCommand, launchCommand } from "./launch.js";
import { locatedTarget, runLocate } from "./locate.js";
import type { NextContext } from "./next.js";
import { observation, renderOptionsOf, shotOf, snapshotOptionsOf } from "./observation.js";
import {
  type ActionData,
  actionOutcome,
  appsText,
  doorReply,
  type Outcome,
  permissionsText,
  type ResolveData,
  refOf,
  resolveText,
  type SnapshotData,
  snapshotData,
  snapshotText,
  type TargetData,
  windowsText,
} from "./output.js";
import { Store, type StoredSnapshot, storedOf } from "./store.js";
import { observeStoredWindow, windowDifference, windowWords } from "./window.js";

const REF = /^@(s[a-z0-9]{7}):e(\d{1,9})$/;
/** Coordinates need an observation at most this old (the library's staleAfterMs default). */
const PIXELS_MAX_AGE_MS = 60_000;

export class Runner {
  readonly session: Session;
  readonly store: Store;
  /** Snapshots handed to the caller (printed), newest last: what a bare index and --of mean here. */
  private readonly printed: Snapshot[] = [];
  /** Re-observations made for stored refs during the current command, by stored snapshot id. */
  private reobserved = new Map<string, Snapshot>();
  /** The app the current command is about, for hints ("run `axsnap snapshot --app NAME`"). */
  app: string | number | undefined;

  /** Whom the commands run for: files it names are its to read and write, its environment is theirs. */
  private readonly caller: Caller;
  /** What a printed next command (and a refusal's hint) carries: this one's desktop and session (lib/doors/cli/next.ts). */
  readonly next: NextContext;
  /**
   * The session for the observations a command makes only to reach a target
   * (a ref from another process observed again, the app keys go to): the
   * agent never reads them, so they are no steps of a trace. It keeps its
   * snapshots where `session` does, which acts on them. The same session
   * when no trace is on.
   */
  private readonly quiet: Session;
  /** The snapshots both sessions keep, when this runner made them (traced, in a process of its own). */
  private readonly own: SharedSnapshots | undefined;
  /** The trace the commands append to (--trace FILE or AXSNAP_TRACE, absolute), if any. */
  readonly tracePath: string | undefined;
  private readonly json: boolean;

  /**
   * `held`: the warm process's snapshots: this command's session keeps its
   * snapshots there (those of its session directory), and reaches refs into
   * the ones earlier commands printed by their live elements.
   */
  constructor(globals: Globals, caller: Caller, held?: HeldSnapshots) {
    this.caller = caller;
    const session = globals.session === undefined ? undefined : caller.resolve(globals.session);
    this.next = {
      ...(globals.desktop === undefined ? {} : { desktop: globals.desktop }),
      ...(session === undefined ? {} : { session }),
    };
    this.store = new Store(session);
    this.json = globals.json;
    const trace = globals.trace ?? (caller.env.AXSNAP_TRACE || undefined);
    this.tracePath = trace === undefined ? undefined : caller.resolve(trace);
    const base = { keepSnapshots: KEEP_PER_APP, ...(globals.confirm ? { confirm: () => true } : {}) };
    if (this.tracePath === undefined) {
      this.own = undefined;
      this.session = createSession({ ...base, ...(held ? { shared: held.of(this.store.dir) } : {}) });
      this.quiet = this.session;
      return;
    }
    const dir = this.tracePath;
    const options: TraceOptions = {
      path: dir,
      ...(globals.traceScreenshots === undefined ? {} : { screenshots: globals.traceScreenshots }),
      // Served by the warm process: its client appends, as for --screenshot files (lib/doors/cli/caller.ts).
      ...(caller.appendTrace ? { sink: { append: (batch) => caller.appendTrace!(dir, batch) } } : {}),
    };
    this.own = held ? undefined : new SharedSnapshots(KEEP_PER_APP);
    const shared = held ? held.of(this.store.dir) : this.own!;
    this.quiet = createSession({ ...base, shared });
    this.session = createSession({ ...base, shared, trace: options });
  }

  /** Closes the sessions; a trace's last steps are written before it resolves (or it throws why not). */
  async close(): Promise<void> {
    try {
      // Drained first: a step that could not be written is said, not lost in silence.
      const status = await this.session.trace.stop();
      if (status?.error !== undefined) throw new Error(status.error);
    } finally {
      await this.closeSessions();
    }
  }

  private async closeSessions(): Promise<void> {
    try {
      await this.session.close();
    } finally {
      if (this.quiet !== this.session) await this.quiet.close().catch(() => undefined);
      await this.own?.close().catch(() => undefined);
    }
  }

  /**
   * Runs one command as one door call (lib/session/trace/door.ts): the steps the
   * session records for it carry the command, its arguments and the text
   * printed for it (the envelope with --json; the error when it failed).
   */
  async run(step: Step): Promise<Outcome> {
    const args: Record<string, unknown> = { ...step };
    // The recorder scrubs secrets too; the door's own copy never holds one to begin with.
    if (step.secret === true) {
      if (args.text !== undefined) args.text = "«secret»";
      if (args.value !== undefined) args.value = "«secret»";
    }
    const done = await inDoorCall(
      { door: "cli", call: step.command, args },
      async (): Promise<{ out: Outcome } | { error: unknown }> => {
        try {
          return { out: await this.dispatch(step) };
        } catch (error) {
          return { error };
        }
      },
      (r) => doorReply(step.command, r, this.json, this.app),
    );
    if ("error" in done) throw done.error;
    return done.out;
  }

  private async dispatch(step: Step): Promise<Outcome> {
    this.reobserved = new Map();
    this.app = step.app;
    switch (step.command) {
      case "apps": {
        if (step.launchable === true) return launchableCommand(step);
        const apps = await listApps(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs });
        return { data: { apps }, text: appsText(apps) };
      }
      case "launch":
        return launchCommand(step, this.next);
      case "permissions": {
        // The caller's session type (XDG_SESSION_TYPE), not the one of whoever started this process.
        const p = await permissionsIn(this.caller.env);
        return { data: p, text: permissionsText(p) };
      }
      case "snapshot":
        return this.snapshot(step);
      case "wait":
        return this.wait(step);
      case "find":
        return runFind(this, step);
      case "windows": {
        const windows = await listWindows(
          step.app!,
          step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs },
        );
        return { data: { windows }, text: windowsText(windows) };
      }
      case "resolve":
        return this.resolve(step);
      case "locate":
        return runLocate(this, step);
      case "click":
      case "double-click":
      case "right-click":
      case "set-value":
      case "scroll":
      case "perform-action":
        return this.onTarget(step);
      case "type":
        return this.type(step);
      case "press":
        return this.press(step);
      case "drag":
        return this.drag(step);
      case "click-at":
        return this.clickAt(step);
      default:
        throw invalidArgument(`no command "${step.command}"`, "run `axsnap help` for the list");
    }
  }

  // ---- snapshots -------------------------------------------------------------

  /** Stores a snapshot handed to the caller, has its screenshot written where asked, and returns its data (also find.ts). */
  async hand(snap: Snapshot, step: Step): Promise<SnapshotData> {
    let path: string | undefined;
    if (step.screenshot !== undefined && snap.screenshot) {
      // Written by the caller: a relative name, /dev/stdout, its umask are the caller's.
      const written = await this.caller.writeFile(step.screenshot, snap.screenshot.data);
      path = written.path;
      if (written.error !== undefined)
        throw invalidArgument(
          `cannot write the screenshot to ${path}: ${written.error}`,
          "pass --screenshot with a file in a directory you can write",
        );
    }
    const file = this.store.save(storedOf(snap, renderOptionsOf(step), path));
    this.printed.push(snap);
    if (this.printed.length > 50) this.printed.shift();
    this.app = snap.app.name;
    return snapshotData(snap, file, path);
  }

  private async snapshot(step: Step): Promise<Outcome> {
    // --root: a ref this process holds, or one from another process found again in a new observation.
    const root =
      step.root === undefined ? undefined : await this.target(await this.locatedRoot(step.root), step);
    const held = root === undefined ? undefined : this.session.address(root.ref).snapshot;
    const snap = await this.session.snapshot(snapshotOptionsOf(step, step.app ?? held!.app.pid, root?.ref));
    const data = await this.hand(snap, step);
    return { data, text: snapshotText(data, step.screenshot !== undefined) };
  }

  private async wait(step: Step): Promise<Outcome> {
    const condition = waitConditionOf(step);
    const met = await this.session.waitFor(step.app!, condition, {
      ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
      snapshot: { screenshot: shotOf(step), ...observation(renderOptionsOf(step), false) },
    });
    const data = await this.hand(met.snapshot, step);
    const head = `met after ${met.ms} ms (${met.rounds} observations, woken by ${met.via})${met.match ? `; element ${met.match.index}` : ""}`;
    return {
      data: {
        met: {
          ms: met.ms,
          rounds: met.rounds,
          via: met.via,
          ...(met.match ? { index: met.match.index } : {}),
        },
        snapshot: data,
      },
      text: `${head}\n${snapshotText(data, step.screenshot !== undefined)}`,
    };
  }

  /** The latest snapshot this runner printed, of `app` when given. */
  private lastPrinted(app: string | number | undefined): Snapshot | undefined {
    for (let i = this.printed.length - 1; i >= 0; i--) {
      const s = this.printed[i]!;
      if (app === undefined || s.app.pid === app || s.app.name.toLowerCase() === String(app).toLowerCase())
        return s;
    }
    return undefined;
  }

  /** --root LOCATOR: the ref of the element it names (located by the quiet session: no step of its own). */
  private async locatedRoot(t: Target): Promise<string | number> {
    if (typeof t !== "object") return t;
    const found = await this.quiet.locate(t.locator, {
      ...(this.app === undefined ? {} : { app: this.app }),
    });
    this.storeLocated(found.snapshot);
    return found.ref;
  }

  /** A located snapshot, stored so the ref printed for it works from a later process too. */
  storeLocated(snap: Snapshot): void {
    this.store.save(
      storedOf(snap, renderOptionsOf({ command: "locate", snapshot: true, style: snap.style })),
    );
  }

  private printedById(id: string): Snapshot | undefined {
    return this.printed.find((s) => s.id === id && !s.released);
  }

  /**
   * Observes the window of a stored snapshot again, with its render options
   * (once per command): that window by its id, never the app's default choice,
   * which may be another window with the same title by now.
   */
  private async reobserve(stored: StoredSnapshot, step: Step, screenshot = false): Promise<Snapshot> {
    const key = `${stored.id}:${screenshot}`;
    const held = this.reobserved.get(key);
    if (held) return held;
    const fresh = await observeStoredWindow(stored, (window) =>
      this.quiet.snapshot({
        app: stored.app.pid,
        screenshot,
        ...observation(stored.options, false),
        ...(window === undefined ? {} : { window }),
        ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
      }),
    );
    this.reobserved.set(key, fresh);
    // An action on it replies with the changes since it: its refs must work from the next process too.
    // Without its screenshot: the agent never saw those pixels, so click-at must not take them for its own.
    const { screenshot: _unseen, ...kept } = storedOf(fresh, stored.options);
    this.store.save(kept);
    return fresh;
  }

  // ---- targets ---------------------------------------------------------------

  /**
   * A target as the library takes it: a ref of a snapshot this process holds
   * (a bare index inside `call` becomes the ref of the latest printed
   * snapshot), or, for a ref from another process, the ref of its element
   * found again in a new observation.
   */
  private async target(
    t: Exclude<Target, { locator: string }>,
    step: Step,
  ): Promise<{ ref: string; data: TargetData; notes: string[] }> {
    let ref: string;
    if (typeof t === "number") {
      const snap = this.lastPrinted(step.app);
      if (!snap)
        throw new AxsnapError(
          "SNAPSHOT_NOT_FOUND",
          `a bare index (${t}) needs a snapshot earlier in the sequence${step.app === undefined ? "" : ` of ${step.app}`}`,
          {
            hint: 'start the sequence with {"command":"snapshot","app":"NAME"}, or use a ref @<snapshot id>:e<index> printed by `axsnap snapshot`',
          },
        );
      ref = refOf(snap.id, t);
    } else ref = t;
    const m = REF.exec(ref);
    if (!m)
      throw invalidArgument(`not a ref: ${ref}`, "use a ref like @s8f3k2p9:e12 printed by `axsnap snapshot`");
    const id = m[1]!;
    const index = Number(m[2]);
    const appHint = step.app === undefined ? "NAME" : String(step.app);
    if (this.holds(ref)) {
      // Printed by an earlier command of the warm process: the ref must still be stored, as anywhere.
      if (!this.printedById(id)) await this.store.load(id, appHint);
      // Addressed as printed: the library checks the live element (and finds it again if it moved).
      this.app = this.session.address(ref).snapshot.app.name;
      return { ref, data: { ref, snapshotId: id, index }, notes: [] };
    }
    const stored = await this.store.load(id, appHint);
    this.app = stored.app.name;
    const record = stored.records[index];
    if (!record)
      throw new AxsnapError(
        "ELEMENT_NOT_FOUND",
        `snapshot ${id} printed no element ${index} (0-${stored.records.length - 1})`,
      );
    if (record.inside !== undefined)
      // As in the process that printed it: an index the text did not show is not an address.
      throw new AxsnapError(
        "ELEMENT_NOT_FOUND",
        `snapshot ${id} did not print element ${index}: it is inside element ${record.inside}, which it printed collapsed; nothing was sent`,
        { hint: `run \`axsnap snapshot --root @${id}:e${record.inside}\` and use a ref it prints` },
      );
    const fresh = await this.reobserve(stored, step);
    const differs = windowDifference(stored.window, fresh.window);
    if (differs)
      throw new AxsnapError(
        "STALE_REF",
        `element ${index} was observed in the window ${windowWords(stored.window)} of ${stored.app.name}, and that window changed: ${differs}; nothing was sent`,
      );
    let found: ReturnType<typeof findAgain>;
    try {
      found = findAgain(record, fresh);
    } catch (e) {
      if (!(e instanceof AxsnapError) || record.proof.unique) throw e;
      // Its twins share role and name: only its live element, held by the process that printed it, tells them apart.
      throw new AxsnapError(e.code, e.message, { hint: this.twinsHint(step, stored.app.name) });
    }
    const foundAs = refOf(fresh.id, found.index);
    return {
      ref: foundAs,
      data: { ref, snapshotId: id, index, foundAs },
      // Found by its identity: nothing to say (foundAs says where); by its pixels' shape, a weaker match: said.
      notes:
        found.ocr && sameInk(record.ocr?.ink, found.ocr.ink)
          ? [`found again by the shape of its pixels (text read off them) in ${fresh.id}`]
          : [],
    };
  }

  /**
   * What to do about a ref to an element with twins in a process without its
   * live element: only ways that fit the command (pixels click, they set no value).
   */
  private twinsHint(step: Step, app: string): string {
    const name = /^[\w.-]+$/.test(app) ? app : JSON.stringify(app);
    const ways: string[] = [];
    if (!daemonDisabled(this.caller.env))
      ways.push(
        `run \`axsnap snapshot --app ${name}\` again and use its new ref: the warm process keeps the live elements of the snapshots it prints`,
      );
    const command = step.command === "snapshot" ? "snapshot --root" : step.command;
    ways.push(`run the snapshot and the ${command} in one process with \`axsnap call\``);
    if (["click", "double-click", "right-click"].includes(step.command))
      ways.push(
        `click its pixels (\`axsnap snapshot --app ${name} --screenshot FILE\`, then \`axsnap click-at X Y --of ID\` within 60 s)`,
      );
    return `elements with the same role and name are told apart only by the live element, which this process does not hold: ${ways.join("; or ")}`;
  }

  /** Whether the session still holds the ref's snapshot (else the store answers for it). */
  private holds(ref: string): boolean {
    try {
      this.session.address(ref);
      return true;
    } catch (e) {
      if (e instanceof AxsnapError && e.code === "SNAPSHOT_NOT_FOUND") return false;
      throw e;
    }
  }

  private actOptions(step: Step): ActOptions {
    return {
      // The fresh snapshot after acting is taken with this command's style, limits and screenshot setting.
      // An action's fresh snapshot shows what the user faces now (a named window may have just closed).
      snapshot: step.snapshot
        ? { ...observation(renderOptionsOf(step), false), screenshot: shotOf(step) }
        : false,
      // Changes since the last snapshot of that surface the agent read (the warm process holds the previous
      // command's), not since the ref's: an older ref would credit this command with earlier commands' changes,
      // and a trace would then check them against the wrong step.
      changesFrom: "latest",
      ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
    };
  }

  private async finish(
    result: ActionResult,
    step: Step,
    acted: { data?: TargetData } | undefined,
    notes: string[],
    extra: Partial<ActionData> = {},
  ): Promise<Outcome> {
    // A located target: the ref of the element the session located, its snapshot stored for later processes.
    const locator = result.target?.locator;
    const target =
      acted === undefined
        ? undefined
        : (acted.data ??
          (result.target && locator !== undefined ? locatedTarget(this, result.target, locator) : undefined));
    const snap = result.snapshot ? await this.hand(result.snapshot, step) : undefined;
    return actionOutcome(result, {
      target,
      ...(acted && !acted.data && target ? { located: [target.snapshotId] } : {}),
      ...(extra.at ? { at: extra.at } : {}),
      snapshot: snap,
      reobserved: [...this.reobserved.values()].map((s) => s.id),
      notes,
      full: step.full === true,
      screenshotWanted: step.screenshot !== undefined,
      snapshotAsked: step.snapshot,
    });
  }

  /**
   * A TARGET as the session acts on it: a ref (a bare index, or one from
   * another process, become the ref they mean here), or a locator, which
   * the session locates as it acts (so a trace records the step by it).
   */
  private async actTarget(
    t: Target,
    step: Step,
  ): Promise<{ target: string | LocatorTarget; data?: TargetData; notes: string[] }> {
    if (typeof t === "object")
      return {
        target: {
          locator: t.locator,
          ...(step.locateTimeoutMs === undefined ? {} : { timeoutMs: step.locateTimeoutMs }),
        },
        notes: [],
      };
    const r = await this.target(t, step);
    return { target: r.ref, data: r.data, notes: r.notes };
  }

  private async onTarget(step: Step): Promise<Outcome> {
    const t = await this.actTarget(step.target!, step);
    const opts = this.actOptions(step);
    let result: ActionResult;
    switch (step.command) {
      case "click":
        result = await this.session.click(t.target, {
          ...opts,
          ...(step.button === undefined ? {} : { button: step.button }),
          ...(step.count === undefined ? {} : { count: step.count }),
        });
        break;
      case "double-click":
        result = await this.session.click(t.target, { ...opts, count: 2 });
        break;
      case "right-click":
        result = await this.session.click(t.target, { ...opts, button: "right" });
        break;
      case "set-value":
        result = await this.session.setValue(t.target, step.value!, {
          ...opts,
          ...(step.secret === true ? { secret: true } : {}),
        });
        break;
      case "scroll":
        result = await this.session.scroll(t.target, step.direction!, step.pages ?? 1, opts);
        break;
      default:
        result = await this.session.performAction(t.target, step.name!, opts);
    }
    return this.finish(result, step, t, t.notes);
  }

  private async drag(step: Step): Promise<Outcome> {
    const from = await this.actTarget(step.from!, step);
    const to = await this.actTarget(step.to!, step);
    const result = await this.session.drag(from.target, to.target, this.actOptions(step));
    return this.finish(result, step, from, [...from.notes, ...to.notes], {});
  }

  private async resolve(step: Step): Promise<Outcome> {
    const t = await this.actTarget(step.target!, step);
    const r = await this.session.resolve(t.target, {
      ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
    });
    const data: ResolveData = t.data
      ? {
          ...r,
          ref: t.data.ref,
          snapshotId: t.data.snapshotId,
          index: t.data.index,
          ...(t.data.foundAs ? { how: "reobserved" as const, foundAs: t.data.foundAs } : {}),
          notes: [...t.notes, ...r.notes],
        }
      : {
          ...r,
          ...locatedTarget(
            this,
            { snapshotId: r.snapshotId, index: r.index },
            (t.target as LocatorTarget).locator as string,
          ),
        };
    return { data, text: resolveText(data) };
  }

  // ---- keys --------------------------------------------------------------------

  /**
   * The pid keys go to (press, type without --into), with an observation of
   * it in the session: the one printed earlier in this sequence when there is
   * one, else a new one. The library then reads the app's focus live.
   */
  private async keysApp(step: Step): Promise<number> {
    let app: string | number | undefined = step.app;
    if (step.of !== undefined) {
      const held = this.printedById(step.of);
      app = held ? held.app.pid : (await this.store.load(step.of)).app.pid;
    }
    const printed = this.lastPrinted(app);
    if (printed && Date.now() - printed.takenAt < PIXELS_MAX_AGE_MS) {
      this.app = printed.app.name;
      return printed.app.pid;
    }
    if (app === undefined)
      throw new AxsnapError("SNAPSHOT_NOT_FOUND", "no app to send the keys to", {
        hint: "pass --app NAME (or start the sequence with a snapshot)",
      });
    const snap = await this.quiet.snapshot({
      app,
      screenshot: false,
      ...observation(renderOptionsOf(step)),
      ...(step.deadlineMs === undefined ? {} : { deadlineMs: step.deadlineMs }),
    });
    this.app = snap.app.name;
    return snap.app.pid;
  }

  private async press(step: Step): Promise<Outcome> {
    const pid = await this.keysApp(step);
    const result = await this.session.pressKey(step.key!, { ...this.actOptions(step), app: pid });
    return this.finish(result, step, undefined, []);
  }

  private async type(step: Step): Promise<Outcome> {
    const secret = step.secret === true ? { secret: true } : {};
    if (step.into !== undefined) {
      const t = await this.actTarget(step.into, step);
      const result = await this.session.typeText(step.text!, {
        ...this.actOptions(step),
        ...secret,
        target: t.target,
      });
      return this.finish(result, step, t, t.notes);
    }
    const pid = await this.keysApp(step);
    const result = await this.session.typeText(step.text!, { ...this.actOptions(step), ...secret, app: pid });
    return this.finish(result, step, undefined, []);
  }

  // ---- pixels ------------------------------------------------------------------

  /**
   * click-at: pixels of a snapshot's screenshot. A snapshot printed in this
   * process is used as it is (the library checks its age). One from another
   * process must be at most 60 s old, and its window is observed again (with
   * a screenshot; by its id, as a ref's is): it must be the same window, with
   * the same kind, frame and scale, so the pixels still mean the same
   * point of it; the click then goes through the library with the new
   * observation (which brings that window to the front).
   */
  private async clickAt(step: Step): Promise<Outcome> {
    const opts = {
      ...this.actOptions(step),
      ...(step.button === undefined ? {} : { button: step.button }),
      ...(step.count === undefined ? {} : { count: step.count }),
      ...(step.raw === undefined ? {} : { raw: step.raw }),
    };
    const x = step.x!;
    const y = step.y!;
    const held =
      step.of !== undefined
        ? this.printedById(step.of)
        : (() => {
            const s = this.lastPrinted(step.app);
            return s?.screenshot ? s : undefined;
          })();
    if (held) {
      this.app = held.app.name;
      const result = await this.session.clickAt(x, y, { ...opts, of: held });
      return this.finish(result, step, undefined, [], { at: { x, y, snapshotId: held.id } });
    }
    const app = step.app;
    const stored =
      step.of !== undefined
        ? await this.store.load(step.of, app === undefined ? "NAME" : String(app))
        : await this.store.newest(
            (s) =>
              s.screenshot !== undefined &&
              (app === undefined ||
                s.app.pid === app ||
                s.app.name.toLowerCase() === String(app).toLowerCase()),
          );
    if (!stored)
      throw new AxsnapError(
        "SNAPSHOT_NOT_FOUND",
        `no stored snapshot with a screenshot${app === undefined ? "" : ` of ${app}`} in ${this.store.dir}`,
        {
          hint: `run \`axsnap snapshot --app ${app ?? "NAME"} --screenshot FILE\`, look at FILE, then \`axsnap click-at X Y --of ID\``,
        },
      );
    this.app = stored.app.name;
    if (!stored.screenshot)
      throw invalidArgument(
        `snapshot ${stored.id} was taken without a screenshot, so its pixels mean nothing`,
        `run \`axsnap snapshot --app ${stored.app.name} --screenshot FILE\` and use the pixels of FILE`,
      );
    const age = Date.now() - stored.takenAt;
    if (age > PIXELS_MAX_AGE_MS)
      throw new AxsnapError(
        "STALE_OBSERVATION",
        `snapshot ${stored.id} is ${Math.round(age / 1000)} s old; pixels need one at most ${PIXELS_MAX_AGE_MS / 1000} s old`,
      );
    const fresh = await this.reobserve(stored, step, true);
    const was = stored.screenshot;
    const now = fresh.screenshot;
    const differs =
      windowDifference(stored.window, fresh.window) ??
      (now === undefined
        ? "no screenshot now"
        : now.scale !== was.scale ||
            now.windowOrigin.x !== was.windowOrigin.x ||
            now.windowOrigin.y !== was.windowOrigin.y
          ? "its screenshot maps to the screen differently now"
          : undefined);
    if (differs)
      throw new AxsnapError(
        "STALE_OBSERVATION",
        `the window ${windowWords(stored.window)} of ${stored.app.name} changed since snapshot ${stored.id} (${differs}), so its pixels no longer mean the same point; nothing was sent`,
      );
    // The library compares what is under the point now with the new observation; this compares the new
    // observation with the stored snapshot the pixels were read from.
    if (step.raw !== true) {
      const px = was.windowOrigin.x + x / was.scale;
      const py = was.windowOrigin.y + y / was.scale;
      const then = recordAt(stored.records, px, py);
      const there = recordAt(fresh.records, px, py);
      const hint = `run \`axsnap snapshot --app ${stored.app.name} --screenshot FILE\` and use the pixels of FILE, or pass --raw to click whatever is there now`;
      if (then && !(there && sameIdentity(then.identity, there.identity)))
        throw new AxsnapError(
          "STALE_REF",
          `the point is on ${there ? `${there.roleText}${there.title ? ` ${there.title}` : ""}` : "no element"} in a new observation (${fresh.id}), not on element ${then.index} (${then.roleText}${then.identity.name ? ` ${then.identity.name}` : ""}) as snapshot ${stored.id} showed; nothing was sent`,
          { hint },
        );
      // Text read off the pixels there is part of what the stored snapshot showed: the same text must be there.
      const line = ocrLineAt(stored.records, px, py);
      const lineNow = line && ocrLineAt(fresh.records, px, py);
      if (
        line &&
        !sameInk(line.ocr?.ink, lineNow?.ocr?.ink) &&
        ocrTextKey(lineNow?.title ?? "") !== ocrTextKey(line.identity.name ?? "")
      )
        throw new AxsnapError(
          "STALE_REF",
          `the point reads ${lineNow?.title ? `"${lineNow.title}"` : "no text"} in a new observation (${fresh.id}), not "${line.identity.name ?? ""}" (element ${line.index}) as snapshot ${stored.id} showed; nothing was sent`,
          { hint },
        );
    }
    const result = await this.session.clickAt(x, y, { ...opts, of: fresh });
    return this.finish(
      result,
      step,
      undefined,
      [
        `checked against a new observation of the window it was taken of, ${windowWords(fresh.window)}, taken right before the action and stored as ${fresh.id}: it has not moved since ${stored.id}`,
      ],
      { at: { x, y, snapshotId: stored.id } },
    );
  }
}
