/**
 * The axsnap command line on a headless desktop (one for this file), run the
 * way an agent runs it: each command a child process (`node --import tsx
 * lib/cli.ts ...`), so a ref printed by one process is acted on by another,
 * through the session directory. gtk3-widget-factory for refs, errors and
 * sequences; Chromium for the password page (its value must reach no stored
 * file), a destructive button (--confirm) and a big page (output through a
 * slow pipe, never cut).
 */
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type App, chromium, type Desktop, fileUrl, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { type CliRun, indexIn, type Json, runCli, runCliJson } from "../support/cli.js";
import { useDesktop } from "../support/linux.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
const GTK = "gtk3-widget-factory";
const SECRET = "hunter2-secret";

let desktop: Desktop;
/** XDG_STATE_HOME of every child: the default session directory is $XDG_STATE_HOME/axsnap. */
let state: string;
let store: string;

beforeAll(async () => {
  desktop = await useDesktop();
  state = mkdtempSync(join(tmpdir(), "axsnap-cli-"));
  store = join(state, "axsnap");
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

type Run = CliRun;

/** Runs the CLI as a child process with the desktop's environment and this file's session directory. */
const cli = (args: string[], env: Record<string, string> = {}): Promise<Run> =>
  runCli(args, { XDG_STATE_HOME: state, ...env });

/** Runs the CLI with --json and parses its one envelope (the whole of stdout). */
const cliJson = (args: string[]): Promise<Run & { env: Json }> => runCliJson(args, { XDG_STATE_HOME: state });

/**
 * The same in a process of its own, never served by the warm process: it holds no live
 * element of a snapshot another process printed, so it finds a ref's element by its stored identity.
 */
const ownJson = (args: string[]): Promise<Run & { env: Json }> =>
  runCliJson(args, { XDG_STATE_HOME: state, AXSNAP_DAEMON: "off" });

function lineIn(text: string, index: number): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.startsWith(`${index} `)) ?? ""
  );
}

/** Edits a stored snapshot in place (what a test forces: an identity no element has, or one two have). */
function doctor(id: string, edit: (stored: Json) => void): void {
  const file = join(store, `${id}.json`);
  const stored = JSON.parse(readFileSync(file, "utf8"));
  edit(stored);
  writeFileSync(file, JSON.stringify(stored));
}

describe("usage", () => {
  it(
    "prints help on stdout with exit 0, and a usage error as one line on stderr with exit 2",
    async () => {
      const help = await cli(["help"]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^axsnap: /);
      for (const c of [
        "click",
        "double-click",
        "right-click",
        "type",
        "set-value",
        "press",
        "scroll",
        "drag",
      ])
        expect(help.stdout).toContain(`\n  ${c} `);
      for (const c of [
        "perform-action",
        "click-at",
        "apps",
        "snapshot",
        "resolve",
        "permissions",
        "call",
        "mcp",
        "wait",
      ])
        expect(help.stdout).toContain(`\n  ${c} `);
      expect(help.stderr).toBe("");

      const one = await cli(["click", "--help"]);
      expect(one.code).toBe(0);
      expect(one.stdout).toMatch(/^usage: axsnap click TARGET \[options\]\n/);
      expect(one.stdout).toContain("--confirm");
      expect((await cli(["help", "set-value"])).stdout).toMatch(/^usage: axsnap set-value TARGET VALUE/);

      const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
      const version = await cli(["--version"]);
      expect(version).toMatchObject({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });

      for (const args of [
        [],
        ["clik"],
        ["click"],
        ["click", "12"],
        ["click", "@e12"],
        ["click", "@s8f3k2p9:e12", "--bogus"],
        ["snapshot"],
        ["snapshot", "--app", GTK, "--max-depth", "x"],
        ["scroll", "@s8f3k2p9:e1", "sideways"],
        ["call", "--calls", "[{]"],
        ["call", "--calls", '[{"command":"click"}]'],
      ]) {
        const r = await cli(args);
        expect(r.code, args.join(" ")).toBe(2);
        expect(r.stdout, args.join(" ")).toBe("");
        expect(r.stderr, args.join(" ")).toMatch(/^axsnap: [^\n]+\n$/);
      }

      // --json: the same refusal as one envelope on stdout, nothing on stderr.
      const bad = await cliJson(["snapshot", "--app", GTK, "--max-depth", "x"]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe("");
      expect(bad.env).toMatchObject({
        ok: false,
        command: "snapshot",
        error: { code: "INVALID_ARGUMENT", delivery: "not_delivered", retry: "safe" },
      });
      expect(bad.env.error.message).toMatch(/--max-depth/);
      expect(bad.env.error.hint).toMatch(/axsnap snapshot --help/);
    },
    TIMEOUT,
  );
});

describe("gtk3-widget-factory", () => {
  let gtk: App;

  beforeAll(async () => {
    gtk = await gtkWidgetFactory(desktop);
  }, TIMEOUT);

  afterAll(async () => {
    await gtk?.stop();
  });

  it(
    "snapshot --json: one envelope with the id, text, refs and screenshot path; the store is owner-only",
    async () => {
      const png = join(state, "shot.png");
      const r = await cliJson(["snapshot", "--app", GTK, "--screenshot", png]);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      const { ok, command, data } = r.env;
      expect({ ok, command }).toEqual({ ok: true, command: "snapshot" });
      expect(data.snapshotId).toMatch(/^s[a-z0-9]{7}$/);
      expect(data.app).toMatchObject({ name: GTK, pid: gtk.pid });
      expect(data.text).toMatch(/^App=gtk3-widget-factory \(pid \d+\)\n/);
      expect(data.text).toMatch(/\d+ radio button Page 1, Value: on/);
      expect(data.complete).toBe(true);
      const count = Object.keys(data.refs).length;
      expect(count).toBeGreaterThan(20);
      expect(data.refs["0"]).toBe(`@${data.snapshotId}:e0`);
      expect(data.refs[String(count - 1)]).toBe(`@${data.snapshotId}:e${count - 1}`);
      expect(data.screenshot).toMatchObject({ path: png });
      expect(data.screenshot.pixelWidth).toBeGreaterThan(100);
      expect(readFileSync(png).subarray(1, 4).toString()).toBe("PNG");
      expect(data.stored).toBe(join(store, `${data.snapshotId}.json`));

      // Owner-only: the directory 0700, every file 0600.
      expect(statSync(store).mode & 0o777).toBe(0o700);
      for (const f of readdirSync(store)) expect(statSync(join(store, f)).mode & 0o777, f).toBe(0o600);
      // What a later process needs, and no values: no snapshot text in the store.
      const stored = JSON.parse(readFileSync(data.stored, "utf8"));
      expect(stored).toMatchObject({
        format: "axsnap-cli-snapshot",
        version: 2,
        id: data.snapshotId,
        app: { name: GTK, pid: gtk.pid },
        // The window's id and kind: a later process observes this very window again.
        window: {
          title: data.window.title,
          kind: "window",
          id: expect.stringMatching(/^\/org\/a11y\/atspi\//),
        },
        screenshot: { path: png },
      });
      expect(stored.records).toHaveLength(count);
      expect(Object.keys(stored.records[0]).sort()).toEqual(
        expect.arrayContaining(["identity", "proof", "path", "actions", "settable", "secure", "role"]),
      );
      const raw = readFileSync(data.stored, "utf8");
      expect(raw).not.toContain("comboboxentry"); // the entries' values
      expect(raw).not.toContain('"value"');

      // The text form: a header that names the id, then the same text.
      const text = await cli(["snapshot", "--app", GTK]);
      expect(text.code).toBe(0);
      const [header, ...rest] = text.stdout.split("\n");
      expect(header).toMatch(
        /^snapshot (s[a-z0-9]{7}) of gtk3-widget-factory \(pid \d+\); refs: @\1:e<index>$/,
      );
      expect(rest.join("\n")).toMatch(/^App=gtk3-widget-factory/);
    },
    TIMEOUT,
  );

  it(
    "clicks a radio by a ref from another process; the change shows in the next snapshot (round trips timed)",
    async () => {
      const times: { snapshot: number; click: number; check: number }[] = [];
      for (const [from, to] of [
        ["Page 1", "Page 2"],
        ["Page 2", "Page 1"],
        ["Page 1", "Page 2"],
        ["Page 2", "Page 1"],
      ] as const) {
        const snap = await cli(["snapshot", "--app", GTK]);
        expect(snap.code, snap.stderr).toBe(0);
        const id = /^snapshot (s[a-z0-9]{7}) /.exec(snap.stdout)![1]!;
        expect(snap.stdout).toContain(`radio button ${from}, Value: on`);
        const index = indexIn(snap.stdout, new RegExp(`^\\d+ radio button ${to}, Value: off$`));

        const click = await ownJson(["click", `@${id}:e${index}`]);
        expect(click.code, click.stdout).toBe(0);
        expect(click.env).toMatchObject({
          ok: true,
          command: "click",
          data: {
            action: "click",
            delivery: "delivered_unverified",
            retry: "unsafe",
            channel: "semantic",
            target: { ref: `@${id}:e${index}`, snapshotId: id, index },
          },
        });
        expect(click.env.data.target.foundAs).toMatch(/^@s[a-z0-9]{7}:e\d+$/);
        // A page switch prints the whole window: nothing to say about where its changes start
        // (cli-replies.test.ts has the note a diff since the new observation carries).
        expect(click.env.data.shows).toBe("whole");
        expect(click.env.data.notes).toEqual([]);
        // The action's fresh snapshot, stored too: its refs work in the next process.
        expect(click.env.data.snapshot.text).toContain(`radio button ${to}, Value: on`);
        expect(readdirSync(store)).toContain(`${click.env.data.snapshot.snapshotId}.json`);

        const next = await cli(["snapshot", "--app", GTK]);
        expect(next.stdout).toContain(`radio button ${to}, Value: on`);
        expect(next.stdout).toContain(`radio button ${from}, Value: off`);
        times.push({ snapshot: snap.ms, click: click.ms, check: next.ms });
      }
      const bare = await timeBare();
      console.log(
        `CLI round trips (child processes, node --import tsx; a bare \`node --import tsx -e 0\` takes ${bare.toFixed(0)} ms here):\n${times
          .map(
            (t, i) =>
              `  ${i + 1}: snapshot ${t.snapshot.toFixed(0)} ms, click @ref ${t.click.toFixed(0)} ms (snapshot + click ${(t.snapshot + t.click).toFixed(0)} ms)`,
          )
          .join("\n")}`,
      );
    },
    TIMEOUT,
  );

  it(
    "refuses a ref whose element is gone (STALE_REF), another window (STALE_REF), two matches (AMBIGUOUS_TARGET), twins, unknown snapshots; nothing is sent",
    async () => {
      const snap = await cliJson(["snapshot", "--app", GTK]);
      const { snapshotId: id, text } = snap.env.data;
      expect(text).toContain("radio button Page 1, Value: on");
      const page2 = indexIn(text, /^\d+ radio button Page 2, Value: off$/);
      const twin = indexIn(text, /^\d+ check box checkbutton, Value: (on|off)$/);
      const twinLine = lineIn(text, twin);
      // Every ref below is used in a process of its own: found by the stored identity (edited here), never
      // by the live element the warm process that printed the snapshot may hold (cli-twins.test.ts).

      // Gone: no element has the stored identity any more.
      doctor(id, (s) => {
        s.records[page2].identity.name = "Page 2 (closed dialog)";
      });
      const gone = await ownJson(["click", `@${id}:e${page2}`]);
      expect(gone.code).toBe(1);
      expect(gone.env).toMatchObject({
        ok: false,
        command: "click",
        error: { code: "STALE_REF", delivery: "not_delivered", retry: "safe" },
      });
      expect(gone.env.error.message).toMatch(/is gone from the window/);
      expect(gone.env.error.hint).toContain(`axsnap snapshot --app ${GTK}`);

      // Text mode: the code, message and hint on stderr, nothing on stdout.
      const goneText = await cli(["click", `@${id}:e${page2}`], { AXSNAP_DAEMON: "off" });
      expect(goneText.code).toBe(1);
      expect(goneText.stdout).toBe("");
      expect(goneText.stderr).toMatch(/^axsnap: STALE_REF: .*\nhint: .*axsnap snapshot --app/);

      // Observed in a dialog that has closed since: its window is gone, refused before any matching.
      let window: Json;
      doctor(id, (s) => {
        window = { ...s.window };
        s.records[page2].identity.name = "Page 2";
        s.window = {
          ...window,
          id: "/org/a11y/atspi/accessible/99999",
          title: "About GTK Widget Factory",
          kind: "dialog",
        };
      });
      const closed = await ownJson(["click", `@${id}:e${page2}`]);
      expect(closed.env.error).toMatchObject({ code: "WINDOW_NOT_FOUND", delivery: "not_delivered" });
      expect(closed.env.error.message).toMatch(
        /the window "About GTK Widget Factory" \(dialog, id \S+\) that snapshot \w+ was taken of is gone/,
      );
      expect(closed.env.error.hint).toContain(`axsnap snapshot --app ${GTK}`);
      // Its id now names another kind of window (an id reused): not the window it was printed in.
      doctor(id, (s) => {
        s.window = { ...window, kind: "dialog" };
      });
      const reused = await ownJson(["click", `@${id}:e${page2}`]);
      expect(reused.env.error.code).toBe("STALE_REF");
      expect(reused.env.error.message).toMatch(/observed in the window .* it is a window now, not a dialog/);

      // Two matches: a record (proven unique when stored) whose identity two elements now have.
      doctor(id, (s) => {
        s.window = window;
        s.records[page2].identity = { ...s.records[twin].identity };
        s.records[page2].proof = { unique: true };
      });
      const two = await ownJson(["click", `@${id}:e${page2}`]);
      expect(two.code).toBe(1);
      expect(two.env.error).toMatchObject({
        code: "AMBIGUOUS_TARGET",
        delivery: "not_delivered",
        retry: "safe",
      });
      expect(two.env.error.message).toMatch(/^\d+ elements now match element/);

      // A record with twins (several check boxes named "checkbutton"): never guessed from another process.
      const twins = await ownJson(["click", `@${id}:e${twin}`]);
      expect(twins.env.error.code).toBe("AMBIGUOUS_TARGET");
      expect(twins.env.error.message).toMatch(/was not proven unique/);
      expect(twins.env.error.hint).toMatch(/click-at/);

      // resolve says the same without acting.
      const resolved = await ownJson(["resolve", `@${id}:e${twin}`]);
      expect(resolved.env.error.code).toBe("AMBIGUOUS_TARGET");

      // A snapshot the store does not know, and an index the snapshot never printed.
      const unknown = await ownJson(["click", "@szzzzzzz:e3"]);
      expect(unknown.code).toBe(1);
      expect(unknown.env.error.code).toBe("SNAPSHOT_NOT_FOUND");
      expect(unknown.env.error.hint).toMatch(/run `axsnap snapshot --app NAME` and use a ref it prints/);
      const beyond = await ownJson(["click", `@${id}:e99999`]);
      expect(beyond.env.error.code).toBe("ELEMENT_NOT_FOUND");

      // Nothing was sent: the radio and the check box are as they were.
      const after = await cli(["snapshot", "--app", GTK]);
      expect(after.stdout).toContain("radio button Page 1, Value: on");
      expect(after.stdout).toContain("radio button Page 2, Value: off");
      expect(after.stdout).toContain(twinLine.replace(/^\d+ /, ""));

      // resolve on a good ref: found again, nothing acted.
      const ok = await cliJson(["snapshot", "--app", GTK]);
      const page1 = indexIn(ok.env.data.text, /^\d+ radio button Page 1, Value: on$/);
      const check = await ownJson(["resolve", `@${ok.env.data.snapshotId}:e${page1}`]);
      expect(check.env).toMatchObject({
        ok: true,
        command: "resolve",
        data: { role: "radio button", name: "Page 1", how: "reobserved" },
      });
    },
    TIMEOUT,
  );

  it(
    "call --calls: one process, bare indices carry over, the first error stops it and names the step",
    async () => {
      const first = await cliJson(["snapshot", "--app", GTK]);
      const page2 = indexIn(first.env.data.text, /^\d+ radio button Page 2, Value: off$/);
      const page1 = indexIn(first.env.data.text, /^\d+ radio button Page 1, Value: on$/);

      const calls = JSON.stringify([
        { command: "snapshot", app: GTK, style: "compact" },
        { command: "click", target: page2 },
        { command: "click", target: page1, snapshot: false },
        { command: "snapshot", app: GTK },
        { command: "click", target: 99999 },
        { command: "click", target: page2 },
      ]);
      const r = await cliJson(["call", "--calls", calls]);
      expect(r.code).toBe(1);
      expect(r.env).toMatchObject({
        ok: false,
        command: "call",
        error: { code: "ELEMENT_NOT_FOUND", step: 5, stepCommand: "click" },
      });
      const steps = r.env.data.steps;
      expect(steps.map((s: { command: string }) => s.command)).toEqual([
        "snapshot",
        "click",
        "click",
        "snapshot",
      ]);
      const s1 = steps[0].data;
      expect(s1.text).toMatch(/radio "Page 1" checked/); // compact
      // A bare index is that element of the latest snapshot the sequence printed.
      expect(steps[1].data.target).toEqual({
        ref: `@${s1.snapshotId}:e${page2}`,
        snapshotId: s1.snapshotId,
        index: page2,
      });
      expect(steps[1].data.notes).toEqual([]); // its live element: no re-observation
      expect(steps[1].data.snapshot.text).toContain("radio button Page 2, Value: on");
      // Step 3 took no snapshot: its bare index still meant step 2's fresh snapshot.
      expect(steps[2].data.target.snapshotId).toBe(steps[1].data.snapshot.snapshotId);
      expect(steps[2].data.snapshot).toBeUndefined();
      expect(steps[3].data.text).toContain("radio button Page 1, Value: on");

      // Text mode: the steps that ran, then the error naming the step, exit 1.
      const text = await cli(["call", "--calls", calls]);
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/^\[step 1: snapshot\]\nsnapshot s/);
      expect(text.stdout).toContain("[step 4: snapshot]");
      expect(text.stdout).not.toContain("[step 5");
      expect(text.stderr).toMatch(/^axsnap: step 5 \(click\): ELEMENT_NOT_FOUND: /);

      // A bad step is a usage error before anything runs.
      const bad = await cli([
        "call",
        "--calls",
        JSON.stringify([{ command: "click", target: 1 }, { command: "fly" }]),
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/^axsnap: step 2: "command" must be one of/);
    },
    TIMEOUT,
  );

  it(
    "prunes the store by age (1 h) and count (50)",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "axsnap-cli-prune-"));
      const session = join(dir, "s");
      mkdirSync(session, { mode: 0o700 });
      const old = Date.now() / 1000 - 2 * 3600;
      // Ten files two hours old, fifty younger ones ten seconds apart.
      for (let i = 0; i < 60; i++) {
        const id = i < 10 ? `sold${String(i).padStart(4, "0")}` : `snew${String(i).padStart(4, "0")}`;
        const f = join(session, `${id}.json`);
        writeFileSync(f, "{}", { mode: 0o600 });
        const t = i < 10 ? old : Date.now() / 1000 - 3000 + i * 10;
        utimesSync(f, t, t);
      }
      const r = await cli(["snapshot", "--app", GTK, "--session", session]);
      expect(r.code, r.stderr).toBe(0);
      const left = readdirSync(session).sort();
      // The old ten by age; then the oldest young one by count (50 + the new snapshot).
      expect(left).toHaveLength(50);
      expect(left.filter((f) => f.startsWith("sold"))).toEqual([]);
      expect(left).not.toContain("snew0010.json");
      expect(left).toContain("snew0011.json");
      expect(left).toContain(`${/^snapshot (s[a-z0-9]{7})/.exec(r.stdout)![1]}.json`);
    },
    TIMEOUT,
  );
});

describe("Chromium", () => {
  it(
    "keeps a password's value out of every stored file; refuses a destructive button without --confirm",
    async () => {
      const app = await chromium(desktop, fileUrl("test/pages/form.html"), { windowName: "axsnap form" });
      try {
        let snap: Run & { env: Json };
        const until = Date.now() + 30_000;
        for (;;) {
          snap = await cliJson(["snapshot", "--app", "chromium", "--deadline", "8000"]);
          if (snap.env.ok && snap.env.data.text.includes("push button Delete account")) break;
          if (Date.now() > until) throw new Error(`the page never showed:\n${snap.stdout}`);
          await sleep(300);
        }
        const { snapshotId: id, text } = snap.env.data;
        expect(text).toMatch(/\d+ password text (\(settable, string\) )?Password/);
        expect(text).toMatch(/\d+ entry \(settable, string\) Name, Value: Ada/);
        const del = indexIn(text, /^\d+ push button Delete account$/);

        const refused = await cliJson(["click", `@${id}:e${del}`]);
        expect(refused.code).toBe(1);
        expect(refused.env.error).toMatchObject({ code: "POLICY_DENIED", delivery: "not_delivered" });
        expect(refused.env.error.hint).toMatch(/--confirm/);

        const pressed = await cliJson(["click", `@${id}:e${del}`, "--confirm"]);
        expect(pressed.code, pressed.stdout).toBe(0);
        let status = pressed.env.data.snapshot?.text ?? "";
        for (let i = 0; i < 20 && !status.includes("Account deleted"); i++) {
          await sleep(200);
          status = (await cliJson(["snapshot", "--app", "chromium"])).env.data.text;
        }
        expect(status).toContain("Account deleted");

        // The password's value and the name field's value reach no stored file.
        const files = readdirSync(store);
        expect(files.length).toBeGreaterThan(0);
        for (const f of files) {
          const raw = readFileSync(join(store, f), "utf8");
          expect(raw, f).not.toContain(SECRET);
          expect(raw, f).not.toContain("hunter2");
          expect(raw, f).not.toContain('"Ada"');
        }
        expect(snap.stdout).not.toContain(SECRET);
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "never cuts a big snapshot through a slow pipe",
    async () => {
      // 30 one-line rows of about 12,000 characters each, all on screen (Chromium exposes only what
      // shows, so test/pages/big.html prints about 13 KB): a snapshot of about 360 KB with --text-limit max.
      const page = join(state, "long-lines.html");
      const rows = Array.from(
        { length: 30 },
        (_, i) =>
          `<div class="r">${Array.from({ length: 900 }, (_, j) => `row${i}-word${j}`).join(" ")}</div>`,
      );
      writeFileSync(
        page,
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>axsnap long lines</title><style>body{margin:4px;font:12px "DejaVu Sans",sans-serif}.r{white-space:nowrap;overflow:hidden;height:16px}</style></head><body><h1>Long lines</h1>${rows.join("\n")}</body></html>`,
      );
      const app = await chromium(desktop, fileUrl(page), { windowName: "axsnap long lines" });
      try {
        const args = ["snapshot", "--app", "chromium", "--text-limit", "max", "--deadline", "20000"];
        let ref: Run & { env: Json };
        const until = Date.now() + 60_000;
        for (;;) {
          ref = await cliJson(args);
          if (ref.env.ok && ref.env.data.complete && ref.env.data.text.includes("row29-word899")) break;
          if (Date.now() > until) throw new Error(`the page never showed:\n${ref.stdout.slice(0, 2000)}`);
          await sleep(500);
        }
        /** One run through a pipe whose reader sleeps first, so the writer fills it and must wait. */
        const piped = (extra: string[]) =>
          new Promise<Buffer>((resolve, reject) => {
            const sh = spawn(
              "bash",
              [
                "-c",
                `${process.execPath} --import tsx lib/cli.ts ${[...args, ...extra].join(" ")} | (sleep 1; cat)`,
              ],
              { env: { ...process.env, XDG_STATE_HOME: state }, stdio: ["ignore", "pipe", "inherit"] },
            );
            const out: Buffer[] = [];
            sh.stdout.on("data", (b: Buffer) => out.push(b));
            sh.on("error", reject);
            sh.on("close", (code) =>
              code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`exit ${code}`)),
            );
          });
        // Two snapshots of the same page can differ (Chromium's tab name gains "Memory usage - 32.7 MB"
        // at some point), so each run is checked against itself, exactly.
        const sizes: string[] = [];
        for (let i = 0; i < 3; i++) {
          // --json: the bytes that arrived are exactly the envelope they encode.
          const json = await piped(["--json"]);
          const envelope = JSON.parse(json.toString("utf8"));
          const expected = Buffer.byteLength(`${JSON.stringify(envelope)}\n`);
          expect(expected).toBeGreaterThan(5 * 65536);
          expect(json.length).toBe(expected);
          // Text: the header, then the envelope's text form, byte for byte (header + text + newline);
          // every record the store holds for it is a printed line, and the last line is the footer.
          const out = await piped([]);
          const text = out.toString("utf8");
          const id = /^snapshot (s[a-z0-9]{7}) /.exec(text)![1]!;
          const stored = JSON.parse(readFileSync(join(store, `${id}.json`), "utf8"));
          const lines = text.split("\n");
          expect(lines.filter((l) => /^\t*\d+ /.test(l)).length).toBe(stored.records.length);
          expect(lines.at(-1)).toBe("");
          expect(lines.at(-2)).toMatch(/^The focused UI element is \d+ /);
          expect(text).toContain("row29-word899");
          // The header names the very snapshot whose records the store holds (runs differ, so no cross-run compare).
          expect(
            text.startsWith(
              `snapshot ${id} of ${stored.app.name} (pid ${stored.app.pid}); refs: @${id}:e<index>\n`,
            ),
          ).toBe(true);
          sizes.push(`json ${json.length}/${expected}, text ${out.length}`);
        }
        console.log(`big snapshot through a slow pipe (bytes arrived/expected): ${sizes.join("; ")}`);

        // Before, with console.log and process.exit(): 65536 or 131072 bytes, what the pipe had taken.
      } finally {
        await app.stop();
      }
    },
    TIMEOUT,
  );
});

/** How long node takes to start with the tsx loader and do nothing: the floor of every CLI run here. */
async function timeBare(): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "-e", "0"], { stdio: "ignore" });
    child.on("error", reject);
    child.on("close", () => resolve());
  });
  return performance.now() - t0;
}
