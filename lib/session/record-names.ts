/**
 * How a record reads as a name and as context, shared by find (lib/session/find.ts)
 * and locators (lib/session/locator/): one module of its own, so that the locator
 * code snapshot.ts loads does not pull find's observation types in.
 */
import type { ElementRecord } from "../render/records.js";
import { isGenericContainer } from "../render/roles.js";

/** An element's name as find reads it: its title (an inferred label included), its identity name, its description. */
export function nameOf(r: ElementRecord): string | undefined {
  return r.title ?? r.identity.name ?? r.description;
}

function isWindowRoot(r: ElementRecord): boolean {
  return r.pathRoot === "window" && r.path.length === 0;
}

/** A nameless wrapper (a panel, a group) says nothing as context: it is left out of the ancestors. */
export function isContext(r: ElementRecord): boolean {
  if (isWindowRoot(r)) return false;
  const name = nameOf(r);
  if (name !== undefined && name.trim() !== "") return true;
  return !isGenericContainer({ role: r.role, ...(r.subrole === undefined ? {} : { subrole: r.subrole }) });
}
