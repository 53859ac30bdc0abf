/**
 * Locators (issue 34, design 2): an element named the way a person would find
 * it again, by app, window, role, name and the named ancestors that make it
 * unique, never by index. The string form is grammar.ts's; this is the
 * object form the API takes and returns.
 */
import type { WindowKind } from "../../observe/windows.js";

export type { WindowKind };

/** One element step: a role in either style's words (or a raw AX role), and what narrows it. */
export interface LocatorStep {
  role: string;
  /** Matched exactly against the record's name (title, inferred label, identity name, description); a RegExp tests it. */
  name?: string | RegExp;
  /** The native identifier, when the name alone does not tell it apart. */
  id?: string;
  /** 1-based, in document order among the step's survivors: the last resort, since it breaks when rows move. */
  nth?: number;
}

export interface Locator {
  app?: string;
  /** Absent: whatever window the app's snapshot would choose. */
  window?: { kind?: WindowKind; title?: string | RegExp };
  /** Outermost first; each step lies inside a match of the one before. Empty: the window itself (line 0). */
  path: LocatorStep[];
}
