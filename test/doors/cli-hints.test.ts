/**
 * CLI hints speak CLI (issue 19, section 8): every hint the library can put
 * on an error, passed through the CLI's `cliHint`, names commands and flags,
 * never API names (`listWindows(app)`, `{ app: 1234 }`, `maxNodes`, "a
 * confirm callback"). The hints are read from the library's own source with
 * the TypeScript parser (every `hint:` property, every `hint`/`*_HINT`
 * constant, every hint argument of `invalidArgument`), plus each code's
 * default, so a hint added later is checked too. Then one real run: a
 * `--window` the app does not have.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliHint, errorData } from "../../lib/doors/cli/output.js";
import { AxsnapError, ERROR_CODES } from "../../lib/model/errors.js";
import { type App, type Desktop, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { runCli } from "../support/cli.js";
import { libraryHints } from "../support/hints.js";
import { useDesktop } from "../support/linux.js";

/** What only a program calling the library can do: none of it may reach a CLI hint. */
const API_SPEAK = [
  /listWindows/,
  /listApps/,
  /\bsnapshot\(/,
  /\{ ?app:/,
  /\bwindow: \{/,
  /\bwindow option\b/,
  /maxNodes|maxDepth|deadlineMs|timeoutMs/,
  /confirm callback/,
  /screenshot: true/,
  /raw: true/,
  /`observed`/,
  /\b(?:waitFor|setValue|pressKey|typeText|clickAt|performAction)\b/,
  /\bby (?:its )?index\b/,
  // The CLI says which command takes a snapshot.
  /take a (?:new )?snapshot/i,
];

function apiSpeakIn(hint: string): RegExp | undefined {
  return API_SPEAK.find((re) => re.test(hint));
}

describe("CLI hints name CLI commands", () => {
  it("reads the library's hints (the harvest finds the ones known to speak library)", () => {
    const hints = libraryHints().map((h) => h.hint);
    expect(hints.length).toBeGreaterThan(30);
    expect(hints.some((h) => /listWindows\(app\) lists its windows/.test(h))).toBe(true);
    expect(hints.some((h) => /confirm callback/.test(h))).toBe(true);
    expect(hints.some((h) => /\{ app: 1234 \}/.test(h))).toBe(true);
  });

  it("every code's default hint, through cliHint, speaks CLI", () => {
    for (const code of ERROR_CODES) {
      const hint = cliHint(new AxsnapError(code, "m"), "gedit");
      expect(apiSpeakIn(hint), `${code}: ${hint}`).toBeUndefined();
    }
  });

  it("every hint the library writes, through cliHint, speaks CLI", () => {
    const bad: string[] = [];
    for (const { where, hint } of libraryHints()) {
      // Each code once: a hint is translated the same whatever code it rides on, except a code's default.
      const translated = cliHint(new AxsnapError("ACTION_FAILED", "m", { hint }), "gedit");
      const re = apiSpeakIn(translated);
      if (re) bad.push(`${where}: ${re} in "${translated}"`);
    }
    expect(bad).toEqual([]);
  });

  it("carries the refused command's --desktop and --session into each command it names, but desktop commands", () => {
    const e = new AxsnapError("AMBIGUOUS_TARGET", "twins", {
      hint: "run `axsnap snapshot --app gedit` again; or `axsnap call`; or `axsnap desktop start d2 --wayland`; or `axsnap apps --desktop other`",
    });
    expect(errorData(e, "gedit", { desktop: "d1", session: "/tmp/my store" }).hint).toBe(
      "run `axsnap snapshot --app gedit --desktop d1 --session '/tmp/my store'` again; or `axsnap call --desktop d1 --session '/tmp/my store'`; or `axsnap desktop start d2 --wayland`; or `axsnap apps --desktop other`",
    );
    // On the user's own desktop, with the default store: as the library's hint reads in CLI terms.
    expect(errorData(e, "gedit").hint).toBe(cliHint(e, "gedit"));
  });

  it("names the app in the commands it suggests", () => {
    const hint = cliHint(
      new AxsnapError("WINDOW_NOT_FOUND", "m", {
        hint: "the app has no such window (it may have closed); listWindows(app) lists its windows, or take a snapshot without the window option",
      }),
      "gtk3-widget-factory",
    );
    expect(hint).toContain("`axsnap windows --app gtk3-widget-factory`");
    expect(hint).toContain("`axsnap snapshot --app gtk3-widget-factory` without --window");
  });
});

describe("a --window the app does not have, through the real CLI", () => {
  let desktop: Desktop;
  let app: App;
  beforeAll(async () => {
    desktop = await useDesktop();
    app = await gtkWidgetFactory(desktop);
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await desktop?.stop();
  });

  it("answers WINDOW_NOT_FOUND with `axsnap windows`, not listWindows", async () => {
    const r = await runCli(["snapshot", "--app", "gtk3-widget-factory", "--window", "Save"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/WINDOW_NOT_FOUND/);
    const hint = /^hint: (.*)$/m.exec(r.stderr)?.[1] ?? "";
    expect(hint).toContain("`axsnap windows --app gtk3-widget-factory`");
    expect(apiSpeakIn(hint)).toBeUndefined();
  }, 60_000);
});
