/**
 * The native core's policies against the fake backend: window choice and each
 * of its fallbacks, each scripted fault, each limit, the visible-row cut, the
 * cycle guard, the screenshot budget, handle release. Real native code, real
 * worker thread; only the desktop is scripted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { snapshot } from "../../lib/observe/desktop.js";

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

describe("a read the deadline cut before the deadline passed", () => {
  // The Linux backend answers a call with the deadline's error up to a few ms before the deadline (its timer
  // fires early, or within its margin); the walk then ends before the deadline with those nodes unread.
  const item = (i: number, fault: Node) => ({
    role: "list item",
    frame: { x: 120, y: 120 + i * 30, w: 200, h: 30 },
    fault,
    children: [button(`Item ${i}`, { frame: { x: 120, y: 120 + i * 30, w: 80, h: 30 } })],
  });
  const list = (fault: Node) => ({
    role: "list",
    title: "Results",
    frame,
    children: [0, 1, 2].map((i) => item(i, fault)),
  });

  it("says the walk was cut by the deadline when list items' children were not read", async () => {
    const b = fake({ apps: [app("Editor", [win("W", [list({ earlyDeadline: "children" })])])] });
    const s = await snap(b, { deadlineMs: 20_000 });
    expect(s.text).not.toContain("Item 0");
    expect(s.complete, s.text).toBe(false);
    expect(s.cutBy).toContain("deadline");
  });

  it("says the walk was cut by the deadline when elements were not read", async () => {
    const b = fake({ apps: [app("Editor", [win("W", [list({ earlyDeadline: "read" })])])] });
    const s = await snap(b, { deadlineMs: 20_000 });
    expect(s.text).not.toMatch(/list item/);
    expect(s.complete, s.text).toBe(false);
    expect(s.cutBy).toContain("deadline");
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

  describe("a long list is cut to its visible rows while reading (binary search over frames)", () => {
    const rowsAt = (n: number, top: (i: number) => number) =>
      Array.from({ length: n }, (_, i) => ({
        role: "table row",
        title: `row ${i}`,
        frame: { x: 100, y: top(i), w: 800, h: 20 },
      }));
    const listWith = (rows: Node[]) =>
      fake({ apps: [app("Editor", [win("W", [{ role: "table", title: "T", frame, children: rows }])])] });

    it("reads only the rows on screen of 5,000: complete, with their real positions and the total", async () => {
      const s = await snap(listWith(rowsAt(5000, (i) => 100 + i * 20)));
      expect(s.complete).toBe(true);
      expect(s.nodesObserved).toBeLessThan(100);
      expect(s.text).toContain("table T (showing 0-19 of 5000 items)");
    });

    it("finds the rows of a list scrolled to row 2,000", async () => {
      const s = await snap(listWith(rowsAt(5000, (i) => 100 + (i - 2000) * 20)));
      expect(s.complete).toBe(true);
      expect(s.nodesObserved).toBeLessThan(100);
      expect(s.text).toContain("table T (showing 2000-2019 of 5000 items)");
      expect(s.text).toContain("row 2000");
      expect(s.text).not.toContain("row 1999\n");
    });

    it("keeps every row when their order does not follow the layout", async () => {
      // 30 rows on screen, listed interleaved with off-screen ones: no range can be cut. (Children
      // are assumed to follow the layout; the samples outside a found range catch this layout.)
      const rows = rowsAt(600, (i) => (i % 2 === 0 ? 100 + (i / 2) * 20 : 100000 + i * 20));
      const s = await snap(listWith(rows), { maxNodes: 2000 });
      for (let k = 0; k < 20; k++) expect(s.text).toMatch(new RegExp(`row ${k * 2}(\n|$)`));
      expect(s.text).toContain("table T (showing 0-38 of 600 items)");
    });

    describe("a backend that counts a long list and reads only the children it keeps, by index", () => {
      const countedList = (rows: Node[]) =>
        fake({
          countLongLists: true,
          apps: [app("Editor", [win("W", [{ role: "table", title: "T", frame, children: rows }])])],
        });

      it("finds the rows on screen of 5,000 scrolled to row 2,000", async () => {
        const s = await snap(countedList(rowsAt(5000, (i) => 100 + (i - 2000) * 20)));
        expect(s.complete).toBe(true);
        expect(s.text).toContain("table T (showing 2000-2019 of 5000 items)");
      });

      it("without a visible range, reads its first children up to the node budget", async () => {
        const rows = rowsAt(600, (i) => (i % 2 === 0 ? 100 + (i / 2) * 20 : 100000 + i * 20));
        const s = await snap(countedList(rows), { maxNodes: 2000 });
        for (let k = 0; k < 20; k++) expect(s.text).toMatch(new RegExp(`row ${k * 2}(\\n|$)`));
        const small = await snap(countedList(rows), { maxNodes: 100 });
        expect(small.cutBy).toContain("node_limit");
      });

      it("a counted list below the depth limit cuts the walk by depth, never says complete", async () => {
        const s = await snap(countedList(rowsAt(300, (i) => 100 + i * 20)), { maxDepth: 1 });
        expect(s.complete).toBe(false);
        expect(s.cutBy).toContain("depth_limit");
      });
    });

    it("keeps every row when rows have no frames (nothing to search by)", async () => {
      const rows = Array.from({ length: 300 }, (_, i) => ({ role: "table row", title: `row ${i}` }));
      const s = await snap(listWith(rows), { maxNodes: 2000 });
      expect(s.text).toContain("table T (showing 0-19 of 300 items)");
    });
  });

  describe("a list with a header child counts its rows, not its children (issue 18)", () => {
    // The header sits at the list's top, the rows under it: 29 rows show in the list's 600 points.
    const headed = (list: string, row: string, head: string, n: number, options: Node = {}) =>
      fake({
        ...options,
        apps: [
          app("Editor", [
            win("W", [
              {
                role: list,
                title: "T",
                frame,
                children: [
                  { role: head, title: "Name", frame: { x: 100, y: 100, w: 800, h: 20 } },
                  ...Array.from({ length: n }, (_, i) => ({
                    role: row,
                    title: `row ${i}`,
                    frame: { x: 100, y: 120 + i * 20, w: 800, h: 20 },
                  })),
                ],
              },
            ]),
          ]),
        ],
      });
    const kinds = [
      ["table", "table row", "table column header"],
      ["list", "list item", "heading"],
    ] as const;

    it.each(kinds)("a %s of 300 %ss under a %s: showing 0-19 of 300", async (list, row, head) => {
      const s = await snap(headed(list, row, head, 300));
      expect(s.text).toContain(`${list} T (showing 0-19 of 300 items)`);
      expect(s.text).toMatch(/row 19$/m);
      expect(s.text).not.toMatch(/row 20$/m);
    });

    it.each(kinds)("a %s of 30 %ss under a %s: showing 0-19 of 30", async (list, row, head) => {
      const s = await snap(headed(list, row, head, 30));
      expect(s.text).toContain(`${list} T (showing 0-19 of 30 items)`);
    });

    it.each(kinds)("a counted %s of 300 %ss under a %s: showing 0-19 of 300", async (list, row, head) => {
      const s = await snap(headed(list, row, head, 300, { countLongLists: true }));
      expect(s.text).toContain(`${list} T (showing 0-19 of 300 items)`);
    });
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
    // Twenty runs: termination races (an N-API call failing while the environment shuts down) are rare.
    for (let i = 0; i < 20; i++) {
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

/** The native request as lib/observe/desktop.ts sends it, for calls that bypass its checks. */
const request = (app: string | number, extra: Node = {}) => ({
  app,
  maxNodes: 2400,
  maxDepth: 64,
  deadlineMs: 2000,
  screenshot: false,
  ...extra,
});

describe("app lookup (issue 9 items 4, 5)", () => {
  it("refuses pids outside 1..2^31-1 and non-integers at the native seam, never snapshotting some app", async () => {
    const b = fake({ apps: [app("Editor", [win("E", [button("a")])]), app("Viewer", [win("V", [])])] });
    for (const pid of [
      2 ** 63,
      1e300,
      Number.MAX_VALUE,
      2 ** 31,
      -1,
      0,
      1.5,
      Number.NaN,
      Infinity,
      -Infinity,
    ]) {
      const err = await b.snapshot(request(pid)).catch((e) => e);
      expect(err, `pid ${pid}`).toMatchObject({ nativeCode: "INVALID_ARGUMENT" });
    }
    expect((await b.snapshot(request(4006))).raw.app.name).toBe("Editor");
  });

  it("never matches an empty or blank app name", async () => {
    const b = fake({ apps: [app("Editor", [win("E", [])]), app("", [win("Nameless", [])], { pid: 77 })] });
    for (const name of ["", " ", "\t \n"]) {
      const err = await b.snapshot(request(name)).catch((e) => e);
      expect(err, JSON.stringify(name)).toBeInstanceOf(Error);
      expect(["INVALID_ARGUMENT", "APP_NOT_FOUND"]).toContain(err.nativeCode);
    }
    // The TypeScript layer refuses them before anything native runs.
    await expect(snapshot({ app: " ", screenshot: false }, b)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
    await expect(snapshot({ app: 2 ** 63, screenshot: false }, b)).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("fails with AMBIGUOUS_APP listing each instance when a name matches two running apps", async () => {
    const b = fake({
      apps: [
        app("Editor", [win("One", [])], { pid: 5001 }),
        app("Editor", [win("Two", [])], { pid: 5002 }),
        app("Viewer", [win("V", [])], { pid: 5003 }),
      ],
    });
    for (const name of ["Editor", "edit"]) {
      const err = await snapshot({ app: name, screenshot: false }, b).catch((e) => e);
      expect(err).toBeInstanceOf(AxsnapError);
      expect(err.code).toBe("AMBIGUOUS_APP");
      expect(err.message).toContain("Editor (pid 5001)");
      expect(err.message).toContain("Editor (pid 5002)");
      expect(err.message).not.toContain("Viewer");
    }
    // A pid always selects exactly one.
    expect((await snapshot({ app: 5002, screenshot: false }, b)).window.title).toBe("Two");
    expect((await snapshot({ app: "viewer", screenshot: false }, b)).app.pid).toBe(5003);
  });

  it("still fails with AMBIGUOUS_APP when a prefix matches several different apps", async () => {
    const b = fake({
      apps: [app("Editor", [win("E", [])]), app("Editorial", [win("F", [])], { pid: 6000 })],
    });
    // "Editor" is exact: one app.
    expect((await snapshot({ app: "Editor", screenshot: false }, b)).app.name).toBe("Editor");
    const err = await snapshot({ app: "edi", screenshot: false }, b).catch((e) => e);
    expect(err.code).toBe("AMBIGUOUS_APP");
    expect(err.message).toContain("Editorial (pid 6000)");
  });
});

describe("walks cut short say so (issue 9 item 15)", () => {
  it("an element whose children read fails ends the walk incomplete, cut by errors", async () => {
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
    expect(s.complete).toBe(false);
    expect(s.cutBy).toEqual(["errors"]);
    expect(s.text).toContain(
      "(Snapshot incomplete: some elements or their children could not be read and are missing.",
    );
  });

  it("a hung element ends the walk incomplete, cut by unresponsive or deadline", async () => {
    const b = fake({
      apps: [
        app("Editor", [
          win("W", [{ role: "panel", title: "slow", fault: { hangMs: 10_000 }, children: [button("deep")] }]),
        ]),
      ],
    });
    const s = await snap(b, { deadlineMs: 300 });
    expect(s.complete).toBe(false);
    expect([["unresponsive"], ["deadline"]]).toContainEqual([...s.cutBy]);
  });

  it("an element that stops answering before the deadline ends the walk cut by unresponsive", async () => {
    // The read of "slow" times out (the fake reports it unresponsive at the deadline of its read);
    // the walk itself still had time left.
    const b = fake({
      apps: [
        app("Editor", [
          win("W", [
            { role: "panel", title: "gone quiet", fault: { failRead: "unresponsive" } },
            button("fine"),
          ]),
        ]),
      ],
    });
    const s = await snap(b);
    expect(s.text).toContain("fine");
    expect(s.complete).toBe(false);
    expect(s.cutBy).toEqual(["unresponsive"]);
    expect(s.text).toMatch(
      /\(Snapshot incomplete: the app stopped answering after \d+ elements were read\. Take a new snapshot/,
    );
  });

  it("an element removed between listing and reading does not make the walk incomplete", async () => {
    const b = fake({
      apps: [app("Editor", [win("W", [button("Dies", { fault: { dieAfterReads: 0 } }), button("Stays")])])],
    });
    const s = await snap(b);
    expect(s.text).toContain("Stays");
    expect(s.complete).toBe(true);
  });

  it("a window that is gone by the end of the walk fails the snapshot as APP_NOT_FOUND or WINDOW_NOT_FOUND, not STALE_REF", async () => {
    const b = fake({
      apps: [
        app("Editor", [
          {
            title: "W",
            frame,
            // The app exits while its children are read: they are gone, and so is the window.
            root: {
              role: "frame",
              title: "W",
              frame,
              fault: { dieAfterReads: 2 },
              children: [button("a", { fault: { dieAfterReads: 1 } })],
            },
          },
        ]),
      ],
    });
    const err = await snap(b).catch((e) => e);
    expect(err).toBeInstanceOf(AxsnapError);
    expect(["APP_NOT_FOUND", "WINDOW_NOT_FOUND"]).toContain(err.code);
  });
});

describe("an app that does not answer is not 'not found' (issue 9 item 16)", () => {
  it("lists it with responsive: false, and a snapshot of it fails with APP_UNRESPONSIVE", async () => {
    const b = fake({
      apps: [app("Editor", [win("E", [])]), app("Busy", [win("B", [])], { pid: 4100, responsive: false })],
    });
    const apps = await b.listApps(1000);
    expect(apps).toContainEqual({ name: "Busy", bundleId: "Busy", pid: 4100, responsive: false });
    expect(apps.find((a) => a.name === "Editor")?.responsive).toBeUndefined();
    for (const target of ["Busy", 4100]) {
      const err = await snapshot({ app: target, screenshot: false }, b).catch((e) => e);
      expect(err.code, String(target)).toBe("APP_UNRESPONSIVE");
    }
  });
});
