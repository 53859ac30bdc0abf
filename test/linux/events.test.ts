/**
 * Change events on a real desktop (one headless desktop for this file):
 * AT-SPI signals of gtk3-widget-factory and galculator through the addon's
 * watch / waitEvents / waitQuiet. A toggle is a state-changed event and the
 * app is quiet soon after; galculator's mode switch (it rebuilds its window
 * after answering the action) is a burst of events, and when waitQuiet says
 * quiet the new layout is complete; so is gtk3-widget-factory's stack page
 * after a sliding transition (no event while the page moves), while its
 * spinner's endless bounds-changed never keep it from being quiet; a stopped app and an accessibility bus
 * that goes away end the wait by its cap or with a typed error, never hang.
 * Missing packages fail loudly; nothing is skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { snapshot } from "../../lib/index.js";
import type { RawNode } from "../../lib/model/model.js";
import { callNative, loadNative, type NativeBackend } from "../../lib/native.js";
import { type Desktop, gtkWidgetFactory, restartAccessibilityBus, startApp } from "../../scripts/desktop.mjs";
import { useDesktop } from "../support/linux.js";

const TIMEOUT = 60_000;
let desktop: Desktop;
let b: NativeBackend;

beforeAll(async () => {
  desktop = await useDesktop();
  b = new (loadNative().NativeBackend)("linux");
  await b.connect(5000);
}, TIMEOUT);

afterAll(async () => {
  await b?.close();
  await desktop?.stop();
});

function nodes(root: RawNode): RawNode[] {
  const out: RawNode[] = [];
  const stack = [root];
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    stack.push(...(n.children ?? []));
  }
  return out;
}

async function find(pid: number, test: (n: RawNode) => boolean, what: string) {
  const s = await b.snapshot({ app: pid, screenshot: false, deadlineMs: 5000, maxNodes: 2400, maxDepth: 64 });
  const node = nodes(s.raw.root).find(test);
  if (!node?.handle) throw new Error(`no ${what} in the snapshot of pid ${pid}`);
  return { node, handles: s.handles };
}

/** Every event kind that arrives within `ms` (waitEvents returns on each new batch). */
async function kindsWithin(
  pid: number,
  ms: number,
  from: number,
): Promise<{ kinds: Set<string>; stamp: number }> {
  const kinds = new Set<string>();
  let since = from;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const st = await b.waitEvents(pid, since, Math.max(1, until - performance.now()));
    // `recent` holds the last 16: the newest of a burst is enough to name what it was.
    for (const k of st.recent.slice(-Math.min(16, st.stamp - since))) kinds.add(k);
    since = st.stamp;
  }
  return { kinds, stamp: since };
}

describe("gtk3-widget-factory", () => {
  it(
    "a toggled check button and radio button are state-changed events; the app is quiet soon after",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        const watched = await b.watch(gtk.pid);
        expect(watched.pid).toBe(gtk.pid);
        // Idle: no event for the whole quiet period, measured from the start.
        const idle = await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 });
        expect(idle.settled).toBe("quiet");
        expect(idle.ms).toBeGreaterThanOrEqual(149);
        // Well before the cap: the steady animations never keep it from going quiet.
        expect(idle.ms).toBeLessThan(1500);

        for (const role of ["check box", "radio button"]) {
          const { node, handles } = await find(
            gtk.pid,
            // Enabled, and (a radio button) not the checked one of its group, so the action changes it.
            (n) =>
              n.role === role &&
              (n.actions?.length ?? 0) > 0 &&
              n.states?.enabled !== false &&
              !(role === "radio button" && n.states?.checked),
            role,
          );
          // After the snapshot: reading a GTK tree the first time makes cell accessibles (a few events).
          const before = await b.waitEvents(gtk.pid, 0, 0);
          // A closed menu's items are hidden: the walk does not read their actions; GTK 3 names a menu
          // item's one action "click".
          await b.doAction(node.handle!, "click", 2000);
          await b.release(handles);
          const after = await b.waitEvents(gtk.pid, before.stamp, 2000);
          expect(after.stamp, `events after toggling a ${role}`).toBeGreaterThan(before.stamp);
          expect(after.recent, `${role} ${node.title}: ${after.recent.join(" ")}`).toContain(
            "object:state-changed:checked",
          );
          expect(after.msSinceLast).toBeGreaterThanOrEqual(0);
          const q = await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 });
          expect(q.settled).toBe("quiet");
          expect(q.ms).toBeLessThan(150 + 400);
        }
      } finally {
        await b.unwatch(gtk.pid);
        await gtk.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "a stopped app (SIGSTOP) ends the wait at quiet or the cap, never later",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        await b.watch(gtk.pid);
        process.kill(gtk.pid, "SIGSTOP");
        try {
          let t0 = performance.now();
          const q = await b.waitQuiet(gtk.pid, { quietMs: 200, capMs: 1000 });
          expect(["quiet", "cap"]).toContain(q.settled);
          expect(performance.now() - t0).toBeLessThan(1000 + 500);
          const before = await b.waitEvents(gtk.pid, 0, 0);
          t0 = performance.now();
          const st = await b.waitEvents(gtk.pid, before.stamp, 400);
          const waited = performance.now() - t0;
          expect(st.stamp).toBe(before.stamp);
          expect(waited).toBeGreaterThanOrEqual(390);
          expect(waited).toBeLessThan(400 + 500);
          // Watching a stopped app anew (it cannot answer) is bounded too.
          await b.unwatch(gtk.pid);
          t0 = performance.now();
          const again = await callNative(() => b.waitQuiet(gtk.pid, { quietMs: 100, capMs: 300 })).catch(
            (e: { code?: string }) => e.code ?? "?",
          );
          expect(performance.now() - t0).toBeLessThan(300 + 2500);
          if (typeof again === "string") expect(["APP_UNRESPONSIVE", "TIMEOUT"]).toContain(again);
          else expect(["quiet", "cap"]).toContain(again.settled);
        } finally {
          process.kill(gtk.pid, "SIGCONT");
        }
        // Running again: its events come again.
        await b.watch(gtk.pid);
        const before = await b.waitEvents(gtk.pid, 0, 0);
        const { node, handles } = await find(
          gtk.pid,
          (n) => n.role === "check box" && !!n.actions?.length,
          "check",
        );
        await b.doAction(node.handle!, node.actions![0]!, 2000);
        await b.release(handles);
        expect((await b.waitEvents(gtk.pid, before.stamp, 2000)).stamp).toBeGreaterThan(before.stamp);
      } finally {
        await b.unwatch(gtk.pid);
        await gtk.stop();
      }
    },
    TIMEOUT,
  );
});

describe("gtk3-widget-factory page transitions", () => {
  it(
    "a stack page switch that slides (no event while the page moves) is waited for: quiet means final",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        await b.watch(gtk.pid);
        // Its spinner and progress bars move all the time: steady animations, never a reason to wait.
        await new Promise((r) => setTimeout(r, 1200));
        const idle = await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 });
        expect(idle.settled).toBe("quiet");
        // Well before the cap: the steady animations never keep it from going quiet.
        expect(idle.ms).toBeLessThan(1500);
        const act = async (role: string, title: string) => {
          const { node, handles } = await find(
            gtk.pid,
            (n) => n.role === role && n.title === title && (n.actions?.length ?? 0) > 0,
            `${role} ${title}`,
          );
          // A closed menu's items are hidden: the walk does not read their actions; GTK 3 names a menu
          // item's one action "click".
          await b.doAction(node.handle!, "click", 2000);
          await b.release(handles);
        };
        // As bench/observe-loop does: the Menu popover's "Slide Pages" makes the page switch slide.
        await act("toggle button", "Menu");
        expect((await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 })).settled).toBe("quiet");
        await act("check box", "Slide Pages");
        expect((await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 })).settled).toBe("quiet");
        for (const page of ["Page 2", "Page 1", "Page 2", "Page 1"]) {
          await act("radio button", page);
          const q = await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 });
          expect(q.settled, page).toBe("quiet");
          const atQuiet = await snapshot({ app: gtk.pid, screenshot: false, deadlineMs: 5000 });
          await new Promise((r) => setTimeout(r, 1000));
          const later = await snapshot({ app: gtk.pid, screenshot: false, deadlineMs: 5000 });
          const d = later.changesSince(atQuiet);
          // Final = nothing appears, goes or moves afterwards. A state that lands late (a radio's "checked"
          // under a loaded CI machine) is not a half-built window.
          const laidOut = d.changed.filter((c) =>
            (c.fields ?? []).some((f) => f === "moved" || f === "resized"),
          );
          expect(
            { added: d.added.length, removed: d.removed.length, movedOrResized: laidOut.length },
            `${page}: quiet after ${Math.round(q.ms)} ms, then within 1 s:\n${d.text}`,
          ).toEqual({ added: 0, removed: 0, movedOrResized: 0 });
          await atQuiet.release();
          await later.release();
        }
        // A toggle is not slowed down by the animations.
        const before = await b.waitEvents(gtk.pid, 0, 0);
        await act("check box", "checkbutton");
        expect((await b.waitEvents(gtk.pid, before.stamp, 2000)).stamp).toBeGreaterThan(before.stamp);
        const q = await b.waitQuiet(gtk.pid, { quietMs: 150, capMs: 3000 });
        expect(q.settled).toBe("quiet");
        expect(q.ms).toBeLessThan(1500);
      } finally {
        await b.unwatch(gtk.pid);
        await gtk.stop();
      }
    },
    TIMEOUT,
  );
});

describe("galculator", () => {
  const MODES = ["Paper Mode", "Basic Mode", "Scientific Mode"] as const;
  function layout(root: RawNode) {
    const all = nodes(root);
    return {
      toggles: all.filter((n) => n.role === "toggle button").length,
      table: all.some((n) => n.role === "table"),
    };
  }
  function showsMode(root: RawNode, mode: (typeof MODES)[number]) {
    const { toggles, table } = layout(root);
    if (mode === "Paper Mode") return table && toggles === 0;
    if (mode === "Basic Mode") return !table && toggles >= 20 && toggles < 40;
    return !table && toggles >= 40;
  }

  it(
    "a mode switch (the window is rebuilt after the reply) is a burst of events; quiet means rebuilt",
    async () => {
      const cal = await startApp(desktop, "galculator", [], { name: "galculator" });
      try {
        await b.watch("galculator");
        for (const mode of ["Paper Mode", "Scientific Mode", "Basic Mode", "Paper Mode"] as const) {
          const before = await b.waitEvents(cal.pid, 0, 0);
          const { node, handles } = await find(
            cal.pid,
            (n) => n.role === "radio menu item" && n.title === mode,
            `the ${mode} menu item`,
          );
          // A closed menu's items are hidden: the walk does not read their actions; GTK 3 names a menu
          // item's one action "click".
          await b.doAction(node.handle!, "click", 2000);
          await b.release(handles);
          const t0 = performance.now();
          const q = await b.waitQuiet(cal.pid, { quietMs: 150, capMs: 5000 });
          const settleMs = performance.now() - t0;
          expect(q.settled, mode).toBe("quiet");
          expect(settleMs).toBeLessThan(3000);
          const st = await b.waitEvents(cal.pid, 0, 0);
          // Widgets destroyed and made: many events (defunct states, new parents and roles, children).
          expect(st.stamp - before.stamp, `events of the switch to ${mode}`).toBeGreaterThan(20);
          const s = await b.snapshot({
            app: cal.pid,
            screenshot: false,
            deadlineMs: 5000,
            maxNodes: 2400,
            maxDepth: 64,
          });
          expect(
            showsMode(s.raw.root, mode),
            `${mode} after quiet: ${JSON.stringify(layout(s.raw.root))}`,
          ).toBe(true);
          await b.release(s.handles);
        }
      } finally {
        await b.unwatch(cal.pid);
        await cal.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "opening a menu is a window event",
    async () => {
      const cal = await startApp(desktop, "galculator", [], { name: "galculator" });
      try {
        await b.watch(cal.pid);
        const before = await b.waitEvents(cal.pid, 0, 0);
        const { node, handles } = await find(
          cal.pid,
          (n) => n.role === "menu" && (n.actions?.length ?? 0) > 0 && !!n.title,
          "a menu of the menu bar",
        );
        await b.doAction(node.handle!, node.actions![0]!, 2000);
        await b.release(handles);
        const { kinds } = await kindsWithin(cal.pid, 800, before.stamp);
        const st = await b.waitEvents(cal.pid, 0, 0);
        expect(
          st.windowStamp,
          `window events after opening ${node.title}; kinds: ${[...kinds].join(", ")}`,
        ).toBeGreaterThan(before.windowStamp);
      } finally {
        await b.unwatch(cal.pid);
        await cal.stop();
      }
    },
    TIMEOUT,
  );
});

describe("the accessibility bus goes away", () => {
  it(
    "a wait in progress fails at once with a typed error, and a new watch works on the new bus",
    async () => {
      const gtk = await gtkWidgetFactory(desktop);
      try {
        await b.watch(gtk.pid);
        const t0 = performance.now();
        const waiting = callNative(() => b.waitQuiet(gtk.pid, { quietMs: 4000, capMs: 6000 })).then(
          (r) => ({ ok: true as const, r }),
          (e: { code?: string }) => ({ ok: false as const, code: e.code }),
        );
        await new Promise((r) => setTimeout(r, 300));
        await restartAccessibilityBus(desktop);
        const outcome = await waiting;
        // The connection closed under the wait: a typed error at once, not the 4 s quiet period nor the cap.
        expect(performance.now() - t0).toBeLessThan(4000);
        expect(outcome).toEqual({ ok: false, code: "ACCESSIBILITY_UNAVAILABLE" });
      } finally {
        await gtk.stop();
      }
      // An app started on the new bus: watched on the new connection (the backend reconnects), events flow.
      const fresh = await gtkWidgetFactory(desktop);
      try {
        await b.watch(fresh.pid, 5000);
        const { node, handles } = await find(
          fresh.pid,
          (n) => n.role === "check box" && !!n.actions?.length,
          "check",
        );
        // The walk itself makes GTK send events (cell accessibles created): count from after it.
        const before = await b.waitEvents(fresh.pid, 0, 0);
        await b.doAction(node.handle!, node.actions![0]!, 2000);
        await b.release(handles);
        let after = await b.waitEvents(fresh.pid, before.stamp, 2000);
        for (let i = 0; i < 20 && !after.recent.includes("object:state-changed:checked"); i++)
          after = await b.waitEvents(fresh.pid, after.stamp, 200);
        expect(after.stamp).toBeGreaterThan(before.stamp);
        expect(after.recent).toContain("object:state-changed:checked");
      } finally {
        await fresh.stop();
      }
    },
    TIMEOUT,
  );
});
