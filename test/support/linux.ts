/**
 * Real-desktop test support: one headless desktop per test file (vitest's
 * forks pool gives each file its own process), its environment exported into
 * this process before the addon's first D-Bus call. Missing packages fail
 * loudly; these tests never skip.
 */
import { execFileSync } from "node:child_process";
import { type Desktop, startDesktop } from "../../scripts/desktop.mjs";

export async function useDesktop(options?: {
  accessibility?: boolean;
  wayland?: boolean;
  /** Wayland: false starts gnome-shell without --unsafe-mode (Eval refused, as on a user's session). */
  unsafe?: boolean;
  width?: number;
  height?: number;
}): Promise<Desktop> {
  if (process.platform !== "linux")
    throw new Error("the real-desktop tests need Linux (Xvfb, D-Bus, AT-SPI)");
  try {
    execFileSync("bash", ["scripts/install-deps.sh", "--check"], { stdio: "pipe" });
  } catch (e) {
    throw new Error(
      `packages for the real-desktop tests are missing; run scripts/install-deps.sh\n${String((e as { stdout?: Buffer }).stdout ?? e)}`,
    );
  }
  const desktop = await startDesktop(options);
  // A desktop without buses (or, on Wayland, without an X server) must not leave this process the outer session's.
  for (const name of ["DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY"])
    if (desktop.env[name] === undefined) delete process.env[name];
  Object.assign(process.env, desktop.env);
  return desktop;
}

/** Waits until `test` holds of what `get` gives, every 100 ms, bounded; the error says what never held and the last value. */
export async function waitFor<T>(
  get: () => Promise<T>,
  test: (value: T) => boolean,
  ms: number,
  what: string,
): Promise<T> {
  const end = Date.now() + ms;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await get();
      if (test(last)) return last;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > end)
      throw new Error(
        `${what} did not happen within ${ms} ms; last: ${JSON.stringify(last)?.slice(0, 2000)} ${lastError ? String(lastError) : ""}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
}
