/**
 * Starting apps (issue 19 §5) through all three doors on a headless Linux
 * desktop: launchApp by name, by desktop id and by path; the pid it returns
 * is the app's (a snapshot of that pid works); a typo is APP_NOT_FOUND with
 * the closest desktop entries; a program that never opens a window is
 * TIMEOUT naming its pid. Then MCP launch_app, list_windows (on an app with
 * two windows), list_apps with launchable, and the CLI's launch and
 * `apps --launchable`. Every process launched here is stopped (SIGKILL,
 * then gone from the registry) before the next test.
 */
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, launchApp, listApps, listLaunchable, snapshot } from "../../lib/index.js";
import { type Desktop, startApp } from "../../scripts/desktop.mjs";
import { runCli } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;

let desktop: Desktop;
let client: Client;
const launched = new Set<number>();

/** Whether the process is gone (or a zombie nobody reaped: it holds no window and no bus name). */
function gone(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** Stops a launched process and waits until it is gone, bounded. */
async function stop(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
  for (let i = 0; i < 100 && !gone(pid); i++) await sleep(50);
  if (!gone(pid)) throw new Error(`process ${pid} is still there after SIGKILL`);
  // Its bus name and accessible go with its connection; give the registry a moment to notice.
  for (let i = 0; i < 40; i++) {
    const apps = await listApps().catch(() => []);
    if (!apps.some((a) => a.pid === pid)) break;
    await sleep(50);
  }
  launched.delete(pid);
}

function own(pid: number): number {
  launched.add(pid);
  return pid;
}

beforeAll(async () => {
  desktop = await useDesktop();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/mcp-main.ts"],
    env: { ...(process.env as Record<string, string>), ...desktop.env },
    stderr: "pipe",
  });
  client = new Client({ name: "axsnap-launch-test", version: "0.0.0" });
  await client.connect(transport);
}, TIMEOUT);

afterAll(async () => {
  await client?.close();
  for (const pid of launched) await stop(pid).catch(() => undefined);
  await desktop?.stop();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function refusal(p: Promise<unknown>): Promise<AxsnapError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AxsnapError) return e;
    throw e;
  }
  throw new Error("the call was not refused");
}

describe("launchApp (API)", () => {
  it(
    "starts gtk3-widget-factory by name; returns its pid, name and first window; a snapshot of that pid works",
    async () => {
      const app = await launchApp("gtk3-widget-factory");
      own(app.pid);
      expect(app.entry?.id).toBe("gtk3-widget-factory.desktop");
      expect(app.via).toBe("desktop-entry");
      expect(app.window.title.length).toBeGreaterThan(0);
      const apps = await listApps();
      expect(apps.find((a) => a.pid === app.pid)?.name).toBe(app.name);
      const snap = await snapshot({ app: app.pid, screenshot: false });
      expect(snap.app.pid).toBe(app.pid);
      expect(snap.text).toMatch(/push button|toggle button|check box/);
      await snap.release();
      await stop(app.pid);
    },
    TIMEOUT,
  );

  it(
    "starts it by desktop id",
    async () => {
      const app = await launchApp("gtk3-widget-factory.desktop");
      own(app.pid);
      expect(app.entry?.name).toBe("Widget Factory");
      const snap = await snapshot({ app: app.pid, screenshot: false });
      expect(snap.app.pid).toBe(app.pid);
      await snap.release();
      await stop(app.pid);
    },
    TIMEOUT,
  );

  it(
    "starts galculator by path, spawned directly",
    async () => {
      const app = await launchApp("/usr/bin/galculator");
      own(app.pid);
      expect(app.via).toBe("path");
      expect(app.entry).toBeUndefined();
      expect(app.name.toLowerCase()).toContain("galculator");
      const snap = await snapshot({ app: app.pid, screenshot: false });
      expect(snap.text).toMatch(/toggle button sqrt/);
      await snap.release();
      await stop(app.pid);
    },
    TIMEOUT,
  );

  it("a typo is APP_NOT_FOUND naming the closest desktop entries", async () => {
    const e = await refusal(launchApp("gtk3-widget-factroy"));
    expect(e.code).toBe("APP_NOT_FOUND");
    expect(e.hint).toContain("gtk3-widget-factory.desktop");
    expect(e.hint).toMatch(/listLaunchable/);
    expect(e.delivery).toBe("not_delivered");
  });

  it("issue 35 M4: an unlisted id shaped like a bundle id stays the listing's refusal on Linux (no Launch Services)", async () => {
    const e = await refusal(launchApp("org.example.Nowhere"));
    expect(e.code).toBe("APP_NOT_FOUND");
    expect(e.message).toBe('no launchable app is called "org.example.Nowhere"');
    expect(e.delivery).toBe("not_delivered");
  });

  it(
    "a program that never opens a window is TIMEOUT, and the error names its pid",
    async () => {
      const e = await refusal(launchApp("/bin/sleep", { args: ["60"], deadlineMs: 1500 }));
      expect(e.code).toBe("TIMEOUT");
      expect(e.pid).toBeGreaterThan(1);
      own(e.pid!);
      expect(e.message).toContain(`pid ${e.pid}`);
      // It was started: launching again starts another one.
      expect(e.delivery).toBe("delivered_unverified");
      expect(e.retry).toBe("unsafe");
      expect(gone(e.pid!)).toBe(false);
      await stop(e.pid!);
    },
    TIMEOUT,
  );

  it(
    "a .desktop file by path starts its Exec line with the output to /dev/null, never into the caller's stdout",
    async () => {
      // The MCP server's stdout is its protocol: a launched app must not inherit it.
      const dir = mkdtempSync(join(tmpdir(), "axsnap-entry-"));
      const file = join(dir, "axsnap-sleeper.desktop");
      writeFileSync(
        file,
        "[Desktop Entry]\nType=Application\nName=Axsnap Sleeper\nExec=/bin/sleep 60\nTerminal=false\n",
      );
      try {
        const e = await refusal(launchApp(file, { deadlineMs: 1500 }));
        expect(e.code).toBe("TIMEOUT");
        const pid = own(e.pid!);
        expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toEqual(["/bin/sleep", "60", ""]);
        expect(readlinkSync(`/proc/${pid}/fd/1`)).toBe("/dev/null");
        expect(readlinkSync(`/proc/${pid}/fd/2`)).toBe("/dev/null");
        await stop(pid);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );

  it(
    "arguments to a desktop entry are its files: %f gets each as an absolute path",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-entry-"));
      const file = join(dir, "axsnap-opener.desktop");
      writeFileSync(
        file,
        '[Desktop Entry]\nType=Application\nName=Axsnap Opener\nExec=/usr/bin/python3 -c "import time; time.sleep(60)" %f\n',
      );
      try {
        const e = await refusal(launchApp(file, { args: ["notes.txt"], deadlineMs: 1500 }));
        expect(e.code).toBe("TIMEOUT");
        const pid = own(e.pid!);
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        expect(argv.slice(-2)).toEqual([join(process.cwd(), "notes.txt"), ""]);
        await stop(pid);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );

  it("a program that exits before it shows a window is ACTION_FAILED at once, not a wait until the deadline", async () => {
    // A deadline far past the test's own timeout: waiting for it would fail the test.
    const e = await refusal(launchApp("/bin/false", { deadlineMs: 600_000 }));
    expect(e.code).toBe("ACTION_FAILED");
    expect(e.message).toMatch(/exited before it opened a window/);
    expect(e.pid).toBeGreaterThan(1);
    expect(e.delivery).toBe("delivered_unverified");
  });

  it(
    "aborted while it waits for the window: ABORTED, still naming the pid it started",
    async () => {
      const controller = new AbortController();
      const pending = refusal(launchApp("/bin/sleep", { args: ["60"], signal: controller.signal }));
      setTimeout(() => controller.abort(), 500);
      const e = await pending;
      expect(e.code).toBe("ABORTED");
      expect(e.pid).toBeGreaterThan(1);
      own(e.pid!);
      expect(e.message).toContain(`pid ${e.pid}`);
      expect(gone(e.pid!)).toBe(false);
      await stop(e.pid!);
    },
    TIMEOUT,
  );

  it("lists what can be launched: desktop entries with their ids and names", async () => {
    const entries = await listLaunchable();
    const factory = entries.find((e) => e.id === "gtk3-widget-factory.desktop");
    expect(factory).toMatchObject({ name: "Widget Factory", executable: "gtk3-widget-factory" });
    expect(entries.some((e) => e.id === "galculator.desktop")).toBe(true);
  });
});

describe("the MCP door", () => {
  it("lists list_windows and launch_app with titles and annotations", async () => {
    const { tools } = await client.listTools();
    const lw = tools.find((t) => t.name === "list_windows");
    expect(lw?.title).toBeTruthy();
    expect(lw?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(lw?.outputSchema).toBeTruthy();
    const la = tools.find((t) => t.name === "launch_app");
    expect(la?.annotations).toMatchObject({ readOnlyHint: false, openWorldHint: false });
    expect(la?.outputSchema).toBeTruthy();
  });

  it(
    "list_windows lists both windows of an app with two",
    async () => {
      const twins = await startApp(desktop, "/usr/bin/python3", ["test/apps/twin-windows.py"], {
        name: "axsnap-twins",
        windowName: "Doc",
      });
      try {
        // "Side" opens with the main window; wait for it, bounded.
        let r: CallToolResult | undefined;
        for (let i = 0; i < 50; i++) {
          r = await call("list_windows", { app: "axsnap-twins" });
          const w = (r.structuredContent as { windows?: unknown[] } | undefined)?.windows ?? [];
          if (w.length >= 2) break;
          await sleep(100);
        }
        expect(r!.isError).toBeFalsy();
        const windows = (r!.structuredContent as { windows: { title: string; index: number; id: string }[] })
          .windows;
        expect(windows.map((w) => w.title).sort()).toEqual(["Doc", "Side"]);
        expect(windows.map((w) => w.index)).toEqual([0, 1]);
        expect(textOf(r!)).toContain("Side");
        const missing = await call("list_windows", { app: "no-such-app-here" });
        expect(missing.isError).toBe(true);
        expect(textOf(missing)).toContain("APP_NOT_FOUND");
      } finally {
        await twins.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "launch_app starts galculator by name; get_app_state on the pid it gives works",
    async () => {
      const r = await call("launch_app", { app: "galculator" });
      expect(r.isError, textOf(r)).toBeFalsy();
      const out = r.structuredContent as { pid: number; name: string; window: { title: string } };
      own(out.pid);
      expect(textOf(r)).toContain(`pid ${out.pid}`);
      const state = await call("get_app_state", { app: out.pid, screenshot: false });
      expect(state.isError, textOf(state)).toBeFalsy();
      expect(textOf(state)).toMatch(/toggle button sqrt/);
      await stop(out.pid);
    },
    TIMEOUT,
  );

  it("launch_app on a typo is APP_NOT_FOUND whose hint names list_apps, not the library", async () => {
    const r = await call("launch_app", { app: "gtk3-widget-factroy" });
    expect(r.isError).toBe(true);
    const body = JSON.parse(textOf(r)) as { code: string; hint: string };
    expect(body.code).toBe("APP_NOT_FOUND");
    expect(body.hint).toContain("gtk3-widget-factory.desktop");
    expect(body.hint).toContain("list_apps");
    expect(body.hint).not.toMatch(/listLaunchable/);
  });

  it("list_apps with launchable lists the desktop entries", async () => {
    const r = await call("list_apps", { launchable: true });
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("gtk3-widget-factory.desktop");
  });
});

describe("the CLI door", () => {
  it(
    "axsnap launch by desktop id prints the pid, name and window; a snapshot of the pid works",
    async () => {
      const r = await runCli(["launch", "gtk3-widget-factory.desktop"]);
      expect(r.code, r.stderr).toBe(0);
      const m = /pid (\d+)/.exec(r.stdout);
      expect(m, r.stdout).toBeTruthy();
      const pid = own(Number(m![1]));
      expect(r.stdout).toMatch(/window/);
      const s = await runCli(["snapshot", "--app", String(pid)]);
      expect(s.code, s.stderr).toBe(0);
      expect(s.stdout).toMatch(/push button|toggle button/);
      await stop(pid);
    },
    TIMEOUT,
  );

  it(
    "axsnap launch PATH -- ARGS passes the arguments; TIMEOUT exits 1 and names the pid",
    async () => {
      // --json before `--`: everything after it is the program's.
      const r = await runCli(["launch", "--json", "/bin/sleep", "--deadline", "1500", "--", "60"]);
      expect(r.code).toBe(1);
      const env = JSON.parse(r.stdout) as { ok: boolean; error: { code: string; pid: number } };
      expect(env.ok).toBe(false);
      expect(env.error.code).toBe("TIMEOUT");
      const pid = own(env.error.pid);
      expect(pid).toBeGreaterThan(1);
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")).toContain("60");
      await stop(pid);
    },
    TIMEOUT,
  );

  it("axsnap launch on a typo names the closest entries and a CLI command", async () => {
    const r = await runCli(["launch", "gtk3-widget-factroy"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("APP_NOT_FOUND");
    expect(r.stderr).toContain("gtk3-widget-factory.desktop");
    expect(r.stderr).toContain("axsnap apps --launchable");
  });

  it("axsnap apps --launchable lists the desktop entries", async () => {
    const r = await runCli(["apps", "--launchable"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("gtk3-widget-factory.desktop");
    expect(r.stdout).toContain("Widget Factory");
  });
});
