/**
 * The programs a desktop is made of, found on PATH before anything starts,
 * and the few D-Bus calls its start makes through dbus-send (the addon's
 * connection is the process's one desktop: it cannot be spent on a desktop
 * the process may never observe).
 */
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { AxsnapError } from "../../model/errors.js";

export function findProgram(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? "/usr/bin:/bin").split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {}
  }
  return undefined;
}

/** Which Debian package brings each program a desktop needs. */
const PACKAGES: Record<string, string> = {
  Xvfb: "xvfb",
  "dbus-daemon": "dbus",
  "dbus-send": "dbus",
  openbox: "openbox",
  "gnome-shell": "gnome-shell",
  pipewire: "pipewire",
  "pw-cli": "pipewire-bin",
  wireplumber: "wireplumber",
};

/** Every program on PATH, or DESKTOP_UNAVAILABLE naming what to install. */
export function requirePrograms(names: string[]): Record<string, string> {
  const found: Record<string, string> = {};
  const missing: string[] = [];
  for (const n of names) {
    const file = findProgram(n);
    if (file) found[n] = file;
    else missing.push(n);
  }
  if (missing.length > 0) {
    const packages = [...new Set(missing.map((n) => PACKAGES[n] ?? n))];
    throw new AxsnapError(
      "DESKTOP_UNAVAILABLE",
      `cannot start a desktop: ${missing.join(", ")} not found on PATH`,
      {
        hint: `install the Debian package${packages.length > 1 ? "s" : ""} ${packages.join(", ")} (apt-get install ${packages.join(" ")})${
          missing.includes("openbox") ? ", or start the desktop without a window manager" : ""
        }; ${
          missing.includes("gnome-shell") || missing.includes("pipewire")
            ? "a Wayland desktop needs gnome-shell, pipewire, pipewire-bin, wireplumber, dbus and at-spi2-core"
            : "a desktop needs xvfb, dbus and at-spi2-core"
        }`,
      },
    );
  }
  return found;
}

/** The session bus starts the AT-SPI bus on demand from this service file (at-spi2-core). */
export function requireAtSpiService(env: NodeJS.ProcessEnv = process.env): void {
  const dirs = (env.XDG_DATA_DIRS || "/usr/local/share:/usr/share").split(delimiter);
  if (dirs.some((d) => d && existsSync(join(d, "dbus-1", "services", "org.a11y.Bus.service")))) return;
  throw new AxsnapError(
    "DESKTOP_UNAVAILABLE",
    "cannot start a desktop: no D-Bus service org.a11y.Bus (the AT-SPI bus launcher) is installed",
    { hint: "install the Debian package at-spi2-core (apt-get install at-spi2-core)" },
  );
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end; never rejects. */
export function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: timeoutMs, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || error?.message || "") });
    });
  });
}

/** The first string of a dbus-send --print-reply answer. */
export function replyString(stdout: string): string | undefined {
  return /^\s*(?:variant\s+)?string "([^"]*)"\s*$/m.exec(stdout)?.[1];
}
