/**
 * `root`: one element's subtree as a snapshot of its own. The snapshot that
 * printed the element is not re-rendered (it is one moment, now past): its
 * window is observed again, by its id where it has one, and the element is
 * found in that fresh tree by its live handle (the handle ledger keeps one id
 * per live element while a snapshot holds it), else, when it was proven
 * unique, by its identity: the same rules as acting on it (resolve.ts).
 * The subtree is then planned from that element with the whole window's
 * identity counts, so its records prove uniqueness over the window, not over
 * the subtree, and an action on them goes through every usual check.
 */

import { AxsnapError } from "../../model/errors.js";
import type { RawNode, RawSnapshot } from "../../model/model.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { WindowOption } from "../../observe/windows.js";
import { identityOf, sameIdentity } from "../../render/identity.js";
import type { RenderScope } from "../../render/index.js";
import type { PathRoot } from "../../render/records.js";
import type { Addressed } from "./store.js";

/** The header line of each subtree snapshot, so a subtree of a subtree's line 0 says where it came from. */
const headers = new WeakMap<Snapshot, string>();

export function rememberScope(snapshot: Snapshot, scope: RenderScope | undefined): void {
  if (scope !== undefined) headers.set(snapshot, scope.headerLine);
}

/** The header line of a subtree snapshot, naming its root element; undefined for a whole window's. */
export function scopeOf(snapshot: Snapshot): string | undefined {
  return headers.get(snapshot);
}

/** The window to observe again for a root in `snap`: by id where it has one, else by title. */
export function windowOfRoot(snap: Snapshot): WindowOption | undefined {
  const w = snap.window;
  if (w.id !== undefined && w.id.length > 0) return { id: w.id };
  return w.title.length > 0 ? { title: w.title } : undefined;
}

function headerLine({ snapshot, record }: Addressed): string {
  const own = headers.get(snapshot);
  // The root of a subtree snapshot again: the same element of the same window as that one says.
  if (own !== undefined && record.index === 0) return own;
  const name = record.title === undefined ? "" : ` ${JSON.stringify(record.title)}`;
  const role = record.roleText.length > 0 ? record.roleText : record.role;
  return `Subtree of element ${record.index} (${role}${name}) of snapshot ${snapshot.id}, window ${JSON.stringify(snapshot.window.title)}.`;
}

interface Found {
  node: RawNode;
  root: PathRoot;
  path: number[];
}

/** Every node of the fresh tree that `test` accepts, with its path. */
function findAll(raw: RawSnapshot, test: (n: RawNode) => boolean): Found[] {
  const out: Found[] = [];
  const roots: [RawNode | undefined, PathRoot][] = [
    [raw.root, "window"],
    [raw.menuBar, "menuBar"],
  ];
  for (const [top, root] of roots) {
    if (top === undefined) continue;
    const stack: { node: RawNode; path: number[] }[] = [{ node: top, path: [] }];
    while (stack.length > 0) {
      const { node, path } = stack.pop()!;
      if (test(node)) out.push({ node, root, path });
      const ch = node.children;
      if (ch) for (let i = ch.length - 1; i >= 0; i--) stack.push({ node: ch[i]!, path: [...path, i] });
    }
  }
  return out;
}

/**
 * Where the subtree starts in a fresh observation of the addressed element's
 * window. Throws STALE_REF (gone, or changed and not provably the same),
 * AMBIGUOUS_TARGET or IDENTITY_UNPROVEN as an action on it would.
 */
export function scopeIn(addressed: Addressed, raw: RawSnapshot): RenderScope {
  const { snapshot, record } = addressed;
  const hint = `take a new snapshot of ${snapshot.app.name} and pick the element from it`;
  const was = snapshot.window.id;
  if (was !== undefined && raw.window.id !== undefined && raw.window.id !== was)
    throw new AxsnapError(
      "STALE_REF",
      `the window of snapshot ${snapshot.id} is not the one observed now, so element ${record.index} cannot be found in it`,
      { hint },
    );
  const byHandle =
    record.handle === undefined
      ? []
      : findAll(raw, (n) => n.handle === record.handle && sameIdentity(identityOf(n), record.identity));
  let found = byHandle[0];
  if (found === undefined) {
    if (!record.proof.unique)
      throw new AxsnapError(
        "STALE_REF",
        `element ${record.index} of snapshot ${snapshot.id} changed, and it was not proven unique when observed (${record.proof.reason}), so it cannot be found again`,
        { hint },
      );
    if (raw.walk.ended !== "complete")
      throw new AxsnapError(
        "IDENTITY_UNPROVEN",
        `element ${record.index} of snapshot ${snapshot.id} changed, and the new observation was incomplete (${raw.walk.ended}), so it cannot be found again with certainty`,
        { hint },
      );
    const matches = findAll(raw, (n) => sameIdentity(identityOf(n), record.identity));
    if (matches.length === 0)
      throw new AxsnapError(
        "STALE_REF",
        `element ${record.index} of snapshot ${snapshot.id} is gone from the window`,
        {
          hint,
        },
      );
    if (matches.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_TARGET",
        `${matches.length} elements now match element ${record.index} of snapshot ${snapshot.id}`,
        { hint },
      );
    found = matches[0]!;
  }
  return {
    start: { node: found.node, root: found.root, path: found.path },
    headerLine: headerLine(addressed),
  };
}
