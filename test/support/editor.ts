/**
 * The fake "Editor" desktop of the fake-backend tests: one app (pid 77) with
 * one window "W" whose frame holds the children a test gives, and sessions
 * over fake backends that close after each test. A test changes the app by
 * `fakeReplace(editorDesktop(...))`.
 */
import { afterEach } from "vitest";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { createSession, type Session, type SessionOptions } from "../../lib/session/session.js";

export const EDITOR_FRAME = { x: 100, y: 100, w: 800, h: 600 };

/** A push button at `y` of the Editor's window (its own press action: click). */
export const button = (title: string, y: number, extra: Record<string, unknown> = {}) => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: { x: 120, y, w: 200, h: 20 },
  ...extra,
});

/** The fake desktop: the Editor, its window W holding `children`. */
export const editorDesktop = (children: Record<string, unknown>[]) => ({
  apps: [
    {
      name: "Editor",
      pid: 77,
      windows: [
        {
          title: "W",
          frame: EDITOR_FRAME,
          root: { role: "frame", title: "W", frame: EDITOR_FRAME, children },
        },
      ],
    },
  ],
});

/**
 * The backend with one method replaced by `replace(original)` (the original bound to the
 * backend): a test's hook into what the session asks, the rest untouched.
 */
export function withMethod<K extends keyof NativeBackend>(
  b: NativeBackend,
  key: K,
  replace: (original: NativeBackend[K]) => NativeBackend[K],
): NativeBackend {
  return new Proxy(b, {
    get(target, k) {
      const v = Reflect.get(target, k, target);
      const bound = typeof v === "function" ? v.bind(target) : v;
      return k === key ? replace(bound) : bound;
    },
  });
}

export interface FakeSessions {
  /**
   * A session over a fake backend showing `tree` (a desktop), with these session options, its
   * backend seen through `wrap`.
   */
  open(
    tree: object,
    how?: { wrap?: (b: NativeBackend) => NativeBackend; session?: Omit<SessionOptions, "backend"> },
  ): { b: NativeBackend; s: Session };
  /** A session over the Editor showing `children`. */
  setup(children: Record<string, unknown>[]): { b: NativeBackend; s: Session };
}

/** Fake backends and their sessions for this file's tests, closed after each test. */
export function useFakeSessions(deadlineMs = 2000): FakeSessions {
  const native = loadNative();
  const opened: { b: NativeBackend; s: Session }[] = [];
  afterEach(async () => {
    for (const { b, s } of opened.splice(0)) {
      await s.close();
      await b.close();
    }
  });
  const open: FakeSessions["open"] = (tree, how = {}) => {
    const b = new native.NativeBackend("fake", tree);
    const s = createSession({ deadlineMs, ...how.session, backend: how.wrap ? how.wrap(b) : b });
    opened.push({ b, s });
    return { b, s };
  };
  return { open, setup: (children) => open(editorDesktop(children)) };
}
