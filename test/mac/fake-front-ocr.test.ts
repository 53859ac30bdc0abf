/**
 * Issue 35, review 3: M7 (who is in front when input is refused), M8 (Vision's smallest text) and S2 (the
 * languages this Mac's Vision reads), on the fake macOS layer (test/native/macfake).
 *
 * M7: macOS 15 shows a system alert ("… is requesting to bypass the system private window picker and directly
 * access your screen and audio") to apps that capture with ScreenCaptureKit. If it takes the front, input is
 * refused; the refusal names what is in front (name, bundle id, pid) so an agent can tell a system alert from
 * the user's app. Which process owns that alert, and whether AX reports it as the focused application, only a
 * Mac can show: these worlds model both answers.
 *
 * M8 and S2: Vision runs only on a Mac; the request settings that need no Objective-C
 * (src-native/mac/vision_rules.h) are called here through the test-only addon.
 */
import { describe, expect, it } from "vitest";
import type { NativeBackend } from "../../lib/native.js";
import { macBackends } from "../support/mac-probes.js";
import {
  type AXElement,
  axWindow,
  type CGWindow,
  loadMacFake,
  type World,
  type WorldApp,
} from "../support/mac-world.js";

const backend = macBackends();

const PID = 500;
const FRAME = { x: 100, y: 80, w: 800, h: 600 };
const INPUT_WINDOW = { element: 0, pid: PID, title: "Doc", frame: FRAME, role: "AXWindow" };

function app(
  pid: number,
  name: string,
  rootId: number,
  windows: AXElement[],
  extra: Partial<WorldApp> = {},
): WorldApp {
  return {
    pid,
    name,
    root: {
      id: rootId,
      attrs: {
        AXRole: "AXApplication",
        AXTitle: name,
        AXWindows: windows.map((w) => ({ ref: w.id })),
        AXChildren: windows,
      },
    },
    ...extra,
  };
}

/**
 * The editor (pid 500), which ignores activation unless `comes` says it comes forward, and `others` around it;
 * `focusedPid` as AX answers it.
 */
function world(others: WorldApp[], windows: CGWindow[], focusedPid?: number, comes = false): World {
  const doc = axWindow(10, "Doc", [], { AXMain: true, AXParent: { ref: 1 } });
  const editor = app(PID, "Editor", 1, [doc], {
    bundleId: "com.example.editor",
    ...(comes ? {} : { recoverOn: "never" }),
  });
  return {
    ...(focusedPid === undefined ? {} : { focusedPid }),
    apps: [editor, ...others],
    windows: [...windows, { number: 10, pid: PID, bounds: FRAME, name: "Doc" }],
  };
}

/** A background agent of the system (no Dock icon), as an alert's owner would be; its window in front. */
const alertOwner = (pid = 900) =>
  app(pid, "UserNotificationCenter", 2, [], { bundleId: "com.apple.UserNotificationCenter", regular: false });
const alertWindow = (pid = 900, layer = 8): CGWindow => ({
  number: 30,
  pid,
  layer,
  bounds: { x: 400, y: 200, w: 260, h: 300 },
});
/** The window server's own, always frontmost: the menu bar (layer 24) and the Dock (layer 20). */
const chrome = (): CGWindow[] => [
  { number: 1, pid: 60, layer: 24, bounds: { x: 0, y: 0, w: 1440, h: 24 }, name: "Menubar" },
  { number: 2, pid: 61, layer: 20, bounds: { x: 0, y: 850, w: 1440, h: 50 }, name: "Dock" },
];
const chromeApps = () => [
  app(60, "Window Server", 3, [], { regular: false }),
  app(61, "Dock", 4, [], { bundleId: "com.apple.dock", regular: false }),
];

const events = (b: NativeBackend) => b.fakeLog().filter((l) => l.startsWith("event"));

describe("M7: a refusal names what is in front", () => {
  it("AX's focused app with its bundle id; one without a Dock icon may be a system alert, and the hint says so", async () => {
    const b = backend(world([alertOwner(), ...chromeApps()], [...chrome(), alertWindow()], 900));
    await expect(b.typeText(INPUT_WINDOW, "hello", 5000)).rejects.toMatchObject({
      nativeCode: "INPUT_FAILED",
      message: expect.stringMatching(
        /UserNotificationCenter \(com\.apple\.UserNotificationCenter, pid 900, no Dock icon\) is in front, so nothing was sent/,
      ),
      nativeHint: expect.stringMatching(/system alert.*Screen Recording.*docs\/macos\.md/),
    });
    expect(events(b)).toEqual([]);
  });

  it("AX names no focused app: the owner of the window server's frontmost app-level window, not the Dock or the menu bar", async () => {
    const b = backend(world([alertOwner(), ...chromeApps()], [...chrome(), alertWindow()]));
    await expect(b.keys(INPUT_WINDOW, "cmd+a", 5000)).rejects.toMatchObject({
      nativeCode: "INPUT_FAILED",
      message: expect.stringMatching(
        /AX names no app in front; the frontmost application window is UserNotificationCenter's \(com\.apple\.UserNotificationCenter, pid 900, no Dock icon\), so nothing was sent/,
      ),
      nativeHint: expect.stringMatching(/system alert/),
    });
    expect(events(b)).toEqual([]);
  });

  it("a user's app in front is named as such, with no word of a system alert", async () => {
    const terminal = app(700, "Terminal", 2, [], { bundleId: "com.apple.Terminal" });
    const b = backend(
      world(
        [terminal, ...chromeApps()],
        [...chrome(), { number: 31, pid: 700, bounds: FRAME, name: "zsh" }],
        700,
      ),
    );
    const err = await b.typeText(INPUT_WINDOW, "rm -rf", 5000).catch((e: unknown) => e);
    expect(err).toMatchObject({
      nativeCode: "INPUT_FAILED",
      message: expect.stringMatching(
        /Terminal \(com\.apple\.Terminal, pid 700\) is in front, so nothing was sent/,
      ),
    });
    expect(String((err as { nativeHint?: string }).nativeHint ?? "")).not.toMatch(/system alert/);
    expect(events(b)).toEqual([]);
  });

  it("a window owner no app list knows is named as the window server names it", async () => {
    // A process that started after NSWorkspace's list was read and owns no ordinary window (layer 0).
    const stray: CGWindow = { ...alertWindow(950), ownerName: "SomeAgent (Beta)" };
    const b = backend(world(chromeApps(), [...chrome(), stray]));
    await expect(b.keys(INPUT_WINDOW, "enter", 5000)).rejects.toMatchObject({
      nativeCode: "INPUT_FAILED",
      message: expect.stringMatching(
        /the frontmost application window is SomeAgent \(Beta\)'s \(pid 950\), so nothing was sent/,
      ),
    });
  });

  it("a window of the target itself in front names nobody; a transparent window in front is passed over", async () => {
    const glass: CGWindow = { number: 32, pid: 700, layer: 3, alpha: 0, bounds: FRAME };
    const terminal = app(700, "Terminal", 2, [], { bundleId: "com.apple.Terminal" });
    const b = backend(world([terminal, ...chromeApps()], [...chrome(), glass]));
    await expect(b.keys(INPUT_WINDOW, "enter", 5000)).rejects.toMatchObject({
      message: expect.stringMatching(
        /AX names no app in front and the window server shows no other app's window in front/,
      ),
    });
  });

  it("neither AX nor the window server names one: said so, nothing sent", async () => {
    const b = backend(world(chromeApps(), chrome()));
    // The editor's own window is the only app-level window: it is not "in front" of itself.
    await expect(b.keys(INPUT_WINDOW, "enter", 5000)).rejects.toMatchObject({
      nativeCode: "INPUT_FAILED",
      message: expect.stringMatching(
        /AX names no app in front and the window server shows no other app's window in front, so nothing was sent/,
      ),
    });
    expect(events(b)).toEqual([]);
  });

  it("typing stops when an app without a Dock icon takes the front mid-way, and names it", async () => {
    const editorInFront = world([alertOwner(), ...chromeApps()], [...chrome(), alertWindow()], PID, true);
    editorInFront.focusMoves = { afterEvents: 1, toPid: 900 };
    const b = backend(editorInFront);
    const long = "x".repeat(200);
    await expect(b.typeText(INPUT_WINDOW, long, 5000)).rejects.toMatchObject({
      nativeCode: "DELIVERY_UNCERTAIN",
      message: expect.stringMatching(
        /then UserNotificationCenter \(com\.apple\.UserNotificationCenter, pid 900, no Dock icon\) came to the front; the rest was not sent/,
      ),
    });
  });
});

describe("M8: the smallest text a Vision request reads", () => {
  const { visionMinimumTextHeight: minHeight } = loadMacFake();
  const DEFAULT = 1 / 32; // Apple: VNRecognizeTextRequest.minimumTextHeight's default

  it("a whole 600-pt window at 2x keeps 12-px (6-pt) text, where the default dropped text under 37.5 px", () => {
    expect(minHeight(1200, 2) * 1200).toBeCloseTo(12, 6);
    expect(DEFAULT * 1200).toBe(37.5);
    // 13-pt UI text is about 26 px tall at 2x: under the default floor, over the new one.
    expect(minHeight(1200, 2) * 1200).toBeLessThan(26);
    expect(minHeight(600, 1) * 600).toBeCloseTo(6, 6);
    expect(minHeight(4000, 2) * 4000).toBeCloseTo(12, 6);
  });

  it("never above Vision's default: a one-line crop reads as much as it did without the setting", () => {
    expect(minHeight(40, 2)).toBe(DEFAULT);
    for (const h of [1, 10, 100, 383, 384, 385, 1000, 5000, 20000])
      for (const s of [1, 1.5, 2, 3]) {
        const v = minHeight(h, s);
        expect(v).toBeGreaterThan(0);
        expect(v).toBeLessThanOrEqual(DEFAULT);
      }
  });

  it("an empty region keeps the default; a scale that is no positive number counts as 1", () => {
    expect(minHeight(0, 2)).toBe(DEFAULT);
    expect(minHeight(-5, 2)).toBe(DEFAULT);
    for (const bad of [0, -2, Number.NaN, Number.POSITIVE_INFINITY])
      expect(minHeight(1200, bad)).toBe(minHeight(1200, 1));
  });
});

describe("S2: the languages this Mac's Vision reads are asked before anything is captured", () => {
  const { visionLanguages } = loadMacFake();
  // VNRecognizeTextRequest revision 2, accurate level (macOS 12), as Apple's forum answer lists it.
  const MACOS_12 = ["en-US", "fr-FR", "it-IT", "de-DE", "es-ES", "pt-BR", "zh-Hans", "zh-Hant"];

  it("a language the revision does not list is OCR_UNAVAILABLE naming what it reads, not a failure after capture", () => {
    const r = visionLanguages(["eng", "jpn"], MACOS_12);
    expect(r.code).toBe("OCR_UNAVAILABLE");
    expect(r.message).toBe(
      `this Mac's Vision does not read the language "jpn" (ja-JP): its text recognition lists only ${MACOS_12.join(", ")}`,
    );
    expect(r.hint).toBe(
      "pass ocrLanguages this Mac's Vision reads: eng, chi_sim, chi_tra, fra, deu, spa, ita, por (a later macOS reads more languages)",
    );
    for (const code of ["kor", "rus", "ukr"])
      expect(visionLanguages([code], MACOS_12).code).toBe("OCR_UNAVAILABLE");
  });

  it("the languages it lists go to Vision in the order asked; case and '_' do not matter", () => {
    expect(visionLanguages(["chi_sim", "eng"], MACOS_12)).toMatchObject({
      code: "NONE",
      languages: ["zh-Hans", "en-US"],
    });
    expect(visionLanguages(["eng"], ["EN_us"])).toMatchObject({ code: "NONE", languages: ["en-US"] });
    // Unasked (Vision gave no list): every mapped language passes, as before.
    expect(visionLanguages(["jpn", "ukr"], null)).toMatchObject({
      code: "NONE",
      languages: ["ja-JP", "uk-UA"],
    });
  });

  it("a code no table maps is refused whatever the list; an empty list leaves only the screenshot", () => {
    const odd = visionLanguages(['eng"\nfra', "eng"], null);
    expect(odd.code).toBe("OCR_UNAVAILABLE");
    expect(odd.message).toBe('Vision does not read the language "eng"\nfra"');
    expect(odd.hint).toBe(
      "pass ocrLanguages Vision reads: eng, chi_sim, chi_tra, fra, deu, spa, ita, por, jpn, kor, rus, ukr",
    );
    expect(odd.languages).toEqual([]);
    const none = visionLanguages(["eng"], []);
    expect(none.message).toMatch(/lists no languages$/);
    expect(none.hint).toMatch(
      /reads none of the languages ocrLanguages can name; take the snapshot with ocr: "auto" or false/,
    );
  });
});
