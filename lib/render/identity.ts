/**
 * Element identity: the predicate (role, subrole, identifier, printed name)
 * that says "this is the element that was printed". One definition serves
 * the renderer (which proves a record unique by counting predicates over the
 * whole observation) and the action layer (which reads the element live and
 * compares, or counts matches in a new observation). Keeping both on this
 * module is what makes "unique when printed" and "found again" the same test.
 *
 * A name inferred from a label beside the element (render/labels.ts) is not
 * part of it: an action reads the element alone, without its neighbours, so
 * it could not read that name back; and a label that changes or moves would
 * make the same field "another element", or let two fields trade names.
 */
import type { RawNode } from "../model/model.js";
import { chooseName, type Name } from "./lines.js";
import type { IdentityPredicate } from "./records.js";
import { isLink } from "./roles.js";
import { present } from "./sanitize.js";
import { linkText } from "./summary.js";

export interface Identity {
  id: IdentityPredicate;
  /** The name the line prints (a search field's value included), computed once. */
  name: Name | undefined;
}

/** The name part of the identity predicate: the printed name, except a search field's value. */
function identityName(node: RawNode): string | undefined {
  const name = isLink(node) ? linkName(node) : chooseName(node);
  return name !== undefined && name.from !== "value" ? name.text : undefined;
}

export function identify(node: RawNode): Identity {
  const name = isLink(node) ? linkName(node) : chooseName(node);
  const id: IdentityPredicate = { role: node.role };
  if (node.subrole !== undefined) id.subrole = node.subrole;
  if (present(node.identifier)) id.identifier = node.identifier;
  // A search field's value is its printed title but never part of its identity.
  if (name !== undefined && name.from !== "value") {
    id.name = name.text;
    id.nameFrom = name.from;
  }
  return { id, name };
}

/** The identity predicate of a node; the same function keys the uniqueness count. */
export function identityOf(node: RawNode): IdentityPredicate {
  return identify(node).id;
}

function linkName(node: RawNode): Name | undefined {
  if (present(node.title)) return { text: node.title, from: "title" };
  const t = linkText(node);
  return t === undefined ? undefined : { text: t, from: "linkText" };
}

/**
 * Counts identity predicates. Nested maps keyed by the predicate's own
 * strings, not one concatenated key: the strings come from the tree and keep
 * their cached hashes, so counting a 1,200-node window allocates nothing per node.
 */
export class IdentityCounter {
  private readonly byRole = new Map<string, Map<string, Map<string, Map<string, number>>>>();
  /**
   * Most nodes have neither subrole nor identifier: their names by role alone,
   * two lookups instead of four. An empty subrole or identifier is an absent one.
   */
  private readonly plain = new Map<string, Map<string, number>>();

  private slot(
    role: string,
    subrole: string | undefined,
    identifier: string | undefined,
    create: boolean,
  ): Map<string, number> | undefined {
    if (!subrole && !identifier) {
      let byName = this.plain.get(role);
      if (byName === undefined) {
        if (!create) return undefined;
        byName = new Map();
        this.plain.set(role, byName);
      }
      return byName;
    }
    let bySub = this.byRole.get(role);
    if (bySub === undefined) {
      if (!create) return undefined;
      bySub = new Map();
      this.byRole.set(role, bySub);
    }
    let byId = bySub.get(subrole ?? "");
    if (byId === undefined) {
      if (!create) return undefined;
      byId = new Map();
      bySub.set(subrole ?? "", byId);
    }
    let byName = byId.get(identifier ?? "");
    if (byName === undefined) {
      if (!create) return undefined;
      byName = new Map();
      byId.set(identifier ?? "", byName);
    }
    return byName;
  }

  add(node: RawNode): void {
    const byName = this.slot(
      node.role,
      node.subrole,
      present(node.identifier) ? node.identifier : undefined,
      true,
    )!;
    const name = identityName(node) ?? "";
    byName.set(name, (byName.get(name) ?? 0) + 1);
  }

  count(id: IdentityPredicate): number {
    return this.slot(id.role, id.subrole, id.identifier, false)?.get(id.name ?? "") ?? 0;
  }
}

/** Whether two predicates name the same element (nameFrom is how it was named, not who it is). */
export function sameIdentity(a: IdentityPredicate, b: IdentityPredicate): boolean {
  return a.role === b.role && a.subrole === b.subrole && a.identifier === b.identifier && a.name === b.name;
}

/** Every node of a tree whose identity is `id`, appended to `out`. */
export function countMatches(root: RawNode, id: IdentityPredicate, out: RawNode[]): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (sameIdentity(identityOf(node), id)) out.push(node);
    if (node.children) for (const c of node.children) stack.push(c);
  }
}
