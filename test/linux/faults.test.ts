/**
 * Faults on the real desktop: a stopped app, no D-Bus at all, an app that
 * exits in the middle of a walk. Each ends in a typed error or an incomplete
 * snapshot within the deadline; the host process carries on.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import { snapshot } from "../../lib/observe/desktop.js";
import { type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, 60_000);

afterAll(async () => {
  await desktop?.stop();
});

describe("faults on a real desktop", () => {
  it("settles within its deadline when the app is stopped (SIGSTOP)", async () => {
    const gtk = await gtkWidgetFactory(desktop);
    // One good snapshot first, so the app is known and its window found.
    await (await snapshot({ app: gtk.pid, screenshot: false })).release();
    process.kill(gtk.pid, "SIGSTOP");
    try {
      const t0 = performance.now();
      const outcome = await snapshot({ app: gtk.pid, screenshot: false, deadlineMs: 1500 }).then(
        (s) => ({ ok: true as const, s }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      const elapsed = performance.now() - t0;
      expect(elapsed).toBeLessThan(1500 + 1000);
      if (outcome.ok) {
        expect(outcome.s.complete).toBe(false);
        await outcome.s.release();
      } else {
        expect(outcome.e).toBeInstanceOf(AxsnapError);
        expect(["APP_UNRESPONSIVE", "TIMEOUT", "APP_NOT_FOUND", "WINDOW_NOT_FOUND"]).toContain(
          (outcome.e as AxsnapError).code,
        );
      }
    } finally {
      process.kill(gtk.pid, "SIGCONT");
    }
    // The backend recovers once the app answers again.
    const s = await snapshot({ app: gtk.pid, screenshot: false });
    expect(s.complete).toBe(true);
    await s.release();
    await gtk.stop();
  }, 60_000);

  it("fails with ACCESSIBILITY_UNAVAILABLE, not an abort, when there is no D-Bus", () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/axsnap-bus",
    };
    delete env.AT_SPI_BUS_ADDRESS;
    const script = `
      import { snapshot } from "./lib/observe/desktop.ts";
      try { await snapshot({ app: "anything" }); console.log(JSON.stringify({ ok: true })); }
      catch (e) { console.log(JSON.stringify({ code: e.code, hint: e.hint })); }`;
    const run = spawnSync("node", ["--import", "tsx", "--input-type=module", "-e", script], {
      env,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout.trim().split("\n").at(-1)!);
    expect(result.code).toBe("ACCESSIBILITY_UNAVAILABLE");
    expect(result.hint).toMatch(/D-Bus/);
  }, 60_000);

  it("ends in a typed error or an incomplete snapshot when the app exits mid-walk", async () => {
    const outcomes: string[] = [];
    for (const delayMs of [0, 5, 15, 30]) {
      const gtk = await gtkWidgetFactory(desktop);
      const pending = snapshot({ app: gtk.pid, deadlineMs: 3000 }).then(
        async (s) => {
          const what = s.complete ? "complete" : "incomplete";
          await s.release();
          return what;
        },
        (e: unknown) => {
          expect(e).toBeInstanceOf(AxsnapError);
          return (e as AxsnapError).code;
        },
      );
      await new Promise((r) => setTimeout(r, delayMs));
      process.kill(gtk.pid, "SIGKILL");
      outcomes.push(await pending);
      await gtk.stop();
    }
    console.log(`outcomes when the app dies mid-walk: ${outcomes.join(", ")}`);
    expect(outcomes).toHaveLength(4);
  }, 120_000);
});
