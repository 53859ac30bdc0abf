/**
 * Issue 31, items 1 and 2: pointer input on something that changes when the
 * pointer arrives. Three apps of our own change under the pointer: a web page
 * that swaps its "Keep" button for "Delete everything" on mouseover
 * (test/pages/hover.html), a GTK button relabelled on enter-notify and a
 * label relabelled while the pointer is over its event box
 * (test/apps/hover-app.py), and a drawn button whose text reads "Delete
 * everything" while the pointer is in its box (test/apps/drawn-text.py,
 * read by OCR). Each logs what was pressed in its window title. Before each
 * attempt the pointer is parked on an empty part of the window and the app
 * is seen unhovered; the attempt must press nothing and name what is under
 * the pointer now, through the library (clickAt, a click by ref), MCP
 * (`click {x, y}`) and the CLI (`click-at` from another process, and inside
 * `call`). The GTK button's semantic click (its press action, no pointer)
 * and a drawn button that does not change are pressed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AxsnapError,
  createSession,
  type ElementRecord,
  type Session,
  type Snapshot,
} from "../../lib/index.js";
import { liveObservation } from "../../lib/observe/desktop.js";
import { type App, chromium, type Desktop, fileUrl, startApp } from "../../scripts/desktop.mjs";
import { type Json, runCliJson } from "../support/cli.js";
import { type DrawnSpec, startDrawnText } from "../support/drawn-text.js";
import { useDesktop } from "../support/linux.js";
import { useMcpClients } from "../support/mcp.js";
import { rejects } from "../support/rejects.js";
import { sleep } from "../support/sleep.js";

const TIMEOUT = 120_000;
let desktop: Desktop;
let state: string;
const connect = useMcpClients();

beforeAll(async () => {
  desktop = await useDesktop();
  state = mkdtempSync(join(tmpdir(), "axsnap-hover-"));
}, TIMEOUT);

afterAll(async () => {
  await desktop?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
});

/** Snapshots (bounded) until `test` holds: content arrives after the window, and changes late. */
async function until(s: Session, app: number, test: (snap: Snapshot) => boolean): Promise<Snapshot> {
  const end = Date.now() + 20_000;
  for (;;) {
    const snap = await s.snapshot({ app, deadlineMs: 8000 });
    if (test(snap)) return snap;
    if (Date.now() > end) throw new Error(`never showed; last snapshot:\n${snap.text}`);
    await sleep(200);
  }
}

/** The window's title, read without touching the pointer. */
async function titleOf(app: number): Promise<string> {
  const s = createSession();
  try {
    return (await s.snapshot({ app, screenshot: false, ocr: false })).window.title;
  } finally {
    await s.close();
  }
}

/** The pointer to a point of the window (window-relative points) that holds nothing that reacts. */
async function park(s: Session, app: number, at: { x: number; y: number }): Promise<void> {
  const snap = await s.snapshot({ app, screenshot: false, ocr: false });
  const live = liveObservation(snap)!;
  const f = snap.window.frame;
  await live.backend.pointer(live.window, { kind: "move", x: f.x + at.x, y: f.y + at.y }, 3000);
}

function record(snap: Snapshot, test: (r: ElementRecord) => boolean, what: string): ElementRecord {
  const r = snap.records.find(test);
  if (!r) throw new Error(`no ${what} in ${snap.id}:\n${snap.text}`);
  return r;
}

/** A record's click point in its snapshot's screenshot pixels. */
function pixelsOf(snap: Snapshot, r: ElementRecord): { x: number; y: number } {
  const shot = snap.screenshot!;
  return {
    x: (r.clickPoint!.x - shot.windowOrigin.x) * shot.scale,
    y: (r.clickPoint!.y - shot.windowOrigin.y) * shot.scale,
  };
}

const textOf = (r: CallToolResult) =>
  r.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");

/**
 * `axsnap call` with a snapshot of the app and a click-at its pixels, in one process (the snapshot held,
 * as the warm process or a script holds it): the error of the click-at step.
 */
async function callCli(app: number, p: { x: number; y: number }, png: string): Promise<AxsnapError> {
  const steps = [
    { command: "snapshot", app, screenshot: join(state, png) },
    { command: "click-at", x: p.x, y: p.y },
  ];
  const r = await runCliJson(["call", "--calls", JSON.stringify(steps)], {
    ...desktop.env,
    XDG_STATE_HOME: state,
  });
  expect(r.env.ok, r.stdout).toBe(false);
  return r.env.error;
}

/** A refusal must press nothing and name what is under the pointer now. */
function refusedNaming(e: Pick<AxsnapError, "code" | "message" | "delivery">, now: RegExp): void {
  console.log(`${e.code}: ${e.message}`);
  expect(e.code, e.message).toBe("STALE_REF");
  expect(e.message).toMatch(now);
  expect(e.delivery).toBe("not_delivered");
}

describe("a web page that swaps Keep for Delete everything on mouseover", () => {
  let app: App;
  let session: Session;
  const isKeep = (r: ElementRecord) => r.role === "push button" && r.title === "Keep";
  /** The page's clicks, from its title ("hover #<n> <label>"): none yet is "0". */
  const clicks = (title: string) => /hover #(\d+) (.*?)(?: - Chromium)?$/.exec(title)?.slice(1) ?? ["0"];
  /** The pointer off the button, and the page showing Keep again. */
  const unhovered = async () => {
    await park(session, app.pid, { x: 900, y: 600 });
    return until(session, app.pid, (s) => s.records.some(isKeep));
  };

  beforeAll(async () => {
    app = await chromium(desktop, fileUrl("test/pages/hover.html"), { windowName: "axsnap hover" });
    session = createSession();
  }, TIMEOUT);
  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "clickAt on Keep: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const snap = await unhovered();
      const p = pixelsOf(snap, record(snap, isKeep, "Keep"));
      const e = await rejects(session.clickAt(p.x, p.y, { of: snap, snapshot: false }));
      refusedNaming(e, /Delete everything/);
      await sleep(300);
      expect(clicks(await titleOf(app.pid))).toEqual(["0"]);
    },
    TIMEOUT,
  );

  it(
    "raw pixels: the guards judge what is there after the hover (confirm asked about Delete everything, declined)",
    async () => {
      const asked: string[] = [];
      const s = createSession({
        confirm: (r) => {
          asked.push(`${r.action} ${r.name}`);
          return false;
        },
      });
      try {
        await park(s, app.pid, { x: 900, y: 600 });
        const snap = await until(s, app.pid, (x) => x.records.some(isKeep));
        const p = pixelsOf(snap, record(snap, isKeep, "Keep"));
        const e = await rejects(s.clickAt(p.x, p.y, { of: snap, raw: true, snapshot: false }));
        expect(e.code, e.message).toBe("POLICY_DENIED");
        expect(e.delivery).toBe("not_delivered");
        expect(asked).toEqual(["clickAt Delete everything"]);
      } finally {
        await s.close();
      }
      await sleep(300);
      expect(clicks(await titleOf(app.pid))).toEqual(["0"]);
    },
    TIMEOUT,
  );

  it(
    "MCP click {x, y} on Keep: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      await unhovered();
      const s = createSession();
      const client = await connect(s);
      const state = (await client.callTool({
        name: "get_app_state",
        arguments: { app: app.pid },
      })) as CallToolResult;
      expect(state.isError, textOf(state)).toBeFalsy();
      const shown = s.address(0, app.pid).snapshot;
      const p = pixelsOf(shown, record(shown, isKeep, "Keep"));
      const r = (await client.callTool({
        name: "click",
        arguments: { app: app.pid, x: p.x, y: p.y },
      })) as CallToolResult;
      expect(r.isError, textOf(r)).toBe(true);
      refusedNaming(JSON.parse(textOf(r)), /Delete everything/);
      await s.close();
      await sleep(300);
      expect(clicks(await titleOf(app.pid))).toEqual(["0"]);
    },
    TIMEOUT,
  );

  it(
    "CLI click-at on Keep from another process: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const seen = await unhovered();
      const env = { ...desktop.env, XDG_STATE_HOME: state };
      const printed = await runCliJson(
        ["snapshot", "--app", String(app.pid), "--screenshot", join(state, "web.png")],
        env,
      );
      expect(printed.env.ok, printed.stdout).toBe(true);
      const shot = printed.env.data.screenshot as Json;
      const keep = record(seen, isKeep, "Keep");
      const x = (keep.clickPoint!.x - shot.windowOrigin.x) * shot.scale;
      const y = (keep.clickPoint!.y - shot.windowOrigin.y) * shot.scale;
      const r = await runCliJson(
        ["click-at", String(x), String(y), "--of", printed.env.data.snapshotId],
        env,
      );
      expect(r.env.ok, r.stdout).toBe(false);
      refusedNaming(r.env.error, /Delete everything/);
      await sleep(300);
      expect(clicks(await titleOf(app.pid))).toEqual(["0"]);
    },
    TIMEOUT,
  );
  it(
    "CLI call (a snapshot, then click-at its pixels, in one process): STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const seen = await unhovered();
      const p = pixelsOf(seen, record(seen, isKeep, "Keep"));
      const r = await callCli(app.pid, p, "web-call.png");
      refusedNaming(r, /Delete everything/);
      await sleep(300);
      expect(clicks(await titleOf(app.pid))).toEqual(["0"]);
    },
    TIMEOUT,
  );
});

describe("a GTK button relabelled on enter-notify, and a label relabelled while the pointer is over it", () => {
  let app: App;
  let session: Session;
  const isKeep = (r: ElementRecord) => r.role === "push button" && r.title === "Keep";
  const isArchive = (r: ElementRecord) => r.title === "Archive";
  const unhovered = async () => {
    await park(session, app.pid, { x: 380, y: 150 });
    return until(session, app.pid, (s) => s.records.some(isKeep) && s.records.some(isArchive));
  };

  beforeAll(async () => {
    app = await startApp(desktop, "/usr/bin/python3", ["test/apps/hover-app.py"], {
      name: "axsnap-hover-test",
      windowName: "axsnap hover",
      timeoutMs: 20_000,
    });
    session = createSession();
  }, TIMEOUT);
  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "clickAt on Keep: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const snap = await unhovered();
      const p = pixelsOf(snap, record(snap, isKeep, "Keep"));
      const e = await rejects(session.clickAt(p.x, p.y, { of: snap, snapshot: false }));
      refusedNaming(e, /Delete everything/);
      expect(await titleOf(app.pid)).toBe("axsnap hover");
    },
    TIMEOUT,
  );

  it(
    "a click by ref on the label (no press action: pointer input at its centre): STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const snap = await unhovered();
      const archive = record(snap, isArchive, "Archive");
      expect(archive.actions).toEqual([]);
      const e = await rejects(session.click(`@${snap.id}:e${archive.index}`, { snapshot: false }));
      refusedNaming(e, /Delete everything/);
      expect(await titleOf(app.pid)).toBe("axsnap hover");
    },
    TIMEOUT,
  );

  it(
    "a click by ref on Keep goes by pointer (GTK 3 runs a button's action inside the accessibility call, act/modal.ts): STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const snap = await unhovered();
      const keep = record(snap, isKeep, "Keep");
      const before = await titleOf(app.pid);
      const e = await rejects(session.click(`@${snap.id}:e${keep.index}`, { snapshot: false }));
      refusedNaming(e, /Delete everything/);
      expect(await titleOf(app.pid)).toBe(before);
    },
    TIMEOUT,
  );

  it(
    "its press action by name on Keep (no pointer) presses Keep",
    async () => {
      const snap = await unhovered();
      const keep = record(snap, isKeep, "Keep");
      const result = await session.performAction(`@${snap.id}:e${keep.index}`, "click", { snapshot: false });
      expect(result.channel).toBe("semantic");
      expect(await titleOf(app.pid)).toMatch(/^pressed Keep \d+$/);
    },
    TIMEOUT,
  );
});

describe("an OCR line whose drawn text reads Delete everything while the pointer is in its box", () => {
  const SPEC: DrawnSpec = {
    title: "axsnap drawn hover",
    x: 1340,
    y: 420,
    width: 520,
    height: 240,
    lines: [
      { text: "Shuffle", x: 40, y: 60, box: true, hover: "Delete everything" },
      { text: "Library", x: 300, y: 60, box: true },
      { text: "Now playing: Blue Monday by New Order", x: 40, y: 180, size: 16 },
    ],
  };
  let app: App;
  let session: Session;
  const isShuffle = (r: ElementRecord) => r.ocr !== undefined && r.title === "Shuffle";
  const unhovered = async () => {
    await park(session, app.pid, { x: 420, y: 110 });
    return until(session, app.pid, (s) => s.records.some(isShuffle));
  };

  beforeAll(async () => {
    app = await startDrawnText(desktop, SPEC);
    session = createSession();
  }, TIMEOUT);
  afterAll(async () => {
    await session?.close();
    await app?.stop();
  });

  it(
    "a click by ref: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const snap = await unhovered();
      const line = record(snap, isShuffle, "OCR line Shuffle");
      const e = await rejects(session.click(`@${snap.id}:e${line.index}`, { snapshot: false }));
      refusedNaming(e, /Delete everything/);
      expect(await titleOf(app.pid)).toBe(SPEC.title);
    },
    TIMEOUT,
  );

  it(
    "clickAt on its pixels: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const snap = await unhovered();
      const p = pixelsOf(snap, record(snap, isShuffle, "OCR line Shuffle"));
      const e = await rejects(session.clickAt(p.x, p.y, { of: snap, snapshot: false }));
      refusedNaming(e, /Delete everything/);
      expect(await titleOf(app.pid)).toBe(SPEC.title);
    },
    TIMEOUT,
  );

  it(
    "MCP click {x, y}: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      await unhovered();
      const s = createSession();
      const client = await connect(s);
      const state = (await client.callTool({
        name: "get_app_state",
        arguments: { app: app.pid },
      })) as CallToolResult;
      expect(state.isError, textOf(state)).toBeFalsy();
      const shown = s.address(0, app.pid).snapshot;
      const p = pixelsOf(shown, record(shown, isShuffle, "OCR line Shuffle"));
      const r = (await client.callTool({
        name: "click",
        arguments: { app: app.pid, x: p.x, y: p.y },
      })) as CallToolResult;
      refusedNaming(JSON.parse(textOf(r)), /Delete everything/);
      await s.close();
      expect(await titleOf(app.pid)).toBe(SPEC.title);
    },
    TIMEOUT,
  );

  it(
    "CLI click-at from another process: STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const seen = await unhovered();
      const env = { ...desktop.env, XDG_STATE_HOME: state };
      const printed = await runCliJson(
        ["snapshot", "--app", String(app.pid), "--screenshot", join(state, "drawn.png")],
        env,
      );
      expect(printed.env.ok, printed.stdout).toBe(true);
      const shot = printed.env.data.screenshot as Json;
      const line = record(seen, isShuffle, "OCR line Shuffle");
      const x = (line.clickPoint!.x - shot.windowOrigin.x) * shot.scale;
      const y = (line.clickPoint!.y - shot.windowOrigin.y) * shot.scale;
      const r = await runCliJson(
        ["click-at", String(x), String(y), "--of", printed.env.data.snapshotId],
        env,
      );
      expect(r.env.ok, r.stdout).toBe(false);
      refusedNaming(r.env.error, /Delete everything/);
      expect(await titleOf(app.pid)).toBe(SPEC.title);
    },
    TIMEOUT,
  );

  it(
    "CLI call (a snapshot, then click-at its pixels, in one process): STALE_REF naming Delete everything, nothing pressed",
    async () => {
      const seen = await unhovered();
      const p = pixelsOf(seen, record(seen, isShuffle, "OCR line Shuffle"));
      refusedNaming(await callCli(app.pid, p, "drawn-call.png"), /Delete everything/);
      expect(await titleOf(app.pid)).toBe(SPEC.title);
    },
    TIMEOUT,
  );

  /** A CLI snapshot stored for click-at from another process, and the pixels of a line (as seen here). */
  async function stored(line: ElementRecord, png: string) {
    const env = { ...desktop.env, XDG_STATE_HOME: state };
    const printed = await runCliJson(
      ["snapshot", "--app", String(app.pid), "--screenshot", join(state, png)],
      env,
    );
    expect(printed.env.ok, printed.stdout).toBe(true);
    const shot = printed.env.data.screenshot as Json;
    return {
      env,
      id: printed.env.data.snapshotId as string,
      x: String((line.clickPoint!.x - shot.windowOrigin.x) * shot.scale),
      y: String((line.clickPoint!.y - shot.windowOrigin.y) * shot.scale),
    };
  }

  it(
    "CLI click-at from another process, the pointer already on the line: the new observation reads Delete everything, refused before the pointer moves",
    async () => {
      const seen = await unhovered();
      const line = record(seen, isShuffle, "OCR line Shuffle");
      const at = await stored(line, "drawn-before.png");
      const f = seen.window.frame;
      await park(session, app.pid, { x: line.clickPoint!.x - f.x, y: line.clickPoint!.y - f.y });
      await until(session, app.pid, (s) =>
        s.records.some((r) => r.ocr !== undefined && r.title === "Delete everything"),
      );
      const r = await runCliJson(["click-at", at.x, at.y, "--of", at.id], at.env);
      expect(r.env.ok, r.stdout).toBe(false);
      expect(r.env.error.code).toBe("STALE_REF");
      expect(r.env.error.message).toMatch(
        /the point reads "Delete everything" in a new observation .* not "Shuffle"/,
      );
      expect(r.env.error.delivery).toBe("not_delivered");
      expect(await titleOf(app.pid)).toBe(SPEC.title);
    },
    TIMEOUT,
  );

  it(
    "CLI click-at from another process on a drawn button that does not change: pressed (the store keeps which lines are OCR text)",
    async () => {
      const seen = await unhovered();
      const library = record(seen, (r) => r.ocr !== undefined && r.title === "Library", "OCR line Library");
      const at = await stored(library, "drawn-library.png");
      const r = await runCliJson(["click-at", at.x, at.y, "--of", at.id], at.env);
      expect(r.env.ok, r.stdout).toBe(true);
      expect(await titleOf(app.pid)).toBe("clicked Library 1");
    },
    TIMEOUT,
  );
});
