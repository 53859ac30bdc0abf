/**
 * Snapshots shared by the sessions of one process (SessionOptions.shared), as
 * the CLI's warm process keeps them per session directory (lib/doors/cli/held.ts),
 * against the fake backend: a later session reaches a ref an earlier one
 * printed by its live element (twins included), closing a session releases
 * none of them, and the holder is bounded (per app as a session's store, and
 * in session directories, the least recently used one let go with its snapshots).
 */
import { afterEach, describe, expect, it } from "vitest";
import { HeldSnapshots, MAX_DIRS } from "../../lib/doors/cli/held.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { createSession, SharedSnapshots } from "../../lib/session/session.js";

type Node = Record<string, unknown>;
const native = loadNative();
const frame = { x: 100, y: 100, w: 800, h: 600 };
const backends: NativeBackend[] = [];

function desktop(children: Node[]) {
  return {
    apps: [
      {
        name: "Editor",
        pid: 77,
        windows: [{ title: "W", frame, root: { role: "frame", title: "W", frame, children } }],
      },
    ],
  };
}
const ok = (y: number): Node => ({
  role: "check box",
  title: "checkbutton",
  actions: ["click"],
  frame: { x: 120, y, w: 200, h: 20 },
});

function backend(): NativeBackend {
  const b = new native.NativeBackend("fake", desktop([ok(120), ok(140), ok(160)]));
  backends.push(b);
  return b;
}

afterEach(async () => {
  for (const b of backends.splice(0)) await b.close();
});

/** The indices of the "checkbutton" lines, in order. */
const twins = (text: string) => [...text.matchAll(/(\d+) check box checkbutton/g)].map((m) => Number(m[1]));

describe("snapshots shared by the sessions of one process", () => {
  it("a later session reaches the 2nd of three twins an earlier one printed, by its live element", async () => {
    const b = backend();
    const shared = new SharedSnapshots(20);
    const first = createSession({ backend: b, deadlineMs: 1000, shared });
    const snap = await first.snapshot({ app: "Editor", screenshot: false });
    const second = twins(snap.text)[1]!;
    await first.close();
    expect(snap.released).toBe(false);

    const later = createSession({ backend: b, deadlineMs: 1000, shared });
    const result = await later.click(`@${snap.id}:e${second}`, { snapshot: false });
    expect(result.channel).toBe("semantic");
    expect(b.fakeLog()).toEqual([`action ${snap.records[second]!.handle} click`]);
    await later.close();

    // A session of its own holds nothing of it.
    const own = createSession({ backend: b, deadlineMs: 1000 });
    expect(() => own.address(`@${snap.id}:e${second}`)).toThrow(/never took snapshot/);
    await own.close();

    await shared.close();
    expect(snap.released).toBe(true);
  });

  it("keeps a session's bound per app: the oldest beyond it is released", async () => {
    const b = backend();
    const shared = new SharedSnapshots(2);
    const taken = [];
    for (let i = 0; i < 3; i++) {
      const s = createSession({ backend: b, deadlineMs: 1000, shared });
      taken.push(await s.snapshot({ app: "Editor", screenshot: false }));
      await s.close();
    }
    expect(taken.map((s) => s.released)).toEqual([true, false, false]);
    await shared.close();
  });

  it(`holds at most ${MAX_DIRS} session directories; the least recently used one goes with its snapshots`, async () => {
    const b = backend();
    const held = new HeldSnapshots();
    const snaps = [];
    for (let i = 0; i <= MAX_DIRS; i++) {
      // Directory 0 is used again before the last one comes: directory 1 is then the least recently used.
      if (i === MAX_DIRS) held.of("/dir/0");
      const s = createSession({ backend: b, deadlineMs: 1000, shared: held.of(`/dir/${i}`) });
      snaps.push(await s.snapshot({ app: "Editor", screenshot: false }));
      await s.close();
    }
    // Released by a close that is not awaited: wait for it on a condition.
    for (let t = 0; t < 100 && !snaps[1]!.released; t++) await new Promise((r) => setTimeout(r, 10));
    expect(snaps.map((s) => s.released)).toEqual(snaps.map((_, i) => i === 1));
    expect(held.of("/dir/0")).toBe(held.of("/dir/0"));
    await held.close();
    expect(snaps.every((s) => s.released)).toBe(true);
  });
});
