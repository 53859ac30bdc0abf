/**
 * The native core's policies against the fake backend: window choice and each
 * of its fallbacks, each scripted fault, each limit, the visible-row cut, the
 * cycle guard, the screenshot budget, handle release. Real native code, real
 * worker thread; only the desktop is scripted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { snapshot } from "../lib/desktop.js";
import { AxsnapError } from "../lib/index.js";
import { loadNative, type NativeBackend } from "../lib/native.js";

type Node = Record<string, unknown>;
const native = loadNative();
const open: NativeBackend[] = [];

function fake(script: object): NativeBackend {
  const b = new native.NativeBackend("fake", script);
  open.push(b);
  return b;
}

afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});

const frame = { x: 100, y: 100, w: 800, h: 600 };
const button = (title: string, extra: Node = {}): Node => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: { x: 120, y: 120, w: 80, h: 30 },
  ...extra,
});
const win = (title: string, children: Node[], extra: Node = {}) => ({
  title,
  frame,
  root: { role: "frame", title, frame, children },
  ...extra,
});
const app = (name: string, windows: object[], extra: Node = {}) => ({
  name,
  pid: 4000 + name.length,
  windows,
  ...extra,
});

async function snap(backend: NativeBackend, extra: Node = {}) {
  return snapshot({ app: "Editor", screenshot: false, ...extra }, backend);
}

describe("window choice", () => {
  it("takes the focused window of the focused app", async () => {
    const b = fake({
      apps: [
        app("Editor", [win("One", [button("a")]), win("Two", [button("b")], { focused: true })], {
          focused: true,
        }),
      ],
    });
    const s = await snap(b);
    expect(s.window.title).toBe("Two");
  });

  it("falls back to the first usable window when none has focus", async () => {
    const b = fake({
      apps: [
        app("Editor", [
          win("Min", [], { minimized: true }),
          win("Hidden", [], { visible: false }),
          win("Usable", []),
        ]),
      ],
    });
    expect((await snap(b)).window.title).toBe("Usable");
  });

  it("skips a focused window that is minimized", async () => {
    const b = fake({
      apps: [
        app(
          "Editor",
          [win("Focused but minimized", [], { focused: true, minimized: true }), win("Other", [])],
          { focused: true },
        ),
      ],
    });
    expect((await snap(b)).window.title).toBe("Other");
  });

  it("fails with WINDOW_NOT_FOUND when every window is minimized or hidden", async () => {
    const b = fake({
      apps: [app("Editor", [win("Min", [], { minimized: true }), win("Hidden", [], { visible: false })])],
    });
    await expect(snap(b)).rejects.toMatchObject({ code: "WINDOW_NOT_FOUND" });
  });

  it("finds apps by name, unique prefix or pid, and says which apps run when none matches", async () => {
    const b = fake({ apps: [app("Editor", [win("E", [])]), app("Viewer", [win("V", [])], { pid: 4242 })] });
    expect((await snapshot({ app: "edit", screenshot: false }, b)).app.name).toBe("Editor");
    expect((await snapshot({ app: 4242, screenshot: false }, b)).app.name).toBe("Viewer");
    const err = await snapshot({ app: "Nope", screenshot: false }, b).catch((e) => e);
    expect(err).toBeInstanceOf(AxsnapError);
    expect(err.code).toBe("APP_NOT_FOUND");
    expect(err.message).toContain("Editor, Viewer");
  });
});

describe("faults", () => {
  it("reports a backend without an accessibility bus as ACCESSIBILITY_UNAVAILABLE", async () => {
    const b = fake({ noBus: true, apps: [] });
    await expect(b.connect()).rejects.toMatchObject({ nativeCode: "NO_ACCESSIBILITY_BUS" });
  });

  it("keeps an element whose attribute read fails, without that attribute", async () => {
    const b = fake({
      apps: [
        app("Editor", [win("W", [button("Broken", { fault: { failAttribute: "title" } }), button("Fine")])]),
      ],
    });
    const s = await snap(b);
    expect(s.text).toContain("push button Fine");
    expect(s.records.filter((r) => r.role === "push button")).toHaveLength(2);
    expect(s.complete).toBe(true);
  });

  it("drops an element that dies mid-walk and keeps the rest", async () => {
    const b = fake({
      apps: [app("Editor", [win("W", [button("Dies", { fault: { dieAfterReads: 0 } }), button("Stays")])])],
    });
    const s = await snap(b);
    expect(s.text).not.toContain("Dies");
    expect(s.text).toContain("Stays");
  });

  it("settles within its deadline when an element hangs, as an incomplete snapshot", async () => {
    const b = fake({
      apps: [
        app("Editor", [
          win("W", [
            { role: "panel", title: "slow", fault: { hangMs: 10_000 }, children: [button("deep")] },
            button("quick"),
          ]),
        ]),
      ],
    });
    const t0 = performance.now();
    const s = await snap(b, { deadlineMs: 400 });
    const elapsed = performance.now() - t0;
    expect(elapsed).toBeLessThan(2000);
    expect(s.complete).toBe(false);
    expect(s.cutBy).toContain("deadline");
    expect(s.text.split("\n").at(-1)).toMatch(/^\(Snapshot incomplete: the walk stopped at its deadline/);
  });

  it("cuts a branch whose children cannot be read", async () => {
    const b = fake({
      apps: [
        app("Editor", [
          win("W", [
            { role: "panel", title: "P", fault: { childrenError: true }, children: [button("x")] },
            button("y"),
          ]),
        ]),
      ],
    });
    const s = await snap(b);
    expect(s.text).toContain("panel P");
    expect(s.text).not.toContain("button x");
  });
});

describe("limits and the cycle guard", () => {
  const many = (n: number) => Array.from({ length: n }, (_, i) => button(`b${i}`));

  it("stops the walk at its node limit and says so", async () => {
    const b = fake({ apps: [app("Editor", [win("W", many(500))])] });
    const s = await snap(b, { maxNodes: 50 });
    expect(s.complete).toBe(false);
    expect(s.cutBy).toContain("node_limit");
    expect(s.records.length).toBeLessThanOrEqual(50);
  });

  it("stops at the depth limit", async () => {
    let deep: Node = button("leaf");
    for (let i = 0; i < 10; i++) deep = { role: "split pane", title: `level ${i}`, children: [deep] };
    const b = fake({ apps: [app("Editor", [win("W", [deep])])] });
    const s = await snap(b, { maxDepth: 4 });
    expect(s.cutBy).toContain("depth_limit");
    expect(s.text).not.toContain("leaf");
  });

  it("never walks an element twice, even through a cycle", async () => {
    const b = fake({
      apps: [
        app("Editor", [
          win("W", [
            { role: "panel", title: "loop", key: "loop", children: [button("inside"), { ref: "loop" }] },
          ]),
        ]),
      ],
    });
    const s = await snap(b);
    expect(s.text.match(/panel loop/g)).toHaveLength(1);
    expect(s.text.match(/push button inside/g)).toHaveLength(1);
  });

  it("keeps only the visible rows of a long list, and their count", async () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({
      role: "table row",
      title: `row ${i}`,
      frame: { x: 100, y: 100 + i * 20, w: 800, h: 20 },
    }));
    const b = fake({
      apps: [app("Editor", [win("W", [{ role: "table", title: "T", frame, children: rows }])])],
    });
    const s = await snap(b);
    expect(s.records.filter((r) => r.role === "table row")).toHaveLength(20);
    expect(s.text).toContain("table T (showing 0-19 of 300 items)");
  });

  it("does not descend into hidden elements", async () => {
    const hidden = { x: -2147483648, y: -2147483648, w: 1, h: 1 };
    const b = fake({
      apps: [
        app("Editor", [
          win("W", [
            {
              role: "combo box",
              title: "C",
              children: [
                { role: "menu", frame: hidden, children: [{ role: "menu item", title: "secret item" }] },
              ],
            },
          ]),
        ]),
      ],
    });
    const s = await snap(b);
    expect(s.text).not.toContain("secret item");
    expect(s.nodesObserved).toBe(3);
  });
});

describe("screenshot and handles", () => {
  it("encodes the window within the size budget with its coordinate contract", async () => {
    const b = fake({ scale: 2, apps: [app("Editor", [win("W", [button("a")])])] });
    const s = await snapshot({ app: "Editor" }, b);
    const shot = s.screenshot!;
    expect(Math.max(shot.pixelWidth, shot.pixelHeight)).toBeLessThanOrEqual(1280);
    expect(shot.data.length).toBeLessThanOrEqual(900 * 1024);
    expect(shot.pixelWidth).toBe(1280);
    expect(shot.pixelHeight).toBe(960);
    expect(shot.scale).toBeCloseTo(1.6, 5);
    expect(shot.windowOrigin).toEqual({ x: 100, y: 100 });
    expect([...shot.data.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  });

  it("releases the handles of a released snapshot", async () => {
    const b = fake({ apps: [app("Editor", [win("W", [button("a"), button("b")])])] });
    const s = await snap(b);
    expect(b.fakeReleased()).toBe(0);
    await s.release();
    expect(b.fakeReleased()).toBe(3);
    await s.release();
    expect(b.fakeReleased()).toBe(3);
  });

  it("records actions and input in order", async () => {
    const b = fake({
      apps: [app("Editor", [win("W", [button("a"), { role: "text", settable: true, value: "x" }])])],
    });
    const s = await snap(b);
    await b.doAction(s.records[1]!.handle!, "click", 1000);
    await b.setText(s.records[2]!.handle!, "hello", 1000);
    await expect(b.doAction(s.records[1]!.handle!, "nope", 1000)).rejects.toMatchObject({
      nativeCode: "ACTION_NOT_SUPPORTED",
    });
    expect(b.fakeLog()).toEqual([
      `action ${s.records[1]!.handle} click`,
      `setText ${s.records[2]!.handle} hello`,
    ]);
  });
});

describe("the host process survives", () => {
  it("exits cleanly with backends still open, and when a worker_threads Worker is terminated mid-call", async () => {
    const { spawnSync } = await import("node:child_process");
    const script = `
      const { Worker } = require("node:worker_threads");
      const n = require(process.env.ADDON);
      const frame = { x: 0, y: 0, w: 100, h: 100 };
      const script = { apps: [{ name: "A", pid: 1, windows: [{ title: "W", frame, root: { role: "frame", frame, children: [{ role: "panel", fault: { hangMs: 300 } }] } }] }] };
      const a = new n.NativeBackend("fake", script), b = new n.NativeBackend("fake", script);
      a.snapshot({ app: "A", maxNodes: 10, maxDepth: 5, deadlineMs: 1000, screenshot: false });
      const w = new Worker(\`
        const n = require(process.env.ADDON);
        const frame = { x: 0, y: 0, w: 100, h: 100 };
        const s = { apps: [{ name: "A", pid: 1, windows: [{ title: "W", frame, root: { role: "frame", frame, children: [{ role: "panel", fault: { hangMs: 300 } }] } }] }] };
        for (let i = 0; i < 2; i++) new n.NativeBackend("fake", s).snapshot({ app: "A", maxNodes: 10, maxDepth: 5, deadlineMs: 1000, screenshot: false });
      \`, { eval: true });
      setTimeout(() => w.terminate().then(() => console.log("done")), 50);`;
    for (let i = 0; i < 5; i++) {
      const run = spawnSync("node", ["-e", script], {
        env: { ...process.env, ADDON: `${process.cwd()}/build/Release/axsnap.node` },
        encoding: "utf8",
        timeout: 20_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("done");
    }
  }, 60_000);

  it("turns an exception on the worker thread into a rejection", async () => {
    const huge = { x: 0, y: 0, w: 1e6, h: 1e6 };
    const b = fake({
      apps: [
        {
          name: "Editor",
          pid: 1,
          windows: [{ title: "W", frame: huge, root: { role: "frame", frame: huge } }],
        },
      ],
    });
    const err = await snapshot({ app: "Editor" }, b).catch((e) => e);
    expect(err).toBeInstanceOf(AxsnapError);
    expect(err.message).toMatch(/internal error/);
    // The backend still works afterwards.
    await expect(snapshot({ app: "Editor", screenshot: false }, b)).resolves.toBeDefined();
  });

  it("walks a very deep tree without overflowing the worker's stack", async () => {
    let deep: Node = button("leaf");
    for (let i = 0; i < 5000; i++) deep = { role: "split pane", title: `l${i}`, children: [deep] };
    const b = fake({ apps: [app("Editor", [win("W", [deep])])] });
    const s = await snap(b, { maxDepth: 512 });
    expect(s.cutBy).toContain("depth_limit");
  });

  it("does not block the event loop while closing", async () => {
    const b = new native.NativeBackend("fake", {
      apps: [app("Editor", [win("W", [{ role: "panel", fault: { hangMs: 400 } }])])],
    });
    const pending = b.snapshot({
      app: "Editor",
      maxNodes: 10,
      maxDepth: 5,
      deadlineMs: 2000,
      screenshot: false,
    });
    const t0 = performance.now();
    const closing = b.close();
    expect(performance.now() - t0).toBeLessThan(50);
    await pending;
    await closing;
    await expect(
      b.snapshot({ app: "Editor", maxNodes: 10, maxDepth: 5, deadlineMs: 100, screenshot: false }),
    ).rejects.toThrow(/closed/);
  });
});
