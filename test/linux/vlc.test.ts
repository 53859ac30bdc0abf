/**
 * VLC 3 (Qt 5) on a headless desktop (issue 32 §7), one VLC for the file,
 * started paused on a 30 s tone the test writes (a WAV: a header and
 * samples), with the dummy audio output. Qt joins AT-SPI with
 * QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1. test/apps/vlc.py starts VLC's own Qt
 * interface through libvlc where /usr/bin/vlc refuses to (as root, as CI
 * runs).
 *
 * Qt 5's bridge crashes the app on Properties.GetAll (it reads a second
 * argument GetAll does not have): before, the first snapshot of VLC killed it
 * ("APP_NOT_FOUND: vlc (pid N) exited during the snapshot"). The walk now
 * asks a Qt app's names one by one.
 *
 * The task, as an agent does it: press Play, see the button become Pause
 * and the elapsed time move; press Pause, see the time stop.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type Session, type Snapshot } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { indexIn, runCli } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let vlc: App;
let session: Session;
let started = 0;

/** `seconds` of a 440 Hz tone, 8 kHz mono 16-bit PCM, as a WAV file. */
function writeTone(file: string, seconds: number): void {
  const rate = 8000;
  const data = Buffer.alloc(rate * seconds * 2);
  for (let i = 0; i < rate * seconds; i++)
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const h = Buffer.alloc(44);
  h.write("RIFF", 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write("WAVEfmt ", 8);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36);
  h.writeUInt32LE(data.length, 40);
  writeFileSync(file, Buffer.concat([h, data]));
}

beforeAll(async () => {
  started = performance.now();
  desktop = await useDesktop();
  const tone = join(desktop.home, "axsnap-tone.wav");
  writeTone(tone, 30);
  const env = { ...desktop.env, QT_LINUX_ACCESSIBILITY_ALWAYS_ON: "1", QT_QPA_PLATFORM: "xcb" };
  vlc = await startApp(
    { ...desktop, env },
    "/usr/bin/python3",
    ["test/apps/vlc.py", "--intf", "qt", "--no-qt-privacy-ask", "--aout", "adummy", "--start-paused", tone],
    { name: "vlc", timeoutMs: 60_000 },
  );
  session = createSession();
}, TIMEOUT);

afterAll(async () => {
  await session?.close();
  await desktop?.stop();
  console.log(`vlc.test.ts: ${Math.round(performance.now() - started)} ms in all`);
});

const elapsed = (s: Snapshot | string) =>
  /label ([-\d]{2}:[-\d]{2}), Description: Elapsed time/.exec(typeof s === "string" ? s : s.text)?.[1];

/** Snapshots until `test` holds, every 200 ms for at most 20 s; the failure shows the last one. */
async function snapshotUntil(test: (s: Snapshot) => boolean, what: string): Promise<Snapshot> {
  const until = Date.now() + 20_000;
  let last: Snapshot | undefined;
  while (Date.now() < until) {
    last = await session.snapshot({ app: vlc.pid, screenshot: false });
    if (test(last)) return last;
    await sleep(200);
  }
  throw new Error(`${what} never showed; the last snapshot:\n${last?.text}`);
}

describe("VLC (Qt 5)", () => {
  it(
    "plays and pauses by its buttons, the state read back from the button's name and the elapsed time (library)",
    async () => {
      // Started paused: the elapsed time reads --:-- (or 00:00 once VLC has opened the file).
      const snap = await snapshotUntil((s) => elapsed(s) !== undefined, "the elapsed time label");
      expect(vlc.exited(), "VLC is still running after its snapshots").toBe(false);
      expect(elapsed(snap)).toMatch(/^(--:--|00:00)$/);
      const play = indexIn(snap, /^\d+ push button Play\b/);
      const played = await session.click(`@${snap.id}:e${play}`);
      expect(played.delivery).not.toBe("not_delivered");
      expect(played.snapshot?.text ?? "").toMatch(/push button Pause the playback/);
      const moving = await snapshotUntil(
        (s) => /^\d\d:\d\d$/.test(elapsed(s) ?? "") && elapsed(s) !== "00:00",
        "the elapsed time moving",
      );
      const pause = indexIn(moving, /^\d+ push button Pause the playback/);
      const paused = await session.click(`@${moving.id}:e${pause}`);
      expect(paused.snapshot?.text ?? "").toMatch(/push button Play\b/);
      // Paused: the time stands still over a second and a half.
      const at = elapsed(await session.snapshot({ app: vlc.pid, screenshot: false }));
      await sleep(1500);
      expect(elapsed(await session.snapshot({ app: vlc.pid, screenshot: false }))).toBe(at);
    },
    TIMEOUT,
  );

  it(
    "plays through the CLI and reads the state back with find",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-vlc-cli-"));
      const cli = (args: string[]) => runCli([...args, "--session", dir], { AXSNAP_DAEMON: "off" });
      const shot = await cli(["snapshot", "--app", "vlc"]);
      expect(shot.code, shot.stderr).toBe(0);
      const id = /^snapshot (s[a-z0-9]{7})/m.exec(shot.stdout)![1];
      const play = indexIn(shot.stdout, /^\d+ push button Play\b/);
      const click = await cli(["click", `@${id}:e${play}`]);
      expect(click.code, click.stderr).toBe(0);
      expect(click.stdout).toMatch(/push button Pause the playback \[changed: name\]/);
      const found = await cli([
        "find",
        "--app",
        "vlc",
        "--role",
        "push button",
        "--name",
        "Pause the playback",
      ]);
      expect(found.code, found.stderr).toBe(0);
      expect(found.stdout).toMatch(/push button Pause the playback/);
      const time = await cli(["find", "--app", "vlc", "--text", "Elapsed time"]);
      expect(time.stdout).toMatch(/label \d\d:\d\d, Description: Elapsed time/);
    },
    TIMEOUT,
  );
});
