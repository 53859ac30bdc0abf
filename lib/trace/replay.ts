/** `axsnap replay FILE`: runs a trace step by step and stops at the first drift (WP-E). */
import type { ErrorCode, LocatorCandidate } from "../errors.js";
import type { Session } from "../session.js";

export type DriftKind =
  | "not_found"
  | "ambiguous"
  | "window"
  | "refused"
  | "effect"
  | "secret_missing"
  | "unreplayable";

export interface ReplayOptions {
  /** The session to replay in; default a new one, closed at the end. */
  session?: Session;
  /** A secret's value by its environment variable name; default process.env. */
  secrets?: (name: string) => string | undefined;
  continueOnDrift?: boolean;
  /** Per step: locating, acting (retried while NOT_ENABLED) and checking its effect. Default 10000 ms. */
  stepTimeoutMs?: number;
  onStep?: (result: ReplayStepResult) => void;
}

export interface ReplayStepResult {
  step: number;
  call: string;
  ok: boolean;
  ms: number;
  /** The effects checked, in words. */
  effects: string[];
  warnings?: string[];
}

export interface ReplayDrift {
  step: number;
  call: string;
  kind: DriftKind;
  locator?: string;
  error?: { code: ErrorCode; message: string; hint?: string };
  now?: { candidates?: LocatorCandidate[]; matches?: LocatorCandidate[]; changes?: string };
  recorded?: { line?: string; ancestors?: string[]; snapshot?: string; index?: number; changes?: string };
}

export interface ReplayReport {
  ok: boolean;
  trace: string;
  runId: string;
  steps: number;
  replayed: number;
  warnings: string[];
  drift?: ReplayDrift;
  drifts?: ReplayDrift[];
  results: ReplayStepResult[];
}

export async function replayTrace(_path: string, _options: ReplayOptions = {}): Promise<ReplayReport> {
  throw new Error("not built yet (WP-E)");
}

/** The report as text: one line a step, then the drift in words; its last line says where it stopped. */
export function replayText(_report: ReplayReport): string {
  throw new Error("not built yet (WP-E)");
}
