/**
 * The README's agent loop (examples/agent-loop.ts) runs as written against
 * gtk3-widget-factory on a headless desktop, and the README shows that very
 * file, so the documented loop cannot rot.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const run = promisify(execFile);
let desktop: Desktop;
let gtk: App;

beforeAll(async () => {
  desktop = await useDesktop();
  gtk = await gtkWidgetFactory(desktop);
}, 60_000);

afterAll(async () => {
  await gtk?.stop();
  await desktop?.stop();
});

describe("examples/agent-loop.ts", () => {
  it("observes, picks Page 2 by name, clicks it by ref and reads it checked", async () => {
    const { stdout } = await run("npx", ["tsx", "examples/agent-loop.ts", "gtk3-widget-factory", "Page 2"], {
      env: { ...process.env, ...desktop.env },
      timeout: 60_000,
    });
    expect(stdout).toMatch(/^click Page 2: delivered_\w+ via (semantic|synthetic)$/m);
    expect(stdout).toMatch(/^now: \d+: radio "Page 2".*checked/m);
  }, 90_000);

  it("prints a typed refusal with its hint for an element that is not there", async () => {
    const out = await run("npx", ["tsx", "examples/agent-loop.ts", "gtk3-widget-factory", "No such thing"], {
      env: { ...process.env, ...desktop.env },
      timeout: 60_000,
    }).catch((e: { stdout: string; stderr: string; code: number }) => e);
    expect("code" in out ? out.code : 0).not.toBe(0);
  }, 90_000);

  it("is the loop the README shows, verbatim", () => {
    const readme = readFileSync("README.md", "utf8");
    const file = readFileSync("examples/agent-loop.ts", "utf8");
    const body = file.slice(file.indexOf("import "));
    expect(readme).toContain(body.trim());
  });
});
