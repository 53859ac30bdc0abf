/**
 * bench/wayland: the same app on the two Linux desktops, side by side in one
 * run: gtk3-widget-factory on a headless X11 desktop (Xvfb) and as a native
 * Wayland client on a headless GNOME Shell (startDesktop({ wayland: true })).
 *
 * Each desktop runs in a child process of its own (the addon connects to one
 * session bus per process), which prints its medians as JSON; this process
 * prints the table. Measured through the Session, as an agent calls it:
 *   snapshot            session.snapshot({ screenshot: false })
 *   snapshot + shot     session.snapshot({ screenshot: true }): X11 GetImage / Mutter ScreenCast + PipeWire
 *   click by index      session.click(check box, { snapshot: false }): AT-SPI's action, both desktops
 *   clickAt round trip  session.clickAt(its pixel, { snapshot: false }) on a fresh screenshot (not
 *                       timed): XTest / Mutter RemoteDesktop with the live hit test before it, until a
 *                       snapshot without screenshot reads the check box toggled: until the app has it
 *
 *   gtk4 snapshot       the same two snapshots of gtk4-widget-factory (GTK 4 speaks AT-SPI itself, not
 *                       through atk-bridge), to show whether GTK 4's cost is the desktop's or GTK 4's
 *
 *   npx tsx bench/wayland.ts          (RUNS=15 by default)
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createSession, type Snapshot } from "../lib/index.js";
import { gtk4WidgetFactory, gtkWidgetFactory, startDesktop } from "../scripts/desktop.mjs";
import { median } from "./getitems_floor.js";

const RUNS = Number(process.env.RUNS ?? 15);
const WARMUP = 3;
const DEADLINE_MS = 8000;
const SIDES = ["x11", "wayland"] as const;
type Side = (typeof SIDES)[number];

interface Measured {
  side: Side;
  window: string;
  screenshot: string;
  elements: number;
  snapshot: number;
  snapshotShot: number;
  click: number;
  clickAt: number;
  routes: string;
  gtk4Elements: number;
  gtk4Snapshot: number;
  gtk4SnapshotShot: number;
}

const now = () => performance.now();

function lineOf(snap: Snapshot, re: RegExp): number {
  for (const raw of snap.text.split("\n")) {
    const m = /^(\d+) /.exec(raw.trim());
    if (m && re.test(raw.trim())) return Number(m[1]);
  }
  throw new Error(`no line matches ${re}:\n${snap.text}`);
}

const CHECK = /^\d+ check box checkbutton, Value: (on|off)$/;

async function measureSide(side: Side): Promise<Measured> {
  const desktop = await startDesktop({ width: 1920, height: 1080, wayland: side === "wayland" });
  Object.assign(process.env, desktop.env);
  try {
    const gtk = await gtkWidgetFactory(desktop);
    const app = gtk.pid;
    const session = createSession({ deadlineMs: DEADLINE_MS });
    /** Runs f WARMUP + RUNS times; the time of each run, or the part of it f returns. */
    const timed = async (f: () => Promise<number | undefined>): Promise<number[]> => {
      for (let i = 0; i < WARMUP; i++) await f();
      const out: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = now();
        const part = await f();
        out.push(part ?? now() - t0);
      }
      return out;
    };
    const snapshot = await timed(async () => void (await session.snapshot({ app, screenshot: false })));
    const snapshotShot = await timed(async () => void (await session.snapshot({ app, screenshot: true })));
    const shot = await session.snapshot({ app, screenshot: true });
    if (!shot.screenshot)
      throw new Error(`${side}: no screenshot: ${shot.text.split("\n").slice(0, 4).join(" | ")}`);
    const box = lineOf(shot, CHECK);
    const state = (s: Snapshot) =>
      /Value: on$/.test(s.text.split("\n").find((l) => CHECK.test(l.trim())) ?? "") ? "on" : "off";
    const click = await timed(async () => {
      const r = await session.click(box, { snapshot: false });
      if (r.delivery === "not_delivered")
        throw new Error(`${side}: click not delivered: ${r.notes.join("; ")}`);
      return undefined;
    });
    // The pixel of the check box's centre on the screenshot.
    const frame = shot.records.find((r) => r.index === box)!.screenFrame!;
    const { windowOrigin, scale } = shot.screenshot;
    const px = (frame.x + frame.w / 2 - windowOrigin.x) * scale;
    const py = (frame.y + frame.h / 2 - windowOrigin.y) * scale;
    const routes = new Set<string>();
    const clickAt = await timed(async () => {
      const base = await session.snapshot({ app, screenshot: true });
      const before = state(base);
      const t0 = now();
      const r = await session.clickAt(px, py, { of: base, snapshot: false });
      routes.add(r.route ?? r.channel);
      // Until the app has it: the toggle read back.
      for (;;) {
        const after = await session.snapshot({ app, screenshot: false });
        if (state(after) !== before) return now() - t0;
        if (now() - t0 > 3000)
          throw new Error(`${side}: clickAt at ${px},${py} did not toggle the check box`);
      }
    });
    await gtk.stop();
    const gtk4 = await gtk4WidgetFactory(desktop);
    const of4 = { app: gtk4.pid };
    const gtk4Snapshot = await timed(
      async () => void (await session.snapshot({ ...of4, screenshot: false })),
    );
    const gtk4SnapshotShot = await timed(
      async () => void (await session.snapshot({ ...of4, screenshot: true })),
    );
    const gtk4Elements = (await session.snapshot({ ...of4, screenshot: false })).records.length;
    await session.close();
    await gtk4.stop();
    return {
      side,
      window: `${shot.window.frame.w}×${shot.window.frame.h}`,
      screenshot: `${shot.screenshot.pixelWidth}×${shot.screenshot.pixelHeight}`,
      elements: shot.records.length,
      snapshot: median(snapshot),
      snapshotShot: median(snapshotShot),
      click: median(click),
      clickAt: median(clickAt),
      routes: [...routes].join(","),
      gtk4Elements,
      gtk4Snapshot: median(gtk4Snapshot),
      gtk4SnapshotShot: median(gtk4SnapshotShot),
    };
  } finally {
    await desktop.stop();
  }
}

const side = process.argv[2] as Side | undefined;
if (side !== undefined) {
  if (!SIDES.includes(side)) throw new Error(`usage: bench/wayland.ts [x11|wayland]`);
  console.log(JSON.stringify(await measureSide(side)));
} else {
  const results: Measured[] = [];
  for (const s of SIDES) {
    const child = spawnSync(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), s], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      timeout: 600_000,
    });
    const last = child.stdout.trim().split("\n").pop() ?? "";
    if (child.status !== 0 || !last.startsWith("{"))
      throw new Error(`the ${s} side failed (exit ${child.status}): ${child.stdout}`);
    results.push(JSON.parse(last) as Measured);
  }
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  console.log(
    `gtk3-widget-factory, ${RUNS} runs each after ${WARMUP} warm-up, medians; node ${process.version}`,
  );
  const rows: [string, (m: Measured) => string][] = [
    ["window / screenshot px", (m) => `${m.window} / ${m.screenshot}`],
    ["elements printed", (m) => String(m.elements)],
    ["snapshot, no screenshot", (m) => ms(m.snapshot)],
    ["snapshot + screenshot", (m) => ms(m.snapshotShot)],
    ["click by index (AT-SPI)", (m) => ms(m.click)],
    ["clickAt round trip", (m) => ms(m.clickAt)],
    ["pixel input route", (m) => m.routes],
    ["gtk4: elements printed", (m) => String(m.gtk4Elements)],
    ["gtk4: snapshot", (m) => ms(m.gtk4Snapshot)],
    ["gtk4: snapshot + screenshot", (m) => ms(m.gtk4SnapshotShot)],
  ];
  const w = [30, 28, 28];
  const row = (cells: string[]) => console.log(cells.map((c, i) => c.padEnd(w[i]!)).join(""));
  row(["", "X11 (Xvfb)", "Wayland (GNOME Shell)"]);
  for (const [name, f] of rows) row([name, ...results.map(f)]);
}
