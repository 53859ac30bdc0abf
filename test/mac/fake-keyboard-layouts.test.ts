/**
 * M5 (third macOS review): pressKey's character keys are the keys that type the character on the
 * current keyboard layout, not ANSI (US) key codes. On French AZERTY the ANSI "a" key (code 0) types
 * "q", so cmd+a posted as code 0 quits the app, and cmd+z as code 6 (the W key there) closes the
 * window. The fake's layouts (world.keyboardLayout, test/native/macfake/fake_mac_system.cc) answer
 * what UCKeyTranslate gives for each key code; the posted CGEvents carry the key codes.
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { macBackends } from "../support/mac-probes.js";
import { type AXElement, axWindow, macBackend, type World } from "../support/mac-world.js";

const backend = macBackends();

const PID = 500;
const FRAME = { x: 100, y: 80, w: 800, h: 600 };
const INPUT_WINDOW = { element: 0, pid: PID, title: "Doc", frame: FRAME, role: "AXWindow" };

/** One app in front with one key window, "Doc", and the keyboard layout given. */
function world(keyboardLayout: string): World {
  // A string, not World's union: the fake's refusal of an unknown name is tested too.
  const field: AXElement = {
    id: 21,
    attrs: { AXRole: "AXTextField", AXValue: "", AXPosition: { x: 120, y: 120 }, AXSize: { w: 200, h: 24 } },
  };
  const doc = axWindow(10, "Doc", [field], { AXMain: true, AXFocused: true }, FRAME);
  const w = {
    focusedPid: PID,
    keyboardLayout,
    apps: [
      {
        pid: PID,
        name: "Editor",
        bundleId: "com.example.editor",
        active: true,
        root: {
          id: 1,
          attrs: {
            AXRole: "AXApplication",
            AXTitle: "Editor",
            AXWindows: [{ ref: 10 }],
            AXFocusedWindow: { ref: 10 },
            AXMainWindow: { ref: 10 },
            AXChildren: [doc],
          },
        },
      },
    ],
    windows: [{ number: 10, pid: PID, bounds: FRAME, name: "Doc" }],
  };
  return w as World;
}

const events = (b: NativeBackend) => b.fakeLog().filter((l) => l.startsWith("event"));
/** The key codes of the key-down events posted, modifier keys included. */
const downs = (b: NativeBackend) =>
  events(b)
    .filter((l) => l.startsWith("event keyDown"))
    .map((l) => Number(/code=(\d+)/.exec(l)![1]));

const CMD = 55;
const SHIFT = 56;

// The physical key (Carbon kVK_ code, named by its ANSI position) that types each letter on each
// layout, from the layouts' public charts: AZERTY swaps A/Q and Z/W, QWERTZ swaps Y/Z, Dvorak moves
// nearly every letter, "Dvorak - QWERTY ⌘" is QWERTY under ⌘ only.
const ANSI = { a: 0, q: 12, w: 13, z: 6, y: 16, t: 17, comma: 43, slash: 44, x: 7 };
const layouts: {
  name: string;
  command: { a: number; z: number; w: number; q: number };
  plain: { a: number; y: number };
}[] = [
  { name: "us", command: { a: ANSI.a, z: ANSI.z, w: ANSI.w, q: ANSI.q }, plain: { a: ANSI.a, y: ANSI.y } },
  {
    name: "french",
    command: { a: ANSI.q, z: ANSI.w, w: ANSI.z, q: ANSI.a },
    plain: { a: ANSI.q, y: ANSI.y },
  },
  {
    name: "german",
    command: { a: ANSI.a, z: ANSI.y, w: ANSI.w, q: ANSI.q },
    plain: { a: ANSI.a, y: ANSI.z },
  },
  {
    name: "dvorak",
    command: { a: ANSI.a, z: ANSI.slash, w: ANSI.comma, q: ANSI.x },
    plain: { a: ANSI.a, y: ANSI.t },
  },
  {
    name: "dvorak-qwerty-cmd",
    command: { a: ANSI.a, z: ANSI.z, w: ANSI.w, q: ANSI.q },
    plain: { a: ANSI.a, y: ANSI.t },
  },
];

describe("M5: character keys on the current keyboard layout", () => {
  for (const layout of layouts) {
    it(`${layout.name}: cmd+a, cmd+z, cmd+w, cmd+q and a bare a, y go to the keys that type those letters`, async () => {
      const b = backend(world(layout.name));
      for (const letter of ["a", "z", "w", "q"] as const) await b.keys(INPUT_WINDOW, `cmd+${letter}`, 5000);
      await b.keys(INPUT_WINDOW, "a", 5000);
      await b.keys(INPUT_WINDOW, "y", 5000);
      const c = layout.command;
      expect(downs(b)).toEqual([CMD, c.a, CMD, c.z, CMD, c.w, CMD, c.q, layout.plain.a, layout.plain.y]);
    });
  }

  it("french: the full chord for cmd+z is the W-position key between the command key's down and up", async () => {
    const b = backend(world("french"));
    await b.keys(INPUT_WINDOW, "cmd+z", 5000);
    expect(events(b)).toEqual([
      "event keyDown code=55 flags=0x100000",
      "event keyDown code=13 flags=0x100000",
      "event keyUp code=13 flags=0x100000",
      "event keyUp code=55 flags=0x0",
    ]);
  });

  it("french: a digit is shift + its number-row key (AZERTY types & there unshifted); an upper-case letter too", async () => {
    const b = backend(world("french"));
    await b.keys(INPUT_WINDOW, "1", 5000);
    await b.keys(INPUT_WINDOW, "A", 5000);
    expect(downs(b)).toEqual([SHIFT, 18, SHIFT, ANSI.q]);
  });

  it("us: punctuation typed with shift (+, !) is shift + its key, never the keypad's", async () => {
    const b = backend(world("us"));
    await b.keys(INPUT_WINDOW, "cmd++", 5000);
    await b.keys(INPUT_WINDOW, "!", 5000);
    expect(downs(b)).toEqual([CMD, SHIFT, 24, SHIFT, 18]);
  });

  it("russian: ⌘ and ⌃ shortcuts take the Latin letter's ANSI key (the Latin fallback)", async () => {
    const b = backend(world("russian"));
    for (const combo of ["cmd+a", "cmd+z", "cmd+w", "cmd+q", "ctrl+c"])
      await b.keys(INPUT_WINDOW, combo, 5000);
    expect(downs(b)).toEqual([CMD, ANSI.a, CMD, ANSI.z, CMD, ANSI.w, CMD, ANSI.q, 59, 8]);
  });

  it("russian: a bare Latin letter no key types is refused, nothing sent and the window left alone", async () => {
    const b = backend(world("russian"));
    for (const key of ["a", "y", "shift+a", "alt+a"]) {
      await expect(b.keys(INPUT_WINDOW, key, 5000), key).rejects.toMatchObject({
        nativeCode: "INVALID_ARGUMENT",
        message: expect.stringMatching(
          /no key of the keyboard layout com\.apple\.keylayout\.RussianWin types "[ay]" \(the US key for it types "[фн]" here\); nothing was sent/,
        ),
        nativeHint: expect.stringMatching(/typeText/),
      });
    }
    expect(
      b.fakeLog().filter((l) => l.startsWith("event") || l.startsWith("set") || l.startsWith("perform")),
    ).toEqual([]);
    // Digits are on the Russian layout's number row: they still go.
    await b.keys(INPUT_WINDOW, "cmd+1", 5000);
    expect(downs(b)).toEqual([CMD, 18]);
  });

  it("a Latin layout without the letter under ⌘ is refused rather than sent to the ANSI key (another letter there)", async () => {
    // German types "[" only with Option; the US key for it types "ü" there.
    const b = backend(world("german"));
    await expect(b.keys(INPUT_WINDOW, "cmd+[", 5000)).rejects.toMatchObject({
      nativeCode: "INVALID_ARGUMENT",
      message: expect.stringMatching(/types "\[" \(the US key for it types "ü" here\)/),
    });
    expect(events(b)).toEqual([]);
  });

  it("no layout data (an input source without one): character keys are refused, named keys still go", async () => {
    const b = backend(world("none"));
    for (const key of ["cmd+a", "cmd+z", "a"]) {
      await expect(b.keys(INPUT_WINDOW, key, 5000), key).rejects.toMatchObject({
        nativeCode: "INPUT_FAILED",
        message: expect.stringMatching(
          /keyboard layout is unknown \(.*no keyboard layout data\).*nothing was sent/,
        ),
        nativeHint: expect.stringMatching(/named keys/),
      });
    }
    expect(events(b)).toEqual([]);
    await b.keys(INPUT_WINDOW, "cmd+left", 5000);
    await b.keys(INPUT_WINDOW, "enter", 5000);
    expect(downs(b)).toEqual([CMD, 123, 36]);
  });

  it("the layout is read on the main (JavaScript) thread, never on the worker", async () => {
    const b = backend(world("french"));
    await b.keys(INPUT_WINDOW, "cmd+a", 5000);
    expect(b.fakeLog()).not.toContain("system keyboard layout off the main thread");
    expect(downs(b)).toEqual([CMD, ANSI.q]);
  });

  it("from a worker_threads Worker (not the main thread): character keys are refused, nothing sent; named keys go", async () => {
    // The layout is read on the calling JavaScript thread, which here is not the process's main
    // thread: Text Input Sources would assert there, so the layout is unknown.
    const addonPath = join(
      import.meta.dirname,
      "..",
      "native",
      "macfake",
      "build",
      "Release",
      "axsnap_macfake.node",
    );
    const code = `
      const { parentPort, workerData } = require("node:worker_threads");
      const addon = require(workerData.addonPath);
      (async () => {
        const b = new addon.NativeBackend("mac-fake", workerData.world);
        const out = {};
        try { await b.keys(workerData.window, "cmd+z", 5000); out.cmd = "sent"; }
        catch (e) { out.cmd = { nativeCode: e.nativeCode, message: e.message }; }
        await b.keys(workerData.window, "enter", 5000);
        out.log = b.fakeLog();
        await b.close();
        parentPort.postMessage(out);
      })().catch((e) => parentPort.postMessage({ error: String(e) }));`;
    const worker = new Worker(code, {
      eval: true,
      workerData: { addonPath, world: world("french"), window: INPUT_WINDOW },
    });
    const out = await new Promise<{
      cmd: unknown;
      log: string[];
      error?: string;
    }>((resolve, reject) => {
      worker.once("message", resolve);
      worker.once("error", reject);
    });
    await worker.terminate();
    expect(out.error).toBeUndefined();
    expect(out.cmd).toMatchObject({
      nativeCode: "INPUT_FAILED",
      message: expect.stringMatching(/only be read on the main thread.*nothing was sent/),
    });
    expect(out.log).toContain("system keyboard layout off the main thread");
    expect(out.log.filter((l) => l.startsWith("event"))).toEqual([
      "event keyDown code=36 flags=0x0",
      "event keyUp code=36 flags=0x0",
    ]);
  });

  it("an unknown layout name in a world is refused by the fake", () => {
    expect(() => macBackend(world("klingon"))).toThrow(/world\.keyboardLayout.*"french"/);
  });
});
