/**
 * The seam between the Session and its recorder (issue 34): the one place
 * a trace is written from, whichever door the call came through. The
 * Session calls begin() for each action once its locator targets are
 * located, and observed() for each observation it hands out.
 */

import type { Snapshot } from "../../observe/snapshot.js";
import type { ActionResult, ActOptions } from "../act/result.js";
import type { Target } from "../act/store.js";

/** What the typed text or value is, for a trace: never stored when secret. */
export interface SecretOption {
  /** true: stored as «secret», replayed from AXSNAP_SECRET_<n>; a string names the environment variable. */
  secret?: boolean | string;
}

export interface ActStart {
  /** The Session method: click, setValue, typeText, pressKey, scroll, drag, clickAt, … */
  method: string;
  /** The method's arguments (text, value, keys, point, direction …), options left out. */
  args: Record<string, unknown>;
  /** Its targets as the Session will act on them: located records in place of locator targets. */
  targets: Target[];
  /** The locator strings of targets that were given as locators (index-aligned with targets). */
  locators: (string | undefined)[];
  options: ActOptions & SecretOption;
  /** performance.now() when the call began, and how long locating took. */
  startedAt: number;
  locateMs: number;
}

export interface StepRecording {
  /** The options to act with: the recorder may ask the fresh snapshot for a screenshot (detached after). */
  readonly options: ActOptions;
  /** The call ended: with its result, or its error. Never throws. */
  done(result: ActionResult | undefined, error: unknown): void;
}

export interface SessionRecorder {
  begin(start: ActStart): StepRecording;
  /** An observation handed to the caller (snapshot, find, waitFor, locate); `read` are the lines it returned. */
  observed(
    method: string,
    args: Record<string, unknown>,
    snap: Snapshot | undefined,
    options?: { read?: number[]; error?: unknown; startedAt?: number },
  ): void;
}
