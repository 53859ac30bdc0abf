/**
 * The module-level API: the same operations as a Session, on a default
 * session created on first use. `snapshot()` here records into it, so a bare
 * index means "that index in my latest snapshot of the app".
 */

import type { SnapshotOptions } from "../observe/desktop.js";
import type { Snapshot } from "../observe/snapshot.js";
import type { FindOptions, FindQuery, FindResult } from "./find.js";
import type { WaitCondition, WaitOptions, WaitResult } from "./session.js";
import {
  type ActionResult,
  type ActOptions,
  createSession,
  type PixelOptions,
  type Session,
  type Target,
} from "./session.js";

let defaultSession: Session | undefined;

/** The session behind the module-level functions. */
export function session(): Session {
  defaultSession ??= createSession();
  return defaultSession;
}

export const snapshot = (options: SnapshotOptions): Promise<Snapshot> => session().snapshot(options);
export const find = (app: string | number, query: FindQuery, options?: FindOptions): Promise<FindResult> =>
  session().find(app, query, options);
export const resolve = (target: Target, options?: ActOptions) => session().resolve(target, options);
export const click = (
  target: Target,
  options?: ActOptions & { button?: "left" | "right"; count?: 1 | 2 },
): Promise<ActionResult> => session().click(target, options);
export const setValue = (
  target: Target,
  value: string | number,
  options?: ActOptions,
): Promise<ActionResult> => session().setValue(target, value, options);
export const typeText = (text: string, options?: ActOptions & { target?: Target }): Promise<ActionResult> =>
  session().typeText(text, options);
export const pressKey = (combo: string, options?: ActOptions): Promise<ActionResult> =>
  session().pressKey(combo, options);
export const scroll = (
  target: Target,
  direction: "up" | "down" | "left" | "right",
  pages?: number,
  options?: ActOptions,
) => session().scroll(target, direction, pages, options);
export const drag = (from: Target, to: Target, options?: ActOptions): Promise<ActionResult> =>
  session().drag(from, to, options);
export const performAction = (target: Target, name: string, options?: ActOptions): Promise<ActionResult> =>
  session().performAction(target, name, options);
export const clickAt = (
  x: number,
  y: number,
  options?: PixelOptions & { button?: "left" | "right"; count?: 1 | 2 },
) => session().clickAt(x, y, options);
export const rightClickAt = (x: number, y: number, options?: PixelOptions) =>
  session().rightClickAt(x, y, options);
export const doubleClickAt = (x: number, y: number, options?: PixelOptions) =>
  session().doubleClickAt(x, y, options);
export const scrollAt = (x: number, y: number, delta: { dx?: number; dy?: number }, options?: PixelOptions) =>
  session().scrollAt(x, y, delta, options);
export const dragAt = (
  from: { x: number; y: number },
  to: { x: number; y: number },
  options?: PixelOptions,
) => session().dragAt(from, to, options);
export const waitFor = (
  app: string | number,
  condition: WaitCondition,
  options?: WaitOptions,
): Promise<WaitResult> => session().waitFor(app, condition, options);
