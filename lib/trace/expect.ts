/**
 * session.expect (issue 34, design 4.1): waits until the effect a recorded
 * run saw shows in the app (a window opened or closed, an element with
 * these states or value, present or gone), or throws EFFECT_NOT_SEEN with
 * the last observation.
 */
import type { ActEnv } from "../act/env.js";
import type { CallContext } from "../call.js";
import { AxsnapError } from "../errors.js";
import type { Locator } from "../locator/types.js";
import type { Snapshot } from "../snapshot.js";
import type { WindowKind } from "../windows.js";

export type Expectation =
  | { window: { title?: string | RegExp; kind?: WindowKind }; opened: true }
  | { window: { title?: string | RegExp; kind?: WindowKind }; closed: true }
  | {
      locator: string | Locator;
      states?: { has?: string[]; lacks?: string[] };
      value?: string | { contains: string };
    }
  | { locator: string | Locator; present: true }
  | { locator: string | Locator; gone: true };

export interface ExpectOptions {
  /** Default 3000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ExpectResult {
  ms: number;
  snapshot: Snapshot;
}

export async function expectIn(
  _env: ActEnv,
  _ctx: CallContext,
  _app: string | number,
  _expectation: Expectation,
  _options: ExpectOptions,
): Promise<ExpectResult> {
  throw new AxsnapError("INVALID_ARGUMENT", "expect is not built yet (WP-E)");
}
