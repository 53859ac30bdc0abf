/**
 * Starting apps: launchApp(name | id | path) starts one through the
 * platform's own launcher (Linux: its desktop entry, through GIO, as a
 * desktop shell would; macOS: NSWorkspace, by bundle id or .app path) or,
 * for the path of a plain executable, spawns it directly, and returns once
 * the app's first window is accessible, so the next call can observe it.
 * The app gets the caller's process.env (plus `env`): DISPLAY and the
 * session bus of a test desktop reach it even when they were set in JS only.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { basename, resolve as resolvePath } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { NativeBackend } from "../../native.js";
import { type DesktopRef, launchMarker, useDesktop } from "../../observe/agent-desktop/use.js";
import { desktopBackend, listWindows } from "../../observe/desktop.js";
import { stopHereForTest } from "../../observe/test-hooks.js";
import type { WindowListing } from "../../observe/windows.js";
import { CallContext, callBudget } from "../call.js";
import { checkedArgs, checkedEnv } from "./input.js";
import { checkAppName, type LaunchableApp, matchLaunchable } from "./match.js";

export type { LaunchableApp } from "./match.js";

export interface LaunchOptions {
  /**
   * Arguments. For a desktop entry they are its files or URIs, as a file
   * manager opens files with it: only for an entry whose Exec line has a
   * %F/%U (any number) or %f/%u (one); an entry with none takes no args, and
   * an option ("--flag") is no file: start the program by path for those.
   * For a bundle, its launch arguments; for an executable path, its argv.
   * At most 4096, none with a NUL character.
   */
  args?: string[];
  /** Variables added to (or replacing) the caller's process.env for the app (keys without "=", no NUL anywhere). */
  env?: Record<string, string>;
  /** How long to wait for the first accessible window. Default 20000 ms. */
  deadlineMs?: number;
  signal?: AbortSignal;
  /**
   * Start it on an agent's desktop (its name, or startDesktop's handle):
   * this process is put on that desktop first (useDesktop), and the app ends
   * when the desktop stops.
   */
  desktop?: DesktopRef;
}

export interface LaunchedApp {
  /** The pid of the app's process: pass it as `app` to snapshot, listWindows, waitFor. */
  pid: number;
  /** The app's name as the accessibility service knows it (what listApps shows). */
  name: string;
  /** Its first accessible window (the first window or dialog listWindows(pid) lists). */
  window: WindowListing;
  /** How it was started. */
  via: "desktop-entry" | "bundle" | "path";
  /** The desktop entry or bundle it was started from (none for an executable path). */
  entry?: LaunchableApp;
  /** From the call until the window was there. */
  ms: number;
}

const DEFAULT_LAUNCH_MS = 20_000;
const POLL_MS = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function deadlineOf(value: unknown): number {
  if (value === undefined) return DEFAULT_LAUNCH_MS;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 1 || value > 600_000)
    throw invalidArgument(
      `deadlineMs must be a number of milliseconds between 1 and 600000, got ${String(value)}`,
    );
  return value;
}

/** A backend that cannot start apps (the fake one; a platform without a launcher) says so in launch terms. */
async function launcherStep<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "ACTION_NOT_SUPPORTED")
      throw new AxsnapError("ACTION_NOT_SUPPORTED", e.message, {
        cause: e,
        hint: "this backend cannot start apps: start the app another way, then find it with listApps()",
      });
    throw e;
  }
}

/** The apps the system can start: desktop entries (Linux), application bundles (macOS), sorted by id. */
export async function listLaunchable(
  options: { deadlineMs?: number; signal?: AbortSignal } = {},
  backend?: NativeBackend,
): Promise<LaunchableApp[]> {
  if (options === null || typeof options !== "object") throw invalidArgument("options must be an object");
  const deadlineMs = options.deadlineMs === undefined ? 5000 : deadlineOf(options.deadlineMs);
  const ctx = new CallContext(deadlineMs, callBudget(options, deadlineMs).signal);
  ctx.check();
  const b = backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
  const all = await launcherStep(() => ctx.step("read", () => b.launchable(ctx.remaining())));
  return all.sort((a, b) => a.id.localeCompare(b.id));
}

/** A launch target: an entry to start natively, or an executable to spawn. */
type Plan =
  | { via: "desktop-entry" | "bundle"; id: string; entry?: LaunchableApp }
  | { via: "path"; path: string };

function isBundlePath(path: string): boolean {
  return /\.app\/?$/i.test(path);
}

/**
 * A bundle id's shape (Apple: CFBundleIdentifier, reverse-DNS of letters, digits, hyphens and periods;
 * underscores occur too): at least two labels. A desktop id has it too, but Linux finds entries only by listing.
 */
const BUNDLE_ID = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+$/;

/**
 * A name no listed entry has: when it is shaped like a bundle id, the platform's launcher is asked for it
 * (macOS: Launch Services knows bundles outside the folders listed: Adobe's sub-folders, Setapp,
 * /System/Library/CoreServices). A platform that finds apps only by listing keeps the listing's refusal.
 */
async function unlisted(
  app: string,
  refusal: AxsnapError,
  byId: (id: string) => Promise<LaunchableApp[]>,
): Promise<LaunchableApp> {
  if (!BUNDLE_ID.test(app)) throw refusal;
  let known: LaunchableApp[];
  try {
    known = await byId(app);
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "ACTION_NOT_SUPPORTED") throw refusal;
    throw e;
  }
  const entry = known.find((e) => e.id.toLowerCase() === app.toLowerCase());
  if (entry) return entry;
  throw new AxsnapError(
    "APP_NOT_FOUND",
    `${refusal.message}, and Launch Services knows no bundle id "${app}"`,
    {
      hint: `${refusal.hint ?? ""}; check the bundle id (\`osascript -e 'id of app "Name"'\` prints an installed app's)`,
    },
  );
}

async function planOf(
  app: string,
  entries: () => Promise<LaunchableApp[]>,
  byId: (id: string) => Promise<LaunchableApp[]>,
): Promise<Plan> {
  if (!app.includes("/")) {
    const listed = await entries();
    try {
      return entryPlan(matchLaunchable(app, listed));
    } catch (e) {
      if (!(e instanceof AxsnapError) || e.code !== "APP_NOT_FOUND") throw e;
      return entryPlan(await unlisted(app, e, byId));
    }
  }
  const path = resolvePath(app);
  const isEntry = /\.desktop$/i.test(path) || isBundlePath(path);
  if (isEntry) {
    const listed = (await entries()).find((e) => e.path === path.replace(/\/$/, ""));
    if (listed) return entryPlan(listed);
  }
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw new AxsnapError("APP_NOT_FOUND", `nothing is at ${path}`, {
      hint: "pass an app's name or id instead (listLaunchable() lists them), or a path that exists",
    });
  }
  if (isEntry) return { via: isBundlePath(path) ? "bundle" : "desktop-entry", id: path };
  try {
    if (isDir) throw new Error("a directory");
    accessSync(path, constants.X_OK);
  } catch {
    throw new AxsnapError("APP_NOT_FOUND", `${path} is not an executable program`, {
      hint: "pass the path of an executable, a .desktop file or an .app bundle, or an app's name (listLaunchable() lists them)",
    });
  }
  return { via: "path", path };
}

/** Bundles are the macOS listing's entries, desktop entries Linux's: told apart by the file they come from. */
function entryPlan(entry: LaunchableApp): Plan {
  return { via: isBundlePath(entry.path) ? "bundle" : "desktop-entry", id: entry.id, entry };
}

/**
 * The app's environment. A desktop entry or a program gets the caller's
 * whole process.env plus `extra` (as when started from the caller's shell);
 * a macOS bundle gets `extra` only: Launch Services gives it the user
 * session's environment, as the Dock would, and adds these.
 */
function environment(extra: Record<string, string> | undefined, whole: boolean): Record<string, string> {
  const env: Record<string, string> = {};
  if (whole) for (const [k, v] of Object.entries(process.env)) if (typeof v === "string") env[k] = v;
  // On an agent's desktop the app carries its marker: stopping the desktop ends the app too.
  Object.assign(env, launchMarker());
  if (extra !== undefined) for (const [k, v] of Object.entries(extra)) env[k] = v;
  return env;
}

/**
 * The entry's Exec line cannot take these args (gio_launch.cc says which):
 * GIO sent nothing, so the refusal is not_delivered whatever the step says.
 */
function entryRefusal(e: unknown, what: string): unknown {
  if (!(e instanceof AxsnapError) || e.code !== "INVALID_ARGUMENT") return e;
  return new AxsnapError("INVALID_ARGUMENT", e.message, {
    cause: e,
    delivery: "not_delivered",
    hint: `launch ${what} without args, or start its program by path with the args (launchApp("/path/to/program", { args }))`,
  });
}

/** Spawns an executable detached from this process (its own session, no stdio), so it outlives the caller. */
function spawnDetached(path: string, args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, { env, detached: true, stdio: "ignore" });
    child.once("error", (e) =>
      reject(
        new AxsnapError("ACTION_FAILED", `could not start ${path}: ${e.message}`, {
          hint: "check that the program runs from a shell with the same arguments",
        }),
      ),
    );
    child.once("spawn", () => {
      child.unref();
      resolve(child.pid!);
    });
  });
}

/** Whether the process has ended (a zombie no one reaped counts: it shows no window). */
function exited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ESRCH";
  }
  if (process.platform !== "linux") return false;
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\)/, ""));
  } catch {
    return true;
  }
}

/** The windows listWindows gives for a pid not yet known to the accessibility service: none, not an error. */
async function windowsOf(pid: number, ctx: CallContext, backend?: NativeBackend): Promise<WindowListing[]> {
  try {
    return await listWindows(
      pid,
      { deadlineMs: Math.min(ctx.remaining(), 3000), ...(ctx.signal ? { signal: ctx.signal } : {}) },
      backend,
    );
  } catch (e) {
    if (e instanceof AxsnapError && e.code === "APP_NOT_FOUND") return [];
    // The AT-SPI registry starts with the first app that has a bridge: on a desktop where none ran yet,
    // it is not there until the launched app brings it up.
    if (e instanceof AxsnapError && e.code === "ACCESSIBILITY_UNAVAILABLE") return [];
    // One listing cut short by the call's own deadline is the launch's TIMEOUT, said below.
    if (e instanceof AxsnapError && e.code === "TIMEOUT" && ctx.expired()) return [];
    throw e;
  }
}

function appsNow(ctx: CallContext, b: NativeBackend) {
  return ctx.step("read", () => b.listApps(Math.min(ctx.remaining(), 3000)));
}

/** How long a launched app that shows an X11 window but no tree yet is given to register its tree. */
const TREE_GRACE_MS = 2000;

/**
 * The launched app as listApps will show it. An app's X11 window can be
 * mapped before its accessibility bridge registers (under load, by a
 * second): listed then, it is an X11-only app named by its WM_CLASS
 * ("Gtk3-widget-factory"), and a moment later the accessible app under
 * another name. So a first sight without a tree waits a little for one; an
 * app that has no bridge at all (xterm) is answered as such after the wait.
 */
async function accessibleApp(pid: number, ctx: CallContext, b: NativeBackend) {
  const until = performance.now() + Math.min(TREE_GRACE_MS, Math.max(0, ctx.remaining() - POLL_MS));
  for (;;) {
    const known = (await appsNow(ctx, b).catch(() => [])).find((a) => a.pid === pid);
    if (known?.noTree !== true || performance.now() >= until) return known;
    await ctx.step("read", () => sleep(POLL_MS));
  }
}

/** A pid the platform did not give (a D-Bus activated entry): the new app whose name fits the entry. */
async function newcomer(
  before: Set<number>,
  entry: LaunchableApp | undefined,
  ctx: CallContext,
  b: NativeBackend,
): Promise<number | undefined> {
  const apps = await appsNow(ctx, b).catch(() => []);
  const fresh = apps.filter((a) => !before.has(a.pid));
  const names = entry
    ? [entry.name, basename(entry.executable), entry.id.replace(/\.desktop$/, "")].map((s) => s.toLowerCase())
    : [];
  const fits = fresh.filter((a) => names.includes(a.name.toLowerCase()));
  if (fits.length === 1) return fits[0]!.pid;
  return fresh.length === 1 ? fresh[0]!.pid : undefined;
}

/**
 * Starts an app and returns once its first window is accessible: `app` is
 * a name or id from listLaunchable() (exact, case-insensitive: an id, a
 * name or an executable's name), or the path of an executable, a .desktop
 * file or an .app bundle. A path runs that program with any argv, as the
 * caller's own shell would: the API and the CLI are the user's own hands;
 * the MCP server, driven by a model, takes paths only when started with
 * --allow-launch-paths (lib/doors/mcp/launch.ts). A name is at most 256 characters;
 * args and env are checked before anything starts (lib/session/launch/input.ts), and
 * a desktop entry takes only the args its Exec line has room for.
 * On macOS a bundle id the listing lacks is asked of Launch Services, which
 * knows bundles outside the folders listed. APP_NOT_FOUND names the closest
 * launchable apps;
 * TIMEOUT (the app was started: delivered_unverified, with its `pid`) when
 * no window came by the deadline.
 */
export async function launchApp(
  app: string,
  options: LaunchOptions = {},
  backend?: NativeBackend,
): Promise<LaunchedApp> {
  if (typeof app !== "string" || app.trim() === "")
    throw invalidArgument(
      `app must be an app's name, desktop or bundle id, or a path, got ${app === undefined ? "nothing" : JSON.stringify(app)}`,
      'pass a name such as "gtk3-widget-factory"; listLaunchable() lists what can be started',
    );
  checkAppName(app);
  if (options === null || typeof options !== "object") throw invalidArgument("options must be an object");
  if (options.desktop !== undefined) useDesktop(options.desktop);
  const args = checkedArgs(options.args);
  const extraEnv = checkedEnv(options.env);
  const deadlineMs = deadlineOf(options.deadlineMs);
  const started = performance.now();
  const ctx = new CallContext(deadlineMs, callBudget(options, deadlineMs).signal);
  try {
    ctx.check();
    const b = backend ?? (await ctx.step("read", () => desktopBackend(ctx.remaining())));
    const plan = await planOf(
      app.trim(),
      () => launcherStep(() => ctx.step("read", () => b.launchable(ctx.remaining()))),
      (id) => ctx.step("read", () => b.launchable(ctx.remaining(), id)),
    );
    const what = plan.via === "path" ? plan.path : plan.id;
    const env = environment(extraEnv, plan.via !== "bundle");
    // Only for an entry whose pid the platform may not give (D-Bus activation): no registry yet means no apps.
    const before = new Set((await appsNow(ctx, b).catch(() => [])).map((a) => a.pid));
    ctx.check();
    ctx.sent = true;
    let pid =
      plan.via === "path"
        ? await spawnDetached(plan.path, args, env)
        : (
            await ctx
              .step("semantic", () => b.launch({ id: plan.id, args, env, deadlineMs: ctx.remaining() }))
              .catch((e) => {
                throw entryRefusal(e, plan.id);
              })
          ).pid;
    const entry = plan.via === "path" ? undefined : plan.entry;
    const firstWindow = async (): Promise<LaunchedApp> => {
      for (;;) {
        if (pid === 0) pid = (await newcomer(before, entry, ctx, b)) ?? 0;
        if (pid !== 0) {
          let windows = await windowsOf(pid, ctx, b);
          if (windows.length > 0) {
            stopHereForTest("launch-window-listed");
            const known = await accessibleApp(pid, ctx, b);
            // Listed before the app's tree registered, a window is named by its X11 id; once the tree is
            // there, every later listing names it by the tree's path, so the answer must too.
            if (
              known !== undefined &&
              known.noTree !== true &&
              windows.some((w) => w.id.startsWith("x11:"))
            ) {
              const again = await windowsOf(pid, ctx, b);
              if (again.length > 0) windows = again;
            }
            const first = windows.find((w) => w.kind === "window" || w.kind === "dialog") ?? windows[0]!;
            return {
              pid,
              name: known?.name ?? basename(what),
              window: first,
              via: plan.via,
              ...(entry ? { entry } : {}),
              ms: Math.round(performance.now() - started),
            };
          }
          // A bundle already running is activated and its pid given: no second process to hand over to it.
          if (plan.via !== "bundle" && exited(pid))
            throw new AxsnapError(
              "ACTION_FAILED",
              `started ${what} as pid ${pid}, but it exited before it opened a window`,
              {
                pid,
                delivery: "delivered_unverified",
                hint: "a single-instance app hands a second start to the copy already running: look for it with listApps(); otherwise run the program from a shell to see why it stops",
              },
            );
        }
        if (ctx.remaining() <= POLL_MS)
          throw new AxsnapError(
            "TIMEOUT",
            pid === 0
              ? `started ${what}, but no new app with a window appeared within ${deadlineMs} ms (its pid is not known)`
              : `started ${what} as pid ${pid}, but no window of it was accessible within ${deadlineMs} ms`,
            {
              ...(pid === 0 ? {} : { pid }),
              delivery: "delivered_unverified",
              hint:
                pid === 0
                  ? "the app may still be starting: listApps() shows it once it is there; do not launch it again"
                  : `the app is running (pid ${pid}) and may still be starting: observe it later with snapshot({ app: ${pid} }), or stop it (kill ${pid}); do not launch it again. A program without an accessibility bridge (xterm, Tk) never shows a window here`,
            },
          );
        await ctx.step("read", () => sleep(POLL_MS));
      }
    };
    try {
      return await firstWindow();
    } catch (e) {
      // Aborted, or the bus gone while waiting: the app was started all the same, and the caller may want it stopped.
      if (e instanceof AxsnapError && e.pid === undefined && pid !== 0)
        throw new AxsnapError(e.code, `${e.message} (the app was started as pid ${pid})`, {
          pid,
          delivery: e.delivery === "not_delivered" ? "delivered_unverified" : e.delivery,
          hint: e.hint,
          cause: e,
        });
      throw e;
    }
  } finally {
    await ctx.close();
  }
}
