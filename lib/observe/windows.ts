/**
 * An app's windows, dialogs, open menus and popups (`listWindows`), the
 * `window` option of `snapshot` that names one of them, and the comparison of
 * two listings (what opened, what closed). Pure: the native call lives in
 * lib/observe/desktop.ts.
 */
import { invalidArgument } from "../model/errors.js";
import type { Rect } from "../model/model.js";

/** What kind of surface a window is, the same words on every platform. */
export type WindowKind = "window" | "dialog" | "menu" | "popup" | "sheet";

/** One window of an app, as `listWindows` lists it. */
export interface WindowListing {
  /**
   * Stable while the window exists (within the app's lifetime): on Linux the
   * window's AT-SPI object path ("/org/a11y/atspi/accessible/279"); on macOS
   * "w" + the window server's number ("w4021", the same in every process);
   * where a backend has no such name, "e" + the native handle (this process only). A window that closes
   * and opens again may come back with the same id (GTK reuses a combo box's
   * popup) or a new one.
   */
  id: string;
  title: string;
  /** The platform's role: "frame", "dialog", "window" (a GTK or Chromium popup), "AXWindow", "AXSheet"… */
  role: string;
  kind: WindowKind;
  /**
   * Screen frame in points. When `positionUnknown` is true, only its size is
   * known: x and y are 0.
   */
  frame: Rect;
  /**
   * True where the platform cannot say where this window is on screen (GNOME
   * Wayland when GNOME Shell does not answer Eval, as on a user's own
   * session). Absent when the frame is a screen frame.
   */
  positionUnknown?: boolean;
  /**
   * Its place in the compositor's stacking order (0 = bottom; a higher number is
   * above a lower one, across all apps). GNOME Wayland only; absent elsewhere.
   */
  stacking?: number;
  /** Has focus / is the app's active window. */
  active: boolean;
  minimized: boolean;
  /** Showing on screen. Closed menus and popups are not listed at all on Linux. */
  visible: boolean;
  /** A modal dialog (or a sheet). */
  modal: boolean;
  /**
   * Its content is already shown, in place, in its parent window's snapshot,
   * so the default snapshot keeps the parent: a GTK menu bar's open menu (its
   * items under the menu bar item), a Chromium `<select>` list (its options
   * under the expanded combo box). `snapshot({ window: { id } })` still
   * reaches the menu alone; Chromium's popup itself holds nothing.
   */
  inParent: boolean;
  /** Its position in this listing: `snapshot({ window: { index } })`. */
  index: number;
}

/** Names one window for `snapshot` (exactly one field). */
export type WindowOption = { title: string } | { index: number } | { id: string };

/** Validates a `window` option; undefined stays undefined. */
export function windowOptionOf(value: unknown): WindowOption | undefined {
  if (value === undefined) return undefined;
  const hint = 'pass window: { title: "Save" }, { index: 1 } or { id: "…" }; listWindows(app) lists them';
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalidArgument("window must be an object with one of title, index or id", hint);
  const keys = Object.keys(value);
  if (keys.length !== 1 || !["title", "index", "id"].includes(keys[0] as string))
    throw invalidArgument(
      `window must have exactly one of title, index or id, got ${keys.length === 0 ? "none" : keys.join(", ")}`,
      hint,
    );
  const v = value as Record<string, unknown>;
  if ("index" in v) {
    const index = v.index;
    if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index > 100_000)
      throw invalidArgument(`window.index must be an integer from 0, got ${String(index)}`, hint);
    return { index };
  }
  const key = "title" in v ? "title" : "id";
  const text = v[key];
  if (typeof text !== "string" || text.length === 0 || text.length > 10_000)
    throw invalidArgument(`window.${key} must be a non-empty string`, hint);
  return key === "title" ? { title: text } : { id: text };
}

const KINDS: readonly string[] = ["window", "dialog", "menu", "popup", "sheet"];

/** A native listing entry → WindowListing (index = its position). */
export function windowListingOf(w: Record<string, unknown>, index: number): WindowListing {
  const kind = typeof w.kind === "string" && KINDS.includes(w.kind) ? (w.kind as WindowKind) : "window";
  return {
    id: String(w.id ?? ""),
    title: String(w.title ?? ""),
    role: String(w.role ?? ""),
    kind,
    frame: w.frame as Rect,
    active: w.active === true,
    minimized: w.minimized === true,
    visible: w.visible !== false,
    modal: w.modal === true,
    inParent: w.inParent === true,
    index,
    ...(w.positionUnknown === true ? { positionUnknown: true } : {}),
    ...(typeof w.stacking === "number" ? { stacking: w.stacking } : {}),
  };
}

/**
 * What opened and what closed between two listings of one app, by id: a
 * window in `after` whose id `before` lacks opened; one in `before` whose id
 * `after` lacks closed. A window that only became visible or hidden (listed
 * both times) is in neither. Each list keeps its listing's order.
 */
export function compareWindows(
  before: readonly WindowListing[],
  after: readonly WindowListing[],
): { opened: WindowListing[]; closed: WindowListing[] } {
  // Keyed by id and kind: GTK reuses a closed window's object path, so a menu that closed and a
  // dialog that opened under the same id are one closed and one opened surface.
  const key = (w: WindowListing) => `${w.kind}\u0000${w.id}`;
  const was = new Set(before.map(key));
  const is = new Set(after.map(key));
  return {
    opened: after.filter((w) => !was.has(key(w))),
    closed: before.filter((w) => !is.has(key(w))),
  };
}
