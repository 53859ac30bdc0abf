/**
 * Builds fake macOS worlds (test/native/macfake/world_from_js.h) for the
 * macOS backend's tests: from a raw-model fixture recorded on a Mac (every
 * model field becomes the AX attribute it was read from), or by hand.
 * Loads the test-only addon axsnap_macfake: the real macOS backend's C++ over
 * the fake CoreFoundation/AX layer.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import type { NativeAddon, NativeBackend } from "../../lib/native.js";

export type AXElement = {
  id?: number;
  attrs: Record<string, unknown>;
  settable?: string[];
  actions?: string[];
  faults?: Record<string, unknown>;
  hiddenChildren?: AXElement[];
  cgWindow?: number;
  /** One more of hiddenChildren shows in AXChildren every growEveryMs after the world is installed (no notification). */
  growEveryMs?: number;
};

/** The element id the hand-built worlds give their application element: a window's AXParent. */
export const WORLD_APP_ID = 1;

/** A standard window, not main, not focused, over `frame` (the worlds' usual 800×600 at 100,80); `extra` overrides. */
export function axWindow(
  id: number,
  title: string,
  children: AXElement[],
  extra: Record<string, unknown> = {},
  frame = { x: 100, y: 80, w: 800, h: 600 },
): AXElement {
  return {
    id,
    attrs: {
      AXRole: "AXWindow",
      AXSubrole: "AXStandardWindow",
      AXRoleDescription: "standard window",
      AXTitle: title,
      AXMinimized: false,
      AXMain: false,
      AXFocused: false,
      AXPosition: { x: frame.x, y: frame.y },
      AXSize: { w: frame.w, h: frame.h },
      AXParent: { ref: WORLD_APP_ID },
      AXChildren: children,
      ...extra,
    },
    settable: ["AXMain", "AXFocused", "AXMinimized"],
    actions: ["AXRaise"],
  };
}

export interface WorldApp {
  pid: number;
  name: string;
  bundleId?: string;
  bundlePath?: string;
  hidden?: boolean;
  active?: boolean;
  regular?: boolean;
  hungMs?: number;
  activationDelayMs?: number;
  /** setError (issue 12 item 3): the switch is applied, then answered with this AXError. */
  chromium?: { revealAfterMs: number; attribute?: string; setError?: string | number };
  recoverOn?: string;
  faults?: Record<string, unknown>;
  /** Notifications the app posts, `atMs` after an AXObserver of it is created. */
  notifications?: { atMs: number; name: string; element?: number }[];
  /** AXObserverAddNotification answers kAXErrorNotificationUnsupported for these. */
  refuseNotifications?: string[];
  /** AXObserverAddNotification answers kAXErrorCannotComplete for these (a busy moment). */
  busyNotifications?: string[];
  /**
   * Issue 35 (N1 residue): windows AX does not list here (closed but kept, or on another Space), absent
   * from AXWindows and AXChildren until the app's reopen event (`open -b`) orders them in; the first becomes main.
   */
  reopenWindows?: AXElement[];
  root: AXElement;
}

export interface CGWindow {
  number: number;
  pid: number;
  bounds: { x: number; y: number; w: number; h: number };
  layer?: number;
  name?: string;
  /** kCGWindowOwnerName (default: the name of the app with this pid). */
  ownerName?: string;
  onScreen?: boolean;
  alpha?: number;
  captureFails?: boolean;
  // issue 12 items 4, 5, 9 (capture): ScreenCaptureKit as FakeMacSystem models it.
  /** The window filter gives an all-black image (a GPU-rendered window); the display filter works. */
  blackWithWindowFilter?: boolean;
  /** The window's own pixels per point (0 or absent: its display's, world.scale). */
  backingScale?: number;
  /** ScreenCaptureKit never answers a capture of this window (until fakeCaptureComplete()). */
  captureHangs?: boolean;
  /** N16: ScreenCaptureKit answers a capture of this window but keeps its finished completion handler (until fakeCaptureComplete()). */
  handlerKept?: boolean;
}

export interface World {
  trusted?: boolean;
  screenRecording?: "granted" | "denied" | "unknown";
  scale?: number;
  focusedPid?: number;
  captureFails?: boolean;
  systemWide?: { attrs: Record<string, unknown> };
  /** CGEventPost: the first `afterEvents` events at once, then each blocks `ms`. */
  postDelay?: { afterEvents: number; ms: number };
  /** Once `afterEvents` events were posted, the app `toPid` has the focus. */
  focusMoves?: { afterEvents: number; toPid: number };
  /** Issue 12 (items 1, 2): CGEventCreateKeyboardEvent returns NULL for these virtual key codes. */
  keyEventFails?: number[];
  /**
   * M5: the keyboard layout Text Input Sources report (default "us"); "none": an input source without
   * layout data. Modelled as what UCKeyTranslate gives for each key code (fake_mac_system.cc).
   */
  keyboardLayout?: "us" | "french" | "german" | "dvorak" | "dvorak-qwerty-cmd" | "russian" | "none";
  /** Issue 35 M6: pids of processes that are no application (in the process table, never in NSRunningApplication). */
  processes?: number[];
  /** Issue 35 M3: false models a macOS without the private _AXUIElementGetWindow (the backend matches CG frames). */
  axGetWindow?: boolean;
  apps: WorldApp[];
  /** Installed bundles (MacSystem::InstalledApps); opening one with an `app` makes that app run. */
  installed?: {
    bundleId: string;
    name?: string;
    executable?: string;
    path?: string;
    /** Issue 35 (M4): false for a bundle Launch Services knows that the folder scan does not list. */
    listed?: boolean;
    app?: WorldApp;
  }[];
  windows: CGWindow[];
}

/** A native error as the test-only direct calls report it ("NONE" when there was none). */
export interface DirectResult {
  code: string;
  message: string;
}

export interface DirectEvents extends DirectResult {
  watching: boolean;
  stamp: number;
  windowStamp: number;
  msSinceLast: number;
  recent: string[];
  waitedMs: number;
}

export interface DirectWindow {
  element: number;
  title: string;
  role: string;
  frame?: { x: number; y: number; w: number; h: number };
  minimized: boolean;
  visible: boolean;
  active: boolean;
}

export type MacFakeAddon = NativeAddon & {
  fakeCFLive: () => number;
  fakeWorldClear: () => void;
  /** AX calls that reach an app (each one an IPC on macOS) since the process started. */
  fakeAXCalls: () => number;
  /**
   * MacBackend methods without an N-API surface, on a backend of their own
   * that lives on its own worker thread (test/native/macfake/mac_direct.cc).
   */
  macDirectOpen: (world: World) => void;
  macDirectClose: () => void;
  /** Installs another world under the backends that exist (an app quit, a window opened). */
  fakeWorldReplace: (world: World) => void;
  macDirectWatch: (pid: number, deadlineMs: number) => DirectResult & { added: string[]; refused: string[] };
  macDirectWait: (pid: number, sinceStamp: number, untilMs: number) => DirectEvents;
  macDirectUnwatch: (pid: number) => void;
  macDirectWindows: (pid: number, deadlineMs: number) => DirectResult & { windows: DirectWindow[] };
  /** Posts a notification from `element` (default: the app element) to the pid's observers, now. */
  fakeNotify: (pid: number, name: string, element?: number) => void;
  /** Live AXObservers. */
  fakeObservers: () => number;
  /** The fake world's log (also what a mac-fake NativeBackend's fakeLog() returns). */
  fakeWorldLog: () => string[];
  // issue 12 items 4, 5, 9, 11 (capture, threads, permissions): test/native/macfake/mac_direct.cc
  /** ScreenCaptureKit answers the captures it never answered (captureHangs), the `oldest` ones only when given: their completion handlers run. */
  fakeCaptureComplete: (oldest?: number) => void;
  /** A capture holds the process-wide capture gate. */
  fakeCaptureGateBusy: () => boolean;
  /** N4: as if the outstanding capture had been given up `ms` earlier (the gate's clock, not the test's). */
  fakeCaptureGateAge: (ms: number) => void;
  /** Autorelease pools pushed and popped (FakeMacSystem), the deepest nesting, pops off their push's thread. */
  fakePoolCounts: () => { pushes: number; pops: number; maxDepth: number; wrongThread: number };
  /** ScreenCaptureKit permission probes (the call that may show the Screen Recording prompt). */
  fakeScreenRecordingProbes: () => number;
  /** Issue 35 M6: pids asked whether they are an app (NSRunningApplication) since the process started. */
  fakeAppQueries: () => number;
  /** Marks the calling thread (the JavaScript thread) and counts the AX calls made on it from now on. */
  fakeMarkThread: () => void;
  fakeAXCallsOnMarkedThread: () => number;
  // Review 3, M8 and S2: the Vision request settings of src-native/mac/vision_rules.h (vision_rules_js.cc).
  /** VNRecognizeTextRequest.minimumTextHeight for a region this many capture pixels tall. */
  visionMinimumTextHeight: (regionHeightPx: number, pixelsPerPoint: number) => number;
  /** The BCP 47 codes Vision is given for Tesseract's `codes`; `supported`: Vision's list on the Mac, null: unasked. */
  visionLanguages: (
    codes: string[],
    supported: string[] | null,
  ) => { code: string; message: string; hint: string; languages: string[] };
};

let addon: MacFakeAddon | undefined;

export function loadMacFake(): MacFakeAddon {
  if (!addon) {
    const require = createRequire(import.meta.url);
    addon = require(
      join(import.meta.dirname, "..", "native", "macfake", "build", "Release", "axsnap_macfake.node"),
    ) as MacFakeAddon;
  }
  return addon;
}

export function macBackend(world: World): NativeBackend {
  return new (loadMacFake().NativeBackend)("mac-fake", world);
}

/** Ids for hand-built worlds: elements refer to each other by these. */
export class Ids {
  private next = 1000;
  take(): number {
    return this.next++;
  }
}

const axOrientation: Record<string, string> = {
  vertical: "AXVerticalOrientation",
  horizontal: "AXHorizontalOrientation",
};

/**
 * The AX element a recorded node was read from. Rows of tables and outlines
 * are served as AXRows (what the backend reads for them); AXParent points up.
 */
const intersects = (a: RawNode["frame"], b: RawNode["frame"]) =>
  !!a && !!b && a.x < b.x + b.w && a.x + a.w > b.x && a.y < b.y + b.h && a.y + a.h > b.y;

function elementOf(
  node: RawNode,
  ids: Ids,
  parent: number | undefined,
  secureValue?: string,
  clip?: RawNode["frame"],
): AXElement {
  const id = ids.take();
  const attrs: Record<string, unknown> = { AXRole: node.role };
  const settable: string[] = [];
  const put = (name: string, v: unknown) => {
    if (v !== undefined) attrs[name] = v;
  };
  put("AXSubrole", node.subrole);
  put("AXRoleDescription", node.roleDescription);
  put("AXTitle", node.title);
  put("AXDescription", node.description);
  put("AXHelp", node.help);
  put("AXIdentifier", node.identifier);
  put("AXURL", node.url === undefined ? undefined : { url: node.url });
  put("AXPlaceholderValue", node.placeholder);
  put("AXSelectedText", node.selectedText);
  put("AXNumberOfCharacters", node.charCount);
  put("AXOrientation", node.orientation && axOrientation[node.orientation]);
  if (node.subrole === "AXSecureTextField") {
    // What the app holds; the backend must never read it.
    if (secureValue !== undefined) put("AXValue", secureValue);
  } else if (node.value !== undefined && node.value !== null) {
    put(
      "AXValue",
      node.valueType === "number" && !Number.isInteger(node.value) ? { double: node.value } : node.value,
    );
  }
  if (node.settable) settable.push("AXValue");
  const s = node.states ?? {};
  attrs.AXEnabled = s.enabled !== false;
  if (s.focused) attrs.AXFocused = true;
  if (s.selected) attrs.AXSelected = true;
  if (s.expanded !== undefined) attrs[node.role === "AXRow" ? "AXDisclosing" : "AXExpanded"] = s.expanded;
  if (s.minimized) attrs.AXMinimized = true;
  if (s.modal) attrs.AXModal = true;
  if (s.required) attrs.AXRequired = true;
  if (s.selectable) settable.push("AXSelected");
  if (node.frame) {
    attrs.AXPosition = { x: node.frame.x, y: node.frame.y };
    attrs.AXSize = { w: node.frame.w, h: node.frame.h };
  }
  if (node.rowIndex !== undefined) attrs.AXIndex = node.rowIndex;
  if (parent !== undefined) attrs.AXParent = { ref: parent };
  // What a scroll area shows bounds what its tables call visible.
  const inner = node.role === "AXScrollArea" ? node.frame : clip;
  const kids = node.children ?? [];
  const children = kids.map((c) => elementOf(c, ids, id, secureValue, inner));
  if (node.role === "AXTable" || node.role === "AXOutline") {
    const view = inner ?? node.frame;
    attrs.AXRows = children.filter((c) => c.attrs.AXRole === "AXRow").map((c) => ({ ref: c.id }));
    // As AppKit does: the rows on screen, which the backend reads instead of all of them.
    attrs.AXVisibleRows = children
      .filter((c, i) => c.attrs.AXRole === "AXRow" && intersects(kids[i]!.frame, view))
      .map((c) => ({ ref: c.id }));
  }
  attrs.AXChildren = children;
  return { id, attrs, settable, actions: node.actions ?? [] };
}

/**
 * A world holding one app with the recorded window (and menu bar): focused,
 * on screen, its CG window matching the AX frame and title.
 */
export function worldFromFixture(raw: RawSnapshot, options: { secureValue?: string } = {}): World {
  const ids = new Ids();
  const appId = ids.take();
  const window = elementOf(raw.root, ids, appId, options.secureValue);
  window.attrs.AXMain = true;
  if (!window.attrs.AXTitle) window.attrs.AXTitle = raw.window.title;
  if (!window.attrs.AXPosition) {
    window.attrs.AXPosition = { x: raw.window.frame.x, y: raw.window.frame.y };
    window.attrs.AXSize = { w: raw.window.frame.w, h: raw.window.frame.h };
  }
  window.settable = [...(window.settable ?? []), "AXMain", "AXFocused", "AXMinimized"];
  window.actions = [...(window.actions ?? []), "AXRaise"];
  window.cgWindow = 7;
  const appAttrs: Record<string, unknown> = {
    AXRole: "AXApplication",
    AXTitle: raw.app.name,
    AXWindows: [{ ref: window.id }],
    AXFocusedWindow: { ref: window.id },
    AXMainWindow: { ref: window.id },
    AXChildren: [window],
  };
  if (raw.menuBar) appAttrs.AXMenuBar = elementOf(raw.menuBar, ids, appId);
  return {
    scale: raw.window.scale,
    focusedPid: raw.app.pid,
    apps: [
      {
        pid: raw.app.pid,
        name: raw.app.name,
        ...(raw.app.bundleId ? { bundleId: raw.app.bundleId } : {}),
        active: true,
        root: { id: appId, attrs: appAttrs },
      },
    ],
    windows: [{ number: 7, pid: raw.app.pid, bounds: raw.window.frame, name: raw.window.title }],
  };
}
