/**
 * session.locate (issue 34, design 2.4): observes the window a locator names
 * and returns the one element it names, waiting on the app's change events
 * until it appears, or refuses with ELEMENT_NOT_FOUND (the closest
 * candidates) or AMBIGUOUS_TARGET (the matches, each with the locator that
 * tells it apart).
 */
import type { ActEnv } from "../act/env.js";
import type { CallContext } from "../call.js";
import { AxsnapError } from "../errors.js";
import type { ElementRecord } from "../records.js";
import type { Snapshot } from "../snapshot.js";
import type { Locator } from "./types.js";

export interface LocateOptions {
  /** The app when the locator names none (a name or pid). */
  app?: string | number;
  /** How long to wait for the element to appear. Default 5000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
  maxNodes?: number;
  /** The recorded record, so candidates can be ranked by place too (replay). @internal */
  near?: { frame?: { x: number; y: number; w: number; h: number }; ancestors?: string[] };
}

export interface Located {
  /** The observation it was found in; kept by the session (the app's latest). */
  snapshot: Snapshot;
  record: ElementRecord;
  /** "@s…:e12" */
  ref: string;
  /** The locator as asked, printed. */
  locator: string;
  ms: number;
  /** Observations made while waiting. */
  rounds: number;
  notes: string[];
}

export async function locateIn(
  _env: ActEnv,
  _ctx: CallContext,
  _locator: string | Locator,
  _options: LocateOptions,
): Promise<Located> {
  throw new AxsnapError("INVALID_ARGUMENT", "locate is not built yet (WP-B)");
}
