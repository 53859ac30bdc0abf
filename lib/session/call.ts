/**
 * One public call's budget: its deadline, its AbortSignal, and whether a
 * request that may act has left the process yet.
 *
 * Every native step of an action runs through `step()`, which (1) refuses to
 * start once the deadline passed or the signal fired, (2) settles by the
 * deadline even when the native side does not (a backstop at most 250 ms after it: the native layer
 * bounds its own calls, but a job queued behind a stuck one must not make the
 * caller wait forever), and (3) reports delivery honestly: once a request
 * that may act was sent, an abort, a timeout or an unanswered call is
 * `delivery_uncertain`, never `not_delivered` (refs-and-actions.md, "Once a
 * request may have left the process").
 */
import { AxsnapError, type Delivery } from "../model/errors.js";
import { callNative } from "../native.js";

/**
 * What a native step does: reads, a semantic request to the app, synthetic input, or a pointer move
 * before pointer input ("hover": it presses nothing, so it is not a request that may act; what the app
 * does when the pointer arrives is judged before the input that may act: act/hover.ts).
 */
export type StepKind = "read" | "semantic" | "input" | "hover";

/**
 * Slack after the deadline before the backstop fires: the native side's own
 * bound answers first. The documented bound is 250 ms; the timer is set
 * earlier than that because a busy event loop fires it late (measured: a
 * click settled 251 ms past its deadline with waits pending).
 */
const BACKSTOP_GRACE_MS = 200;

export class CallContext {
  private readonly end: number;
  /** A request that may act has left the process (a semantic call or synthetic input was started). */
  sent = false;
  private readonly cleanups: (() => unknown)[] = [];

  constructor(
    readonly deadlineMs: number,
    readonly signal?: AbortSignal,
  ) {
    this.end = performance.now() + deadlineMs;
  }

  /** Milliseconds left, at least 1 (the native side treats ≤ 0 as "already passed" anyway). */
  remaining(): number {
    return Math.max(1, Math.floor(this.end - performance.now()));
  }

  /** The deadline has passed. */
  expired(): boolean {
    return performance.now() >= this.end;
  }

  private delivery(): Delivery {
    return this.sent ? "delivery_uncertain" : "not_delivered";
  }

  /** Throws ABORTED or TIMEOUT when the call may not start another step. */
  check(): void {
    if (this.signal?.aborted) throw this.aborted();
    if (performance.now() >= this.end)
      throw new AxsnapError("TIMEOUT", `the call's deadline of ${this.deadlineMs} ms passed`, {
        delivery: this.delivery(),
      });
  }

  private aborted(): AxsnapError {
    const reason = this.signal?.reason;
    const why = reason instanceof Error ? reason.message : reason === undefined ? "" : String(reason);
    return new AxsnapError(
      "ABORTED",
      `the call was aborted${why ? ` (${why})` : ""}${this.sent ? " after a request was sent: it may have happened" : "; nothing was sent"}`,
      { delivery: this.delivery() },
    );
  }

  /** Runs something when the call ends, whatever the outcome (release a transient observation). */
  defer(cleanup: () => unknown): void {
    this.cleanups.push(cleanup);
  }

  async close(): Promise<void> {
    for (const c of this.cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch {
        // A cleanup failing must not replace the call's own result.
      }
    }
  }

  /**
   * Runs one native step. `late` receives a result that arrives after the
   * call already settled (aborted or backstopped), so its handles can still
   * be released.
   */
  async step<T>(kind: StepKind, fn: () => Promise<T>, late?: (value: T) => unknown): Promise<T> {
    this.check();
    if (kind === "semantic" || kind === "input") this.sent = true;
    const work = callNative(fn);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    let settled = false;
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AxsnapError(
              "TIMEOUT",
              `the call's deadline of ${this.deadlineMs} ms passed while waiting for the app${this.sent ? "; the request was sent, so it may have happened" : ""}`,
              { delivery: this.delivery() },
            ),
          ),
        this.remaining() + BACKSTOP_GRACE_MS,
      );
      if (this.signal) {
        onAbort = () => reject(this.aborted());
        this.signal.addEventListener("abort", onAbort, { once: true });
      }
    });
    work.then(
      (v) => {
        if (settled && late) void Promise.resolve(late(v)).catch(() => undefined);
      },
      () => undefined,
    );
    try {
      return await Promise.race([work, stop]);
    } catch (e) {
      throw kind === "semantic" ? uncertainAfterSend(e) : e;
    } finally {
      settled = true;
      clearTimeout(timer);
      if (onAbort) this.signal?.removeEventListener("abort", onAbort);
    }
  }
}

/**
 * A semantic request that left and got no answer (the app stalled, the
 * deadline passed while it was out) may still happen when the app resumes.
 */
function uncertainAfterSend(e: unknown): unknown {
  if (!(e instanceof AxsnapError) || e.delivery !== "not_delivered") return e;
  if (e.code !== "APP_UNRESPONSIVE" && e.code !== "TIMEOUT") return e;
  return new AxsnapError(
    e.code,
    `${e.message}; the request had been sent, so it may have happened when the app resumed`,
    {
      delivery: "delivery_uncertain",
      hint: "take a new snapshot to see whether it happened before trying again",
      cause: e,
    },
  );
}

/** Validates a per-call deadline and signal; undefined deadline = the fallback. */
export function callBudget(
  options: { deadlineMs?: unknown; signal?: unknown } | undefined,
  fallbackMs: number,
): { deadlineMs: number; signal?: AbortSignal } {
  const d = options?.deadlineMs;
  if (d !== undefined && (typeof d !== "number" || !Number.isFinite(d) || d < 1 || d > 600_000))
    throw new AxsnapError(
      "INVALID_ARGUMENT",
      `deadlineMs must be a number of milliseconds between 1 and 600000, got ${String(d)}`,
    );
  const s = options?.signal;
  if (s !== undefined && !(s instanceof AbortSignal))
    throw new AxsnapError("INVALID_ARGUMENT", "signal must be an AbortSignal");
  return { deadlineMs: (d as number | undefined) ?? fallbackMs, ...(s ? { signal: s as AbortSignal } : {}) };
}
