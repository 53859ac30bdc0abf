/**
 * An app an action left not answering (issue 32 §1): a GTK 3 action that
 * ran a modal dialog's loop inside the accessibility call holds the app's
 * accessibility until the dialog closes (act/modal.ts says why, and avoids
 * it where the pointer can reach the element). When it happens anyway, the
 * action's reply says so, and until the app answers again its refusals say
 * what holds it and what still reaches it, never "wait a moment".
 */
import { AxsnapError } from "../../model/errors.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { SnapshotStore } from "./store.js";

/** An app an action left not answering: what the action was, when, and its name then. */
interface Held {
  action: string;
  at: number;
  name: string;
}

/** Per session store: pid → the action after which the app stopped answering. */
const heldByStore = new WeakMap<SnapshotStore, Map<number, Held>>();

/** What holds the app, what axsnap can and cannot do meanwhile, and how it comes back. */
const HELD_HINT =
  "its dialog is on screen, but nothing of the app can be read until the dialog closes, so axsnap cannot tell what a click or key would reach there and refuses input to it: ask the user to finish or close that dialog, then take a new snapshot";

/**
 * The note for an action after which the app stopped answering (the fresh snapshot got
 * APP_UNRESPONSIVE though the app answered while the action was resolved): the app is remembered as
 * held, so that later refusals say why instead of "wait a moment".
 */
export function heldAfterAction(store: SnapshotStore, snap: Snapshot, action: string): string {
  const held = heldByStore.get(store) ?? new Map<number, Held>();
  heldByStore.set(store, held);
  held.set(snap.app.pid, { action, at: Date.now(), name: snap.app.name });
  return `${snap.app.name} stopped answering its accessibility right after this ${action}: the ${action} most likely opened a modal dialog that runs its own loop inside the accessibility call (GTK 3 does), so nothing of the app can be read until that dialog closes; ${HELD_HINT}`;
}

/** Forgets a held app: it answered again (the dialog closed). */
export function answered(store: SnapshotStore, pid: number): void {
  heldByStore.get(store)?.delete(pid);
}

/**
 * An APP_UNRESPONSIVE refusal for an app an action of this session left held, said as what it is
 * (a dialog the action opened), never "wait a moment"; any other error as it was.
 */
export function explainHeld(store: SnapshotStore, app: unknown, e: unknown): unknown {
  if (!(e instanceof AxsnapError) || e.code !== "APP_UNRESPONSIVE") return e;
  const held = heldByStore.get(store);
  if (!held) return e;
  const hit = [...held.entries()].find(
    ([pid, h]) => app === pid || (typeof app === "string" && app === h.name),
  );
  if (!hit) return e;
  const [pid, h] = hit;
  return new AxsnapError(
    "APP_UNRESPONSIVE",
    `${h.name} (pid ${pid}) has not answered its accessibility since a ${h.action} ${Math.round((Date.now() - h.at) / 1000)} s ago, which most likely opened a modal dialog that holds it`,
    { hint: HELD_HINT, cause: e, pid },
  );
}
