/**
 * The native request one observation's options make: the app, the walk's
 * limits, the screenshot and the window. Apart from lib/observe/desktop.ts, which
 * needs the whole renderer, so that a walk can be started from the options
 * before that is loaded (lib/observe/desktop-backend.ts `startEarlyWalk`) and still
 * be exactly the walk `snapshot()` asks for.
 */

import { invalidArgument } from "../model/errors.js";
import type { NativeSnapshotRequest } from "../native.js";
import { normaliseRenderOptions, type RenderOptions } from "../render/options.js";
import { type ScreenshotRequest, screenshotRequest } from "./marks.js";
import { type WindowOption, windowOptionOf } from "./windows.js";

export function appOf(value: unknown): string | number {
  if (typeof value === "string" && value.trim().length > 0) return value.trim();
  if (typeof value === "number" && Number.isInteger(value) && value > 0 && value <= 2 ** 31 - 1) return value;
  throw invalidArgument(
    `app must be an app name or a pid, got ${value === undefined ? "nothing" : JSON.stringify(value)}`,
    'pass { app: "gtk3-widget-factory" } or { app: 1234 }; listApps() shows what is running',
  );
}

export function deadlineOf(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1 || value > 600_000)
    throw invalidArgument(
      `deadlineMs must be a number of milliseconds between 1 and 600000, got ${String(value)}`,
    );
  return value;
}

/** The request without its deadline, which is what is left of the call's budget when it is sent. */
export type WalkRequest = Omit<NativeSnapshotRequest, "deadlineMs">;

export function walkRequestOf(
  app: string | number,
  render: Required<RenderOptions>,
  shot: ScreenshotRequest,
  window: WindowOption | undefined,
): WalkRequest {
  return {
    app,
    // The walk reads up to twice the printed limit: about half of a window's elements are elided wrappers.
    maxNodes: Math.max(render.maxNodes * 2, render.maxNodes + 100),
    maxDepth: render.maxDepth,
    screenshot: shot.capture,
    ...(shot.marks ? { keepPixels: true } : {}),
    secureNames: render.secureNames,
    ...(window ? { window } : {}),
  };
}

/** The walk plain options ask for, or undefined where they are not valid (`snapshot()` then says why). */
export function walkRequestOrUndefined(
  options: {
    app: unknown;
    screenshot?: unknown;
    window?: unknown;
  } & RenderOptions,
): WalkRequest | undefined {
  try {
    const render = normaliseRenderOptions(options);
    if (render.maxDepth > 512) return undefined;
    return walkRequestOf(
      appOf(options.app),
      render,
      screenshotRequest(options.screenshot),
      windowOptionOf(options.window),
    );
  } catch {
    return undefined;
  }
}
