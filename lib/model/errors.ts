/**
 * One error class for the whole library. Every failure an agent can meet has a
 * stable `code`, a `hint` written for an LLM (what to do next), and the
 * delivery/retry fields of refs-and-actions.md so an agent knows whether
 * anything reached the app. Backends map their native codes into these.
 */
import type { Snapshot } from "../observe/snapshot-types.js";

export const ERROR_CODES = [
  "PERMISSION_DENIED",
  "APP_NOT_FOUND",
  "WINDOW_NOT_FOUND",
  "SNAPSHOT_NOT_FOUND",
  "ELEMENT_NOT_FOUND",
  "STALE_REF",
  "AMBIGUOUS_TARGET",
  "IDENTITY_UNPROVEN",
  "ACTION_NOT_SUPPORTED",
  "ACTION_FAILED",
  "NOT_SETTABLE",
  "APP_UNRESPONSIVE",
  "TIMEOUT",
  "STALE_OBSERVATION",
  "POLICY_DENIED",
  "INVALID_ARGUMENT",
  "PLATFORM_NOT_SUPPORTED",
  "ACCESSIBILITY_UNAVAILABLE",
  "AMBIGUOUS_APP",
  "NOT_ENABLED",
  "ABORTED",
  "OCR_UNAVAILABLE",
  "DESKTOP_EXISTS",
  "DESKTOP_NOT_FOUND",
  "DESKTOP_GONE",
  "DESKTOP_UNAVAILABLE",
  "EFFECT_NOT_SEEN",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type Delivery = "not_delivered" | "delivered_unverified" | "delivered_verified" | "delivery_uncertain";
export type Retry = "safe" | "unsafe";

export interface AxsnapErrorOptions {
  hint?: string;
  delivery?: Delivery;
  cause?: unknown;
  /** The last observation a failed wait made (waitFor's TIMEOUT): what the app showed when time ran out. */
  observed?: Snapshot;
  /** A process the call started (launchApp's TIMEOUT): it runs on, for the caller to observe or stop. */
  pid?: number;
  /** A locator found nothing (ELEMENT_NOT_FOUND): the closest elements there are, best first. */
  candidates?: LocatorCandidate[];
  /** A locator named several elements (AMBIGUOUS_TARGET): each with the locator that tells it apart. */
  matches?: LocatorCandidate[];
}

/** An element a locator refusal names: where it is now, and how to name it alone. */
export interface LocatorCandidate {
  ref: string;
  locator: string;
  /** Its printed line, as the snapshot text shows it. */
  line: string;
  /** Its named ancestors, outermost first, as locator steps print them. */
  ancestors: string[];
  /** Why it is offered ("same role and place, name differs"). */
  why?: string;
}

/** What to do about a missing macOS permission: the pane, the restart, and tccutil when a grant is stuck. */
export const MACOS_PERMISSION_HINT =
  "open System Settings > Privacy & Security, turn on the app that runs this process (the terminal or agent host) under Accessibility (and Screen Recording for screenshots), then restart that app; if it is already on and still denied, run `tccutil reset Accessibility <its bundle id>` (and `tccutil reset ScreenCapture <its bundle id>`), then grant it again";

/** What to do next, per code, when the thrower has nothing more specific to say. */
const DEFAULT_HINTS: Record<ErrorCode, string> = {
  PERMISSION_DENIED: "grant the missing permission, then try again",
  APP_NOT_FOUND: "check the app name or pid with listApps(), or start the app",
  WINDOW_NOT_FOUND: "the app has no usable window; open or unminimize one, then take a new snapshot",
  SNAPSHOT_NOT_FOUND: "that snapshot is no longer held; take a new snapshot and use its indices",
  ELEMENT_NOT_FOUND: "that index was not printed in the snapshot; pick an index from the snapshot text",
  STALE_REF: "the element changed or is gone; take a new snapshot and pick the element again",
  AMBIGUOUS_TARGET: "several elements now match; take a new snapshot and pick one by its new index",
  IDENTITY_UNPROVEN: "the element could not be found again with certainty; take a new snapshot",
  ACTION_NOT_SUPPORTED:
    "the element does not offer that action; use one of its Secondary Actions or click by coordinates",
  ACTION_FAILED: "the element refused the action; take a new snapshot, or click by coordinates",
  NOT_SETTABLE:
    "the element's value cannot be set; act on it by its actions (click, perform_action); a text field not marked settable takes typed text after a click",
  APP_UNRESPONSIVE: "the app is not answering; wait a moment and take a new snapshot",
  TIMEOUT: "the operation took too long; try again, or ask for fewer elements with maxNodes",
  STALE_OBSERVATION: "the last snapshot of this app is too old; take a new snapshot first",
  POLICY_DENIED: "this action is not allowed by the safety rules; ask the user to do it",
  INVALID_ARGUMENT: "fix the argument as the message says and call again",
  PLATFORM_NOT_SUPPORTED: "this platform has no backend; use macOS or Linux",
  ACCESSIBILITY_UNAVAILABLE:
    "the accessibility service is not running or not reachable; start it and try again",
  AMBIGUOUS_APP:
    "several running apps match that name; pass the pid of the one you mean (the message lists them) as { app: <pid> }",
  NOT_ENABLED: "the element is disabled; take a new snapshot and wait until it is enabled, or pick another",
  ABORTED: "the call was aborted by its signal; take a new snapshot before acting again",
  // The backend that failed says what to install, if anything (lib/native.ts mapNativeError): this is the rest.
  OCR_UNAVAILABLE:
    'no engine here reads text from pixels: take the snapshot with ocr: "auto" or false and look at its screenshot',
  // The agent's desktop (lib/observe/agent-desktop/): its commands are the same words in every door.
  DESKTOP_EXISTS:
    "a desktop of that name is running: use it as it is, pick another name, or stop it first (`axsnap desktop stop NAME`)",
  DESKTOP_NOT_FOUND:
    "no desktop of that name was started; `axsnap desktop list` shows the desktops there are",
  DESKTOP_GONE:
    "that desktop's X server or bus has ended, and its apps with it; start it again (`axsnap desktop start NAME`) and launch the apps there again",
  DESKTOP_UNAVAILABLE:
    "a private desktop needs Xvfb, a D-Bus session bus and the AT-SPI bus: install the Debian packages xvfb, dbus and at-spi2-core",
  EFFECT_NOT_SEEN:
    "the step ran but the change the recorded run saw did not appear; take a snapshot, compare it with the recorded effect, and decide whether to go on",
};

export class AxsnapError extends Error {
  override readonly name = "AxsnapError";
  readonly code: ErrorCode;
  readonly hint: string;
  readonly delivery: Delivery;
  readonly retry: Retry;
  /** A wait's last observation, when it timed out (kept by the session: it is the app's latest). */
  readonly observed?: Snapshot;
  /** The process the call started, when it failed after starting one (launchApp). */
  readonly pid?: number;
  readonly candidates?: LocatorCandidate[];
  readonly matches?: LocatorCandidate[];

  constructor(code: ErrorCode, message: string, options: AxsnapErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.observed !== undefined) this.observed = options.observed;
    if (options.pid !== undefined) this.pid = options.pid;
    if (options.candidates !== undefined) this.candidates = options.candidates;
    if (options.matches !== undefined) this.matches = options.matches;
    this.hint = options.hint ?? DEFAULT_HINTS[code];
    this.delivery = options.delivery ?? "not_delivered";
    // Only an action with evidence that nothing was sent may be repeated blindly.
    this.retry = this.delivery === "not_delivered" ? "safe" : "unsafe";
  }

  toJSON(): {
    code: ErrorCode;
    message: string;
    hint: string;
    delivery: Delivery;
    retry: Retry;
    pid?: number;
    candidates?: LocatorCandidate[];
    matches?: LocatorCandidate[];
  } {
    return {
      code: this.code,
      message: this.message,
      hint: this.hint,
      delivery: this.delivery,
      retry: this.retry,
      ...(this.pid === undefined ? {} : { pid: this.pid }),
      ...(this.candidates === undefined ? {} : { candidates: this.candidates }),
      ...(this.matches === undefined ? {} : { matches: this.matches }),
    };
  }
}

export function invalidArgument(message: string, hint?: string): AxsnapError {
  return new AxsnapError("INVALID_ARGUMENT", message, hint === undefined ? {} : { hint });
}

/**
 * A failure that is not an AxsnapError (a bug in axsnap), as every door and the trace report it: one code,
 * and, when it came from an action, nothing known about what reached the app. Doors reword the hint.
 */
export function unexpectedErrorJson(
  e: unknown,
  acting: boolean,
): { code: "INTERNAL"; message: string; hint: string; delivery: Delivery; retry: Retry } {
  return {
    code: "INTERNAL",
    message: e instanceof Error ? e.message : String(e),
    hint: acting
      ? "an unexpected failure (a bug in axsnap): take a new snapshot to see whether the action happened before trying again"
      : "an unexpected failure (a bug in axsnap): try again, or take a new snapshot to see the app's state",
    delivery: acting ? "delivery_uncertain" : "not_delivered",
    retry: acting ? "unsafe" : "safe",
  };
}
