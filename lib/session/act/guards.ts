/**
 * The safety rules an action passes before anything is sent: destructive
 * names go through confirm, disabled elements are not acted on, synthetic
 * input needs a recent observation, and key events go only where the live
 * keyboard focus is known (never characters into a secure field, never
 * typing blind). Each guard throws the refusal an agent should see.
 */

import { AxsnapError } from "../../model/errors.js";
import type { RawNode } from "../../model/model.js";
import { activating, nonInserting, textActivates } from "../../model/policy/keys.js";
import { destructiveWordIn } from "../../model/policy/normalize.js";
import type { NativeBackend } from "../../native.js";
import type { LiveObservation } from "../../observe/desktop.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { identityOf } from "../../render/identity.js";
import type { ElementRecord } from "../../render/records.js";
import { cut } from "../../render/sanitize.js";
import type { CallContext } from "../call.js";
import type { ActEnv, ConfirmRequest } from "./env.js";
import { PASS_THROUGH, type Resolved, releaseLater } from "./resolve.js";
import { guardTreelessPixels, secureNow } from "./secrets.js";
import type { Addressed } from "./store.js";

export const DEFAULT_DESTRUCTIVE_WORDS = [
  "delete",
  "remove",
  "send",
  "sign out",
  "log out",
  "logout",
  "erase",
  "empty trash",
  "删除",
  "移除",
  "发送",
  "退出登录",
  "注销",
  "清空",
];

export { PASS_THROUGH } from "./resolve.js";

/** Roles where "go to the end" keys move a caret rather than doing something else. */
export const TEXT_ROLES = new Set([
  "AXTextField",
  "AXTextArea",
  "AXComboBox",
  "text",
  "entry",
  "password text",
  "terminal",
  "paragraph",
  "document text",
  "combo box",
  "spin button",
]);

/** A disabled element is not acted on: the app would ignore it, and "delivered" would be a lie. */
export function guardEnabled(r: Resolved): void {
  if (r.node.states?.enabled === false)
    throw new AxsnapError(
      "NOT_ENABLED",
      `element ${r.record.index} (${r.record.roleText}) is disabled; nothing was sent`,
    );
}

/** A field printed secure is never written ("setting", "typing into"). */
export function guardNotSecure(record: ElementRecord, what: string): void {
  if (record.secure)
    throw new AxsnapError("POLICY_DENIED", `${what} a secure text field is not allowed; nothing was sent`, {
      hint: "ask the user to enter it",
    });
}

/** Nor is one that reads secure now, live, whatever it printed as (secrets.ts). */
export async function guardNotSecureNow(r: Resolved, ctx: CallContext): Promise<void> {
  const why = await secureNow(r.node, r.snapshot, r.live, ctx);
  if (why !== undefined)
    throw new AxsnapError("POLICY_DENIED", `the field is secure now: ${why}; nothing was sent`, {
      hint: "ask the user to enter it",
    });
}

/** How a guard is run in a call that checks more than once: pointer input, before and after the pointer arrives. */
export interface GuardTurn {
  /** Names confirmed already in this call: a name the user confirmed is not asked again. */
  asked?: Set<string>;
  /** What a refusal says was sent (default "nothing was sent"). */
  sent?: string;
}

/** A destructive name goes through confirm. */
export async function guardDestructive(
  env: ActEnv,
  action: string,
  r: Addressed,
  turn: GuardTurn = {},
): Promise<void> {
  const { asked, sent = "nothing was sent" } = turn;
  // Both sides are normalised (NFKC, case, invisible characters, look-alikes):
  // "Del\u00ADete", "Dеlete" with a Cyrillic е and "ＤＥＬＥＴＥ" all read as "Delete".
  const named = `${r.record.title ?? ""} ${r.record.description ?? ""}`;
  const word = destructiveWordIn(named, env.policy.destructiveWords);
  if (word === undefined || asked?.has(named)) return;
  const request: ConfirmRequest = {
    action,
    app: r.snapshot.app.name,
    index: r.record.index,
    name: (r.record.title ?? r.record.description ?? "").trim(),
    reason: `the target's name contains "${word}"`,
  };
  if (!env.policy.confirm)
    throw new AxsnapError(
      "POLICY_DENIED",
      `"${request.name}" looks destructive (${request.reason}); ${sent}`,
      {
        hint: "ask the user to do it, or create the session with a confirm callback",
      },
    );
  if (!(await env.policy.confirm(request)))
    throw new AxsnapError("POLICY_DENIED", `the confirm callback declined "${request.name}"; ${sent}`);
  asked?.add(named);
}

/** Synthetic input aims at places the agent saw: an observation older than the policy allows is refused. */
export function guardFresh(env: ActEnv, snap: Snapshot): void {
  const age = Date.now() - env.store.observedAt(snap);
  if (age > env.policy.staleAfterMs)
    throw new AxsnapError(
      "STALE_OBSERVATION",
      `the last observation of ${snap.app.name} is ${Math.round(age / 1000)} s old`,
    );
}

/**
 * The element that has keyboard focus in the app now, asked live: key
 * events go there, whatever the snapshot said. null = nothing has focus.
 * Focus that cannot be read refuses the keys: they could land in a
 * password field.
 */
export async function liveFocus(
  snap: Snapshot,
  live: LiveObservation,
  ctx: CallContext,
): Promise<RawNode | null> {
  let read: Awaited<ReturnType<NativeBackend["focusedElement"]>>;
  try {
    read = await ctx.step(
      "read",
      () => live.backend.focusedElement(snap.app.pid, 1, ctx.remaining()),
      (late) => late && releaseLater(live, late.handles),
    );
  } catch (e) {
    // The app or its window being gone is its own answer: nothing can be sent there at all.
    if (e instanceof AxsnapError && PASS_THROUGH.has(e.code)) throw e;
    throw new AxsnapError(
      "POLICY_DENIED",
      `where key events would go could not be read (${(e as Error).message}); nothing was sent`,
      { hint: "take a new snapshot, click the field you mean, then type again", cause: e },
    );
  }
  if (read === null) return null;
  releaseLater(live, read.handles);
  return read.node;
}

/**
 * The key guards, on the live focus: no characters into a secure field,
 * and keys that could press a destructive control go through confirm.
 * Returns the focus (null when nothing has it).
 */
export async function guardKeys(
  env: ActEnv,
  action: string,
  snap: Snapshot,
  live: LiveObservation,
  ctx: CallContext,
  keys: { text: string } | { combo: string },
  expected?: Resolved,
): Promise<RawNode | null> {
  const focus = await liveFocus(snap, live, ctx);
  const inserts = "text" in keys || !nonInserting(keys.combo);
  // Keys typed with no focused element go wherever the app puts focus next (its default widget,
  // perhaps a password field): nothing is typed blind.
  if (focus === null) {
    if (!inserts) return null;
    throw new AxsnapError("POLICY_DENIED", "no element of the app has keyboard focus; nothing was typed", {
      hint: "click the field you mean first (take a new snapshot to find it), then type",
    });
  }
  // Typing into a target: every chunk must still go to it, not to where focus moved meanwhile.
  if (expected && !(await focusIsOn(expected, focus, ctx)))
    throw new AxsnapError(
      "ACTION_FAILED",
      `keyboard focus left element ${expected.record.index} (${expected.record.roleText}) while typing; the rest was not typed`,
      { hint: "take a new snapshot, then type the rest into the field you mean" },
    );
  if (inserts) {
    const why = await secureNow(focus, snap, live, ctx);
    if (why !== undefined)
      throw new AxsnapError(
        "POLICY_DENIED",
        `the focused element (${describe(focus)}) is a secure field: ${why}; nothing was sent`,
        { hint: "ask the user to enter it" },
      );
    // An app with no tree: its focus is its window, and only its pixels say what the window asks for.
    if (snap.app.noTree === true) await guardTreelessPixels(snap, live, ctx);
  }
  const field = TEXT_ROLES.has(focus.role);
  const presses = "text" in keys ? textActivates(keys.text, field) : activating(keys.combo) || !field;
  if (presses) {
    // The live name decides (the element may have been renamed since the snapshot); the printed
    // index only names it in the confirm request.
    await guardDestructiveLive(env, action, snap, focus);
  }
  return focus;
}

/** Whether the live focus is the resolved element, or inside it (a combo box's entry). */
export async function focusIsOn(r: Resolved, focus: RawNode, ctx: CallContext): Promise<boolean> {
  if (focus.handle === undefined) return false;
  if (focus.handle === r.handle) return true;
  const inside = await ctx.step(
    "read",
    () => r.live.backend.readElement(r.handle, 3, ctx.remaining()),
    (late) => releaseLater(r.live, late.handles),
  );
  releaseLater(r.live, inside.handles);
  // The tree, not `handles`: those also hold the labels its elements name, which may lie outside it.
  return contains(inside.node, focus.handle);
}

function contains(root: RawNode, handle: number): boolean {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.handle === handle) return true;
    if (node.children) stack.push(...node.children);
  }
  return false;
}

/** Whether keyboard focus is now on the resolved element (or inside it), asked live. */
export async function focusLanded(r: Resolved, ctx: CallContext): Promise<boolean> {
  let focus: RawNode | null;
  try {
    focus = await liveFocus(r.snapshot, r.live, ctx);
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "POLICY_DENIED") return false;
    throw e;
  }
  return focus !== null && focusIsOn(r, focus, ctx);
}

/** A point is kept inside the observed window: input never aims beside it. */
export function clamp(
  live: LiveObservation,
  x: number,
  y: number,
  notes: string[],
): { x: number; y: number } {
  const f = live.window.frame;
  const cx = Math.min(Math.max(x, f.x), f.x + f.w - 1);
  const cy = Math.min(Math.max(y, f.y), f.y + f.h - 1);
  if (cx !== x || cy !== y)
    notes.push(
      `the point (${Math.round(x)}, ${Math.round(y)}) is outside the window; used (${Math.round(cx)}, ${Math.round(cy)})`,
    );
  return { x: cx, y: cy };
}

/**
 * The destructive-name check on an element read live: its live name decides (it may have been renamed
 * since the snapshot); the index the snapshot printed it at, if any, only names it in the confirm request.
 */
export async function guardDestructiveLive(
  env: ActEnv,
  action: string,
  snap: Snapshot,
  node: RawNode,
  turn: GuardTurn = {},
): Promise<void> {
  const printed = snap.records.find((r) => r.handle !== undefined && r.handle === node.handle);
  const record = {
    index: printed?.index ?? -1,
    ...(node.title === undefined ? {} : { title: node.title }),
    ...(node.description === undefined ? {} : { description: node.description }),
  } as ElementRecord;
  await guardDestructive(env, action, { snapshot: snap, record }, turn);
}

/** The live name a line would print (identity name, else title). */
export function nameOf(node: RawNode): string | undefined {
  return identityOf(node).name ?? node.title;
}

/** "push button "OK"": how a live node is named in a message. */
export function describe(node: RawNode): string {
  const name = nameOf(node);
  return name ? `${node.role} "${cut(name, 60)}"` : node.role;
}
