/**
 * Actions that open a modal dialog (issue 32 §1). GTK 3 runs an AT-SPI
 * action inside the accessibility bridge's D-Bus dispatch: at-spi2-atk
 * answers DoAction first, then calls the action there, so a handler that
 * runs a dialog's own loop (gtk_dialog_run: mousepad's Save As, gtk3-demo's
 * Interactive Dialog) never returns to the dispatch until the dialog closes,
 * and the app answers no accessibility call meanwhile, though its X input
 * works. A pointer click on the same element runs the handler from X input,
 * which that loop dispatches. So where a press may open a dialog (a button,
 * a menu item) in such a toolkit, the element is clicked with the pointer
 * when it is on screen and the hit test finds it uncovered; its action is
 * used only where the pointer cannot reach it, and an app that then stops
 * answering is said to be held by what the action opened
 * (act/held.ts), never "wait a moment".
 */

import { AxsnapError } from "../../model/errors.js";
import type { RawNode } from "../../model/model.js";
import type { NativeBackend } from "../../native.js";
import type { CallContext } from "../call.js";
import { pointerAt } from "./deliver.js";
import type { ActEnv } from "./env.js";
import { hover } from "./hover.js";
import { underPointer } from "./pixels.js";
import type { Resolved } from "./resolve.js";
import { type Outcome, windowsListedBefore } from "./result.js";

/** Roles whose press commonly opens a dialog: those are clicked by pointer in a toolkit that runs actions in the call. */
const MAY_OPEN_ROLES = new Set([
  "push button",
  "toggle button",
  "menu item",
  "check menu item",
  "radio menu item",
  "link",
]);

/** Per backend and pid: whether the app's toolkit runs an action inside the accessibility call that asked for it. */
const inCallByBackend = new WeakMap<NativeBackend, Map<number, boolean>>();

/**
 * Whether `name`/`version` is a toolkit whose actions run inside the
 * accessibility call: GTK before 4 (through at-spi2-atk). GTK 4 answers
 * each call from its own main-loop source, Qt and Chromium queue the
 * action; they are not.
 */
export function actionsRunInCall(name: string, version: string): boolean {
  const major = Number.parseInt(version, 10);
  return name.trim().toLowerCase() === "gtk" && Number.isFinite(major) && major < 4;
}

/** Whether the resolved element's app runs actions inside the call; false when it does not say. */
export async function runsInCall(r: Resolved, ctx: CallContext): Promise<boolean> {
  const backend = r.live.backend;
  const known = inCallByBackend.get(backend) ?? new Map<number, boolean>();
  inCallByBackend.set(backend, known);
  const pid = r.live.window.pid;
  const cached = known.get(pid);
  if (cached !== undefined) return cached;
  try {
    const tk = await ctx.step("read", () => backend.toolkit(r.handle, Math.min(ctx.remaining(), 1000)));
    const inCall = actionsRunInCall(tk.name, tk.version);
    known.set(pid, inCall);
    return inCall;
  } catch (e) {
    if (e instanceof AxsnapError && (e.code === "ABORTED" || e.code === "TIMEOUT")) throw e;
    // Unknown (a platform that does not say, an app that did not answer in time): its action, as before.
    return false;
  }
}

/** Whether a left click on this element should go by pointer first (a press that may open a dialog). */
export function mayOpenDialog(r: Resolved): boolean {
  return MAY_OPEN_ROLES.has(r.record.role);
}

/**
 * A pointer click on the element where it is on screen inside its window
 * and the hit test finds it there now (nothing in front of it); undefined,
 * with a note saying why and nothing sent, where the pointer cannot reach it
 * (its action is used then). Once the pointer has moved there, a refusal is
 * a refusal, as for any pointer input.
 */
export async function pointerFirst(
  env: ActEnv,
  r: Resolved,
  notes: string[],
  ctx: CallContext,
): Promise<Outcome | undefined> {
  const p = r.record.clickPoint;
  const f = r.live.window.frame;
  const inside = p !== undefined && p.x >= f.x && p.y >= f.y && p.x < f.x + f.w && p.y < f.y + f.h;
  const why = (reason: string) => {
    notes.push(`pressed by its action: ${reason}; ${HELD_RISK}`);
    return undefined;
  };
  if (!inside || r.node.states?.visible === false) return why("it is not on screen inside its window");
  if (Date.now() - env.store.observedAt(r.snapshot) > env.policy.staleAfterMs)
    return why("the observation is too old for pointer input");
  // A modal dialog of the app keeps pointer input from its other windows (GTK drops it): a pointer click
  // there would reach nothing, though the hit test still finds the element.
  const modal = windowsListedBefore(ctx)?.find((w) => w.modal && w.id !== r.snapshot.window.id);
  if (modal) return why(`the app's modal dialog "${modal.title}" keeps pointer input from this window`);
  // An open menu is a popup window of its own above the app's windows: the hit test starts at the menu.
  const judged = withinMenu(r);
  try {
    await underPointer(judged, p, ctx);
  } catch (e) {
    if (!(e instanceof AxsnapError) || e.code !== "STALE_REF") throw e;
    return why("something else is in front of its click point");
  }
  let out: Outcome;
  if (judged === r)
    out = await pointerAt(env, r, { kind: "click", button: 1, count: 1 }, notes, "click", ctx);
  else {
    // pointerAt's steps, judged from the menu; the input still goes to the observed window's app.
    await hover(r.live, p, ctx, notes);
    r.node = await underPointer(judged, p, ctx);
    await ctx.step("input", () =>
      r.live.backend.pointer(
        r.live.window,
        { kind: "click", button: 1, count: 1, x: p.x, y: p.y },
        ctx.remaining(),
      ),
    );
    out = {
      action: "click",
      snapshot: r.snapshot,
      record: r.record,
      channel: "synthetic",
      delivery: "delivered_unverified",
      notes,
    };
  }
  notes.push(
    "clicked with the pointer, not by its action: this app runs an action inside the accessibility call, so a dialog the action opened would hold its accessibility until it closed",
  );
  return out;
}

/**
 * The element as judged from the open menu that holds it (its nearest ancestor of role menu, which the
 * observation printed inside its window): a hit test from the window does not reach into the menu's popup.
 * The element itself when it is in no menu.
 */
function withinMenu(r: Resolved): Resolved {
  const path: RawNode[] = [];
  const find = (n: RawNode): boolean => {
    path.push(n);
    if (n.handle === r.handle) return true;
    for (const c of n.children ?? []) if (find(c)) return true;
    path.pop();
    return false;
  };
  if (!find(r.live.raw.root)) return r;
  const menu = path
    .slice(0, -1)
    .reverse()
    .find((n) => n.role === "menu" || n.role === "popup menu");
  if (!menu || menu.handle === undefined || !menu.frame) return r;
  return { ...r, live: { ...r.live, window: { ...r.live.window, element: menu.handle, frame: menu.frame } } };
}

/** What a press by action risks in such an app, said where it was used anyway. */
const HELD_RISK =
  "if it opens a dialog, this app does not answer its accessibility until the dialog closes (keys and pixel clicks still reach it)";
