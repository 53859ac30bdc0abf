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

export class TraceWriter {
  private entries: object[] = [];
  private files: TraceBatch["files"] = [];
  private steps = 0;
  private flushing: Promise<void> | undefined;
  /** Steps written, and the run they went to. */
  written = 0;
  runId: string | undefined;
  error: string | undefined;

  constructor(
    private readonly sink: TraceSink,
    private readonly screenshots: boolean,
  ) {}

  /** Queues one step's lines (snapshot lines first) and the PNGs they name. */
  push(entries: object[], files: TraceBatch["files"]): void {
    this.entries.push(...entries);
    this.files.push(...files);
    this.steps += entries.filter((e) => (e as { kind?: unknown }).kind === "step").length;
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Resolves once every line queued so far is written (or failed: see `error`). */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Sends an empty batch: creates the trace (its header and run id) through the sink. */
  open(): void {
    this.flushing ??= Promise.resolve().then(() => this.flush());
  }

  private async flush(): Promise<void> {
    const batch: TraceBatch = { screenshots: this.screenshots, entries: this.entries, files: this.files };
    const steps = this.steps;
    this.entries = [];
    this.files = [];
    this.steps = 0;
    try {
      const r = await this.sink.append(batch);
      this.runId = r.runId;
      this.written += steps;
    } catch (e) {
      this.error ??= e instanceof Error ? e.message : String(e);
    }
    this.flushing =
      this.entries.length > 0 || this.files.length > 0
        ? Promise.resolve().then(() => this.flush())
        : undefined;
  }
}
