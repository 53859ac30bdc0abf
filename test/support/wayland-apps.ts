/**
 * Helpers for tests that drive real apps on the Wayland test desktop
 * (useDesktop({ wayland: true })): the shell's Eval, the compositor's window
 * list and image of a window, placing a window, bounded waits, and reading a
 * snapshot's lines and screenshot pixels by the coordinate contract
 * (pixel = (screen point − windowOrigin) × pixels per point).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Snapshot } from "../../lib/index.js";
import { listApps } from "../../lib/observe/desktop.js";
import { type App, compositorWindows, type Desktop, shellEval, startApp } from "../../scripts/desktop.mjs";
import { decodePng } from "./png.js";

export type Rect = { x: number; y: number; w: number; h: number };
export type Png = ReturnType<typeof decodePng>;

/** The shell's Eval: the script's value (JSON). */
export async function evalJs(desktop: Desktop, js: string): Promise<unknown> {
  const json = await shellEval(desktop, js.replace(/\s*\n\s*/g, " "));
  if (json === null) throw new Error(`gnome-shell's Eval failed: ${js.slice(0, 200)}`);
  return JSON.parse(json);
}

/** Waits until `probe` gives a truthy value, every 100 ms, bounded; the error names what never happened. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  ms = 10_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function windowsOfPid(desktop: Desktop, pid: number) {
  return (await compositorWindows(desktop)).filter((w) => w.pid === pid);
}

/** Moves a compositor window's frame to (x, y), un-maximized, and activates it; waits until the shell has it there, focused. */
export async function placeWindow(desktop: Desktop, id: string, x: number, y: number): Promise<void> {
  await until(`window ${id} at ${x},${y} and focused`, async () => {
    await evalJs(
      desktop,
      `(() => { const w = global.get_window_actors().map(a => a.meta_window).find(w => w.get_id() === ${id});
         if (w.get_maximized()) w.unmaximize(imports.gi.Meta.MaximizeFlags.BOTH);
         w.move_frame(true, ${x}, ${y}); w.activate(global.get_current_time()); return 1; })()`,
    );
    await new Promise((r) => setTimeout(r, 200));
    const m = (await compositorWindows(desktop)).find((w) => w.id === id);
    return m && m.frame[0] === x && m.frame[1] === y && m.focus;
  });
}

/** Starts an app, waits for its first placed window, puts it at (x, y) focused, and waits for AT-SPI to list it. */
export async function openApp(
  desktop: Desktop,
  command: string,
  args: string[] = [],
  at: { x: number; y: number } = { x: 100, y: 100 },
): Promise<App> {
  const app = await startApp(desktop, command, args);
  const w = await until(
    `${command}'s window mapped in the shell`,
    async () => (await windowsOfPid(desktop, app.pid)).find((m) => m.frame[2] > 0),
    30_000,
  );
  await placeWindow(desktop, w.id, at.x, at.y);
  await until(
    `${command} in the accessibility registry`,
    async () => (await listApps()).some((a) => a.pid === app.pid),
    30_000,
  );
  return app;
}

/** The compositor's own image of a window's buffer (MetaWindowActor.get_image), decoded. */
export async function actorImage(desktop: Desktop, id: string, name: string): Promise<Png> {
  const file = join(desktop.tmpDir, `${name}.png`);
  await evalJs(
    desktop,
    `(() => { const a = global.get_window_actors().find(a => a.meta_window.get_id() === ${id});
       a.get_image(null).writeToPNG(${JSON.stringify(file)}); return 1; })()`,
  );
  return decodePng(readFileSync(file));
}

/** The printed line of an index, trimmed. */
export const lineOf = (s: Snapshot, index: number) =>
  s.text
    .split("\n")
    .find((l) => new RegExp(`^\\t*${index} `).test(l))
    ?.trim() ?? "";

/** The records of a role (and name) that are enabled, in print order. */
export function recordsOf(snap: Snapshot, role: string, name?: string) {
  return snap.records.filter(
    (x) =>
      x.role === role &&
      (name === undefined || x.identity.name === name) &&
      !/\(disabled/.test(lineOf(snap, x.index)),
  );
}

export function recordOf(snap: Snapshot, role: string, name?: string, nth = 0) {
  const r = recordsOf(snap, role, name)[nth];
  if (!r) throw new Error(`no enabled ${role} ${name ?? ""} #${nth} in\n${snap.text.slice(0, 3000)}`);
  return r;
}

/** The value a line prints ("Value: on" → "on"). */
export const valueIn = (s: Snapshot, index: number) => /Value: (.*)$/.exec(lineOf(s, index))?.[1];

/** A screen frame in the screenshot's pixels. */
export function pixelRect(snap: Snapshot, f: Rect): Rect {
  const shot = snap.screenshot!;
  const k = shot.pixelWidth / snap.window.frame.w;
  return {
    x: Math.round((f.x - shot.windowOrigin.x) * k),
    y: Math.round((f.y - shot.windowOrigin.y) * k),
    w: Math.round(f.w * k),
    h: Math.round(f.h * k),
  };
}

/** The screenshot pixel at a screen frame's centre. */
export function pixelOf(snap: Snapshot, f: Rect): { x: number; y: number } {
  const r = pixelRect(snap, { x: f.x + f.w / 2, y: f.y + f.h / 2, w: 0, h: 0 });
  return { x: r.x, y: r.y };
}

/** Per channel standard deviation, max over R, G, B, of a rectangle of a PNG: 0 for a flat colour. */
export function spread(png: Png, r: Rect): number {
  let best = 0;
  for (let c = 0; c < 3; c++) {
    let n = 0,
      sum = 0,
      sq = 0;
    for (let y = r.y; y < r.y + r.h; y++)
      for (let x = r.x; x < r.x + r.w; x++) {
        if (x < 0 || y < 0 || x >= png.width || y >= png.height) continue;
        const v = png.data[(y * png.width + x) * 4 + c]!;
        n++;
        sum += v;
        sq += v * v;
      }
    if (n > 0) best = Math.max(best, Math.sqrt(Math.max(0, sq / n - (sum / n) ** 2)));
  }
  return best;
}

/**
 * Over a screen frame, on a 2-point grid: the fraction of points where the screenshot's pixel (by the
 * contract) is within 40 per channel of the compositor's image of the window (`ref`, its buffer at
 * `refOrigin` on screen, one pixel per point).
 */
export function agreement(
  snap: Snapshot,
  png: Png,
  ref: Png,
  refOrigin: { x: number; y: number },
  f: Rect,
): number {
  const shot = snap.screenshot!;
  const k = shot.pixelWidth / snap.window.frame.w;
  let same = 0,
    total = 0;
  for (let y = f.y + 1; y < f.y + f.h - 1; y += 2)
    for (let x = f.x + 1; x < f.x + f.w - 1; x += 2) {
      const px = Math.round((x - shot.windowOrigin.x) * k),
        py = Math.round((y - shot.windowOrigin.y) * k);
      const rx = x - refOrigin.x,
        ry = y - refOrigin.y;
      if (px < 0 || py < 0 || px >= png.width || py >= png.height) continue;
      if (rx < 0 || ry < 0 || rx >= ref.width || ry >= ref.height) continue;
      const i = (py * png.width + px) * 4,
        j = (ry * ref.width + rx) * 4;
      let d = 0;
      for (let c = 0; c < 3; c++) d = Math.max(d, Math.abs(png.data[i + c]! - ref.data[j + c]!));
      total++;
      if (d <= 40) same++;
    }
  return total === 0 ? 0 : same / total;
}
