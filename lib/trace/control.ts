/**
 * `session.trace`: starts and stops recording a session to a trace
 * directory (docs/trace.md). While it records, `recorder` is what the
 * Session writes each step through; otherwise undefined, so a session that
 * does not trace pays one check per call.
 */
import type { SnapshotStore } from "../act/store.js";
import { AxsnapError } from "../errors.js";
import type { SessionRecorder } from "./recording.js";
import type { TraceOptions, TraceStatus } from "./types.js";

/** What the recorder needs of its Session. */
export interface TraceHost {
  readonly store: SnapshotStore;
}

export class TraceControl {
  constructor(
    private readonly host: TraceHost,
    initial?: string | TraceOptions,
  ) {
    void this.host;
    if (initial !== undefined) throw new AxsnapError("INVALID_ARGUMENT", "tracing is not built yet (WP-A)");
  }

  /** The recorder while a trace is on. @internal */
  get recorder(): SessionRecorder | undefined {
    return undefined;
  }

  get status(): TraceStatus | undefined {
    return undefined;
  }

  async start(_options: string | TraceOptions): Promise<TraceStatus> {
    throw new AxsnapError("INVALID_ARGUMENT", "tracing is not built yet (WP-A)");
  }

  /** Stops recording once every step is written; undefined when no trace was on. */
  async stop(): Promise<TraceStatus | undefined> {
    return undefined;
  }
}
