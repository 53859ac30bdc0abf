/**
 * What a Linux desktop quietly needs before its apps can be seen and used
 * (docs/linux.md, "What a real desktop needs"), read without changing
 * anything: the session type (on Wayland, X capture and input reach only
 * XWayland apps) and, for each app listed without an accessibility tree,
 * the likely reason read from its own /proc entry: GTK started with the
 * bridge off, a Chromium or Electron started before accessibility was
 * enabled, or a toolkit with no AT-SPI support at all.
 *
 * Why /proc and not the app: an app without a tree cannot be asked anything
 * over AT-SPI; its environment and executable are what decided it.
 */
import { existsSync, readFileSync, readlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RawApp } from "../model/model.js";

/** Why an app has no accessibility tree, as far as its process shows. */
export type NoTreeCause =
  /** GTK's accessibility bridge was turned off in its environment (NO_AT_BRIDGE, GTK_A11Y=none). */
  | "bridge_disabled"
  /** A Chromium or Electron app that was not told to join AT-SPI when it started. */
  | "chromium_not_enabled"
  /** An X11 client whose toolkit does not speak AT-SPI (xterm, Tk, Motif): pixels and OCR only. */
  | "no_toolkit_support"
  /** Its process could not be read (another user's, or gone). */
  | "unknown";

export interface AppWithoutTree {
  name: string;
  pid: number;
  cause: NoTreeCause;
  /** What was read that decided the cause, e.g. "NO_AT_BRIDGE=1 in its environment". */
  evidence: string;
  /** What to do about it. */
  fix: string;
}

export interface LinuxDesktopReport {
  /** From XDG_SESSION_TYPE and WAYLAND_DISPLAY; "unknown" when neither says (a bare Xvfb, ssh). */
  session: "x11" | "wayland" | "unknown";
  /** The X display this process captures and sends input on. */
  display: string | undefined;
  /** The apps listed without an accessibility tree, each with its likely cause. */
  appsWithoutTree: AppWithoutTree[];
  /** The agent's desktop this process observes (`--desktop NAME`), and whether it is X11 or Wayland. */
  agentDesktop?: { name: string; session: "x11" | "wayland" };
  /**
   * Where window frames, stacking and focus come from: "x11" (the X server);
   * "gnome-shell" (GNOME Shell's Eval on GNOME Wayland, as on the agent's
   * Wayland desktop, which runs it in unsafe mode); "unknown" (a Wayland
   * session whose compositor does not say: on a user's own GNOME session
   * Eval is refused, so screen positions of native Wayland windows and their
   * elements are unknown, and snapshots say so). `detail` says what was found.
   */
  windows?: { source: WindowSource; detail: string };
  /**
   * Wayland only: how screenshots and pointer/key input reach native Wayland
   * windows (X11 capture and input reach XWayland apps only). `detail` says
   * what each gives and, when it is less than everything, what gives more.
   */
  routes?: WaylandRoutes;
  /**
   * Wayland only: which compositor this is, as far as the session shows
   * (GNOME's Mutter on the session bus; else SWAYSOCK, KDE_FULL_SESSION,
   * XDG_CURRENT_DESKTOP). Only GNOME's has a route for screenshots and
   * pointer/key input here; `evidence` says what decided.
   */
  compositor?: { name: WaylandCompositor; evidence: string };
}

/** "other": a compositor the session names but axsnap does not know (XDG_CURRENT_DESKTOP); "unknown": nothing says. */
export type WaylandCompositor = "gnome" | "sway" | "kde" | "other" | "unknown";

/** The compositor of a Wayland session, from whether Mutter answers and the environment. Pure. */
export function compositorOf(
  env: NodeJS.ProcessEnv,
  mutter: boolean,
): { name: WaylandCompositor; evidence: string } {
  if (mutter) return { name: "gnome", evidence: "GNOME's Mutter answers on the session bus" };
  // sway sets SWAYSOCK for its clients; XDG_CURRENT_DESKTOP is whatever the session's launcher put there.
  if (env.SWAYSOCK) return { name: "sway", evidence: `SWAYSOCK=${env.SWAYSOCK}` };
  const desktops = (env.XDG_CURRENT_DESKTOP ?? "").split(":").filter(Boolean);
  const named = (re: RegExp) => desktops.some((d) => re.test(d));
  if (env.KDE_FULL_SESSION === "true") return { name: "kde", evidence: "KDE_FULL_SESSION=true" };
  const current = `XDG_CURRENT_DESKTOP=${env.XDG_CURRENT_DESKTOP}`;
  if (named(/^kde$/i)) return { name: "kde", evidence: current };
  if (named(/^sway$/i)) return { name: "sway", evidence: current };
  // GNOME named, but its Mutter does not answer: not the compositor this process can use.
  if (named(/^gnome$/i))
    return { name: "gnome", evidence: `${current}, but Mutter is not on this session bus` };
  if (desktops.length) return { name: "other", evidence: current };
  return {
    name: "unknown",
    evidence: "neither Mutter, SWAYSOCK, KDE_FULL_SESSION nor XDG_CURRENT_DESKTOP says",
  };
}

const COMPOSITOR_WORDS: Record<WaylandCompositor, string> = {
  gnome: "GNOME's compositor",
  sway: "sway (a wlroots compositor)",
  kde: "KDE Plasma's KWin",
  other: "this compositor",
  unknown: "this compositor",
};

export type WindowSource = "x11" | "gnome-shell" | "unknown";

/**
 * "screen": GNOME's compositor (Mutter ScreenCast and RemoteDesktop), any
 * window, in screen space, GNOME Shell saying where windows are;
 * "focused-window": Mutter too, but the shell refuses Eval (a user's own
 * GNOME session): only the window with keyboard focus, in its own
 * coordinates (no screen positions); "none": no route reaches native Wayland
 * windows (no Mutter on the session bus).
 */
export type WaylandRoute = "screen" | "focused-window" | "none";

export interface WaylandRoutes {
  capture: WaylandRoute;
  input: WaylandRoute;
  detail: string;
  /** "none" only: what gives screenshots and pixel input instead. */
  hint?: string;
}

/** What to do where no route reaches native Wayland windows (the native refusals say the same). */
export const NO_ROUTE_HINT =
  "act through the accessibility tree (click, set a value of, or type into an element the snapshot lists); for screenshots and pointer/key input run the app on the agent's Wayland desktop (axsnap desktop start NAME --wayland) or as an XWayland client (GTK: GDK_BACKEND=x11; Qt: QT_QPA_PLATFORM=xcb; Chromium/Electron: --ozone-platform=x11)";

/** How the native refusal (linux_backend.cc NoRouteFor) reads, in a snapshot's "no screenshot" note. */
export const NO_ROUTE_NOTE = /gives axsnap no route /;

/** The routes of a Wayland session, from the window source, whether Mutter answers, and the compositor. Pure. */
export function waylandRoutesOf(
  source: WindowSource | undefined,
  mutter: boolean,
  compositor: WaylandCompositor = "unknown",
): WaylandRoutes {
  if (!mutter)
    return {
      capture: "none",
      input: "none",
      detail: `${COMPOSITOR_WORDS[compositor]} gives axsnap no route to native Wayland windows' pixels or input: axsnap captures and sends input through GNOME's Mutter (ScreenCast, RemoteDesktop), which is not on this session bus, and has no xdg-desktop-portal route; snapshots of native Wayland windows come without a screenshot and pointer/key input to them is refused with nothing sent; XWayland apps take the X11 route; trees and semantic actions work everywhere`,
      hint: NO_ROUTE_HINT,
    };
  if (source === "gnome-shell")
    return {
      capture: "screen",
      input: "screen",
      detail:
        "screenshots and pointer/key input of any native Wayland window go through GNOME's compositor (Mutter ScreenCast and RemoteDesktop), in screen space",
    };
  return {
    capture: "focused-window",
    input: "focused-window",
    detail:
      "screenshots and pointer/key input reach the focused native Wayland window only, through GNOME's compositor (a Mutter stream of the focused window), in the window's own coordinates (no screen positions); a window without keyboard focus is refused until it is brought to the front, and a toolkit that measures from inside its client-side shadow (GTK4) cannot be captured or clicked by pixel; for every window, in screen space, run the apps on the agent's Wayland desktop (axsnap desktop start NAME --wayland)",
  };
}

/** What classifying one process needs: read from /proc in production, given directly in tests. */
export interface ProcessFacts {
  /** Its environment, or undefined when it could not be read. */
  env: ReadonlyMap<string, string> | undefined;
  /** The executable's path, when readable. */
  exe: string | undefined;
  /** Whether a file of that name sits beside the executable. */
  besideExe(name: string): boolean;
}

const CHROMIUM_FIX =
  "restart it with ACCESSIBILITY_ENABLED=1 in its environment and --force-renderer-accessibility (axsnap enables org.a11y.Status.IsEnabled when it connects, so a Chromium started after that joins too)";
const BRIDGE_FIX = "restart it without NO_AT_BRIDGE (or GTK_A11Y=none) in its environment";
const TOOLKIT_FIX =
  "nothing to restart: its snapshot is its window and the text read off its pixels; click by element index or x/y";

/** The cause of one app's missing tree, from the facts of its process. Pure. */
export function noTreeCause(facts: ProcessFacts): { cause: NoTreeCause; evidence: string; fix: string } {
  if (facts.env === undefined)
    return {
      cause: "unknown",
      evidence: "its /proc entry could not be read",
      fix: "check how it was started (docs/linux.md)",
    };
  const bridge = facts.env.get("NO_AT_BRIDGE");
  if (bridge !== undefined && bridge !== "" && bridge !== "0")
    return {
      cause: "bridge_disabled",
      evidence: `NO_AT_BRIDGE=${bridge} in its environment`,
      fix: BRIDGE_FIX,
    };
  if (facts.env.get("GTK_A11Y") === "none")
    return { cause: "bridge_disabled", evidence: "GTK_A11Y=none in its environment", fix: BRIDGE_FIX };
  // Chromium and every Electron app ship their resource packs beside the binary, whatever it is named.
  if (facts.besideExe("chrome_100_percent.pak") || facts.besideExe("resources.pak")) {
    const enabled = facts.env.get("ACCESSIBILITY_ENABLED") === "1";
    return {
      cause: "chromium_not_enabled",
      evidence: `a Chromium-based executable (${facts.exe ?? "?"}) ${enabled ? "with ACCESSIBILITY_ENABLED=1 that still has no tree" : "without ACCESSIBILITY_ENABLED=1"}`,
      fix: CHROMIUM_FIX,
    };
  }
  return {
    cause: "no_toolkit_support",
    evidence: `${facts.exe ?? "its executable"} registered no accessibility tree`,
    fix: TOOLKIT_FIX,
  };
}

/** NUL-separated KEY=VALUE pairs, as /proc/PID/environ holds them. */
export function parseEnviron(raw: string): Map<string, string> {
  const env = new Map<string, string>();
  for (const pair of raw.split("\0")) {
    const eq = pair.indexOf("=");
    if (eq > 0) env.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return env;
}

/** The facts of a running process, from /proc (only this user's processes are readable). */
export function processFacts(pid: number): ProcessFacts {
  let env: Map<string, string> | undefined;
  let exe: string | undefined;
  try {
    env = parseEnviron(readFileSync(`/proc/${pid}/environ`, "latin1"));
  } catch {
    env = undefined;
  }
  try {
    exe = readlinkSync(`/proc/${pid}/exe`);
  } catch {
    exe = undefined;
  }
  return {
    env,
    exe,
    besideExe: (name) => exe !== undefined && existsSync(join(dirname(exe), name)),
  };
}

export function sessionOf(env: NodeJS.ProcessEnv): LinuxDesktopReport["session"] {
  const type = env.XDG_SESSION_TYPE?.toLowerCase();
  if (type === "wayland" || (type === undefined && env.WAYLAND_DISPLAY)) return "wayland";
  if (type === "x11") return "x11";
  return "unknown";
}

/** The report for these listed apps, in this process's environment. */
export function linuxDesktopReport(
  apps: readonly RawApp[],
  env: NodeJS.ProcessEnv = process.env,
  factsOf: (pid: number) => ProcessFacts = processFacts,
  windows?: { source: WindowSource; detail: string },
  mutter?: boolean,
): LinuxDesktopReport {
  const wayland = sessionOf(env) === "wayland";
  return {
    session: sessionOf(env),
    display: env.DISPLAY,
    appsWithoutTree: apps
      .filter((a) => a.noTree === true)
      .map((a) => ({ name: a.name, pid: a.pid, ...noTreeCause(factsOf(a.pid)) })),
    ...(windows ? { windows: wayland ? windows : X11_WINDOWS } : {}),
    ...(wayland && mutter !== undefined
      ? {
          compositor: compositorOf(env, mutter),
          routes: waylandRoutesOf(windows?.source, mutter, compositorOf(env, mutter).name),
        }
      : {}),
  };
}

const X11_WINDOWS = {
  source: "x11",
  detail: "window frames, stacking and focus come from the X server",
} as const;

/**
 * The native permissions() answer: whether GNOME Shell lists windows ("gnome-shell") or not ("unknown");
 * linuxDesktopReport keeps it for a Wayland session only.
 */
export function windowSourceOf(s: {
  windowSource?: unknown;
  windowDetail?: unknown;
}): { source: WindowSource; detail: string } | undefined {
  const source = s.windowSource;
  if (source !== "x11" && source !== "gnome-shell" && source !== "unknown") return undefined;
  return { source, detail: typeof s.windowDetail === "string" ? s.windowDetail : "" };
}

/** One hint for what the report found, or undefined when nothing needs doing. */
export function linuxReportHint(report: LinuxDesktopReport): string | undefined {
  const parts: string[] = [];
  if (report.agentDesktop?.session === "wayland")
    parts.push(
      `this is the agent's Wayland desktop ${report.agentDesktop.name} (headless gnome-shell): its apps are native Wayland clients; ${report.routes?.detail ?? "their trees and semantic actions work"}`,
    );
  else if (report.session === "wayland" && report.routes && report.routes.capture !== "none")
    parts.push(`this is a Wayland session: ${report.routes.detail}`);
  else if (report.session === "wayland" && report.routes?.hint)
    parts.push(`this is a Wayland session: ${report.routes.detail}; ${report.routes.hint}`);
  else if (report.session === "wayland")
    parts.push(
      "this is a Wayland session: screenshots and pointer/key input reach only XWayland apps (GTK: GDK_BACKEND=x11; Qt: QT_QPA_PLATFORM=xcb; Chromium/Electron: --ozone-platform=x11), or use an agent's desktop (axsnap desktop start)",
    );
  if (report.session === "wayland" && report.windows?.source === "unknown")
    parts.push(
      `screen positions of native Wayland windows are unknown (${report.windows.detail}): frames in snapshots are relative to the window; the agent's Wayland desktop runs GNOME Shell so that they are known`,
    );
  const fixable = report.appsWithoutTree.filter(
    (a) => a.cause === "bridge_disabled" || a.cause === "chromium_not_enabled",
  );
  for (const a of fixable) parts.push(`${a.name} (pid ${a.pid}): ${a.fix}`);
  return parts.length ? parts.join("; ") : undefined;
}

/** What list_apps adds to an app without a tree whose cause a restart fixes. */
export interface NoTreeFix {
  noTreeCause: NoTreeCause;
  fix: string;
}

/**
 * The apps, each fixable tree-less one with its cause and fix (MCP list_apps:
 * an agent that only sees "noTree" cannot tell a misstarted Chromium from an
 * xterm). Others are returned as they are, so the reply grows only when
 * there is something to do.
 */
export function withNoTreeFixes<A extends RawApp>(
  apps: readonly A[],
  factsOf: (pid: number) => ProcessFacts = processFacts,
): (A & Partial<NoTreeFix>)[] {
  return apps.map((a) => {
    if (a.noTree !== true) return a;
    const { cause, fix } = noTreeCause(factsOf(a.pid));
    return cause === "bridge_disabled" || cause === "chromium_not_enabled"
      ? { ...a, noTreeCause: cause, fix }
      : a;
  });
}
