/**
 * A window listed before its app joined the accessibility bus keeps working
 * by the id it was listed under. Every GTK app maps its first window a moment
 * before it registers with AT-SPI; in that moment axsnap sees it only on X11
 * and names the window `x11:0x…` (listWindows, launchApp, the CLI's
 * `windows`). An agent that then asks for that window must get it, not
 * WINDOW_NOT_FOUND because the same window is now listed by its tree.
 *
 * And `launch` answers with the id later listings give: an app that
 * registers between its first window and launch's answer is answered by its
 * tree's id, not the X id it was first seen by (the CLI's launch in `call`
 * printed either, by timing).
 *
 * The moment is forced, not waited for: test/apps/late-register.py starts
 * without the bridge and registers when sent SIGUSR1; the launching CLI stops
 * itself where it has listed the window (AXSNAP_TEST_STOP_AT).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, listWindows, type WindowListing } from "../../lib/index.js";
import type { Desktop } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { processState } from "../support/proc-state.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 60_000;
const TSX = import.meta.resolve("tsx");
const CLI = fileURLToPath(new URL("../../lib/cli.ts", import.meta.url));

let desktop: Desktop;
let app: ChildProcess;
let said = "";

function line(text: string): Promise<void> {
  const until = Date.now() + 15_000;
  return (async () => {
    while (!said.includes(text)) {
      if (Date.now() > until) throw new Error(`late-register.py never printed ${text}; it said: ${said}`);
      await sleep(50);
    }
  })();
}

async function windowsUntil(
  test: (w: WindowListing[]) => boolean,
  what: string,
  pid = app.pid!,
): Promise<WindowListing[]> {
  const until = Date.now() + 15_000;
  let last: WindowListing[] | string = [];
  while (Date.now() < until) {
    last = await listWindows(pid, { deadlineMs: 5000 }).catch((e) => String(e));
    if (typeof last !== "string" && test(last)) return last;
    await sleep(100);
  }
  throw new Error(`${what}; last listing: ${JSON.stringify(last)}`);
}

beforeAll(async () => {
  desktop = await useDesktop();
  app = spawn("/usr/bin/python3", ["test/apps/late-register.py"], {
    env: { ...process.env, ...desktop.env, NO_AT_BRIDGE: "1" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  app.stdout!.on("data", (b: Buffer) => {
    said += String(b);
  });
  await line("READY");
}, TIMEOUT);

afterAll(async () => {
  app?.kill();
  await desktop?.stop();
});

describe("a window listed by its X id before its app registered", () => {
  let early: WindowListing;

  it(
    "is listed by its X id while the app has no tree",
    async () => {
      const windows = await windowsUntil(
        (w) => w.some((x) => x.title === "Late note"),
        "the X window never showed",
      );
      early = windows.find((w) => w.title === "Late note")!;
      expect(early.id).toMatch(/^x11:0x[0-9a-f]+$/);
    },
    TIMEOUT,
  );

  it(
    "is still reached by that id once the app registered, with its tree",
    async () => {
      app.kill("SIGUSR1");
      await line("REGISTERED");
      const now = await windowsUntil(
        (w) => w.some((x) => x.title === "Late note" && !x.id.startsWith("x11:")),
        "the app never registered its window",
      );
      expect(now.find((w) => w.title === "Late note")!.id).not.toBe(early.id);
      const session = createSession();
      const snap = await session.snapshot({ app: app.pid!, window: { id: early.id }, screenshot: true });
      expect(snap.text).toMatch(/^Window: "Late note"/m);
      // The tree, not the pixels-only view an X id alone would give.
      expect(snap.text).toMatch(/push button OK/);
      expect(snap.screenshot?.pixelWidth).toBeGreaterThan(0);
    },
    TIMEOUT,
  );

  it(
    "an X id of another window is still refused, naming the app's windows",
    async () => {
      const session = createSession();
      const err = await session
        .snapshot({ app: app.pid!, window: { id: "x11:0x7ffffff0" }, screenshot: false })
        .catch((e) => e);
      expect(err.code).toBe("WINDOW_NOT_FOUND");
      expect(String(err.message)).toMatch(/Late note/);
    },
    TIMEOUT,
  );
});

/** Pids of python3 running late-register.py, other than the one beforeAll started. */
function launchedCopies(): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e) && Number(e) !== app.pid)
    .filter((e) => {
      try {
        const argv = readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0");
        return /python3/.test(argv[0]!) && argv[1] === "test/apps/late-register.py";
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("launch, when the app registers between its first window and the answer", () => {
  it(
    "answers with the window's id by its tree, the one every later listing gives",
    async () => {
      // The CLI stops (SIGSTOP) right after listing the launched app's first window, by its X id.
      const cli = spawn(
        process.execPath,
        ["--import", TSX, CLI, "launch", "/usr/bin/python3", "--json", "--", "test/apps/late-register.py"],
        {
          env: {
            ...process.env,
            ...desktop.env,
            NO_AT_BRIDGE: "1",
            AXSNAP_DAEMON: "off",
            AXSNAP_TEST_STOP_AT: "launch-window-listed",
          },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let out = "";
      cli.stdout!.on("data", (b: Buffer) => {
        out += String(b);
      });
      cli.stderr!.on("data", (b: Buffer) => {
        out += String(b);
      });
      const exited = new Promise<number | null>((resolve) => cli.on("exit", resolve));
      let launched: number | undefined;
      try {
        const until = Date.now() + 30_000;
        while (processState(cli.pid!) !== "T") {
          if (Date.now() > until) throw new Error(`the launch never listed a window:\n${out}`);
          await sleep(50);
        }
        [launched] = launchedCopies();
        expect(launched, "the launched copy of late-register.py").toBeDefined();
        const early = await windowsUntil((w) => w.length > 0, "no window", launched);
        expect(early[0]!.id).toMatch(/^x11:/);
        // Now the app registers, before the launch goes on to ask for its tree.
        process.kill(launched!, "SIGUSR1");
        const now = await windowsUntil(
          (w) => w.some((x) => x.title === "Late note" && !x.id.startsWith("x11:")),
          "the launched app never registered its window",
          launched,
        );
        cli.kill("SIGCONT");
        expect(await exited, out).toBe(0);
        const answer = JSON.parse(out) as { data: { pid: number; window: { id: string } } };
        expect(answer.data.pid).toBe(launched);
        expect(answer.data.window.id).toBe(now.find((w) => w.title === "Late note")!.id);
      } finally {
        cli.kill("SIGKILL");
        for (const pid of launchedCopies()) process.kill(pid, "SIGKILL");
      }
    },
    TIMEOUT,
  );
});
