/**
 * The whole native surface, typed in one place (src-native/napi/backend_js.h is
 * its other half). Internal: the public API wraps it, validates every
 * argument before a call reaches it, and maps its errors into AxsnapError.
 *
 * Loading: AXSNAP_NATIVE_PATH (the path of a `.node` file) when set, and
 * nothing else; otherwise node-gyp-build: `build/Release` first (a local
 * compile: this repository's, or `npm rebuild axsnap` in a consumer's
 * project), then `prebuilds/<platform>-<arch>/`. A failure says what was
 * tried and how a consumer fixes it.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { AxsnapError, type Delivery, type ErrorCode, MACOS_PERMISSION_HINT } from "./model/errors.js";
import type { RawApp, RawNode, RawSnapshot, Rect, WalkEnd } from "./model/model.js";

export interface NativeWindow {
  element: number;
  pid: number;
  title: string;
  frame: Rect;
  role: string;
  /** Listing fields (listWindows; also present on a snapshot's window). */
  id?: string;
  kind?: string;
  active?: boolean;
  minimized?: boolean;
  visible?: boolean;
  modal?: boolean;
  inParent?: boolean;
}

/** One app the system can start (Backend::Launchable). */
export interface NativeLaunchable {
  /** Desktop id ("gtk3-widget-factory.desktop") or bundle id ("com.apple.TextEdit"). */
  id: string;
  name: string;
  /** Linux: the entry's executable; macOS: the bundle's executable. */
  executable: string;
  /** The .desktop file or the .app bundle. */
  path: string;
  /** Linux: NoDisplay (left out of menus, still launchable). */
  hidden: boolean;
}

export interface NativeScreenshot {
  png: Buffer;
  pixelWidth: number;
  pixelHeight: number;
  scale: number;
  windowOrigin: { x: number; y: number };
  encodes: number;
  captureMs: number;
  encodeMs: number;
}

/** A capture kept unencoded (request.keepPixels): RGBA rows, before any downscale, with its contract. */
export interface NativePixels {
  rgba: Buffer;
  width: number;
  height: number;
  /** Captured pixels per window point. */
  pixelsPerPoint: number;
  windowOrigin: { x: number; y: number };
  captureMs: number;
}

/**
 * The way a window's pixels and synthetic (pointer and key) input travel:
 * "x11" (X11 capture and XTest, also XWayland apps), "gnome-mutter" (GNOME on
 * Wayland: Mutter's ScreenCast and RemoteDesktop), "quartz" (macOS).
 */
export type InputRoute = "x11" | "gnome-mutter" | "quartz";

export interface NativeSnapshot {
  raw: RawSnapshot;
  window: NativeWindow;
  windowStep: string;
  /** How the window's screenshot and synthetic input travel (ActionResult.route); absent where there is one way. */
  route?: InputRoute;
  /** Every handle the snapshot holds, for release: its elements', then the labels they name (labelledBy) outside it. */
  handles: number[];
  screenshot?: NativeScreenshot;
  /** With keepPixels, instead of screenshot. */
  pixels?: NativePixels;
}

/** What encodeMarked resolves to: the PNG, its size and scale, and where each label went (output pixels). */
export interface NativeMarkedEncode {
  png: Buffer;
  pixelWidth: number;
  pixelHeight: number;
  scale: number;
  encodes: number;
  encodeMs: number;
  labels: { index: number; x: number; y: number; w: number; h: number; overlaps: boolean }[];
}

export interface NativeSnapshotRequest {
  app: string | number;
  maxNodes: number;
  maxDepth: number;
  deadlineMs: number;
  screenshot: boolean;
  /** Treat text fields named like passwords ("Password", "PIN") as secure. Default true. */
  secureNames?: boolean;
  /** With screenshot: return the captured pixels unencoded (`pixels`) for encodeMarked, instead of a PNG. */
  keepPixels?: boolean;
  /** A window named by the caller: bypasses window choice. */
  window?: { title: string } | { index: number } | { id: string };
}

export interface NativePointerEvent {
  kind: "click" | "wheel" | "drag" | "move";
  x: number;
  y: number;
  toX?: number;
  toY?: number;
  button?: 1 | 2 | 3;
  count?: number;
  dx?: number;
  dy?: number;
}

/** What recognizeText asks: the window as a snapshot returned it, and what of it to read. */
export interface NativeOcrRequest {
  window: NativeWindow;
  /** Window-relative points to read; [] = the whole window. */
  regions: Rect[];
  /** Window-relative points painted out (their background colour) before recognition: secure fields, named elements. */
  blanks: Rect[];
  /** Tesseract codes: ["eng"] by default, "chi_sim" when asked (macOS maps eng→en-US, chi_sim→zh-Hans). */
  languages?: string[];
  /** Each region is one line: the identity re-check of an OCR line. */
  singleLine?: boolean;
  /**
   * No recognition: one line per region, in order, with empty text and the region's `ink` (the identity
   * check of an OCR line compares its pixels' shape, which unchanged pixels keep, not a fresh reading).
   */
  inkOnly?: boolean;
  deadlineMs: number;
}

export interface NativeOcrLine {
  text: string;
  /** Window-relative points, from the line's pixel box through the capture's pixels per point. */
  frame: Rect;
  /** 0..1 */
  confidence: number;
  /** The shape of what is drawn in its box, colours aside (lib/observe/ocr/ink.ts); absent where the engine drew no box. */
  ink?: string;
  /** Its words and how sure the engine is of each (Tesseract); absent where the engine reads whole lines. */
  words?: { text: string; confidence: number }[];
}

export interface NativeOcrResult {
  /** "tesseract 5.3.0" | "vision" | "fake" */
  engine: string;
  lines: NativeOcrLine[];
  captureMs: number;
  ocrMs: number;
}

/** One backend instance: its own worker thread, its own handle table. */
export interface NativeBackend {
  /** Connects to the accessibility service within `deadlineMs` (default 5000). */
  connect(deadlineMs?: number): Promise<void>;
  listApps(deadlineMs: number): Promise<RawApp[]>;
  snapshot(request: NativeSnapshotRequest): Promise<NativeSnapshot>;
  /** The app's windows, dialogs, open menus and popups, in listing order (holds no handles). */
  listWindows(request: { app: string | number; deadlineMs: number }): Promise<NativeWindow[]>;
  /**
   * What the system can start (Linux: desktop entries; macOS: application bundles). Reads no accessibility state.
   * With `id`: the one app the launcher knows by that id though the listing may not hold it (macOS: Launch
   * Services by bundle id), [] when it knows none; ACTION_NOT_SUPPORTED where the platform finds apps only by listing.
   */
  launchable(deadlineMs: number, id?: string): Promise<NativeLaunchable[]>;
  /** Starts one launchable id or path in `env` (replacing the app's environment); pid 0 when the platform cannot tell. */
  launch(request: {
    id: string;
    args: string[];
    env: Record<string, string>;
    deadlineMs: number;
  }): Promise<{ pid: number }>;
  doAction(handle: number, name: string, deadlineMs: number): Promise<void>;
  /** The toolkit of the element's app (Linux: AT-SPI ToolkitName/Version, "GTK" "3.24.38"); ACTION_NOT_SUPPORTED where the platform does not say. */
  toolkit(handle: number, deadlineMs: number): Promise<{ name: string; version: string }>;
  setText(handle: number, text: string, deadlineMs: number): Promise<void>;
  setNumber(handle: number, value: number, deadlineMs: number): Promise<void>;
  focus(handle: number, deadlineMs: number): Promise<void>;
  /** Selects a row (or cell) in its list. */
  select(handle: number, deadlineMs: number): Promise<void>;
  /** Synthetic input goes only to the observed window of the observed pid (or its popups), bounded by the deadline. */
  pointer(window: NativeWindow, event: NativePointerEvent, deadlineMs: number): Promise<void>;
  keys(window: NativeWindow, combo: string, deadlineMs: number): Promise<void>;
  /** Types in chunks that check the deadline; `typed` counts the characters sent (also set on a rejection). */
  typeText(window: NativeWindow, text: string, deadlineMs: number): Promise<{ typed: number }>;
  /**
   * The window captured (the screenshot's path and guards) and its text read off the pixels on the worker
   * (Tesseract on Linux, Vision on macOS, the world's `ocr` lines in the fake): one line per text line, in
   * window-relative points; empty lines and confidence < 0.3 dropped. OCR_UNAVAILABLE where the engine or a
   * language's data is missing.
   */
  recognizeText(request: NativeOcrRequest): Promise<NativeOcrResult>;
  /** The element with keyboard focus in the app, asked live (no cache); null when nothing has focus. */
  focusedElement(
    pid: number,
    maxDepth: number,
    deadlineMs: number,
  ): Promise<{ node: RawNode; ended: WalkEnd; handles: number[] } | null>;
  /**
   * What pointer input at a screen point over the window would reach, asked live (no cache): the deepest
   * element there (read to depth 1), and its ancestors up to the window or up to the first element of
   * `stopAt` (handles the caller knows: each level climbed is a round trip), nearest first (attributes
   * only). null when nothing of the window's app is under the point. Every handle in `handles` (the nodes', and
   * the labels their names came from) must be released.
   */
  elementAt(
    window: NativeWindow,
    x: number,
    y: number,
    stopAt: number[],
    deadlineMs: number,
  ): Promise<{ node: RawNode; ancestors: RawNode[]; ended: WalkEnd; handles: number[] } | null>;
  /** Inserts text at the end of an editable text element without rewriting its content. */
  insertText(handle: number, text: string, deadlineMs: number): Promise<void>;
  release(handles: number[]): Promise<void>;
  /**
   * Handles the ledger holds for unreleased snapshots (`held`) and the backend's handle table size (`table`;
   * null for the fake backend, which has none), for leak tests.
   */
  handleStats(): Promise<{ held: number; table: number | null }>;
  /** The subtree of one live element (bounded), read live (no cache), for identity checks; its handles must be released. */
  readElement(
    handle: number,
    maxDepth: number,
    deadlineMs: number,
  ): Promise<{ node: RawNode; ended: WalkEnd; handles: number[] }>;
  close(): Promise<void>;
  /** Permission states; `prompt` asks the system to show its prompts (macOS). */
  permissions(prompt: boolean): Promise<{ accessibility: string; screenRecording: string }>;
  /** Fake backend only: the desktop changes to a new script. */
  fakeReplace(script: object): Promise<void>;
  /** Fake backend only: the actions and input it received. */
  fakeLog(): string[];
  /** Fake backend only: how many handles were released. */
  fakeReleased(): number;
  /**
   * Starts counting the app's change events (idempotent). `app` as in `snapshot`: a pid or a name.
   * Rejects ACTION_NOT_SUPPORTED on a platform without events.
   */
  watch(app: string | number, deadlineMs?: number): Promise<{ pid: number; name: string }>;
  /**
   * Resolves once the app's event stamp exceeds `sinceStamp`, or after `timeoutMs` (not an error), with
   * what the backend has heard. Watches the app first when needed (again after the bus reconnected).
   */
  waitEvents(pid: number, sinceStamp: number, timeoutMs: number): Promise<NativeEventState>;
  /**
   * Resolves once the app sent no change event for `quietMs` (default 150), measured from its last event or
   * from the start, or when `capMs` (default 3000) passed; "unsupported" at once on a platform without events.
   */
  waitQuiet(
    app: string | number,
    options?: { quietMs?: number; capMs?: number },
  ): Promise<NativeSettleResult>;
  /** Stops listening to an app's events. */
  unwatch(pid: number): Promise<void>;
  /** The number of the call posted last (synchronous): taken right after a call, it names that call. */
  lastCall?(): number;
  /** Whether call `n` has started on the backend's worker (synchronous). */
  callStarted?(n: number): boolean;
}

/** What a backend has heard from one watched app (Backend::WaitEvents). */
export interface NativeEventState {
  watching: boolean;
  /** Change events counted since the app was first watched; only grows. */
  stamp: number;
  /** The subset about windows, menus, popups and dialogs (created, destroyed, activated, shown or hidden). */
  windowStamp: number;
  /** Milliseconds since the last event; -1 when none came yet. */
  msSinceLast: number;
  /** Up to 16 latest event kinds, oldest first ("object:state-changed:checked", "window:create"). */
  recent: string[];
  /**
   * A silence shorter than this proves nothing for this app: it sends its changes in batches (Chromium,
   * 400 ms); settling and idle wait at least this long. 0 when events come as the app changes.
   */
  quietFloorMs: number;
}

/** How a wait for the app to settle ended (core/settle.h). */
export interface NativeSettleResult {
  settled: "quiet" | "cap" | "unsupported";
  ms: number;
  /** Change events seen while waiting, and how many of them were about windows. */
  events: number;
  windowEvents: number;
  /** The quiet period applied: the one asked, or the app's `quietFloorMs` when longer. */
  quietMs: number;
}

export interface NativeAddon {
  NativeBackend: new (kind: "linux" | "macos" | "fake" | "mac-fake", script?: object) => NativeBackend;
  /**
   * Draws marks ([index, x, y, w, h] per element, in the pixels' own coordinates) on kept pixels after the
   * size budget's downscale, and encodes within the budget; runs on the libuv thread pool.
   */
  encodeMarked(
    rgba: Buffer,
    width: number,
    height: number,
    pixelsPerPoint: number,
    marks: Float64Array,
    budget?: { maxSide?: number; maxBytes?: number; minScale?: number },
  ): Promise<NativeMarkedEncode>;
  /** Linux: the X keysym name a key name resolves to, case-insensitively ("kp_enter" → "KP_Enter"); null when none. */
  keysymName?: (name: string) => string | null;
  /** The backend this build provides for the real desktop, or null. */
  platformBackend: "linux" | "macos" | null;
  /**
   * Linux and macOS: the uid of the process at the other end of the connected Unix socket `fd` (its peer
   * credentials), or null when it cannot be read. Also the whole of the tiny addon axsnap_peer.so (lib/peer-uid.ts).
   */
  peerUid?: (fd: number) => number | null;
  /** Test build (test/native/macfake) only: fake CoreFoundation objects alive now. */
  fakeCFLive?: () => number;
  /** Test build only: forgets the fake AX world. */
  fakeWorldClear?: () => void;
}

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** What a consumer does when no prebuild fits: compile axsnap in place, or point at a built addon. */
const REBUILD_HINT =
  process.platform === "darwin"
    ? 'Compile it: install the Xcode command line tools (xcode-select --install), then run "npm rebuild axsnap" in your project; or set AXSNAP_NATIVE_PATH to a built axsnap.node'
    : 'Compile it: install the build packages (Debian/Ubuntu: apt-get install g++ make python3 pkg-config libglib2.0-dev libx11-dev libxtst-dev libxext-dev zlib1g-dev), then run "npm rebuild axsnap" in your project; or set AXSNAP_NATIVE_PATH to a built axsnap.node';
let loaded: NativeAddon | undefined;

export function loadNative(): NativeAddon {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const override = process.env.AXSNAP_NATIVE_PATH;
  const tried: string[] = [];
  try {
    if (override) {
      tried.push(override);
      loaded = require(override) as NativeAddon;
    } else {
      // node-gyp-build's own order: a local compile (Release, then Debug), then the prebuild.
      tried.push(
        join(root, "build", "Release"),
        join(root, "build", "Debug"),
        join(root, "prebuilds", `${process.platform}-${process.arch}`),
      );
      const load = require("node-gyp-build") as (dir: string) => NativeAddon;
      loaded = load(root);
    }
  } catch (e) {
    throw new AxsnapError(
      "PLATFORM_NOT_SUPPORTED",
      `the axsnap native addon could not be loaded: ${String(e)}`,
      {
        hint: `tried ${tried.join(", ")}. ${REBUILD_HINT}`,
        cause: e,
      },
    );
  }
  return loaded;
}

const NATIVE_CODES: Record<string, { code: ErrorCode; hint?: string; delivery?: Delivery }> = {
  DELIVERY_UNCERTAIN: {
    code: "ACTION_FAILED",
    delivery: "delivery_uncertain",
    hint: "the action was sent and the app answered with an error; it may have happened: take a new snapshot to see before repeating it",
  },
  NO_ACCESSIBILITY_BUS: {
    code: "ACCESSIBILITY_UNAVAILABLE",
    hint: "start a D-Bus session bus and the AT-SPI registry (node scripts/desktop.mjs run -- <command> does both), then try again",
  },
  PERMISSION_DENIED: { code: "PERMISSION_DENIED", hint: MACOS_PERMISSION_HINT },
  APP_NOT_FOUND: { code: "APP_NOT_FOUND" },
  AMBIGUOUS_APP: { code: "AMBIGUOUS_APP" },
  AMBIGUOUS_WINDOW: {
    code: "AMBIGUOUS_TARGET",
    hint: "several windows match that title; pass the window's index or id from listWindows(app), or its whole title",
  },
  WINDOW_NOT_FOUND: { code: "WINDOW_NOT_FOUND" },
  APP_UNRESPONSIVE: { code: "APP_UNRESPONSIVE" },
  TIMEOUT: { code: "TIMEOUT" },
  ELEMENT_GONE: {
    code: "STALE_REF",
    hint: "the element is gone; take a new snapshot and pick the element again",
  },
  ACTION_NOT_SUPPORTED: { code: "ACTION_NOT_SUPPORTED" },
  ACTION_FAILED: { code: "ACTION_FAILED" },
  NOT_SETTABLE: { code: "NOT_SETTABLE" },
  INVALID_ARGUMENT: { code: "INVALID_ARGUMENT" },
  CAPTURE_FAILED: {
    code: "ACTION_FAILED",
    hint: "the window could not be captured; take a snapshot without a screenshot",
  },
  INPUT_FAILED: {
    code: "ACTION_FAILED",
    hint: "synthetic input could not be delivered to the window; bring it to the front and try again",
  },
  OCR_UNAVAILABLE: { code: "OCR_UNAVAILABLE" },
  INTERNAL: { code: "ACTION_FAILED" },
};

/**
 * Turns a native rejection into an AxsnapError. `stack` is captured before
 * the native call, so the error points at the caller's code, not at the
 * promise machinery.
 */
export function mapNativeError(e: unknown, stack: string | undefined): AxsnapError {
  if (e instanceof AxsnapError) return e;
  const nativeCode = (e as { nativeCode?: string } | null)?.nativeCode;
  // What only the failing backend knows to advise (OCR_UNAVAILABLE: Debian's packages, or nothing to install on macOS).
  const nativeHint = (e as { nativeHint?: unknown } | null)?.nativeHint;
  const message = e instanceof Error ? e.message : String(e);
  const mapped: { code: ErrorCode; hint?: string; delivery?: Delivery } = (nativeCode &&
    NATIVE_CODES[nativeCode]) || { code: "ACTION_FAILED" };
  // macOS: the app's windows are all on another Space (issue 12 item 6): opening one would make a new window.
  // The window server lists windows the app ordered out (hidden, closed but kept) the same way (issue 21 N1);
  // the recovery sent the reopen event before this was said (issue 35 N1 residue).
  const hint =
    nativeCode === "WINDOW_NOT_FOUND" && /the window is on another Space/.test(message)
      ? "the app's window is on another Space or hidden, and recovery (the message says what it tried, a reopen event among it) did not bring it here: if on another Space, switch to that Space (or move the window to this one with Mission Control), then take a new snapshot, and do not open a new window; if the app keeps its window closed, open one from the app's menus (File > New, the Window menu)"
      : typeof nativeHint === "string" && nativeHint.length > 0
        ? nativeHint
        : mapped.hint;
  const err = new AxsnapError(mapped.code, message, {
    cause: e,
    ...(hint === undefined ? {} : { hint }),
    ...(mapped.delivery === undefined ? {} : { delivery: mapped.delivery }),
  });
  if (stack) err.stack = `${err.name}: ${message}\n${stack.split("\n").slice(1).join("\n")}`;
  return err;
}

/** Runs a native call, mapping its failure; the stack is taken here, before the call. */
export async function callNative<T>(fn: () => Promise<T>): Promise<T> {
  const stack = new Error().stack;
  try {
    return await fn();
  } catch (e) {
    throw mapNativeError(e, stack);
  }
}
