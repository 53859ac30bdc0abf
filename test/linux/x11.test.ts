/**
 * The X11 half of the Linux backend under faults (issue 9): input that must
 * reach only the observed app's window, X calls bounded by the call's
 * deadline against a silent or stopped X server, reconnection after the X
 * server comes back, and long typing cut into chunks by its deadline.
 * Drives the native backend directly (lib/native.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RawNode } from "../../lib/model/model.js";
import { loadNative, type NativeBackend, type NativeSnapshot, type NativeWindow } from "../../lib/native.js";
import { type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { processState } from "../support/proc-state.js";
import { sleep } from "../support/sleep.js";
import { restartXvfb, xvfbPid } from "../support/x11.js";

let desktop: Desktop;
let backend: NativeBackend;

beforeAll(async () => {
  desktop = await useDesktop();
  backend = new (loadNative().NativeBackend)("linux");
  await backend.connect();
}, 60_000);

afterAll(async () => {
  await backend?.close();
  await desktop?.stop();
});

async function observe(pid: number, screenshot = true, deadlineMs = 8000): Promise<NativeSnapshot> {
  const s = await backend.snapshot({ app: pid, maxNodes: 2000, maxDepth: 64, deadlineMs, screenshot });
  await backend.release(s.handles);
  return s;
}

/** The settled outcome of a native call and how long it took. */
async function settle<T>(call: Promise<T>): Promise<{ ms: number; value?: T; error?: NativeFailure }> {
  const t0 = performance.now();
  try {
    const value = await call;
    return { ms: performance.now() - t0, value };
  } catch (e) {
    return { ms: performance.now() - t0, error: e as NativeFailure };
  }
}

interface NativeFailure extends Error {
  nativeCode?: string;
  typed?: number;
}

function nodes(root: RawNode): RawNode[] {
  const out: RawNode[] = [root];
  for (const c of root.children ?? []) out.push(...nodes(c));
  return out;
}

/** The first editable, focusable, showing text entry of a snapshot. */
function firstEntry(s: NativeSnapshot): RawNode {
  const found = nodes(s.raw.root).find(
    (n) =>
      n.role === "text" &&
      n.states?.editable === true &&
      n.states.focusable === true &&
      n.states.multiline !== true &&
      n.states.visible !== false &&
      (n.frame?.w ?? 0) > 0,
  );
  if (!found) throw new Error("no entry in the snapshot");
  return found;
}

/** The pids of a process's children (of its main thread). */
function childrenOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  return text === "" ? [] : text.split(/\s+/).map(Number);
}

const centre = (w: NativeWindow) => ({ x: w.frame.x + w.frame.w / 2, y: w.frame.y + w.frame.h / 2 });

/** Typing, keys and a click at the window's centre, each refused as `code` with a message matching `says`. */
async function refusedInputs(window: NativeWindow, code: string, says: RegExp) {
  const p = centre(window);
  const results = [
    await settle(backend.typeText(window, "zqxjk", 3000)),
    await settle(backend.keys(window, "ctrl+a", 3000)),
    await settle(backend.pointer(window, { kind: "click", x: p.x, y: p.y }, 3000)),
  ];
  for (const r of results) {
    expect(r.error?.nativeCode, String(r.error?.message)).toBe(code);
    expect(r.error?.message).toMatch(says);
  }
  return results;
}

describe("input reaches only the observed app's window (item 3)", () => {
  it("refuses pointer, keys and typing with APP_NOT_FOUND once the observed app is gone, and the app now covering its frame receives nothing", async () => {
    const b = await gtkWidgetFactory(desktop);
    const a = await startApp(desktop, "gtk3-demo", [], {});
    try {
      // B's entry has focus, so anything typed "at" B's window would land in it.
      const snapB = await backend.snapshot({
        app: b.pid,
        maxNodes: 2000,
        maxDepth: 64,
        deadlineMs: 8000,
        screenshot: false,
      });
      const entry = firstEntry(snapB);
      await backend.focus(entry.handle as number, 3000);
      await backend.release(snapB.handles);
      // Observing A (with a screenshot) raises A's window over B's.
      const snapA = await observe(a.pid, true);
      expect(snapA.screenshot).toBeDefined();
      const windowA = snapA.window;
      process.kill(a.pid, "SIGKILL");
      await a.stop();

      const marker = "zqxjk";
      const p = centre(windowA);
      const results = [
        await settle(backend.typeText(windowA, marker, 3000)),
        await settle(backend.keys(windowA, "ctrl+a", 3000)),
        await settle(backend.pointer(windowA, { kind: "click", x: p.x, y: p.y }, 3000)),
        await settle(
          backend.pointer(windowA, { kind: "drag", x: p.x, y: p.y, toX: p.x + 50, toY: p.y }, 3000),
        ),
      ];
      for (const r of results) {
        expect(r.error?.nativeCode, String(r.error?.message)).toBe("APP_NOT_FOUND");
        expect(r.error?.message).toMatch(/nothing was sent/);
      }
      expect(results[0]!.error?.typed).toBe(0);
      const after = await observe(b.pid, false);
      expect(JSON.stringify(after.raw)).not.toContain(marker);
    } finally {
      await a.stop();
      await b.stop();
    }
  }, 60_000);

  it("refuses with APP_NOT_FOUND once the app's process has exited, while the X server still shows its window", async () => {
    // orphan-window.py forks a child that keeps the X connection: the dead parent's window stays listed and
    // viewable under its pid, as it does for a moment after any app dies (the X server drops a dead client's
    // windows only once it notices the closed connection).
    const app = await startApp(desktop, "/usr/bin/python3", ["test/apps/orphan-window.py"], {
      name: "orphan-window.py",
      windowName: "axsnap orphan window",
    });
    try {
      const snap = await observe(app.pid, false);
      const window = snap.window;
      await sleep(600); // the keeper child has forked
      process.kill(app.pid, "SIGKILL");
      for (let i = 0; i < 50 && existsSync(`/proc/${app.pid}`); i++) await sleep(20);
      expect(existsSync(`/proc/${app.pid}`)).toBe(false);
      await refusedInputs(window, "APP_NOT_FOUND", /has exited.*nothing was sent/);
    } finally {
      await app.stop();
    }
  }, 60_000);

  it.each([
    {
      kind: "an accessible app",
      start: () =>
        startApp(desktop, "/usr/bin/python3", ["test/apps/orphan-window.py", "--unreaped"], {
          name: "orphan-window.py",
          windowName: "axsnap orphan window",
        }),
    },
    {
      kind: "an app with no accessibility tree",
      start: () =>
        startApp(
          desktop,
          "/usr/bin/env",
          ["NO_AT_BRIDGE=1", "/usr/bin/python3", "test/apps/orphan-window.py", "--unreaped"],
          {
            windowClass: "orphan-window.py",
          },
        ),
    },
  ])(
    "refuses with APP_NOT_FOUND once $kind is killed though its exit status is not yet collected (a zombie) and the X server still shows its window",
    async ({ start }) => {
      // The window's process dies but stays in the process table until its parent reaps it, as any killed app does
      // for a moment (longer on a loaded machine); its window stays listed, viewable, under its pid.
      const app = await start();
      try {
        const drawer = childrenOf(app.pid)[0]!;
        // The window is found before it is mapped: the X11 listing shows it once it is viewable.
        for (let i = 0; i < 100 && !(await backend.listApps(3000)).some((a) => a.pid === drawer); i++)
          await sleep(20);
        const snap = await observe(drawer, true);
        const window = snap.window;
        expect(window.pid).toBe(drawer);
        for (let i = 0; i < 100 && childrenOf(drawer).length === 0; i++) await sleep(20); // the keeper has forked
        expect(childrenOf(drawer).length).toBe(1);
        process.kill(drawer, "SIGKILL");
        for (let i = 0; i < 100 && processState(drawer) !== "Z"; i++) await sleep(20);
        expect(processState(drawer)).toBe("Z");
        const results = await refusedInputs(window, "APP_NOT_FOUND", /has exited.*nothing was sent/);
        expect(results[0]!.error?.typed).toBe(0);
      } finally {
        await app.stop();
      }
    },
    60_000,
  );

  it("refuses with APP_NOT_FOUND when the app has exited and its pid now names another process, while the X server still shows its window under that pid", async () => {
    const app = await startApp(desktop, "/usr/bin/python3", ["test/apps/orphan-window.py", "--reaped"], {
      name: "orphan-window.py",
      windowName: "axsnap orphan window",
    });
    let impostor: ChildProcess | undefined;
    try {
      const drawer = childrenOf(app.pid)[0]!;
      const window = (await observe(drawer, true)).window; // the capture matches the window: its identity is kept
      expect(window.pid).toBe(drawer);
      for (let i = 0; i < 100 && childrenOf(drawer).length === 0; i++) await sleep(20); // the keeper has forked
      expect(childrenOf(drawer).length).toBe(1);
      process.kill(drawer, "SIGKILL");
      for (let i = 0; i < 50 && existsSync(`/proc/${drawer}`); i++) await sleep(20);
      expect(existsSync(`/proc/${drawer}`)).toBe(false);
      // The kernel gives the next process the pid after ns_last_pid; another process may take it first.
      for (let attempt = 0; attempt < 5 && impostor?.pid !== drawer; attempt++) {
        impostor?.kill("SIGKILL");
        writeFileSync("/proc/sys/kernel/ns_last_pid", String(drawer - 1));
        impostor = spawn("/usr/bin/sleep", ["60"], { stdio: "ignore" });
      }
      expect(impostor?.pid).toBe(drawer);
      await refusedInputs(
        window,
        "APP_NOT_FOUND",
        /has exited and its pid is another process's now.*nothing was sent/,
      );
    } finally {
      impostor?.kill("SIGKILL");
      await app.stop();
    }
  }, 60_000);

  it("refuses with WINDOW_NOT_FOUND when the pid lives but the observed window is gone, even where another window of that pid covers its frame", async () => {
    const app = await gtkWidgetFactory(desktop);
    try {
      const snap = await backend.snapshot({
        app: app.pid,
        maxNodes: 2000,
        maxDepth: 64,
        deadlineMs: 8000,
        screenshot: true,
      });
      await backend.focus(firstEntry(snap).handle as number, 3000);
      await backend.release(snap.handles);
      // An observed window of this pid that no longer exists (another element, another title), at the frame of the
      // app's main window: that main window is not the observed window, nor its dialog or popup.
      const gone: NativeWindow = { ...snap.window, element: 987_654_321, title: "A window that was closed" };
      const marker = "wvnmq";
      const p = centre(gone);
      const results = [
        await settle(backend.typeText(gone, marker, 3000)),
        await settle(backend.keys(gone, "ctrl+a", 3000)),
        await settle(backend.pointer(gone, { kind: "click", x: p.x, y: p.y }, 3000)),
      ];
      for (const r of results) {
        expect(r.error?.nativeCode, String(r.error?.message)).toBe("WINDOW_NOT_FOUND");
        expect(r.error?.message).toMatch(/nothing was sent/);
      }
      const after = await observe(app.pid, false);
      expect(JSON.stringify(after.raw)).not.toContain(marker);
      // The observed window itself still takes input.
      await expect(backend.typeText(snap.window, "ok", 3000)).resolves.toEqual({ typed: 2 });
    } finally {
      await app.stop();
    }
  }, 60_000);
});

describe("typing in chunks (item 18)", () => {
  it("cuts a long CJK string at the deadline, reports how much was typed, and does not starve a snapshot queued behind it", async () => {
    const app = await gtkWidgetFactory(desktop);
    try {
      const snap = await backend.snapshot({
        app: app.pid,
        maxNodes: 2000,
        maxDepth: 64,
        deadlineMs: 8000,
        screenshot: false,
      });
      await backend.focus(firstEntry(snap).handle as number, 3000);
      await backend.release(snap.handles);
      // 650 distinct ideographs: none has a keycode, so every one is mapped onto a spare keycode while it is typed.
      const text = Array.from({ length: 650 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join("");
      const typing = settle(backend.typeText(snap.window, text, 1000));
      await sleep(50);
      const queued = settle(observe(app.pid, false, 3000));
      const typed = await typing;
      const snapshotAfter = await queued;
      console.log(
        `typing 650 CJK characters with a 1000 ms deadline: settled in ${Math.round(typed.ms)} ms, typed ${typed.error?.typed}; queued snapshot settled in ${Math.round(snapshotAfter.ms)} ms`,
      );
      expect(typed.error, "the deadline cuts the typing").toBeDefined();
      expect(typed.error!.typed).toBeGreaterThan(0);
      expect(typed.error!.typed).toBeLessThan(text.length);
      expect(typed.error!.nativeCode).toBe("DELIVERY_UNCERTAIN");
      expect(typed.error!.message).toContain(`${typed.error!.typed} of ${text.length}`);
      expect(typed.ms).toBeLessThan(1000 + 1000);
      expect(snapshotAfter.error).toBeUndefined();
      expect(snapshotAfter.ms).toBeLessThan(1000 + 3000 + 1000);
    } finally {
      await app.stop();
    }
  }, 60_000);
});

describe("X calls bounded by the deadline (item 17) and reconnection (item 19)", () => {
  it("settles every call against an X server that accepts and never answers, works again on the real display, and the process can exit", async () => {
    const app = await gtkWidgetFactory(desktop);
    try {
      const child = spawn("node", ["--import", "tsx", "test/support/x11-silent-child.ts"], {
        env: {
          ...process.env,
          AXSNAP_TEST_APP_PID: String(app.pid),
          AXSNAP_TEST_REAL_DISPLAY: desktop.display,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      const t0 = performance.now();
      const exited = await new Promise<number | string | null>((resolve) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve("killed after 40 s");
        }, 40_000);
        child.on("exit", (code, signal) => {
          clearTimeout(timer);
          resolve(code ?? signal);
        });
      });
      console.log(
        `silent X server child (${Math.round(performance.now() - t0)} ms):\n${out}${err.slice(-2000)}`,
      );
      const lines = out
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map(
          (l) =>
            JSON.parse(l) as {
              name: string;
              ms: number;
              ok: boolean;
              code?: string;
              message?: string;
              screenshot?: boolean;
            },
        );
      const by = (name: string) => lines.find((l) => l.name === name);
      const snap = by("snapshot-silent");
      expect(snap?.ms).toBeLessThan(1500 + 1000);
      expect(snap?.ok && snap.screenshot).toBe(false);
      for (const name of ["click-silent", "keys-silent", "type-silent"]) {
        const r = by(name);
        expect(r?.ms, name).toBeLessThan(1000 + 1000);
        expect(r?.ok, name).toBe(false);
        expect(["TIMEOUT", "INPUT_FAILED"], `${name}: ${r?.message}`).toContain(r?.code);
        expect(r?.message).toMatch(/nothing was sent/);
      }
      expect(by("snapshot-real")).toMatchObject({ ok: true, screenshot: true });
      expect(by("exit")).toBeDefined();
      expect(exited).toBe(0);
      expect(performance.now() - t0).toBeLessThan(30_000);
    } finally {
      await app.stop();
    }
  }, 60_000);

  it("settles calls by their deadline while Xvfb is stopped, and has screenshots again after it continues", async () => {
    const app = await gtkWidgetFactory(desktop);
    const xvfb = xvfbPid(desktop);
    try {
      const before = await observe(app.pid, true);
      expect(before.screenshot).toBeDefined();
      const p = centre(before.window);
      process.kill(xvfb, "SIGSTOP");
      // Today's failure mode is a hang until the server continues: continue it anyway after 15 s.
      const safety = setTimeout(() => process.kill(xvfb, "SIGCONT"), 15_000);
      try {
        const snap = await settle(observe(app.pid, true, 1500));
        const click = await settle(backend.pointer(before.window, { kind: "click", x: p.x, y: p.y }, 1000));
        const keys = await settle(backend.keys(before.window, "Escape", 1000));
        console.log(
          `Xvfb stopped: snapshot ${Math.round(snap.ms)} ms (${snap.error ? snap.error.nativeCode : snap.value?.screenshot ? "screenshot" : "no screenshot"}), click ${Math.round(click.ms)} ms (${click.error?.nativeCode}: ${click.error?.message}), keys ${Math.round(keys.ms)} ms (${keys.error?.nativeCode})`,
        );
        expect(snap.ms).toBeLessThan(1500 + 1000);
        if (snap.value) expect(snap.value.screenshot).toBeUndefined();
        for (const r of [click, keys]) {
          expect(r.ms).toBeLessThan(1000 + 1000);
          expect(["TIMEOUT", "INPUT_FAILED", "DELIVERY_UNCERTAIN"]).toContain(r.error?.nativeCode);
        }
      } finally {
        clearTimeout(safety);
        process.kill(xvfb, "SIGCONT");
      }
      const after = await observe(app.pid, true);
      expect(after.screenshot, "a screenshot again once the X server answers").toBeDefined();
    } finally {
      await app.stop();
    }
  }, 60_000);

  it("reconnects after Xvfb restarts on the same display: screenshots and input work again without a new process", async () => {
    const first = await gtkWidgetFactory(desktop);
    const before = await observe(first.pid, true);
    expect(before.screenshot).toBeDefined();
    await first.stop();
    await restartXvfb(desktop);
    const app = await gtkWidgetFactory(desktop);
    try {
      const after = await observe(app.pid, true);
      expect(after.screenshot, JSON.stringify(after.raw.walk)).toBeDefined();
      const p = centre(after.window);
      await expect(
        backend.pointer(after.window, { kind: "move", x: p.x, y: p.y }, 3000),
      ).resolves.toBeUndefined();
    } finally {
      await app.stop();
    }
  }, 60_000);
});
