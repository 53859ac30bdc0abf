/**
 * The window a stored snapshot was taken of, observed again by another
 * process: that window, never another one with the same title (a modal
 * dialog or a second document window titled like the first). The app's
 * default choice may well be the other one by then, so the stored window is
 * named: by its id where the id means the same to every process (Linux: the
 * AT-SPI object path; macOS: "w" + the window server's number), else by its
 * exact title (two windows with it: refused).
 * Its kind and frame (and, without such an id, its title) must then be as
 * stored: an id the app gave a new window after the old one closed (GTK
 * reuses some) is not the same window.
 */
import { AxsnapError } from "../../model/errors.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { WindowOption } from "../../observe/windows.js";
import type { StoredSnapshot } from "./store.js";

type StoredWindow = StoredSnapshot["window"];

/**
 * Whether a listWindows id names the window to other processes too. The core
 * makes "e" + an element handle where the platform has no name of its own (a
 * macOS window whose window-server number was not found); a handle belongs to
 * the process that listed the window. macOS's "w" + kCGWindowNumber is unique
 * in the user session.
 */
export function idOutlivesProcess(id: string): boolean {
  return id.length > 0 && !/^e\d+$/.test(id);
}

/** How to observe the stored window again; undefined: the default choice (an untitled window without an id), checked after. */
export function windowToObserve(w: StoredWindow): WindowOption | undefined {
  if (idOutlivesProcess(w.id)) return { id: w.id };
  return w.title.length > 0 ? { title: w.title } : undefined;
}

/** `"Doc" (dialog, id /org/a11y/atspi/accessible/12)`: which window, in notes and messages. */
export function windowWords(w: {
  title: string;
  kind?: string | undefined;
  id?: string | undefined;
}): string {
  const id = w.id !== undefined && idOutlivesProcess(w.id) ? `, id ${w.id}` : "";
  // Quoted as JSON: a title cannot break the line or forge text after it.
  return `${JSON.stringify(w.title)} (${w.kind ?? "window"}${id})`;
}

/** Runs the observation of the stored window; a window that is gone or cannot be told apart is refused, nothing sent. */
export async function observeStoredWindow(
  stored: StoredSnapshot,
  observe: (window: WindowOption | undefined) => Promise<Snapshot>,
): Promise<Snapshot> {
  const window = windowToObserve(stored.window);
  const hint = `run \`axsnap snapshot --app ${stored.app.name}\` and use a ref it prints`;
  try {
    return await observe(window);
  } catch (e) {
    if (!(e instanceof AxsnapError) || window === undefined) throw e;
    if (e.code === "WINDOW_NOT_FOUND")
      throw new AxsnapError(
        "WINDOW_NOT_FOUND",
        `the window ${windowWords(stored.window)} that snapshot ${stored.id} was taken of is gone from ${stored.app.name}; nothing was sent`,
        { hint, cause: e },
      );
    if (e.code === "AMBIGUOUS_TARGET" && "title" in window)
      throw new AxsnapError(
        "STALE_REF",
        `${stored.app.name} has several windows titled ${JSON.stringify(stored.window.title)} now, and another process cannot tell which one snapshot ${stored.id} was taken of; nothing was sent`,
        { hint, cause: e },
      );
    throw e;
  }
}

/** What differs between the stored window and the one observed now, or undefined when it is the same window, unmoved. */
export function windowDifference(was: StoredWindow, now: Snapshot["window"]): string | undefined {
  const byId = idOutlivesProcess(was.id);
  if (byId && now.id !== was.id) return `another window (id ${now.id ?? "none"})`;
  const kind = now.kind ?? "window";
  if (kind !== was.kind) return `it is a ${kind} now, not a ${was.kind}`;
  // Named by its id, a window may retitle itself ("Doc" → "*Doc"); named by its title, it may not.
  if (!byId && now.title !== was.title) return `it is titled "${now.title}" now`;
  const a = was.frame;
  const b = now.frame;
  if (a.x !== b.x || a.y !== b.y || a.w !== b.w || a.h !== b.h)
    return `it moved or was resized (from ${a.w}x${a.h} at ${a.x},${a.y} to ${b.w}x${b.h} at ${b.x},${b.y})`;
  return undefined;
}
