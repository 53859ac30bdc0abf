/**
 * The record behind each printed index (snapshot-format.md, "The record behind
 * each number"): everything the action layer needs to reach the element that
 * line described again, and to prove it is the same one.
 */
import type { OcrMark, Rect } from "../model/model.js";

/** Which tree a path starts from. */
export type PathRoot = "window" | "menuBar";

/** How a record's name was chosen; a summary's name is its joined texts. */
export type NameSource = "title" | "description" | "rowText" | "linkText";

/**
 * The identity predicate (refs-and-actions.md): role, subrole, native
 * identifier, and stable name. Never value, never frame.
 */
export interface IdentityPredicate {
  role: string;
  subrole?: string;
  identifier?: string;
  name?: string;
  nameFrom?: NameSource;
}

/** Whether the record is proven unique in its observation, and if not, why. */
export type CaptureProof =
  | { unique: true }
  | { unique: false; reason: "incomplete" | "duplicates"; matches: number };

/** Lines the renderer made up: a text summary of a container, or its text child line. */
export type Synthetic = false | "text-summary" | "summary-text";

export interface ElementRecord {
  index: number;
  /** Live element id in the backend's handle table; absent for fixture trees. */
  handle?: number;
  role: string;
  subrole?: string;
  /** The role text printed on the line. */
  roleText: string;
  title?: string;
  /**
   * "inferred": the title is the text of a label beside the element (render/labels.ts),
   * not a name the app gave it; it is no part of the identity.
   */
  nameSource?: "inferred";
  /**
   * Text read off the window's pixels (issue 20): no element of the app, no
   * handle; its title is the text read. Clicks on it are pointer input at its
   * centre after the text is read there again (lib/session/act/ocr.ts).
   */
  ocr?: OcrMark;
  description?: string;
  identifier?: string;
  /** Window-relative frame in points. */
  frame?: Rect;
  /** Screen frame in points. */
  screenFrame?: Rect;
  /** Screen point a synthetic click uses: the centre, or the leading point of a merged text line. */
  clickPoint?: { x: number; y: number };
  /** All the element's actions, raw as the platform names them. */
  actions: string[];
  /** The listed secondary actions, raw and pretty, index-aligned. */
  secondaryActions: { raw: string[]; pretty: string[] };
  settable: boolean;
  synthetic: Synthetic;
  secure: boolean;
  pathRoot: PathRoot;
  /** Child positions from the path root to the element. */
  path: number[];
  identity: IdentityPredicate;
  proof: CaptureProof;
  /**
   * The shortest locator that names this element alone in its window
   * (docs/trace.md, "Locators"), printed: `app=mousepad >> window:dialog="Save As" >> push button "Save"`.
   * Computed when first read; undefined in a subtree (`root`) snapshot, where
   * uniqueness in the window cannot be shown. Not enumerable: JSON and
   * `{ ...record }` leave it out, since a copy is no longer in the snapshot
   * where it was unique.
   */
  readonly locator?: string;
}
