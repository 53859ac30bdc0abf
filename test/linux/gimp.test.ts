/**
 * GIMP 2.10 (GTK2) on a headless desktop (issue 32 §7), one GIMP for the
 * file, opened on a small image of the test's own. GTK2 exposes AT-SPI only
 * through the atk-bridge module (GTK_MODULES=gail:atk-bridge, Debian's
 * libatk-adaptor): without it GIMP is listed with no tree.
 *
 * The task, as an agent does it: open the Colors menu, pick Hue-Saturation,
 * and see the dialog open. GTK2 does not give an open menu's items the
 * SHOWING state, so they are not in the tree; they are read off the pixels,
 * and the OCR line is clicked. Its identity is its ink (the shape of its
 * pixels in its place, lib/observe/ocr/ink.ts), since Tesseract reads the same
 * pixels as other text from one look to the next ("<= Hue-Saturation...",
 * "& Hue-Saturation..."): before, such a line could never be clicked
 * (STALE_REF every time).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, listWindows, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let gimp: App;
let session: Session;
let started = 0;

/** A 96 × 64 two-colour image as binary PPM, which GIMP opens without plug-ins of note. */
function writeImage(file: string): void {
  const w = 96;
  const h = 64;
  const px = Buffer.alloc(w * h * 3);
  for (let i = 0; i < w * h; i++) px.set(i % w < w / 2 ? [200, 80, 60] : [40, 80, 200], i * 3);
  writeFileSync(file, Buffer.concat([Buffer.from(`P6\n${w} ${h}\n255\n`), px]));
}

beforeAll(async () => {
  started = performance.now();
  desktop = await useDesktop();
  const image = join(desktop.home, "axsnap-pic.ppm");
  writeImage(image);
  // GTK2's accessibility: the bridge module, asked for by name (GTK3 loads it by itself).
  const env = { ...desktop.env, GTK_MODULES: "gail:atk-bridge" };
  gimp = await startApp({ ...desktop, env }, "gimp", ["--no-splash", "--no-fonts", image], {
    name: "gimp",
    timeoutMs: 90_000,
  });
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
  console.log(`gimp.test.ts: ${Math.round(performance.now() - started)} ms in all`);
});

/** Snapshots until `test` holds, every 200 ms for at most `ms`; the failure shows the last one. */
async function snapshotUntil(test: (s: Snapshot) => boolean, what: string, ms = 30_000, ocr?: true) {
  const until = Date.now() + ms;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    last = await session.snapshot({
      app: gimp.pid,
      screenshot: false,
      deadlineMs: 15_000,
      ...(ocr ? { ocr } : {}),
    });
    if (test(last)) return last;
    await sleep(200);
  }
  throw new Error(`${what} never showed; the last snapshot:\n${last?.text}`);
}

const IMAGE_WINDOW = /axsnap-pic/;

describe("GIMP (GTK2)", () => {
  it(
    "opens Colors from the menu bar and picks Hue-Saturation by its OCR line: the dialog opens (library)",
    async () => {
      // The image window: its title names the image once GIMP has loaded it.
      const snap = await snapshotUntil((s) => IMAGE_WINDOW.test(s.window.title ?? ""), "the image window");
      const colors = indexIn(snap, /^\s*\d+ menu Colors$/m);
      const opened = await session.click(`@${snap.id}:e${colors}`);
      expect(opened.delivery, JSON.stringify(opened.notes)).not.toBe("not_delivered");
      // The menu's items are painted over the window: read off its pixels.
      const menu = await snapshotUntil(
        (s) => /\(ocr(?:, unsure)?\).*Hue-Saturation/.test(s.text),
        "the Colors menu's Hue-Saturation item",
        30_000,
        true,
      );
      const line = indexIn(menu, /^\s*\d+ text \(ocr(?:, unsure)?\).*Hue-Saturation/m);
      const picked = await session.click(`@${menu.id}:e${line}`);
      expect(picked.delivery, picked.notes.join("\n")).toBe("delivered_unverified");
      expect(picked.notes.join("\n")).toMatch(/pixels are drawn as snapshot .* showed them/);
      expect((picked.opened ?? []).map((w) => `${w.kind} ${w.title}`).join(" | ")).toMatch(
        /dialog Hue-Saturation/,
      );
      // What opened: the Hue-Saturation dialog, a top-level window of its own.
      const until = Date.now() + 30_000;
      let titles: string[] = [];
      while (Date.now() < until) {
        titles = (await listWindows(gimp.pid, { deadlineMs: 10_000 })).map((w) => w.title ?? "");
        if (titles.some((t) => /Hue-Saturation/.test(t))) break;
        await sleep(200);
      }
      expect(titles.join(" | ")).toMatch(/Hue-Saturation/);
      // The window chooser, with two top-level windows: the one named, else the one in front (the dialog).
      const dialog = await session.snapshot({
        app: gimp.pid,
        window: { title: "Hue-Saturation" },
        screenshot: false,
      });
      expect(dialog.window.title).toMatch(/Hue-Saturation/);
      expect(dialog.text).toMatch(/push button .*Cancel/);
      const image = await session.snapshot({
        app: gimp.pid,
        window: { title: "axsnap-pic" },
        screenshot: false,
      });
      expect(image.window.title).toMatch(IMAGE_WINDOW);
      // Cancel: the dialog closes and the reply says so.
      const cancel = indexIn(dialog, /^\s*\d+ push button .*Cancel/m);
      const closed = await session.click(`@${dialog.id}:e${cancel}`);
      expect(closed.delivery).not.toBe("not_delivered");
      expect((closed.closed ?? []).map((w) => w.title).join(" | ")).toMatch(/Hue-Saturation/);
    },
    TIMEOUT,
  );

  it(
    "picks the same item through the CLI, the line's ref acted on by another process",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-gimp-cli-"));
      const cli = (args: string[]) => runCli([...args, "--session", dir], { AXSNAP_DAEMON: "off" });
      let shot = await cli(["snapshot", "--app", String(gimp.pid)]);
      expect(shot.code, shot.stderr).toBe(0);
      const id = /^snapshot (s[a-z0-9]{7})/m.exec(shot.stdout)![1];
      const colors = indexIn(shot.stdout, /^\s*\d+ menu Colors$/m);
      const click = await cli(["click", `@${id}:e${colors}`]);
      expect(click.code, click.stderr).toBe(0);
      const until = Date.now() + 30_000;
      while (Date.now() < until) {
        shot = await cli(["snapshot", "--app", String(gimp.pid), "--ocr", "on", "--deadline", "15000"]);
        if (/\(ocr(?:, unsure)?\).*Hue-Saturation/.test(shot.stdout)) break;
        await sleep(200);
      }
      expect(shot.stdout).toMatch(/\(ocr(?:, unsure)?\).*Hue-Saturation/);
      const menuId = /^snapshot (s[a-z0-9]{7})/m.exec(shot.stdout)![1];
      const line = indexIn(shot.stdout, /^\s*\d+ text \(ocr(?:, unsure)?\).*Hue-Saturation/m);
      const pick = await cli(["click", `@${menuId}:e${line}`, "--deadline", "15000"]);
      expect(pick.code, `${pick.stdout}\n${pick.stderr}`).toBe(0);
      expect(pick.stdout).toMatch(/found again by the shape of its pixels/);
      expect(pick.stdout).toMatch(/^opened: dialog "Hue-Saturation"/m);
    },
    TIMEOUT,
  );
});
