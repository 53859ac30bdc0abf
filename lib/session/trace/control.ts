/**
 * `session.trace`: starts and stops recording a session to a trace
 * directory (docs/trace.md). While it records, `recorder` is what the
 * Session writes each step through; otherwise undefined, so a session that
 * does not trace pays one check per call.
 */
import { resolve } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { Recorder, type TraceHost } from "./recorder.js";
import type { SessionRecorder } from "./recording.js";
import { DirectorySink, TraceWriter } from "./sink.js";
import type { TraceOptions, TraceStatus } from "./types.js";

export type { TraceHost } from "./recorder.js";

interface Active {
  path: string;
  screenshots: boolean;
  recorder: Recorder;
  writer: TraceWriter;
}

export class TraceControl {
  private active: Active | undefined;

  /** With `initial`, records from the start (createSession({ trace })). */
  constructor(
    private readonly host: TraceHost,
    initial?: string | TraceOptions,
  ) {
    if (initial !== undefined) this.open(initial);
  }

  /** The recorder while a trace is on. @internal */
  get recorder(): SessionRecorder | undefined {
    return this.active?.recorder;
  }

  get status(): TraceStatus | undefined {
    return this.active ? statusOf(this.active) : undefined;
  }

  /** Starts recording to a trace directory: a new trace, or more steps of an existing one (the same run). */
  async start(options: string | TraceOptions): Promise<TraceStatus> {
    if (this.active)
      throw new AxsnapError("INVALID_ARGUMENT", `this session already records to ${this.active.path}`, {
        hint: "stop that trace first (session.trace.stop())",
      });
    const active = this.open(options);
    await active.writer.drain();
    if (active.writer.error !== undefined) {
      this.active = undefined;
      throw new AxsnapError(
        "INVALID_ARGUMENT",
        `cannot write the trace ${active.path}: ${active.writer.error}`,
        {
          hint: "pass a directory this process can create and write",
        },
      );
    }
    return statusOf(active);
  }

  /** Stops recording once every step is written; undefined when no trace was on. */
  async stop(): Promise<TraceStatus | undefined> {
    const active = this.active;
    if (!active) return undefined;
    this.active = undefined;
    await active.writer.drain();
    return statusOf(active);
  }

  private open(options: string | TraceOptions): Active {
    const o: TraceOptions = typeof options === "string" ? { path: options } : options;
    if (o === null || typeof o !== "object" || typeof o.path !== "string" || o.path.trim() === "")
      throw invalidArgument(
        "trace must be a directory path or { path, screenshots }",
        'e.g. createSession({ trace: "run.axtrace" })',
      );
    if (o.screenshots !== undefined && typeof o.screenshots !== "boolean")
      throw invalidArgument("trace.screenshots must be true or false");
    const path = resolve(o.path);
    const screenshots = o.screenshots ?? true;
    const sink = o.sink ?? new DirectorySink(path);
    const writer = new TraceWriter(sink, screenshots);
    if (sink instanceof DirectorySink) {
      // Here and now: a trace of another version, or a path that cannot be written, is refused at once.
      try {
        writer.runId = sink.append({ screenshots, entries: [], files: [] }).runId;
      } catch (e) {
        if (e instanceof AxsnapError) throw e;
        throw new AxsnapError("INVALID_ARGUMENT", `cannot write the trace ${path}: ${(e as Error).message}`, {
          hint: "pass a directory this process can create and write",
          cause: e,
        });
      }
    } else writer.open();
    const recorder = new Recorder(this.host, screenshots, (step) => writer.push(step), path);
    this.active = { path, screenshots, recorder, writer };
    return this.active;
  }
}

function statusOf(a: Active): TraceStatus {
  return {
    path: a.path,
    ...(a.writer.runId === undefined ? {} : { runId: a.writer.runId }),
    steps: a.writer.written,
    screenshots: a.screenshots,
    ...(a.writer.error === undefined ? {} : { error: a.writer.error }),
  };
}
