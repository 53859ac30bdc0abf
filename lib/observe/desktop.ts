/**
 * The live desktop: snapshot() and listApps() over the platform's native
 * backend. Arguments are validated here, before anything native runs; native
 * failures become AxsnapError with an agent-facing hint.
 *
 * One backend per process, created on first use (connecting is explicit and
 * never a side effect of importing axsnap).
 */

import { AxsnapError, invalidArgument, MACOS_PERMISSION_HINT } from "../model/errors.js";
import type { RawApp, RawSnapshot } from "../model/model.js";
import { CallContext, callBudget } from "../session/call.js";
import { boundDesktop } from "./agent-desktop/use.js";
import { desktopBackend, takeEarlyWalk } from "./desktop-backend.js";
import {
  type LinuxDesktopReport,
  linuxDesktopReport,
  linuxReportHint,
  windowSourceOf,
} from "./linux-checks.js";
import { encodeMarked, type ScreenshotOptions, screenshotRequest } from "./marks.js";

export { desktopBackend } from "./desktop-backend.js";

import { callNative, type InputRoute, loadNative, type NativeBackend, type NativeWindow } from "../native.js";
import {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_NODES,
  normaliseRenderOptions,
  normaliseViewOptions,
  type RenderOptions,
  type RenderScope,
  type ViewOptions,
} from "../render/index.js";
import { secureFieldsOf, withoutSecrets } from "../render/secure.js";
import { appOf, deadlineOf, walkRequestOf } from "./observe-request.js";
import { type OcrMode, ocrLanguagesOf, ocrModeOf } from "./ocr/plan.js";
import { readPixelText } from "./ocr/read.js";
import { attachScreenshot, createSnapshot, type Snapshot } from "./snapshot.js";
import { type WindowListing, type WindowOption, windowListingOf, windowOptionOf } from "./windows.js";

export interface SnapshotOptions extends RenderOptions, ViewOptions {
  /** The app: its name (case-insensitive; a unique prefix works) or its pid. */
  app: string | number;
  /**
   * Only this element's subtree, as a snapshot of its own (a session's
   * snapshot: `session.snapshot`, `snapshot()`): a ref `"@s…:e12"`, a bare
   * index of the app's latest snapshot, or a record. The window of that
   * snapshot is observed again and the element found by its live handle, else
   * by its proven-unique identity; line 0 is that element, and the header says
   * which element of which snapshot it is.
   */
  root?: number | string | import("../render/records.js").ElementRecord | undefined;
  /**
   * Capture the window's pixels (PNG, longest side ≤ 1280 px, ≤ 900 KB). Default true.
   * `{ marks: true }` also draws each printed element's index on its frame (same budget).
   */
  screenshot?: boolean | ScreenshotOptions;
  /** Overall deadline for the whole observation. Default 5000 ms. */
  deadlineMs?: number;
  /** Aborts the observation: it settles with ABORTED, and what the walk held is released when it ends. */
  signal?: AbortSignal;
  /**
   * Which window to observe, bypassing the default choice: `{ title }` (exact,
   * else case-insensitive, else a unique substring; several → AMBIGUOUS_TARGET
   * listing them), `{ index }` (position in `listWindows(app)`) or `{ id }`
   * (a `listWindows` id). None → WINDOW_NOT_FOUND listing the app's windows.
   * Without it: an open menu or popup of the app, else a modal dialog or
   * sheet, else the focused window, else the first usable one.
   */
  window?: WindowOption;
  /**
   * Read the text in the window's pixels into the snapshot (issue 20): `"auto"` (default) only where the
   * tree is thin (lib/observe/ocr/plan.ts: a window whose tree names almost nothing, or a self-drawn element such
   * as a canvas or a terminal over a good part of it), `true` always, `false` never. The lines print as
   * `text (ocr) …`, nested under the element that holds them, and act by pointer at their frame after
   * their text is read there again.
   */
  ocr?: OcrMode;
  /** The languages OCR reads, as Tesseract names them: default `["eng"]`; `"chi_sim"` for Chinese. */
  ocrLanguages?: string[];
}

/** What the action layer needs of a live snapshot beyond its public fields. */
export interface LiveObservation {
  backend: NativeBackend;
  window: NativeWindow;
  windowStep: string;
  /** How the window's pixels and synthetic input travel, as the snapshot found it. */
  route?: InputRoute;
  /** The observed tree, kept for identity counts when a ref is re-observed. */
  raw: RawSnapshot;
  /** The options it was taken with: an action's fresh snapshot keeps them. */
  options: ObservationOptions;
}

/** What an observation was asked for, without the app and the per-call budget. */
export type ObservationOptions = Omit<SnapshotOptions, "app" | "deadlineMs" | "signal">;

const live = new WeakMap<Snapshot, LiveObservation>();

export function liveObservation(snapshot: Snapshot): LiveObservation | undefined {
  return live.get(snapshot);
}

/** A named window that is not there gets a hint about listWindows, not about unminimizing. */
async function observeWindow<T>(window: WindowOption | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (window && e instanceof AxsnapError && e.code === "WINDOW_NOT_FOUND")
      throw new AxsnapError("WINDOW_NOT_FOUND", e.message, {
        cause: e,
        hint: "the app has no such window (it may have closed); listWindows(app) lists its windows, or take a snapshot without the window option",
      });
    throw e;
  }
}

/**
 * Observes one window of one app on the live desktop. `scope` (a session's
 * `root`, lib/session/act/root.ts): given the fresh tree, where the subtree starts;
 * it throws when the element cannot be found there.
 */
export async function snapshot(
  options: SnapshotOptions,
  backend?: NativeBackend,
  scope?: (raw: RawSnapshot) => RenderScope,
): Promise<Snapshot> {
  if (options === null || typeof options !== "object")
    throw invalidArgument("snapshot options must be an object");
  const app = appOf(options.app);
  const render = normaliseRenderOptions(options);
  const view = normaliseViewOptions(options);
  if (options.root !== undefined && scope === undefined)
    throw invalidArgument(
      "root needs a session that holds the snapshot it names",
      "pass root to a session's snapshot (the default session's, or one from createSession) that took the snapshot it names",
    );
  const deadlineMs = deadlineOf(options.deadlineMs, 5000);
  const shotRequest = screenshotRequest(options.screenshot);
  if (render.maxDepth > 512) throw invalidArgument("maxDepth must be at most 512");
  const window = windowOptionOf(options.window);
  const ocrMode = ocrModeOf(options.ocr);
  const ocrLanguages = ocrLanguagesOf(options.ocrLanguages);
  const ctx = new CallContext(deadlineMs, callBudget(options, deadlineMs).signal);
  const startedAt = performance.now();
  ctx.check();
  const b = backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
  const request = walkRequestOf(app, render, shotRequest, window);
  // The walk the CLI started while the library loaded, when it is this one (desktop-backend.ts);
  // any other observation lets it go, so it is never taken after one that saw the app later.
  const early = takeEarlyWalk(b, request);
  const result = await observeWindow(window, () =>
    ctx.step(
      "read",
      () => early ?? b.snapshot({ ...request, deadlineMs: ctx.remaining() }),
      // Aborted or cut by the backstop: the walk still ends, and what it holds is let go.
      (late) => b.release(late.handles),
    ),
  );
  const handles = result.handles;
  const releaseHandles = () => b.release(handles);
  let snap: Snapshot;
  try {
    // First of all: the text of a field that only the tree around it makes secure (a label beside it
    // that says PIN) is dropped, before OCR, the renderer or the action layer see the tree.
    const secure = secureFieldsOf(result.raw, render.secureNames);
    withoutSecrets(secure);
    // Before rendering: the pixels' lines are numbered, recorded and diffed like any line.
    const ocr = await readPixelText(b, ctx, result.raw, result.window, ocrMode, {
      secureNames: render.secureNames,
      secure,
      ...(ocrLanguages ? { languages: ocrLanguages } : {}),
    });
    snap = createSnapshot({
      ocr,
      raw: result.raw,
      options: { ...render, ...view },
      ...(scope ? { scope: scope(result.raw) } : {}),
      startedAt,
      releaseHandles,
      ...(result.screenshot
        ? {
            captureMs: result.screenshot.captureMs,
            encodeMs: result.screenshot.encodeMs,
            screenshot: {
              format: "png" as const,
              data: result.screenshot.png,
              pixelWidth: result.screenshot.pixelWidth,
              pixelHeight: result.screenshot.pixelHeight,
              scale: result.screenshot.scale,
              windowOrigin: result.screenshot.windowOrigin,
            },
          }
        : {}),
    });
    const pixels = result.pixels;
    if (pixels) {
      // Marks need the records: the pixels are encoded once the renderer has numbered the elements.
      const marked = await ctx.step("read", () => encodeMarked(loadNative(), pixels, snap.records));
      attachScreenshot(
        snap,
        {
          format: "png",
          data: marked.png,
          pixelWidth: marked.pixelWidth,
          pixelHeight: marked.pixelHeight,
          scale: marked.scale,
          windowOrigin: marked.windowOrigin,
          marks: marked.marks,
        },
        startedAt,
        { captureMs: pixels.captureMs, encodeMs: marked.encodeMs },
      );
    }
  } catch (e) {
    await releaseHandles();
    throw e;
  }
  live.set(snap, {
    backend: b,
    window: result.window,
    windowStep: result.windowStep,
    ...(result.route ? { route: result.route } : {}),
    raw: result.raw,
    options: {
      style: render.style,
      textLimit: render.textLimit,
      maxNodes: render.maxNodes,
      maxDepth: render.maxDepth,
      secureNames: render.secureNames,
      screenshot: shotRequest.marks ? { marks: true } : shotRequest.capture,
      ...(options.ocr === undefined ? {} : { ocr: ocrMode }),
      ...(ocrLanguages ? { ocrLanguages } : {}),
      // An action's fresh snapshot is the same view: a skeleton stays a skeleton (and a subtree a
      // subtree: the session adds its root).
      ...view,
    },
  });
  return snap;
}

/** One permission's state. `not_required`: the platform has no such permission (Linux). */
export type PermissionState = "granted" | "denied" | "unknown" | "not_required";

export interface PermissionStatus {
  platform: NodeJS.Platform;
  /** macOS: Accessibility (AXIsProcessTrustedWithOptions). Needed for every snapshot and action. */
  accessibility: PermissionState;
  /** macOS: Screen Recording (preflight, confirmed by a ScreenCaptureKit probe). Needed for screenshots. */
  screenRecording: PermissionState;
  /**
   * Linux: what the desktop needs that no permission covers (the session
   * type; each app listed without an accessibility tree, with the likely
   * cause read from its process and the fix). Absent on macOS.
   */
  desktop?: LinuxDesktopReport;
  /** What to do when something is not granted or a fixable app has no tree; absent when all is well. */
  hint?: string;
}

async function permissionStatus(
  prompt: boolean,
  env: NodeJS.ProcessEnv,
  backend?: NativeBackend,
): Promise<PermissionStatus> {
  const b = backend ?? (await desktopBackend());
  const s = (await callNative(() => b.permissions(prompt))) as {
    accessibility: PermissionState;
    screenRecording: PermissionState;
    windowSource?: unknown;
    windowDetail?: unknown;
    mutter?: unknown;
  };
  const denied = s.accessibility === "denied" || s.screenRecording === "denied";
  // Linux grants everything to everyone; what decides there is how the desktop and its apps were started.
  if (s.accessibility === "not_required" && process.platform === "linux") {
    const desktop = linuxDesktopReport(
      await callNative(() => b.listApps(3000)),
      env,
      undefined,
      windowSourceOf(s),
      s.mutter === true,
    );
    const agentDesktop = boundDesktop();
    if (agentDesktop) desktop.agentDesktop = agentDesktop;
    const hint = linuxReportHint(desktop);
    return {
      platform: process.platform,
      accessibility: s.accessibility,
      screenRecording: s.screenRecording,
      desktop,
      ...(hint ? { hint } : {}),
    };
  }
  return {
    platform: process.platform,
    accessibility: s.accessibility,
    screenRecording: s.screenRecording,
    ...(denied ? { hint: MACOS_PERMISSION_HINT } : {}),
  };
}

/**
 * What this process is allowed to do, without asking for anything: an
 * explicit call, never a side effect of importing axsnap.
 */
export function permissions(backend?: NativeBackend): Promise<PermissionStatus> {
  return permissionStatus(false, process.env, backend);
}

/**
 * permissions() for a caller whose environment is not this process's (the
 * CLI's warm process serving a command): the session type is the caller's.
 */
export function permissionsIn(env: NodeJS.ProcessEnv, backend?: NativeBackend): Promise<PermissionStatus> {
  return permissionStatus(false, env, backend);
}

/** Like permissions(), but asks the system to show its prompts for what is missing (macOS). */
export function requestPermissions(backend?: NativeBackend): Promise<PermissionStatus> {
  return permissionStatus(true, process.env, backend);
}

/** The apps the accessibility service knows, with their pids. */
export async function listApps(
  options: { deadlineMs?: number; signal?: AbortSignal } = {},
): Promise<RawApp[]> {
  const deadlineMs = deadlineOf(options?.deadlineMs, 3000);
  const ctx = new CallContext(deadlineMs, callBudget(options, deadlineMs).signal);
  ctx.check();
  const b = await ctx.step("read", () => desktopBackend(ctx.remaining()));
  return ctx.step("read", () => b.listApps(ctx.remaining()));
}

/**
 * The app's windows, dialogs, sheets, open menus and popups, in a
 * deterministic order (Linux: the app's top-level accessibles in the app's
 * own order; macOS: its AX windows, then their sheets, menus, popovers).
 * `index` is the position in this list, the same as `snapshot({ window: {
 * index } })` uses while nothing opens or closes; `id` survives other windows
 * opening and closing.
 */
export async function listWindows(
  app: string | number,
  options: { deadlineMs?: number; signal?: AbortSignal } = {},
  backend?: NativeBackend,
): Promise<WindowListing[]> {
  const target = appOf(app);
  if (options === null || typeof options !== "object") throw invalidArgument("options must be an object");
  const deadlineMs = deadlineOf(options.deadlineMs, 3000);
  const ctx = new CallContext(deadlineMs, callBudget(options, deadlineMs).signal);
  ctx.check();
  const b = backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
  const windows = await ctx.step("read", () => b.listWindows({ app: target, deadlineMs: ctx.remaining() }));
  return windows.map((w, i) => windowListingOf(w as unknown as Record<string, unknown>, i));
}

export { DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES };
