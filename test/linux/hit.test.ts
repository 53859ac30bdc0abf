/**
 * Issue 18 item 2: input at screenshot pixels is judged by what is under the
 * point now, not by the snapshot's frames. A Chromium page of our own
 * (test/pages/moving.html) swaps "Safe" and "Delete everything" when its
 * "Move trigger" field gets focus; the test focuses it from a second session
 * after the agent's snapshot and waits (bounded) until a new observation shows
 * the swap, then clicks the old snapshot's pixels, through the API, the MCP
 * server and the CLI (a snapshot stored by one process, click-at by another).
 * The page logs every click in its title.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, type ElementRecord, type Session, type Snapshot } from "../../lib/index.js";
import { liveObservation } from "../../lib/observe/desktop.js";
import { type App, chromium, type Desktop, fileUrl, gtkWidgetFactory } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";
import { rejects } from "../support/rejects.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 90_000;
let desktop: Desktop;

beforeAll(async () => {
  desktop = await useDesktop();
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
});

function button(snap: Snapshot, name: string): ElementRecord {
  const r = snap.records.find((x) => x.role === "push button" && x.title === name);
  if (!r) throw new Error(`no button ${name} in ${snap.id}:\n${snap.text}`);
  return r;
}

/** Snapshots (bounded) until `test` holds: web content arrives after the window, and changes late. */
async function until(s: Session, app: number, test: (snap: Snapshot) => boolean): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await s.snapshot({ app, screenshot: false, deadlineMs: 8000 });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

const sameFrame = (a: ElementRecord, b: ElementRecord) =>
  JSON.stringify(a.screenFrame) === JSON.stringify(b.screenFrame);

/** The clicks the page logged ("moving #<n> <label>" in its title; none yet: 0). */
const clicks = (s: Snapshot) =>
  /moving #(\d+) (.*?)(?: - Chromium)?$/.exec(s.window.title)?.slice(1) ?? ["0"];

/**
 * Focuses the page's "Move trigger" from `watcher` (Safe and Delete everything trade places), then waits
 * until a new observation shows Delete everything exactly where `before` showed Safe.
 */
async function swap(watcher: Session, app: number, before: Snapshot): Promise<Snapshot> {
  const now = await until(watcher, app, (s) => s.text.includes("Move trigger"));
  const trigger = now.records.find((r) => r.title === "Move trigger")!;
  await liveObservation(now)!.backend.focus(trigger.handle!, 3000);
  return until(
    watcher,
    app,
    (s) =>
      sameFrame(button(s, "Delete everything"), button(before, "Safe")) &&
      sameFrame(button(s, "Safe"), button(before, "Delete everything")),
  );
}

/** A record's click point in its snapshot's screenshot pixels. */
function pixelsOf(snap: Snapshot, r: ElementRecord): { x: number; y: number } {
  const shot = snap.screenshot!;
  return {
    x: (r.clickPoint!.x - shot.windowOrigin.x) * shot.scale,
    y: (r.clickPoint!.y - shot.windowOrigin.y) * shot.scale,
  };
}

describe("clickAt judges the point by the live UI (API)", () => {
  let session: Session;
  let watcher: Session;
  let app: App;

  beforeAll(async () => {
    app = await chromium(desktop, fileUrl("test/pages/moving.html"), { windowName: "axsnap moving" });
    session = createSession();
    watcher = createSession();
  }, TIMEOUT);
  afterAll(async () => {
    await session?.close();
    await watcher?.close();
    await app?.stop();
  });

  it(
    "a point on an element that did not move: delivered, the live element in the note",
    async () => {
      await until(session, app.pid, (s) => s.text.includes("push button Keep"));
      const snap = await session.snapshot({ app: app.pid });
      const keep = button(snap, "Keep");
      const p = pixelsOf(snap, keep);
      const result = await session.clickAt(p.x, p.y, { of: snap });
      expect(result.delivery).toBe("delivered_unverified");
      expect(result.notes).toContain(`the point is on element ${keep.index} (push button Keep)`);
      const after = await until(watcher, app.pid, (s) => clicks(s)[0] === "1");
      expect(clicks(after)).toEqual(["1", "Keep"]);
    },
    TIMEOUT,
  );

  it(
    '"Delete everything" moved under Safe\'s pixels: refused, nothing sent, raw or not',
    async () => {
      const snap = await session.snapshot({ app: app.pid });
      const safe = button(snap, "Safe");
      const danger = button(snap, "Delete everything");
      const atSafe = pixelsOf(snap, safe);
      const atDanger = pixelsOf(snap, danger);
      const moved = await swap(watcher, app.pid, snap);
      const logged = clicks(moved);

      const t0 = performance.now();
      const e = await rejects(session.clickAt(atSafe.x, atSafe.y, { of: snap }));
      const ms = performance.now() - t0;
      expect(["POLICY_DENIED", "STALE_REF"]).toContain(e.code);
      expect(e.delivery).toBe("not_delivered");
      expect(e.message).toMatch(/Delete everything/);
      console.log(
        `clickAt on Safe's old centre after the swap (${ms.toFixed(0)} ms): ${e.code}: ${e.message}`,
      );

      // Raw pixels skip the sameness check, never the guards on what is there now.
      const raw = await rejects(session.clickAt(atSafe.x, atSafe.y, { of: snap, raw: true }));
      expect(raw.code).toBe("POLICY_DENIED");
      expect(raw.delivery).toBe("not_delivered");
      expect(raw.message).toMatch(/Delete everything/);

      // Where Delete everything was, harmless Safe is now: not what the snapshot showed there.
      const stale = await rejects(session.clickAt(atDanger.x, atDanger.y, { of: snap }));
      expect(stale.code).toBe("STALE_REF");
      expect(stale.message).toMatch(/Safe/);
      expect(stale.delivery).toBe("not_delivered");

      const still = await until(watcher, app.pid, () => true);
      expect(clicks(still), "the page logged a click").toEqual(logged);

      // Asked for raw pixels: what is there now (Safe) is clicked, and the note says so.
      const clicked = await session.clickAt(atDanger.x, atDanger.y, { of: snap, raw: true });
      expect(clicked.delivery).toBe("delivered_unverified");
      expect(clicked.notes.join(" ")).toMatch(/push button "Safe"/);
      const after = await until(watcher, app.pid, (s) => clicks(s)[0] !== logged[0]);
      expect(clicks(after)[1]).toBe("Safe");
    },
    TIMEOUT,
  );
});

describe("MCP click {x, y} judges the point by the live UI", () => {
  let app: App;
  let client: Client;
  let watcher: Session;
  const stderr: string[] = [];

  beforeAll(async () => {
    app = await chromium(desktop, fileUrl("test/pages/moving.html"), { windowName: "axsnap moving" });
    watcher = createSession();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", "lib/mcp-main.ts"],
      env: { ...(process.env as Record<string, string>), ...desktop.env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => stderr.push(d.toString()));
    client = new Client({ name: "axsnap-test", version: "0.0.0" });
    await client.connect(transport);
  }, TIMEOUT);
  afterAll(async () => {
    await client?.close();
    await watcher?.close();
    await app?.stop();
    if (stderr.length > 0) console.log(`server stderr:\n${stderr.join("").slice(-2000)}`);
  });

  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const texts = (r: CallToolResult) => r.content.flatMap((b) => (b.type === "text" ? [b.text] : []));

  it(
    "refuses the moved destructive button, nothing sent, with and without raw",
    async () => {
      const ready = await until(watcher, app.pid, (s) => s.text.includes("push button Keep"));
      // The server's snapshot: the latest of the app in its session, with its screenshot.
      const state = await call("get_app_state", { app: app.pid });
      const header = texts(state).find((t) => /^Snapshot s[a-z0-9]{7} /.test(t))!;
      expect(header).toMatch(/push button Safe/);
      const [, w] = /Screenshot: (\d+)x(\d+) px/.exec(header)!;
      // Its pixels, from this process's observation of the same window (pixels per point from the width).
      const seen = await watcher.snapshot({ app: app.pid });
      const scale = Number(w) / seen.window.frame.w;
      const safe = button(seen, "Safe");
      const x = (safe.clickPoint!.x - seen.window.frame.x) * scale;
      const y = (safe.clickPoint!.y - seen.window.frame.y) * scale;
      expect(sameFrame(button(ready, "Safe"), safe)).toBe(true);
      const moved = await swap(watcher, app.pid, seen);
      const logged = clicks(moved);

      for (const extra of [{}, { raw: true }]) {
        const r = await call("click", { app: app.pid, x, y, ...extra });
        expect(r.isError, texts(r).join("\n")).toBe(true);
        const e = JSON.parse(texts(r)[0]!) as { code: string; message: string; delivery: string };
        expect(["POLICY_DENIED", "STALE_REF"]).toContain(e.code);
        expect(e.delivery).toBe("not_delivered");
        expect(e.message).toMatch(/Delete everything/);
        console.log(`MCP click ${JSON.stringify({ x, y, ...extra })}: ${e.code}: ${e.message}`);
      }
      const still = await until(watcher, app.pid, () => true);
      expect(clicks(still), "the page logged a click").toEqual(logged);
    },
    TIMEOUT,
  );
});

describe("CLI click-at from another process compares the new observation with the stored snapshot", () => {
  let app: App;
  let watcher: Session;
  let state: string;

  beforeAll(async () => {
    app = await chromium(desktop, fileUrl("test/pages/moving.html"), { windowName: "axsnap moving" });
    watcher = createSession();
    state = mkdtempSync(join(tmpdir(), "axsnap-hit-cli-"));
  }, TIMEOUT);
  afterAll(async () => {
    await watcher?.close();
    await app?.stop();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  /** One CLI process with --json: its envelope. */
  function cli(
    args: string[],
  ): Promise<{ ok: boolean; data?: Record<string, unknown>; error?: Record<string, string> }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", "lib/cli.ts", ...args, "--json"], {
        env: { ...process.env, XDG_STATE_HOME: state },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const out: Buffer[] = [];
      child.stdout.on("data", (d: Buffer) => out.push(d));
      child.on("error", reject);
      child.on("close", () => resolve(JSON.parse(Buffer.concat(out).toString("utf8"))));
    });
  }

  it(
    "a harmless element moved under the point is STALE_REF; --raw clicks it; the moved destructive one is refused",
    async () => {
      await until(watcher, app.pid, (s) => s.text.includes("push button Keep"));
      const file = join(state, "shot.png");
      const printed = await cli(["snapshot", "--app", String(app.pid), "--screenshot", file]);
      expect(printed.ok).toBe(true);
      const id = printed.data!.snapshotId as string;
      const shot = printed.data!.screenshot as { scale: number; windowOrigin: { x: number; y: number } };
      const seen = await watcher.snapshot({ app: app.pid, screenshot: false });
      const at = (r: ElementRecord) => [
        String((r.clickPoint!.x - shot.windowOrigin.x) * shot.scale),
        String((r.clickPoint!.y - shot.windowOrigin.y) * shot.scale),
      ];
      const atSafe = at(button(seen, "Safe"));
      const atDanger = at(button(seen, "Delete everything"));
      const moved = await swap(watcher, app.pid, seen);
      const logged = clicks(moved);

      const stale = await cli(["click-at", ...atDanger, "--of", id]);
      expect(stale.ok).toBe(false);
      expect(stale.error).toMatchObject({ code: "STALE_REF", delivery: "not_delivered" });
      expect(stale.error!.message).toMatch(/push button Safe in a new observation/);
      expect(stale.error!.hint).toMatch(/--raw/);
      const danger = await cli(["click-at", ...atSafe, "--of", id, "--raw"]);
      expect(danger.error).toMatchObject({ code: "POLICY_DENIED", delivery: "not_delivered" });
      expect(clicks(await until(watcher, app.pid, () => true))).toEqual(logged);

      const raw = await cli(["click-at", ...atDanger, "--of", id, "--raw"]);
      expect(raw.ok).toBe(true);
      const after = await until(watcher, app.pid, (s) => clicks(s)[0] !== logged[0]);
      expect(clicks(after)[1]).toBe("Safe");
    },
    TIMEOUT,
  );
});

describe("GTK: where the toolkit's hit test answers for a printed element's parent", () => {
  let app: App;
  let session: Session;

  beforeAll(async () => {
    app = await gtkWidgetFactory(desktop);
    session = createSession();
  }, TIMEOUT);
  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "a column header (GTK's table answers for it) is clicked, named as it reads now",
    async () => {
      const snap = await until(session, app.pid, (s) => /table column header Name/.test(s.text));
      const withShot = await session.snapshot({ app: app.pid });
      const header = withShot.records.find(
        (r) => r.roleText === "table column header" && r.title === "Name",
      )!;
      expect(snap.records.some((r) => r.title === "Name")).toBe(true);
      const p = pixelsOf(withShot, header);
      const result = await session.clickAt(p.x, p.y, { of: withShot, snapshot: false });
      expect(result.delivery).toBe("delivered_unverified");
      expect(result.notes).toEqual([`the point is on element ${header.index} (table column header Name)`]);
    },
    TIMEOUT,
  );
});
