/**
 * The test bed's environment: a caller's AT_SPI_BUS_ADDRESS (set where the
 * tests run inside a desktop session that exports it) names another
 * accessibility bus; the desktop's apps and this process must not take it, or
 * apps register on the outer bus and axsnap reads the outer desktop's apps.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listApps } from "../../lib/index.js";
import { type App, type Desktop, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 60_000;
const OUTER = "unix:path=/nonexistent/outer-a11y-bus";
let desktop: Desktop;
let app: App;

beforeAll(async () => {
  process.env.AT_SPI_BUS_ADDRESS = OUTER;
  desktop = await useDesktop();
  app = await startApp(desktop, "/usr/bin/python3", ["test/apps/form-app.py"], { windowName: "axsnap form" });
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
  delete process.env.AT_SPI_BUS_ADDRESS;
});

describe("the test bed's environment", () => {
  it(
    "drops a caller's AT_SPI_BUS_ADDRESS: not in the desktop's env, this process's, or its apps'",
    async () => {
      expect(desktop.env.AT_SPI_BUS_ADDRESS).toBeUndefined();
      expect(process.env.AT_SPI_BUS_ADDRESS).toBeUndefined();
      const environ = readFileSync(`/proc/${app.pid}/environ`, "latin1").split("\0");
      expect(environ.filter((kv) => kv.startsWith("AT_SPI_BUS_ADDRESS="))).toEqual([]);
      expect((await listApps()).some((a) => a.pid === app.pid)).toBe(true);
    },
    TIMEOUT,
  );
});
