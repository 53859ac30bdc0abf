/**
 * The small world the fake-layer probes of the macOS reviews share (test/mac/fake-*.test.ts): one app
 * "Editor" (pid 500, com.example.editor), its windows and buttons, its window-server windows, and the
 * backends a test file makes, closed after every test with no CF object left alive.
 */
import { afterEach, expect } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import {
  type AXElement,
  type CGWindow,
  loadMacFake,
  macBackend,
  type World,
  type WorldApp,
} from "./mac-world.js";

export const PID = 500;
export const APP_ID = 1;
export const DOC_FRAME = { x: 100, y: 80, w: 800, h: 600 };

/** Backends for this file's tests: each closed after its test, the world cleared, and zero live CF objects. */
export function macBackends(): (world: World) => NativeBackend {
  const addon = loadMacFake();
  const open: NativeBackend[] = [];
  afterEach(async () => {
    for (const b of open.splice(0)) await b.close();
    addon.fakeWorldClear();
    expect(addon.fakeCFLive()).toBe(0);
  });
  return (world) => {
    const b = macBackend(world);
    open.push(b);
    return b;
  };
}

export const at = (x: number, y: number, w: number, h: number) => ({
  AXPosition: { x, y },
  AXSize: { w, h },
});

export const button = (id: number, title: string, x = 120, y = 120): AXElement => ({
  id,
  attrs: {
    AXRole: "AXButton",
    AXRoleDescription: "button",
    AXTitle: title,
    AXEnabled: true,
    ...at(x, y, 50, 24),
  },
  actions: ["AXPress"],
});

/** "Editor" with these windows in AXWindows, `focused` its focused and main window. */
export function appWith(windows: AXElement[], focused?: number, extra: Partial<WorldApp> = {}): WorldApp {
  const attrs: Record<string, unknown> = {
    AXRole: "AXApplication",
    AXTitle: "Editor",
    AXWindows: windows.map((w) => ({ ref: w.id })),
    AXChildren: windows,
  };
  if (focused !== undefined) {
    attrs.AXFocusedWindow = { ref: focused };
    attrs.AXMainWindow = { ref: focused };
  }
  return { pid: PID, name: "Editor", bundleId: "com.example.editor", ...extra, root: { id: APP_ID, attrs } };
}

/** One of Editor's windows as the window server lists it, on screen at layer 0. */
export const cg = (
  number: number,
  title: string,
  bounds = DOC_FRAME,
  extra: Partial<CGWindow> = {},
): CGWindow => ({
  number,
  pid: PID,
  bounds,
  name: title,
  layer: 0,
  onScreen: true,
  alpha: 1,
  ...extra,
});
