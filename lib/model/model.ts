/**
 * The raw tree model: what every backend (macOS AXUIElement, Linux AT-SPI2, the
 * fake backend) produces from one walk of one window, and what the renderer
 * consumes. It is plain JSON: fixture trees under test/fixtures are files of it.
 *
 * Platform notes
 * - macOS: `role`/`subrole` are AXRole/AXSubrole (`AXButton`, `AXSecureTextField`),
 *   `roleDescription` is AXRoleDescription, frames come from AXPosition+AXSize
 *   (top-left origin, points).
 * - Linux: `role` is the AT-SPI role name (`push button`, `check box`; a `-`
 *   spelling is accepted), `title` is the accessible name, frames are
 *   `atspi_component_get_extents` in screen coordinates. Hidden widgets report
 *   x/y = -2147483648; that sentinel is kept as read and treated as off-screen.
 *
 * The model never holds the value of a secure text field: backends read only
 * its length (`charCount`).
 */

/** A rectangle in points. Screen frames are in global top-left coordinates. */
export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Whether the rect holds the point: its left and top edges in, its right and
 * bottom edges out, so a point on the line between two abutting frames
 * belongs to one of them only; a rect without width or height holds nothing.
 * The pointer channel's hit test (act/pixels.ts) and where a recognised line
 * nests (ocr/merge.ts) both ask it.
 */
export function holdsPoint(r: Rect | undefined, x: number, y: number): boolean {
  return r !== undefined && x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h;
}

export type Platform = "macos" | "linux" | "fake";

export interface RawApp {
  /** Localised app name: "TextEdit", "gtk3-widget-factory". */
  name: string;
  /** macOS bundle id. On Linux the application name as AT-SPI gives it. */
  bundleId?: string;
  pid: number;
  /**
   * listApps(): false when the app did not answer (busy or stopped); its name
   * is then the last one it gave, or empty. Absent when it answered.
   */
  responsive?: boolean;
  /**
   * listApps() and snapshots: true when the app has no accessibility tree at
   * all (Linux: an X11 client that never registered with AT-SPI, such as
   * xterm, Tk's wish or xmessage, found through its X windows; `bundleId` is
   * then its program name, "wish"). Its snapshot is its window alone (line 0,
   * role frame, no children) with a note saying so; pointer and key input
   * reach it. Absent for apps with a tree.
   */
  noTree?: boolean;
}

export interface RawWindow {
  title: string;
  /** Screen frame of the window in points. */
  frame: Rect;
  /** Backing scale: screenshot pixels per window point. */
  scale: number;
  /** Live snapshots: what surface it is ("window", "dialog", "menu", "popup", "sheet"); the header names it unless "window". */
  kind?: string;
  /** Live snapshots: the platform's role of the window ("frame", "window", "AXSheet"…). */
  role?: string;
  /** Live snapshots: the window's id in listWindows(). */
  id?: string;
  /** Live snapshots: true for a modal dialog. */
  modal?: boolean;
  /**
   * True where the platform cannot say where the window is on screen (GNOME
   * Wayland when the compositor does not list windows): `frame` is the
   * window's size at (0,0), and element frames are relative to the window,
   * not the screen. Absent = screen frames.
   */
  positionUnknown?: boolean;
}

/** Where a child was found on its parent. */
export type ChildSource = "children" | "rows" | "visibleRows" | "contents" | "visibleChildren";

/** How the value is typed; `number` renders as the `float` trait, as AX does. */
export type ValueType = "string" | "number" | "boolean";

/**
 * Element states. Absent means unknown or not applicable; the renderer never
 * treats an absent state as false except where noted.
 */
export interface RawStates {
  /** Absent = enabled. */
  enabled?: boolean;
  focused?: boolean;
  focusable?: boolean;
  selected?: boolean;
  selectable?: boolean;
  /** Defined only for expandable elements: true = expanded, false = collapsed. */
  expanded?: boolean;
  /** Checkable elements on AT-SPI; macOS carries this in `value` instead. */
  checked?: boolean | "mixed";
  minimized?: boolean;
  /** A password field: its value is never read. */
  secure?: boolean;
  required?: boolean;
  /** The value fails the app's check (AT-SPI INVALID_ENTRY, ARIA's aria-invalid). */
  invalid?: boolean;
  readonly?: boolean;
  multiline?: boolean;
  editable?: boolean;
  modal?: boolean;
  /** AT-SPI SHOWING/VISIBLE; macOS has no such state. `false` = not on screen. */
  visible?: boolean;
}

export interface RawNode {
  /** Platform role: AXRole on macOS, AT-SPI role name on Linux. */
  role: string;
  subrole?: string;
  /** Absent: derive from the role. Empty string: the element has none (prints no role). */
  roleDescription?: string;
  title?: string;
  description?: string;
  help?: string;
  value?: string | number | boolean;
  /**
   * The value as the app shows it, where that says more than `value` (ARIA's
   * aria-valuetext: "Three degrees" for 3): printed instead of `value`, which
   * stays the number that is set and compared.
   */
  valueText?: string;
  valueType?: ValueType;
  /** The value can be set (AXUIElementIsAttributeSettable / AT-SPI editable text or value). */
  settable?: boolean;
  /** AXIdentifier / AT-SPI accessible id. */
  identifier?: string;
  url?: string;
  placeholder?: string;
  selectedText?: string;
  /** Text length, readable even where the text is not (secure fields). */
  charCount?: number;
  /** Scroll bars and sliders. */
  orientation?: "horizontal" | "vertical";
  states?: RawStates;
  /** Raw action names as the platform reports them, duplicates and all. */
  actions?: string[];
  /** Screen frame in points; absent when the element has none. */
  frame?: Rect;
  /** Where this node was found on its parent; absent = the children attribute. */
  via?: ChildSource;
  /** Position of a row in its whole list (AXIndex / AT-SPI row index). */
  rowIndex?: number;
  /** On a list, table or outline: the total row count when only some rows were read. */
  rowCount?: number;
  /**
   * Handles of the elements this one's title came from (AT-SPI LABELLED_BY,
   * read when the element has no name of its own): a label among them that
   * only says that title need not print again.
   */
  labelledBy?: number[];
  children?: RawNode[];
  /** Opaque id of the live element in the backend's handle table. Never in fixtures. */
  handle?: number;
  /**
   * Text read off the window's pixels (lib/observe/ocr/merge.ts), not an element of
   * the app: it has no handle, and an action on it is pointer input at its
   * frame, after its text is read there again.
   */
  ocr?: OcrMark;
}

/**
 * What marks a line read off the pixels: the recogniser's confidence, and the shape of what is drawn in its
 * box (lib/observe/ocr/ink.ts), which is what its identity check compares: the same pixels give the same ink, while
 * OCR may read them differently each time.
 */
export interface OcrMark {
  confidence: number;
  ink?: string;
  /** A word of it was read with low confidence (lib/observe/ocr/unsure.ts): printed `(ocr, unsure)`, the text as read. */
  unsure?: true;
}

/** A copy of an OCR mark, for a record or a stored record. */
export function copyOcrMark(m: OcrMark): OcrMark {
  return {
    confidence: m.confidence,
    ...(m.ink ? { ink: m.ink } : {}),
    ...(m.unsure ? { unsure: true } : {}),
  };
}

/**
 * Why a walk stopped. `content_pending`: the app was asked to build its tree
 * (Chromium and Electron on macOS) and had not finished within the bound.
 * `unresponsive`: some reads got no answer in time (a busy or stopped app);
 * `errors`: some reads failed otherwise. In both, elements were left out.
 */
export type WalkEnd =
  | "complete"
  | "node_limit"
  | "depth_limit"
  | "deadline"
  | "content_pending"
  | "unresponsive"
  | "errors";

export interface ReadStat {
  kind: string;
  calls: number;
  ms: number;
}

export interface RawWalk {
  ended: WalkEnd;
  /** Elements read during the walk, printed or not. */
  nodesObserved: number;
  elapsedMs?: number;
  /** Where the native time went: finding the app, choosing the window, the window's walk, the menu bar's. */
  timings?: { appMs: number; windowMs: number; walkMs: number; menuBarMs?: number };
  /** Reads by kind (Linux: the D-Bus method, or "Get <property>"), with the time attributed to them. */
  reads?: ReadStat[];
  /** Backend notes an agent should see, e.g. "web content still loading". */
  notes?: string[];
}

export interface RawSnapshot {
  /** Model version; bumped on breaking change. */
  version: 1;
  platform: Platform;
  app: RawApp;
  window: RawWindow;
  /** The window element: the root of the printed tree. */
  root: RawNode;
  /** The app's menu bar (macOS), printed after the window. */
  menuBar?: RawNode;
  walk: RawWalk;
}

/**
 * The deepest tree the model allows. Real windows stay far below it; the bound
 * keeps every consumer's recursion safe.
 */
export const MAX_TREE_DEPTH = 2048;

/** The AT-SPI coordinate of a widget that is not on screen. */
export const HIDDEN_COORDINATE = -2147483648;
