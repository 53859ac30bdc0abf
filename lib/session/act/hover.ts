/**
 * Pointer input lands where the pointer arrives, and an app may change what
 * is there when it arrives: a page swaps a button on mouseover, a GTK button
 * relabels itself on enter-notify, a drawn label is redrawn (issue 31). A
 * check made before the pointer moved judged what was there without it. So
 * before a press (a click, a wheel, a drag's press and release) the pointer
 * is moved to the point alone, the app is given time to react, and only then
 * is the point judged (lib/session/act/pixels.ts, lib/session/act/deliver.ts) and the input
 * sent. The move presses nothing: a refusal after it is still "nothing was
 * delivered" (call.ts, the "hover" step), and says the pointer was moved.
 */

import { AxsnapError } from "../../model/errors.js";
import type { LiveObservation } from "../../observe/desktop.js";
import type { CallContext } from "../call.js";

/**
 * How long the app must send no change event after the pointer arrives: the
 * quiet period an action's settle uses (act/result.ts), since a hover is the
 * app reacting to input like any other. Measured from the move, so an app
 * that reacts at all reacts within it in practice (a GTK relabel's name
 * change comes a few ms after the crossing event); an app that batches
 * (Chromium: its tree follows the page up to ~150 ms late) gets its longer
 * floor (400 ms) from the backend.
 */
const HOVER_QUIET_MS = 150;
/**
 * The most a hover is waited for: an app that never goes quiet (an
 * animation, a clock) is judged as it is then. A second covers hover
 * transitions (CSS ones are a few hundred ms) while leaving the press and
 * the fresh snapshot most of a default 5 s deadline; at most a third of what
 * is left of a shorter one.
 */
const HOVER_CAP_MS = 1000;

/** How a refusal after the hover says what was sent. */
export const AFTER_HOVER = "the pointer was moved there and nothing else was sent";

/** Moves the pointer to a screen point of the observed window, then waits for the app to react to it. */
export async function hover(
  live: LiveObservation,
  point: { x: number; y: number },
  ctx: CallContext,
  notes: string[],
): Promise<void> {
  await ctx.step("hover", () =>
    live.backend.pointer(live.window, { kind: "move", x: point.x, y: point.y }, ctx.remaining()),
  );
  const cap = Math.max(1, Math.min(HOVER_CAP_MS, ctx.remaining() / 3));
  let quiet: Awaited<ReturnType<LiveObservation["backend"]["waitQuiet"]>> | undefined;
  try {
    quiet = await ctx.step("read", () =>
      live.backend.waitQuiet(live.window.pid, { quietMs: HOVER_QUIET_MS, capMs: cap }),
    );
  } catch (e) {
    if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "TIMEOUT")) throw e;
    // An app without change events (an X client with no accessibility tree) is given the quiet period.
  }
  if (quiet === undefined || quiet.settled === "unsupported")
    await new Promise((done) => setTimeout(done, Math.min(HOVER_QUIET_MS, cap)));
  else if (quiet.settled === "cap")
    notes.push(
      `the app was still changing ${Math.round(quiet.ms)} ms after the pointer arrived; the point was judged as it was then`,
    );
}
