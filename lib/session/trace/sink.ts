/**
 * Where a recorder's lines go, and the queue in front of it. The recorder
 * builds each step's lines while the call returns (its snapshots may be
 * released right after); they are written a moment later, batched, off the
 * caller's path. stop() drains the queue.
 */
import { appendToTrace } from "./append.js";
import type { Appended, TraceBatch, TraceSink } from "./types.js";

/** Appends in this process (the API, the MCP server, a CLI command run in its own process). */
export class DirectorySink implements TraceSink {
  constructor(readonly dir: string) {}

  append(batch: TraceBatch): Appended {
    return appendToTrace(this.dir, batch);
  }
}

/** One step's lines and files, built when the queue is written (what is costly runs off the caller's path). */
export type Pending = () => { entries: object[]; files: TraceBatch["files"] };

export class TraceWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  /** Steps written, and the run they went to. */
  written = 0;
  runId: string | undefined;
  error: string | undefined;

  constructor(
    private readonly sink: TraceSink,
    private readonly screenshots: boolean,
  ) {}

  /** Queues one step (its snapshot lines first, then the step line) and the PNGs they name. */
  push(step: Pending): void {
    this.queue.push(step);
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Resolves once every step queued so far is written (or failed: see `error`). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Sends an empty batch: creates the trace (its header and run id) through the sink. */
  open(): void {
    this.flushing ??= Promise.resolve().then(() => this.flush());
  }

  private async flush(): Promise<void> {
    const batch: TraceBatch = { screenshots: this.screenshots, entries: [], files: [] };
    let steps = 0;
    try {
      for (const build of this.queue.splice(0)) {
        let step: ReturnType<Pending>;
        try {
          step = build();
        } catch (e) {
          // One step that cannot be built is lost, not the batch.
          this.error ??= `a step could not be recorded: ${e instanceof Error ? e.message : String(e)}`;
          continue;
        }
        batch.entries.push(...step.entries);
        batch.files.push(...step.files);
        steps += step.entries.filter((e) => (e as { kind?: unknown }).kind === "step").length;
      }
      const r = await this.sink.append(batch);
      this.runId = r.runId;
      this.written += steps;
    } catch (e) {
      this.error ??= e instanceof Error ? e.message : String(e);
    }
    this.flushing = this.queue.length > 0 ? Promise.resolve().then(() => this.flush()) : undefined;
  }
}
