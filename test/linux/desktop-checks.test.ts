/**
 * `permissions()` on Linux reports what docs/linux.md says a real desktop
 * needs (issue 22): the session type, and for each app listed without an
 * accessibility tree the reason read from its process, with the fix. Real
 * apps started the wrong way: gtk3-widget-factory with NO_AT_BRIDGE=1, a
 * Chromium started while org.a11y.Status.IsEnabled was false and without
 * ACCESSIBILITY_ENABLED, an xterm (no AT-SPI in its toolkit); and a
 * correctly started gtk3-widget-factory, which must not be reported.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, listApps, permissions, requestPermissions } from "../../lib/index.js";
import {
  compositorOf,
  linuxDesktopReport,
  linuxReportHint,
  noTreeCause,
  type ProcessFacts,
  parseEnviron,
  sessionOf,
} from "../../lib/observe/linux-checks.js";
import { type App, chromiumArgs, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { textOf, useMcpClients } from "../support/mcp.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;
let good: App;
let bridgeOff: App;
let chromium: App;
let xterm: App;

function setIsEnabled(on: boolean): void {
  execFileSync(
    "dbus-send",
    [
      "--session",
      "--print-reply",
      "--dest=org.a11y.Bus",
      "/org/a11y/bus",
      "org.freedesktop.DBus.Properties.Set",
      "string:org.a11y.Status",
      "string:IsEnabled",
      `variant:boolean:${on}`,
    ],
    { env: desktop.env, stdio: "pipe" },
  );
}

/** The X window tree; "" when a window went away mid-listing (xwininfo then fails), so the poll asks again. */
function xTree(): string {
  try {
    return execFileSync("xwininfo", ["-root", "-tree"], {
      env: desktop.env,
      encoding: "utf8",
      stdio: "pipe",
    });
  } catch {
    return "";
  }
}

beforeAll(async () => {
  desktop = await useDesktop();
  good = await gtkWidgetFactory(desktop);
  bridgeOff = await startApp(desktop, "env", ["NO_AT_BRIDGE=1", "gtk3-widget-factory"], {
    windowClass: "Gtk3-widget-factory",
  });
  // Before anything of axsnap connects (connecting enables it): a Chromium started now stays without a tree.
  setIsEnabled(false);
  const profile = mkdtempSync(join(desktop.tmpDir, "chromium-"));
  chromium = await startApp(
    desktop,
    "env",
    ["-u", "ACCESSIBILITY_ENABLED", "chromium", ...chromiumArgs("about:blank", profile)],
    { windowClass: "Chromium", timeoutMs: 45_000 },
  );
  // Its first X window (the 10x10 leader) comes before it has read IsEnabled; its page window after.
  const until = Date.now() + 45_000;
  while (!/"about:blank - Chromium"/.test(xTree())) {
    if (Date.now() > until) throw new Error(`Chromium's page window did not appear:\n${chromium.output()}`);
    await sleep(200);
  }
  xterm = await startApp(desktop, "xterm", ["-title", "checks xterm", "-e", "sh"], { windowClass: "XTerm" });
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

describe("permissions() on a real Linux desktop", () => {
  it(
    "names each app without a tree, with the cause its process shows; not the app started right",
    async () => {
      const status = await permissions();
      console.log("permissions():", JSON.stringify(status, null, 1));
      expect(status).toMatchObject({
        platform: "linux",
        accessibility: "not_required",
        screenRecording: "not_required",
      });
      const d = status.desktop;
      if (!d) throw new Error("no desktop report on Linux");
      expect(d.display).toBe(desktop.display);
      const byPid = new Map(d.appsWithoutTree.map((a) => [a.pid, a]));
      expect(byPid.get(bridgeOff.pid)).toMatchObject({
        cause: "bridge_disabled",
        evidence: "NO_AT_BRIDGE=1 in its environment",
      });
      expect(byPid.get(chromium.pid)).toMatchObject({
        cause: "chromium_not_enabled",
        evidence: expect.stringMatching(/without ACCESSIBILITY_ENABLED=1/),
        fix: expect.stringMatching(/ACCESSIBILITY_ENABLED=1.*--force-renderer-accessibility/),
      });
      expect(byPid.get(xterm.pid)).toMatchObject({ cause: "no_toolkit_support" });
      expect(byPid.has(good.pid)).toBe(false);
      // The hint names what can be fixed by a restart, and leaves out what cannot.
      expect(status.hint).toMatch(new RegExp(`pid ${bridgeOff.pid}\\): restart it without NO_AT_BRIDGE`));
      expect(status.hint).toMatch(
        new RegExp(`pid ${chromium.pid}\\): restart it with ACCESSIBILITY_ENABLED=1`),
      );
      expect(status.hint).not.toMatch(new RegExp(`pid ${xterm.pid}\\b`));
      // Asking changes nothing on Linux.
      expect(await requestPermissions()).toEqual(status);
    },
    TIMEOUT,
  );

  it(
    "the CLI prints the same, one line per app, and the same as JSON",
    async () => {
      const text = await runCli(["permissions"]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^session (x11|unknown) \(DISPLAY :\d+\)$/m);
      expect(text.stdout).toMatch(
        new RegExp(
          `^no accessibility tree: \\S+\\tpid ${bridgeOff.pid}\\tbridge_disabled: NO_AT_BRIDGE=1`,
          "m",
        ),
      );
      expect(text.stdout).toMatch(
        new RegExp(`^no accessibility tree: \\S+\\tpid ${xterm.pid}\\tno_toolkit_support`, "m"),
      );
      expect(text.stdout).toMatch(/^hint: .*NO_AT_BRIDGE/m);
      const json = await runCliJson(["permissions"]);
      expect(json.env.ok).toBe(true);
      expect(json.env.data.desktop.appsWithoutTree.map((a: { pid: number }) => a.pid)).toEqual(
        expect.arrayContaining([bridgeOff.pid, chromium.pid, xterm.pid]),
      );
    },
    TIMEOUT,
  );
});

describe("listApps names a tree-less app by its program", () => {
  it("even when the app rewrote its process title into one line (Chromium's /proc/PID/cmdline)", async () => {
    const raw = readFileSync(`/proc/${chromium.pid}/cmdline`, "latin1");
    // The premise: the title is one string, its arguments joined by spaces.
    expect(raw.replace(/\0+$/, "")).not.toContain("\0");
    expect(raw).toMatch(/^\/usr\/lib\/chromium\/chromium --/);
    const apps = await listApps();
    expect(apps.find((a) => a.pid === chromium.pid)).toMatchObject({
      name: "Chromium",
      bundleId: "chromium",
      noTree: true,
    });
    expect(apps.find((a) => a.pid === xterm.pid)).toMatchObject({ bundleId: "xterm" });
  });
});

describe("MCP list_apps", () => {
  const mcpClient = useMcpClients();
  it(
    "adds the cause and the fix to a misstarted app, and nothing to an xterm or an app with a tree",
    async () => {
      const session = createSession();
      try {
        const client = await mcpClient(session);
        const r = await client.callTool({ name: "list_apps", arguments: {} });
        const apps = (r.structuredContent as { apps: Record<string, unknown>[] }).apps;
        const of = (pid: number) => apps.find((a) => a.pid === pid);
        expect(of(bridgeOff.pid)).toMatchObject({
          noTree: true,
          noTreeCause: "bridge_disabled",
          fix: expect.any(String),
        });
        expect(of(chromium.pid)).toMatchObject({ noTree: true, noTreeCause: "chromium_not_enabled" });
        expect(Object.keys(of(xterm.pid) ?? {}).sort()).toEqual(["bundleId", "name", "noTree", "pid"]);
        expect(of(good.pid)).not.toHaveProperty("noTreeCause");
        expect(JSON.parse(textOf(r as Parameters<typeof textOf>[0]))).toEqual(apps);
      } finally {
        await session.close();
      }
    },
    TIMEOUT,
  );
});

describe("the checks, given their facts", () => {
  const facts = (
    env: Record<string, string> | undefined,
    exe?: string,
    beside: string[] = [],
  ): ProcessFacts => ({
    env: env && new Map(Object.entries(env)),
    exe,
    besideExe: (name) => beside.includes(name),
  });

  it("reads the cause from the environment first, then the executable", () => {
    expect(noTreeCause(facts({ NO_AT_BRIDGE: "1" }, "/usr/bin/gtk3-widget-factory")).cause).toBe(
      "bridge_disabled",
    );
    expect(noTreeCause(facts({ NO_AT_BRIDGE: "0" }, "/usr/bin/xterm")).cause).toBe("no_toolkit_support");
    expect(noTreeCause(facts({ NO_AT_BRIDGE: "" }, "/usr/bin/xterm")).cause).toBe("no_toolkit_support");
    expect(noTreeCause(facts({ GTK_A11Y: "none" }, "/usr/bin/gtk4-demo")).cause).toBe("bridge_disabled");
    // An Electron app is known by the resource packs beside it, whatever its name.
    const code = noTreeCause(facts({}, "/usr/share/code/code", ["resources.pak"]));
    expect(code).toMatchObject({ cause: "chromium_not_enabled", evidence: expect.stringMatching(/without/) });
    expect(
      noTreeCause(facts({ ACCESSIBILITY_ENABLED: "1" }, "/opt/app/app", ["chrome_100_percent.pak"])).evidence,
    ).toMatch(/with ACCESSIBILITY_ENABLED=1 that still has no tree/);
    // Another user's process: nothing is guessed.
    expect(noTreeCause(facts(undefined)).cause).toBe("unknown");
  });

  it("parses /proc environ, including values with = and empty ones, and ignores junk", () => {
    const env = parseEnviron("A=1\0B=x=y\0C=\0junk\0=nokey\0");
    expect([...env]).toEqual([
      ["A", "1"],
      ["B", "x=y"],
      ["C", ""],
    ]);
  });

  it("tells the session from XDG_SESSION_TYPE, then WAYLAND_DISPLAY", () => {
    expect(sessionOf({ XDG_SESSION_TYPE: "wayland" })).toBe("wayland");
    expect(sessionOf({ XDG_SESSION_TYPE: "x11", WAYLAND_DISPLAY: "wayland-0" })).toBe("x11");
    expect(sessionOf({ WAYLAND_DISPLAY: "wayland-0" })).toBe("wayland");
    expect(sessionOf({ XDG_SESSION_TYPE: "tty" })).toBe("unknown");
    expect(sessionOf({})).toBe("unknown");
  });

  it("hints at Wayland and at each fixable app; nothing when all is well", () => {
    const apps = [
      { name: "a", pid: 1, noTree: true },
      { name: "b", pid: 2 },
    ];
    const wayland = linuxDesktopReport(apps, { XDG_SESSION_TYPE: "wayland" }, () =>
      facts({ NO_AT_BRIDGE: "1" }),
    );
    expect(wayland.appsWithoutTree).toEqual([expect.objectContaining({ pid: 1, cause: "bridge_disabled" })]);
    expect(linuxReportHint(wayland)).toMatch(
      /^this is a Wayland session.*; a \(pid 1\): restart it without NO_AT_BRIDGE/,
    );
    const fine = linuxDesktopReport(apps, { XDG_SESSION_TYPE: "x11" }, () => facts({}, "/usr/bin/xterm"));
    expect(linuxReportHint(fine)).toBeUndefined();
  });

  it("names a Wayland compositor without Mutter (sway, KDE) and routes it none, with the hint", () => {
    expect(compositorOf({ SWAYSOCK: "/run/s.sock", XDG_CURRENT_DESKTOP: "sway" }, false)).toEqual({
      name: "sway",
      evidence: "SWAYSOCK=/run/s.sock",
    });
    expect(compositorOf({ XDG_CURRENT_DESKTOP: "sway" }, false).name).toBe("sway");
    expect(compositorOf({ KDE_FULL_SESSION: "true" }, false)).toEqual({
      name: "kde",
      evidence: "KDE_FULL_SESSION=true",
    });
    expect(compositorOf({ XDG_CURRENT_DESKTOP: "KDE" }, false).name).toBe("kde");
    expect(compositorOf({ XDG_CURRENT_DESKTOP: "Hyprland" }, false).name).toBe("other");
    expect(compositorOf({}, false).name).toBe("unknown");
    // Mutter answering decides, whatever the environment says.
    expect(compositorOf({ XDG_CURRENT_DESKTOP: "KDE" }, true).name).toBe("gnome");
    expect(compositorOf({ XDG_CURRENT_DESKTOP: "ubuntu:GNOME" }, false)).toEqual({
      name: "gnome",
      evidence: "XDG_CURRENT_DESKTOP=ubuntu:GNOME, but Mutter is not on this session bus",
    });
    const kde = linuxDesktopReport(
      [],
      { XDG_SESSION_TYPE: "wayland", KDE_FULL_SESSION: "true", XDG_CURRENT_DESKTOP: "KDE" },
      () => facts({}),
      { source: "unknown", detail: "no GNOME Shell" },
      false,
    );
    expect(kde.compositor?.name).toBe("kde");
    expect(kde.routes).toMatchObject({ capture: "none", input: "none" });
    expect(kde.routes?.detail).toMatch(/^KDE Plasma's KWin gives axsnap no route/);
    expect(linuxReportHint(kde)).toMatch(
      /^this is a Wayland session: KDE Plasma's KWin .*axsnap desktop start NAME --wayland.*QT_QPA_PLATFORM=xcb/,
    );
    // An X11 session has no compositor entry and no routes.
    expect(
      linuxDesktopReport([], { XDG_SESSION_TYPE: "x11", SWAYSOCK: "/s" }, () => facts({}), undefined, false),
    ).not.toHaveProperty("compositor");
  });
});
