/**
 * A trace (docs/trace.md): a run of a session, as the steps an agent took
 * through a door, what it saw and what each step did. Stored as a directory
 * `NAME.axtrace/` holding `trace.json` (the header), `steps.jsonl` (one line
 * per snapshot seen and per step) and `shots/` (PNGs named by snapshot id),
 * appended under a lock by every process of the run.
 *
 * These are the on-disk shapes (version 1); schema.ts checks them.
 */
import type { Delivery, ErrorCode, LocatorCandidate, Retry } from "../../model/errors.js";
import type { Rect } from "../../model/model.js";
import type { WindowKind } from "../../observe/windows.js";

export const TRACE_FORMAT = "axsnap-trace";
export const TRACE_VERSION = 1;

/** `trace.json`: written once, by the first writer of the run. */
export interface TraceHeader {
  format: typeof TRACE_FORMAT;
  version: number;
  /** One id for every process that appends to this trace. */
  runId: string;
  createdAt: string;
  axsnap: string;
  platform: string;
  /** Whether steps carry screenshots (the first writer's choice; later writers follow their own). */
  screenshots: boolean;
}

/** A window as a trace keeps it: enough to name it again in a locator. */
export interface TraceWindow {
  id?: string;
  title?: string;
  kind: WindowKind;
  frame?: Rect;
  scale?: number;
}

/** A snapshot the agent (or an action) saw, written once per id. */
export interface TraceSnapshotLine {
  kind: "snapshot";
  id: string;
  takenAt: number;
  app: { name: string; pid: number };
  window?: TraceWindow;
  style: "tree" | "compact";
  complete: boolean;
  /** The numbered text, as the door printed it (secrets scrubbed). */
  text: string;
  /** Its screenshot file, relative to the trace directory; `withheld` when its text needed scrubbing. */
  shot?:
    | {
        file: string;
        pixelWidth: number;
        pixelHeight: number;
        /** Screenshot pixels per window point. */
        scale: number;
      }
    | { withheld: "secret" };
}

/** An element a step acted on or read, as it was printed then. */
export interface TraceTarget {
  /** The snapshot it was printed in, and its line there. */
  snapshot: string;
  index: number;
  /** The printed line, without its index. */
  line: string;
  role: string;
  roleText: string;
  name?: string;
  /** Its named ancestors, outermost first, as locator steps print them. */
  ancestors: string[];
  /** The shortest locator unique in its window then (absent in a subtree snapshot). */
  locator?: string;
  /** Window points. */
  frame?: Rect;
  /** The element's value then (never a secret's). */
  value?: string;
  states?: string[];
}

/** A change the step caused, with a locator to find the element again. */
export interface TraceChange {
  kind: "added" | "removed" | "changed";
  /** The element's line in the snapshot after (added, changed) or before (removed). */
  line: string;
  locator?: string;
  /** What changed ("states", "value", "name", …), for a changed element. */
  fields?: string[];
  value?: string;
  states?: string[];
  /** Whether this element is the step's (first) target. */
  target?: boolean;
}

export interface TraceSurface {
  title?: string;
  kind: WindowKind;
  role?: string;
}

/** What an action's reply said, as `--json` and MCP structured content carry it. */
export interface TraceResult {
  action: string;
  delivery: Delivery;
  retry: Retry;
  channel: "semantic" | "synthetic";
  notes: string[];
  settled?: { mode: "quiet" | "cap" | "none"; ms: number; events: number };
  opened?: TraceSurface[];
  closed?: TraceSurface[];
  /** The diff's text, as printed. */
  changesText?: string;
  changes?: TraceChange[];
  applied?: boolean;
  value?: string | number | boolean;
  exited?: { name: string; pid: number };
}

export interface TraceError {
  /** INTERNAL: a failure that was not an AxsnapError (a bug in axsnap). */
  code: ErrorCode | "INTERNAL";
  message: string;
  hint: string;
  delivery: Delivery;
  retry: Retry;
  candidates?: LocatorCandidate[];
  matches?: LocatorCandidate[];
}

export type TraceDoor = "api" | "cli" | "mcp";

/** One call through a door: an observation (snapshot, find, waitFor, locate) or an action. */
export interface TraceStepLine {
  kind: "step";
  /** 1, 2, …: the order steps finished in, across every process of the run. */
  n: number;
  runId: string;
  pid: number;
  door: TraceDoor;
  /** The door's name for the call ("click", "click_element", "axsnap click"). */
  call: string;
  /** The door's arguments, secrets replaced by «secret». */
  args: Record<string, unknown>;
  /** The Session method that ran: click, setValue, typeText, pressKey, …, snapshot, find, waitFor, locate. */
  method: string;
  startedAt: number;
  /** The snapshot acted on or observed before (an action), and the one seen after. */
  before?: string;
  after?: string;
  targets?: TraceTarget[];
  /** Observation steps: the lines they returned (find's matches, locate's element). */
  read?: number[];
  /** A point in screenshot pixels (clickAt and its kin). */
  point?: { x: number; y: number; to?: { x: number; y: number } };
  /** Keys pressed (pressKey), text typed (typeText; «secret» when secret). */
  keys?: string;
  text?: string;
  /** Typed text or a value marked secret: replay reads it from this environment variable. */
  secret?: { env: string };
  result?: TraceResult;
  error?: TraceError;
  timings: { ms: number; locateMs?: number; settleMs?: number; traceMs?: number };
  /** The door's reply text, as the agent read it. */
  reply?: string;
}

export type TraceLine = TraceSnapshotLine | TraceStepLine;

/** A trace read back (read.ts): the header, the snapshots by id and the steps in order. */
export interface ReadTrace {
  path: string;
  header: TraceHeader;
  snapshots: Map<string, TraceSnapshotLine>;
  steps: TraceStepLine[];
  /** The last line was cut short (a writer was killed): it was skipped. */
  truncated: boolean;
}

/** What `createSession({ trace })` and `session.trace.start()` take. */
export interface TraceOptions {
  path: string;
  /** Before and after screenshots of each step (default true). */
  screenshots?: boolean;
  /**
   * Where the batches go instead of appending to `path` in this process (the CLI's
   * warm process hands them to its client, which appends with the caller's rights). @internal
   */
  sink?: TraceSink;
}

export interface TraceStatus {
  path: string;
  runId?: string;
  /** Steps this session has written. */
  steps: number;
  screenshots: boolean;
  /** The first write that failed (the trace misses the steps of that batch on). */
  error?: string;
}

/** What one writer appends at once (append.ts): lines (`n`/`runId` unset) and PNGs. */
export interface TraceBatch {
  /** The writer's choice, written in `trace.json` when this batch creates the trace. */
  screenshots: boolean;
  /**
   * Lines for `steps.jsonl`; entries of kind "mask" (masks.ts: the field a
   * secret went into) go to `secrets.json` instead. Among the entries, so
   * that any sink that forwards a batch (the warm process) forwards them.
   */
  entries: object[];
  /** Files relative to the trace directory (`shots/<snapshot id>.png`). */
  files: { name: string; data: Uint8Array }[];
}

/** What an append did: the run id, the `n` of the batch's first and last step. */
export interface Appended {
  runId: string;
  first: number;
  last: number;
}

/** Where a recorder's batches go (sink.ts): appendToTrace in this process, or the CLI's client. */
export interface TraceSink {
  append(batch: TraceBatch): Appended | Promise<Appended>;
}
