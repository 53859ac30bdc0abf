/**
 * Whether keys may go into an element, as far as secrets go, asked live:
 * the key guards (guards.ts) ask it of the focused element before every
 * chunk of typing and every key that can insert text, and the targeted
 * writes (typeText into, setValue) of their element.
 *
 * One notion with the renderer's (render/secure.ts): an element is secure by
 * what it says of itself, or by the label beside it when it has no name of
 * its own. The snapshot's judgement of that label is in its tree (the
 * secure state withoutSecrets() wrote); the label is also read again now,
 * from the live container the field sits in, when that container is a
 * form's size, since an app can relabel a field after the snapshot (a
 * sign-in step that turns "Email:" into "Password:" beside the same entry).
 * A single-line unnamed field the snapshot did not show cannot be judged by
 * its label: keys are refused there, with the way out (a new snapshot shows
 * it).
 *
 * A window with no accessibility tree (an X11 client such as Tk's wish or
 * xterm) says nothing about which of its widgets has focus, so nothing says
 * whether typed text would land in a password field; what it shows is in
 * its pixels. Its text is read now, and a line that names a secret refuses
 * the keys, wherever that line is: better refuse than type a secret. Text
 * that cannot be read refuses them too.
 */

import { AxsnapError } from "../../model/errors.js";
import type { RawNode, RawSnapshot } from "../../model/model.js";
import type { LiveObservation } from "../../observe/desktop.js";
import type { Snapshot } from "../../observe/snapshot.js";
import { inferLabels, labelHolder, relationLabels, unnamed } from "../../render/labels.js";
import { isTextEntry, namesSecret, secureInItself } from "../../render/roles.js";
import { cut } from "../../render/sanitize.js";
import { labelSecures } from "../../render/secure.js";
import type { CallContext } from "../call.js";
import { PASS_THROUGH, releaseLater } from "./resolve.js";

/** Levels below a label's container that inference looks at: its children, through two wrappers. */
const HOLDER_DEPTH = 3;

/** An observed tree's elements by handle, and each node's parent: built once per observation, when asked. */
interface TreeIndex {
  byHandle: Map<number, RawNode>;
  parent: Map<RawNode, RawNode>;
}
const indexes = new WeakMap<RawSnapshot, TreeIndex>();

function indexOf(raw: RawSnapshot): TreeIndex {
  let index = indexes.get(raw);
  if (index !== undefined) return index;
  index = { byHandle: new Map(), parent: new Map() };
  const stack: RawNode[] = raw.menuBar ? [raw.root, raw.menuBar] : [raw.root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.handle !== undefined && !index.byHandle.has(node.handle)) index.byHandle.set(node.handle, node);
    if (node.children)
      for (const c of node.children) {
        index.parent.set(c, node);
        stack.push(c);
      }
  }
  indexes.set(raw, index);
  return index;
}

/** The element with this handle in an observed tree, with its ancestors (the root first). */
function findObserved(live: LiveObservation, handle: number): { node: RawNode; path: RawNode[] } | undefined {
  const index = indexOf(live.raw);
  const node = index.byHandle.get(handle);
  if (node === undefined) return undefined;
  const path: RawNode[] = [];
  for (let p = index.parent.get(node); p !== undefined; p = index.parent.get(p)) path.unshift(p);
  return { node, path };
}

/**
 * Whether a live element is secure as far as the observation shows, without
 * reading anything: what it says of itself, or the snapshot's judgement of
 * it (an element the snapshot made secure by its label).
 */
export function securePrinted(node: RawNode, live: LiveObservation): boolean {
  if (secureInItself(node)) return true;
  if (node.handle === undefined) return false;
  return findObserved(live, node.handle)?.node.states?.secure === true;
}

/**
 * Why a live element is a secure field now (`the label "PIN:" beside it
 * names a secret`), or undefined when it is not. Throws POLICY_DENIED when it cannot
 * be told (a single-line unnamed field the snapshot did not show, a label's
 * container that could not be read).
 */
export async function secureNow(
  node: RawNode,
  snap: Snapshot,
  live: LiveObservation,
  ctx: CallContext,
): Promise<string | undefined> {
  if (secureInItself(node)) return "its role or its name says it holds a password";
  if (node.handle === undefined) return undefined;
  const seen = findObserved(live, node.handle);
  if (seen?.node.states?.secure === true)
    return `snapshot ${snap.id} showed it secure (by the label beside it, or the secure field it is part of)`;
  // Only a text entry with no name of its own takes its name, and so its secrecy, from a label beside it.
  if (!isTextEntry(node) || !unnamed(node)) return undefined;
  // Text areas (an editor's document) hold no passwords, and reading their container would read their text.
  if (node.states?.multiline === true) return undefined;
  if (seen === undefined)
    throw new AxsnapError(
      "POLICY_DENIED",
      `the focused field (${node.role}) has no name of its own and snapshot ${snap.id} did not show it, so whether the label beside it names a secret cannot be told; nothing was sent`,
      { hint: "take a new snapshot of the window the field is in, then try again" },
    );
  const holder = labelHolder(seen.path);
  // A form's row or grid is read again in one small call; a page-sized container would cost a read of
  // up to 400 elements before every chunk of typing, and keeps the snapshot's judgement instead.
  if (holder?.handle === undefined || !small(holder)) return undefined;
  const label = await labelNow(holder.handle, node.handle, live, ctx);
  return labelSecures(node, label) ? `the label "${cut(label!, 40)}" beside it names a secret` : undefined;
}

/** At most this many elements down to HOLDER_DEPTH, as observed: a label's container read again live. */
const HOLDER_MAX = 64;

function small(holder: RawNode): boolean {
  let count = 0;
  const stack: { node: RawNode; depth: number }[] = [{ node: holder, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (++count > HOLDER_MAX) return false;
    if (depth < HOLDER_DEPTH) for (const c of node.children ?? []) stack.push({ node: c, depth: depth + 1 });
  }
  return true;
}

/** The label inferred now for the field `field` among the children of its container `holder`. */
async function labelNow(
  holder: number,
  field: number,
  live: LiveObservation,
  ctx: CallContext,
): Promise<string | undefined> {
  let read: Awaited<ReturnType<LiveObservation["backend"]["readElement"]>>;
  try {
    read = await ctx.step(
      "read",
      () => live.backend.readElement(holder, HOLDER_DEPTH, ctx.remaining()),
      (late) => releaseLater(live, late.handles),
    );
  } catch (e) {
    if (e instanceof AxsnapError && PASS_THROUGH.has(e.code)) throw e;
    throw new AxsnapError(
      "POLICY_DENIED",
      `the labels beside the focused field could not be read (${(e as Error).message}), so whether one names a secret cannot be told; nothing was sent`,
      { hint: "take a new snapshot, then try again", cause: e },
    );
  }
  releaseLater(live, read.handles);
  const labels = inferLabels(read.node, relationLabels([read.node]));
  if (labels === undefined) return undefined;
  for (const [node, label] of labels) if (node.handle === field) return label;
  return undefined;
}

/**
 * Refuses keys that insert text into a window with no accessibility tree
 * whose pixels show a line that names a secret (or whose text cannot be
 * read): nothing says where in it the keys would land.
 */
export async function guardTreelessPixels(
  snap: Snapshot,
  live: LiveObservation,
  ctx: CallContext,
): Promise<void> {
  const why = `${snap.app.name} has no accessibility tree, so which of its fields would take the keys cannot be read`;
  const languages = live.options.ocrLanguages;
  let lines: { text: string }[];
  try {
    const read = await ctx.step("read", () =>
      live.backend.recognizeText({
        window: live.window,
        regions: [],
        blanks: [],
        ...(languages ? { languages } : {}),
        deadlineMs: ctx.remaining(),
      }),
    );
    lines = read.lines;
  } catch (e) {
    if (e instanceof AxsnapError && PASS_THROUGH.has(e.code)) throw e;
    const unavailable = e instanceof AxsnapError && e.code === "OCR_UNAVAILABLE";
    throw new AxsnapError(
      "POLICY_DENIED",
      `${why}, and the text its window shows could not be read either (${(e as Error).message}), so it may be asking for a password; nothing was sent`,
      {
        hint: unavailable
          ? `${(e as AxsnapError).hint ?? "install an OCR engine"}; or ask the user to type it`
          : "take a new snapshot and try again, or ask the user to type it",
        cause: e,
      },
    );
  }
  const label = lines.find((l) => namesSecret(l.text));
  if (label !== undefined)
    throw new AxsnapError(
      "POLICY_DENIED",
      `${why}, and its window shows a password label ("${cut(label.text.trim(), 40)}"): the keys could go into a secure field; nothing was sent`,
      { hint: "ask the user to enter it" },
    );
}
