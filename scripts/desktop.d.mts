// Types for scripts/desktop.mjs (the headless desktop for tests and the demo).

export interface Desktop {
  /** "wayland" for startDesktop({ wayland: true }): headless gnome-shell, no X server. */
  session: "x11" | "wayland";
  /** X display, e.g. ":0"; "" on a Wayland desktop. */
  display: string;
  /** Wayland: the compositor's socket, an absolute path (env.WAYLAND_DISPLAY); "" on X11. */
  waylandDisplay: string;
  /** Environment for processes on this desktop: DISPLAY, DBUS_SESSION_BUS_ADDRESS, HOME, XDG_RUNTIME_DIR, ... */
  env: Record<string, string>;
  /** Session bus address. */
  busAddress: string;
  /** Accessibility bus address (org.a11y.Bus.GetAddress). */
  a11yBusAddress: string;
  /** Temporary HOME (mode 0700), removed by stop(). */
  home: string;
  /** Temporary XDG_RUNTIME_DIR (mode 0700), removed by stop(). */
  runtimeDir: string;
  /** Parent of home and runtimeDir; scratch space removed by stop(). */
  tmpDir: string;
  width: number;
  height: number;
  /** Wayland: gnome-shell runs with --unsafe-mode (its Eval answers); false on X11. */
  unsafe: boolean;
  /** Stops its apps, the buses, the accessibility services and Xvfb; removes the temp dirs. Idempotent. */
  stop(): Promise<void>;
}

export interface App {
  pid: number;
  /** Accessible name of the app in the registry. */
  name: string;
  /** Unique name of the app's connection on the accessibility bus. */
  busName: string;
  /** startApp with `windowClass`: the X id ("0x600010") of its window, as xwininfo prints it; else "". */
  xid: string;
  /** Milliseconds from spawn to being in the registry with a window. */
  readyMs: number;
  /** The last 16 KB of the app's stdout, then of its stderr. */
  output(): string;
  exited(): boolean;
  /** SIGTERM to the app's process group, SIGKILL after 3 s. Idempotent. */
  stop(): Promise<void>;
}

export interface StartAppOptions {
  /** Accessible name the app must have in the registry. */
  name?: string;
  /** Text that must be part of one of the app's window names. */
  windowName?: string;
  /**
   * An X11 client that never registers with AT-SPI: wait instead for a new
   * top-level window whose WM_CLASS class or instance is this ("XTerm", "xmessage").
   */
  windowClass?: string;
  /** Default 20000 (Chromium: 30000). */
  timeoutMs?: number;
}

/**
 * `accessibility: false`: Xvfb alone, no session bus, accessibility bus or registry.
 * `wayland: true`: headless gnome-shell (unsafe mode) with a virtual monitor of width x height,
 * a private system bus, PipeWire and WirePlumber, in place of Xvfb (not with `accessibility: false`).
 * `unsafe: false` (Wayland only): gnome-shell without --unsafe-mode, as on a user's own session, so
 * its Eval is refused (shellEval gives null, compositorWindows throws) and its Overview is not hidden.
 */
export function startDesktop(options?: {
  width?: number;
  height?: number;
  accessibility?: boolean;
  wayland?: boolean;
  unsafe?: boolean;
}): Promise<Desktop>;

/** org.gnome.Shell.Eval on a Wayland desktop: the result (the value as JSON), or null when it failed. */
export function shellEval(desktop: Desktop, script: string, timeoutMs?: number): Promise<string | null>;

export interface CompositorWindow {
  /** MetaWindow id (what Mutter's RecordWindow takes as window-id). */
  id: string;
  title: string | null;
  wmClass: string | null;
  pid: number;
  /** Mutter's client type: a native Wayland client, or an X11 one (XWayland). */
  client: "wayland" | "x11";
  /** [x, y, width, height] on the screen. */
  frame: [number, number, number, number];
  buffer: [number, number, number, number];
  focus: boolean;
  minimized: boolean;
}

/** Stops a Wayland desktop's gnome-shell (its clients die with it) and starts a new one; resolves when ready. */
export function restartCompositor(desktop: Desktop): Promise<void>;
/** A Wayland desktop's gnome-shell process id. */
export function compositorPid(desktop: Desktop): number;
/** The compositor's windows on a Wayland desktop (through Eval), bottom to top. */
export function compositorWindows(desktop: Desktop): Promise<CompositorWindow[]>;

export function startApp(
  desktop: Desktop,
  command: string,
  args?: string[],
  options?: StartAppOptions,
): Promise<App>;

export function gtkWidgetFactory(desktop: Desktop, options?: { timeoutMs?: number }): Promise<App>;
export function gtk4WidgetFactory(desktop: Desktop, options?: { timeoutMs?: number }): Promise<App>;

export function chromium(
  desktop: Desktop,
  url: string,
  options?: { userDataDir?: string; windowName?: string; timeoutMs?: number },
): Promise<App>;

export function chromiumArgs(url: string, userDataDir: string, options?: { wayland?: boolean }): string[];

/** file:// URL for a path (relative paths resolve against the cwd). */
export function fileUrl(file: string): string;

export interface AppRef {
  bus: string;
  path: string;
}

/** The apps registered on the desktop's accessibility bus. */
export function registryChildren(desktop: Desktop): Promise<AppRef[]>;

export function describeApp(
  desktop: Desktop,
  ref: AppRef,
): Promise<{ name: string | null; childCount: number | null; pid: number | null }>;

export function parseString(output: string): string | null;
export function parseInteger(output: string): number | null;
export function parseReferences(output: string): AppRef[];
/** SIGKILLs the accessibility bus (launcher, daemon, registry) and waits for a new one; returns its address. */
export function restartAccessibilityBus(desktop: Desktop): Promise<string>;
/** The pid of the desktop's session bus daemon. */
export function sessionBusPid(desktop: Desktop): number;
