/**
 * Issue 19 §1 through the CLI door, run as an agent runs it (each command a
 * child process; test/support/cli.ts) on gtk3-widget-factory and galculator
 * under this file's headless desktop: an action prints its action line, how
 * it settled, the surfaces it opened or closed, then the diff of the fresh
 * snapshot numbered as in that snapshot (whose refs work from the next
 * process), or the whole of it when a popup opened or with --full; `--json`
 * carries changes (with refs), settled, opened and closed. scroll, drag and
 * perform-action end to end (inside `axsnap call`: their targets have twins,
 * which only one process can tell apart).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, type Desktop, gtkWidgetFactory, startApp } from "../../scripts/desktop.mjs";
import { indexIn, type Json, runCli, runCliJson, snapshotIdIn } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";

let desktop: Desktop;
let state: string;

beforeAll(async () => {
  desktop = await useDesktop();
  state = mkdtempSync(join(tmpdir(), "axsnap-cli-replies-"));
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

const cli = async (args: string[]) => {
  const r = await runCli(args, { XDG_STATE_HOME: state });
  if (r.code !== 0) throw new Error(`axsnap ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
const cliJson = async (args: string[]): Promise<Json> => {
  const r = await runCliJson(args, { XDG_STATE_HOME: state });
  if (r.code !== 0) throw new Error(`axsnap ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.env.data;
};
/** In a process of its own: a ref another process printed is found by its stored identity. */
const own = async (args: string[]) => {
  const r = await runCli(args, { XDG_STATE_HOME: state, AXSNAP_DAEMON: "off" });
  if (r.code !== 0) throw new Error(`axsnap ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};
const ownJson = async (args: string[]): Promise<Json> => {
  const r = await runCliJson(args, { XDG_STATE_HOME: state, AXSNAP_DAEMON: "off" });
  if (r.code !== 0) throw new Error(`axsnap ${args.join(" ")}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.env.data;
};

describe("gtk3-widget-factory", () => {
  let gtk: App;

  beforeAll(async () => {
    gtk = await gtkWidgetFactory(desktop);
  }, TIMEOUT);

  afterAll(async () => {
    await gtk?.stop();
  });

  it(
    "each command's changes are its own: a second ref from the same old snapshot is not credited with the first's change",
    async () => {
      // Through the warm process, which holds each printed snapshot's live elements (the check box has twins).
      await cliJson(["daemon", "start"]);
      const first = await cliJson(["snapshot", "--app", GTK]);
      const s1 = first.snapshotId as string;
      const toggle = indexIn(first.text, /^\d+ toggle button togglebutton, Value: off$/);
      const check = indexIn(first.text, /^\d+ check box checkbutton/);
      const on = await cliJson(["click", `@${s1}:e${toggle}`]);
      const second = await cliJson(["click", `@${s1}:e${check}`]);
      try {
        // Both refs come from s1; the second command's changes start where the agent last looked (the first
        // command's reply), so the toggle switched by the first command is not reported again.
        expect(second.changes.from).toBe(on.snapshot.snapshotId);
        const changedRoles = second.changes.changed.map((c: Json) => c.role);
        expect(changedRoles).toContain("check box");
        expect(changedRoles).not.toContain("toggle button");
      } finally {
        await cliJson(["click", `@${second.snapshot.snapshotId}:e${toggle}`]);
        await cliJson(["click", `@${second.snapshot.snapshotId}:e${check}`]);
        await runCli(["daemon", "stop"], { XDG_STATE_HOME: state });
      }
    },
    TIMEOUT,
  );

  it(
    "a toggle's reply is the diff of its line, and the next step acts on it by the reply's numbering (axsnap call)",
    async () => {
      const snap = await cli(["snapshot", "--app", GTK]);
      const toggle = indexIn(snap, /^\d+ toggle button togglebutton, Value: off$/);
      const calls = JSON.stringify([
        { command: "snapshot", app: GTK },
        { command: "click", target: toggle },
        { command: "click", target: toggle },
      ]);
      const text = await cli(["call", "--calls", calls]);
      const [, first, on, off] = text.split(/^\[step \d: \w+\]$/m);
      expect(on!.split("\n")[1]).toBe(
        `click @${snapshotIdIn(first!)}:e${toggle}: delivered_unverified (synthetic), retry unsafe`,
      );
      expect(on).toMatch(/^settled: (quiet after \d+ ms|not quiet)/m);
      const fresh = snapshotIdIn(on!);
      expect(on!.split("\n")).toContain(`snapshot ${fresh}, changes since ${snapshotIdIn(first!)}:`);
      expect(on).toMatch(
        new RegExp(`^\\t*${toggle} toggle button togglebutton, Value: on \\[changed: [^\\]]*value`, "m"),
      );
      expect(on).not.toContain("page tab list");
      expect(on!.length).toBeLessThan(first!.length / 3);
      // The bare index of the next step means the reply's snapshot: the same toggle, back off.
      expect(off!.split("\n")[1]).toBe(
        `click @${fresh}:e${toggle}: delivered_unverified (synthetic), retry unsafe`,
      );
      expect(off).toMatch(
        new RegExp(`^\\t*${toggle} toggle button togglebutton, Value: off \\[changed: [^\\]]*value`, "m"),
      );
      console.log(`a toggle's reply in the CLI:\n${on}`);

      const json = await cliJson(["call", "--calls", calls]);
      const step = json.steps[1].data;
      expect(step).toMatchObject({
        action: "click",
        delivery: "delivered_unverified",
        shows: "diff",
        opened: [],
        closed: [],
        settled: { mode: expect.stringMatching(/^(quiet|cap)$/), ms: expect.any(Number) },
        changes: { from: json.steps[0].data.snapshotId, to: step.snapshot.snapshotId },
      });
      expect(step.changes.changed).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            index: toggle,
            ref: `@${step.snapshot.snapshotId}:e${toggle}`,
            role: "toggle button",
            fields: expect.arrayContaining(["value"]),
          }),
        ]),
      );
      // The whole text stays in the envelope for programs.
      expect(step.snapshot.text).toMatch(/toggle button togglebutton, Value: on/);
    },
    TIMEOUT,
  );

  it(
    "an action captures the window for its fresh snapshot only with --screenshot FILE, whatever the snapshot acted on had",
    async () => {
      const snap = await cli(["snapshot", "--app", GTK]);
      const toggle = indexIn(snap, /^\d+ toggle button togglebutton, Value: off$/);
      const look = join(state, "look.png");
      const after = join(state, "after-toggle.png");
      const calls = JSON.stringify([
        { command: "snapshot", app: GTK, screenshot: look },
        { command: "click", target: toggle },
        { command: "click", target: toggle, screenshot: after },
      ]);
      const json = await cliJson(["call", "--calls", calls]);
      expect({
        look: json.steps[0].data.screenshot?.path,
        plain: json.steps[1].data.snapshot.screenshot,
        asked: json.steps[2].data.snapshot.screenshot?.path,
      }).toEqual({ look, plain: undefined, asked: after });
      expect(readFileSync(after).subarray(1, 4).toString()).toBe("PNG");
    },
    TIMEOUT,
  );

  it(
    "a page switch prints the whole window (no longer than its changes), whose refs work from the next process",
    async () => {
      const snap = await cli(["snapshot", "--app", GTK]);
      const id = snapshotIdIn(snap);
      const page2 = indexIn(snap, /^\d+ radio button Page 2, Value: off$/);
      const out = await cli(["click", `@${id}:e${page2}`]);
      expect(out.split("\n")[0]).toBe(
        `click @${id}:e${page2}: delivered_unverified (semantic), retry unsafe`,
      );
      // Whole, so nothing to say about where its changes start (served or not).
      expect(out).not.toMatch(/^note: /m);
      const fresh = snapshotIdIn(out);
      expect(out.split("\n")).toContain(
        `snapshot ${fresh}: the whole window "gtk3-widget-factory" (no longer than its changes):`,
      );
      expect(out).toMatch(/^\t*\d+ radio button Page 2, Value: on$/m);

      const page1 = indexIn(out, /^\d+ radio button Page 1, Value: off$/);
      const back = await cliJson(["click", `@${fresh}:e${page1}`]);
      expect(back).toMatchObject({
        target: { ref: `@${fresh}:e${page1}` },
        opened: [],
        closed: [],
        shows: "whole",
        changes: { to: back.snapshot.snapshotId },
      });
      expect(back.changes.added.length + back.changes.removed.length).toBeGreaterThan(10);
      expect(back.snapshot.text).toMatch(/radio button Page 1, Value: on/);
    },
    TIMEOUT,
  );

  it(
    "a combo box opening prints its popup whole; press Escape closes it (axsnap call)",
    async () => {
      const snap = await cli(["snapshot", "--app", GTK]);
      const combo = indexIn(snap, /^\d+ combo box$/);
      const calls = JSON.stringify([
        { command: "snapshot", app: GTK },
        { command: "click", target: combo },
        { command: "press", key: "Escape", app: GTK },
      ]);
      const text = await cli(["call", "--calls", calls]);
      const [, , clicked, pressed] = text.split(/^\[step \d: \w+\]$/m);
      expect(clicked).toMatch(/^opened: menu \(untitled\), id \S+$/m);
      expect(clicked).toContain("the whole menu (it just opened):");
      expect(clicked).toMatch(/menu item \(selected\) Donald Duck/);
      expect(pressed).toMatch(
        /^press: delivered_unverified \(synthetic\)|^pressKey: delivered_unverified \(synthetic\)/m,
      );
      expect(pressed).toMatch(/^closed: menu \(untitled\), id \S+$/m);
      expect(pressed).not.toContain("Donald Duck");

      const json = await cliJson(["call", "--calls", calls]);
      expect(json.steps[1].data).toMatchObject({ shows: "whole", opened: [{ kind: "menu" }] });
      expect(json.steps[2].data).toMatchObject({ closed: [{ kind: "menu" }] });
    },
    TIMEOUT,
  );

  it(
    "scroll, perform-action and drag (axsnap call): each reply is the diff of what it changed",
    async () => {
      const snap = await cli(["snapshot", "--app", GTK]);
      const lines = snap.split("\n").map((l) => l.trim());
      const lorem = lines.findIndex((l) => /^\d+ text \(settable, string\) Value: Lorem ipsum/.test(l));
      const pane = indexIn(lines[lorem - 1]!, /^\d+ scroll pane$/);
      // Its press action by name: the table cells' "Toggle" reaches no handler in this app.
      const toggle = indexIn(snap, /^\d+ toggle button togglebutton, Value: off$/);
      const slider = indexIn(snap, /^\d+ slider \(settable, float\) Value: 50$/);
      const bar = indexIn(
        snap
          .split("\n")
          .filter((l) => Number(/^\t*(\d+) /.exec(l)?.[1]) > slider)
          .join("\n"),
        /^\d+ progress bar/,
      );
      const r = await cliJson([
        "call",
        "--calls",
        JSON.stringify([
          { command: "snapshot", app: GTK },
          { command: "scroll", target: pane, direction: "down" },
          { command: "perform-action", target: toggle, name: "click" },
          { command: "perform-action", target: toggle, name: "click" },
          { command: "drag", from: slider, to: bar },
          { command: "set-value", target: slider, value: 50 },
          { command: "scroll", target: pane, direction: "up", pages: 5 },
        ]),
      ]);
      const [, scrolled, toggled, untoggled, dragged] = r.steps.map((s: Json) => s.data);
      expect(scrolled).toMatchObject({ action: "scroll", shows: "diff" });
      expect(scrolled.changes.changed).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ role: "scroll bar", fields: expect.arrayContaining(["value"]) }),
        ]),
      );
      for (const t of [toggled, untoggled]) {
        expect(t).toMatchObject({ action: "performAction", channel: "semantic", shows: "diff" });
        expect(t.changes.changed.map((c: Json) => c.index)).toContain(toggle);
      }
      expect(dragged).toMatchObject({ action: "drag", channel: "synthetic", shows: "diff" });
      expect(dragged.changes.changed).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            index: slider,
            ref: `@${dragged.snapshot.snapshotId}:e${slider}`,
            role: "slider",
          }),
        ]),
      );
    },
    TIMEOUT,
  );
});

describe("galculator", () => {
  let calc: App;

  beforeAll(async () => {
    calc = await startApp(desktop, "galculator", [], { name: "galculator" });
  }, TIMEOUT);

  afterAll(async () => {
    await calc?.stop();
  });

  it(
    "a ref from another process: every snapshot and ref its reply names resolves in the next process",
    async () => {
      const snap = await cli(["snapshot", "--app", String(calc.pid)]);
      const seven = indexIn(snap, /^\d+ toggle button 7, /);
      const four = indexIn(snap, /^\d+ toggle button 4, /);
      const out = await own(["click", `@${snapshotIdIn(snap)}:e${seven}`]);
      const from = /^snapshot s[a-z0-9]{7}(?: \([^)]*\))?, changes since (s[a-z0-9]{7})/m.exec(out)?.[1];
      expect(from).toBeDefined();
      // The observation the diff is from, taken right before the action, is named once: it is not the agent's.
      expect(out).toContain(
        `note: changes since ${from}, observed right before the action to find your ref: earlier ones are not shown`,
      );
      expect(out).not.toMatch(/found again by its identity/);
      console.log(`a reply to a ref from another process:\n${out}`);
      const named = new Set([from!, ...[...out.matchAll(/@(s[a-z0-9]{7}):e\d/g)].map((m) => m[1]!)]);
      for (const sid of named) {
        const r = await runCli(["resolve", `@${sid}:e${seven}`], { XDG_STATE_HOME: state });
        expect(`${sid}: ${r.code} ${r.stderr}`).toBe(`${sid}: 0 `);
      }
      const back = await ownJson(["click", `@${snapshotIdIn(out)}:e${four}`]);
      expect(back.target.foundAs).toBeDefined();
      expect(back.changes.changed.length).toBeGreaterThan(0);
      const refs = [
        back.target.foundAs as string,
        `@${back.changes.from}:e${four}`,
        ...[...back.changes.changed, ...back.changes.added].map((c: Json) => c.ref as string),
      ];
      for (const ref of refs) {
        const r = await runCli(["resolve", ref], { XDG_STATE_HOME: state });
        expect(`${ref}: ${r.code} ${r.stderr}`).toBe(`${ref}: 0 `);
      }
    },
    TIMEOUT,
  );

  it(
    "a digit's reply is the display's new value; the next digit by a ref of the reply's snapshot",
    async () => {
      const snap = await cli(["snapshot", "--app", String(calc.pid)]);
      const seven = indexIn(snap, /^\d+ toggle button 7, /);
      const four = indexIn(snap, /^\d+ toggle button 4, /);
      const out = await cli(["click", `@${snapshotIdIn(snap)}:e${seven}`]);
      expect(out).toMatch(/^\t*\d+ text \(settable, string\) Value: \d*7 \[changed: value\]$/m);
      // The changes are since the snapshot of the ref (the warm process holds it) or the observation made to find it.
      expect(out).toMatch(new RegExp(`^snapshot ${snapshotIdIn(out)}, changes since s[a-z0-9]{7}:$`, "m"));
      const next = await cli(["click", `@${snapshotIdIn(out)}:e${four}`]);
      expect(next).toMatch(/^\t*\d+ text \(settable, string\) Value: \d*74 \[changed: value\]$/m);

      // --full: the whole window; --screenshot FILE: the fresh snapshot's screenshot, written.
      const full = await cli(["click", `@${snapshotIdIn(next)}:e${seven}`, "--full"]);
      expect(full).toContain("(the full reply, as asked):");
      expect(full).toMatch(/^App=galculator \(pid \d+\)$/m);
      expect(full).toMatch(/^\t*\d+ toggle button 4, /m);
      const png = join(state, "after.png");
      const shot = await cli(["click", `@${snapshotIdIn(full)}:e${four}`, "--screenshot", png]);
      expect(shot).toMatch(new RegExp(`^screenshot ${png.replace(/[.]/g, "\\.")}: \\d+x\\d+ px`, "m"));
      expect(readFileSync(png).subarray(1, 4).toString()).toBe("PNG");
      expect(shot).toMatch(/^snapshot s[a-z0-9]{7}, changes since s[a-z0-9]{7}:$/m);
    },
    TIMEOUT,
  );
});
