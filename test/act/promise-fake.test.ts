/**
 * Issue 9, "keep the promise", on the fake backend: the races are forced
 * deterministically (the desktop is replaced between steps, elements stall
 * after a request left, focus moves or is refused), never retried.
 * Each describe names the issue item it covers.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AxsnapError } from "../../lib/index.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { createSession, type Session } from "../../lib/session/session.js";
import { rejects } from "../support/rejects.js";

type Node = Record<string, unknown>;
const native = loadNative();
const open: { b: NativeBackend; s: Session[] }[] = [];
const frame = { x: 100, y: 100, w: 800, h: 600 };

function app(children: Node[], pid = 77, name = "Editor") {
  return {
    name,
    pid,
    windows: [{ title: "W", frame, root: { role: "frame", title: "W", frame, children } }],
  };
}
const desktop = (children: Node[], extra: object = {}) => ({ apps: [app(children)], ...extra });
let nextY = 110;
/** A frame below the last one, so elements do not overlap. */
function at() {
  nextY += 30;
  return { x: 120, y: nextY, w: 200, h: 24 };
}
const button = (title: string, extra: Node = {}): Node => ({
  role: "push button",
  title,
  actions: ["click"],
  frame: at(),
  ...extra,
});
const entry = (title: string, value: string, extra: Node = {}): Node => ({
  role: "text",
  title,
  value,
  valueType: "string",
  settable: true,
  states: { editable: true, focusable: true, enabled: true },
  actions: ["activate"],
  frame: at(),
  ...extra,
});
const password = (extra: Node = {}): Node => ({
  role: "password text",
  title: "Secret",
  settable: true,
  charCount: 7,
  states: { editable: true, focusable: true },
  frame: at(),
  ...extra,
});
const focused = (n: Node): Node => ({ ...n, states: { ...(n.states as object), focused: true } });

function setup(script: object, options: Parameters<typeof createSession>[0] = {}) {
  const b = new native.NativeBackend("fake", script);
  const s = createSession({ backend: b, deadlineMs: 1000, ...options });
  open.push({ b, s: [s] });
  return { b, s };
}

afterEach(async () => {
  for (const { b, s } of open.splice(0)) {
    for (const x of s) await x.close();
    await b.close();
  }
});

/** The index printed for the element with that title, from the snapshot's records. */
const indexOf = (snap: { records: readonly { title?: string; index: number }[] }, name: string) => {
  const r = snap.records.find((x) => x.title === name);
  if (!r) throw new Error(`no element ${name}`);
  return r.index;
};
const typed = (b: NativeBackend) => b.fakeLog().filter((l) => l.startsWith("type ") || l.startsWith("keys "));

describe("item 1: the race no client can close is reported", () => {
  it("notes when the element reads differently right after the action", async () => {
    const { b, s } = setup(desktop([button("Buy"), button("Sell")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    // A hook: the app renames the button while it handles the press (after every check passed).
    const press = b.doAction.bind(b);
    Object.defineProperty(b, "doAction", {
      configurable: true,
      value: async (h: number, name: string, d: number) => {
        await press(h, name, d);
        await b.fakeReplace(desktop([button("Delete all"), button("Sell")]));
      },
    });
    const result = await s.click(indexOf(snap, "Buy"));
    expect(result.notes.join(" ")).toMatch(
      /reads as push button "Delete all" right after the action \(it was "Buy"\)/,
    );
  });
});

describe("item 1: web content is flushed before its identity is read", () => {
  const web = (children: Node[]): Node => ({ role: "document web", title: "page", frame, children });

  it("focuses a web button, waits until the tree shows it focused, then checks and clicks", async () => {
    const { b, s } = setup(desktop([web([button("Buy"), button("Sell")])]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(indexOf(snap, "Buy"), { snapshot: false });
    const id = snap.records[indexOf(snap, "Buy")]!.handle;
    expect(b.fakeLog()).toEqual([`focus ${id}`, `action ${id} click`]);
    expect(result.notes).toEqual([]);
  });

  it("moves focus off an element that has it already, so its rename is flushed before the check", async () => {
    // Chromium sends a page's pending changes along with a focus change; focusing the element that
    // has focus changes nothing, so nothing is flushed. Modelled here: the rename waits for a focus change.
    const buy = focused(button("Buy"));
    const sell = button("Sell");
    const { b, s } = setup(desktop([web([buy, sell])]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const buyId = snap.records[indexOf(snap, "Buy")]!.handle;
    let has = buyId;
    let pending: object | undefined = desktop([web([{ ...buy, title: "Delete all", states: {} }, sell])]);
    const focus = b.focus.bind(b);
    Object.defineProperty(b, "focus", {
      configurable: true,
      value: async (h: number, d: number) => {
        await focus(h, d);
        if (h !== has && pending) {
          await b.fakeReplace(pending);
          pending = undefined;
        }
        has = h;
      },
    });
    const e = await rejects(s.click(indexOf(snap, "Buy"), { snapshot: false }));
    expect(e.code).toBe("STALE_REF");
    expect(e.delivery).toBe("not_delivered");
    expect(b.fakeLog().some((l) => l.startsWith("action"))).toBe(false);
  });

  it("says so when the page never shows the focus (the live name may lag)", async () => {
    const { b, s } = setup(desktop([web([button("Buy", { fault: { refuseFocus: true } })])]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(indexOf(snap, "Buy"), { snapshot: false });
    expect(result.notes.join(" ")).toMatch(/did not show the element focused in time/);
    expect(b.fakeLog().at(-1)).toMatch(/^action \d+ click$/);
  });

  it("does not focus elements outside web content", async () => {
    const { b, s } = setup(desktop([button("Buy")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    await s.click(indexOf(snap, "Buy"), { snapshot: false });
    expect(b.fakeLog().some((l) => l.startsWith("focus"))).toBe(false);
  });
});

describe("item 2: a refused action does not move latest", () => {
  it("keeps the agent's snapshot as latest after AMBIGUOUS_TARGET and STALE_REF", async () => {
    const { b, s } = setup(desktop([button("Alpha"), button("Beta"), button("Gamma")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const beta = indexOf(snap, "Beta");
    const gamma = indexOf(snap, "Gamma");
    // Two Betas now: the re-observation cannot tell which one was meant.
    await b.fakeReplace(desktop([button("Beta"), button("Alpha"), button("Beta"), button("Gamma")]));
    expect((await rejects(s.click(beta))).code).toBe("AMBIGUOUS_TARGET");
    expect(s.address(gamma).snapshot.id).toBe(snap.id);
    await b.fakeReplace(desktop([button("Alpha"), button("Gamma")]));
    expect((await rejects(s.click(beta))).code).toBe("STALE_REF");
    // The bare index still means what the agent read: "Gamma" of its own snapshot.
    const still = s.address(gamma);
    expect(still.snapshot.id).toBe(snap.id);
    expect(still.record.title).toBe("Gamma");
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("item 3: input only to the observed app's window", () => {
  it("refuses clicks and keys once the app is gone, even with another app's window in the same place", async () => {
    const { b, s } = setup(desktop([focused(entry("Name", ""))]));
    const snap = await s.snapshot({ app: "Editor" });
    await b.fakeReplace({ apps: [app([focused(entry("Other field", ""))], 99, "Other")] });
    const click = await rejects(s.clickAt(50, 50, { of: snap }));
    expect(click.code).toBe("APP_NOT_FOUND");
    expect(click.delivery).toBe("not_delivered");
    expect((await rejects(s.typeText("hello", { app: 77 }))).code).toBe("APP_NOT_FOUND");
    expect((await rejects(s.pressKey("ctrl+a", { app: 77 }))).code).toBe("APP_NOT_FOUND");
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("item 5: two instances of one app", () => {
  it("refuses a bare index by name when the session observed two apps of that name", async () => {
    const { b, s } = setup({ apps: [app([button("One")], 77), app([button("Two")], 78)] });
    await s.snapshot({ app: 77, screenshot: false });
    await s.snapshot({ app: 78, screenshot: false });
    const e = await rejects(s.click(1, { app: "Editor" }));
    expect(e.code).toBe("AMBIGUOUS_APP");
    expect(e.message).toMatch(/pid 77.*pid 78/);
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("item 6: typing into a target that cannot take focus", () => {
  it("refuses with nothing typed when focus does not land on the target", async () => {
    const label = { role: "label", title: "Account", frame: at(), fault: { refuseFocus: true } };
    const { b, s } = setup(desktop([label, focused(entry("Combo", "keep me"))]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const e = await rejects(s.typeText("oops", { target: indexOf(snap, "Account") }));
    expect(e.code).toBe("ACTION_FAILED");
    expect(e.delivery).toBe("not_delivered");
    expect(e.message).toMatch(/did not take keyboard focus; nothing was typed/);
    expect(typed(b)).toEqual([]);
  });
});

describe("item 7: clicking a text field focuses it; a disabled element is refused", () => {
  it("focuses a text entry instead of activating it (activate submits a dialog)", async () => {
    const { b, s } = setup(desktop([entry("Name", ""), button("OK")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.click(indexOf(snap, "Name"));
    expect(result.delivery).toBe("delivered_verified");
    expect(b.fakeLog().some((l) => l.includes("activate"))).toBe(false);
    expect(b.fakeLog().some((l) => l.startsWith("focus "))).toBe(true);
  });

  it("refuses a disabled element with NOT_ENABLED, nothing sent", async () => {
    const { b, s } = setup(desktop([button("Apply", { states: { enabled: false } })]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const e = await rejects(s.click(indexOf(snap, "Apply")));
    expect(e.code).toBe("NOT_ENABLED");
    expect(e.retry).toBe("safe");
    expect(b.fakeLog()).toEqual([]);
  });
});

describe("item 8: no key event reaches a secure field", () => {
  it("checks the live focus, not the snapshot's: focus moved to a password field after the snapshot", async () => {
    const { b, s } = setup(desktop([focused(entry("Name", "")), password()]));
    await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([entry("Name", ""), focused(password())]));
    const e = await rejects(s.typeText("hunter2"));
    expect(e.code).toBe("POLICY_DENIED");
    expect(typed(b)).toEqual([]);
  });

  // Issue 31, item 3: a field with no name of its own, secure only by the label beside it.
  const labelled = (text: string, field: Node = {}): Node[] => [
    { role: "label", title: text, frame: { x: 120, y: 500, w: 60, h: 24 } },
    {
      role: "text",
      value: "4711",
      valueType: "string",
      settable: true,
      states: { editable: true, focusable: true, enabled: true, focused: true },
      frame: { x: 190, y: 500, w: 200, h: 24 },
      ...field,
    },
  ];

  it("issue 31: reads the label beside an unnamed focused field again: relabelled PIN after the snapshot", async () => {
    const { b, s } = setup(desktop([button("OK"), ...labelled("Name:")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    expect(snap.text).toContain("Label: Name:, Value: 4711");
    await b.fakeReplace(desktop([button("OK"), ...labelled("PIN:")]));
    const e = await rejects(s.typeText("66"));
    expect(e.code).toBe("POLICY_DENIED");
    expect(e.message).toMatch(/the label "PIN:" beside it names a secret/);
    expect(e.hint).toMatch(/ask the user/);
    expect((await rejects(s.pressKey("5"))).code).toBe("POLICY_DENIED");
    expect(typed(b)).toEqual([]);
    // The label says Name again: keys go in.
    await b.fakeReplace(desktop([button("OK"), ...labelled("Name:")]));
    await s.typeText("66", { snapshot: false });
    expect(typed(b)).toEqual(["type 66"]);
  });

  it("issue 31: an unnamed focused field the snapshot did not show cannot be judged by its label: refused", async () => {
    const { b, s } = setup(desktop([button("OK")]));
    await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([button("OK"), ...labelled("Name:")]));
    const e = await rejects(s.typeText("66"));
    expect(e.code).toBe("POLICY_DENIED");
    expect(e.message).toMatch(/did not show it/);
    expect(e.hint).toMatch(/take a new snapshot/);
    expect(typed(b)).toEqual([]);
    // A new snapshot shows it, and judges it by its label.
    await s.snapshot({ app: "Editor", screenshot: false });
    await s.typeText("66", { snapshot: false });
    expect(typed(b)).toEqual(["type 66"]);
    // A text area (an editor's document) is no password field: one the snapshot did not show takes keys.
    await b.fakeReplace(
      desktop([
        button("OK"),
        button("Cancel"),
        ...labelled("Notes:", { states: { focused: true, multiline: true } }),
      ]),
    );
    await s.typeText("7", { snapshot: false });
    expect(typed(b)).toEqual(["type 66", "type 7"]);
  });

  it("treats a plain text field named Password or PIN as secure (item 9, live)", async () => {
    for (const name of ["Password", "PIN", "密码"]) {
      const { b, s } = setup(desktop([focused(entry(name, ""))]));
      await s.snapshot({ app: "Editor", screenshot: false });
      expect((await rejects(s.typeText("1234"))).code).toBe("POLICY_DENIED");
      expect(typed(b)).toEqual([]);
    }
  });

  it("refuses pressKey of a printable key in a password field, lets navigation keys pass", async () => {
    const { b, s } = setup(desktop([focused(password()), button("OK")]));
    await s.snapshot({ app: "Editor", screenshot: false });
    expect((await rejects(s.pressKey("7"))).code).toBe("POLICY_DENIED");
    expect((await rejects(s.pressKey("ctrl+v"))).code).toBe("POLICY_DENIED");
    expect((await rejects(s.pressKey("BackSpace"))).code).toBe("POLICY_DENIED");
    expect(typed(b)).toEqual([]);
    await s.pressKey("Tab", { snapshot: false });
    await s.pressKey("ctrl+a", { snapshot: false });
    expect(typed(b)).toEqual(["keys Tab", "keys ctrl+a"]);
  });

  it("refuses keys when the focus cannot be read", async () => {
    const { b, s } = setup(desktop([focused(entry("Name", "", { fault: { hangMs: 5000 } }))]), {
      deadlineMs: 300,
    });
    await s.snapshot({ app: "Editor", screenshot: false, deadlineMs: 2000 }).catch(() => undefined);
    await b.fakeReplace(desktop([focused(entry("Name", "", { fault: { hangMs: 5000 } }))]));
    const e = await rejects(s.pressKey("x"));
    expect(["POLICY_DENIED", "TIMEOUT"]).toContain(e.code);
    expect(e.delivery).toBe("not_delivered");
    expect(typed(b)).toEqual([]);
  });

  it("stops typing when focus moves into a password field between chunks", async () => {
    const { b, s } = setup(desktop([focused(entry("Name", "")), password()]));
    await s.snapshot({ app: "Editor", screenshot: false });
    // A hook, not a timer: right after the first chunk is typed, focus moves into the password field.
    const typeChunk = b.typeText.bind(b);
    let chunks = 0;
    Object.defineProperty(b, "typeText", {
      configurable: true,
      value: async (w: Parameters<NativeBackend["typeText"]>[0], t: string, d: number) => {
        const out = await typeChunk(w, t, d);
        if (++chunks === 1) await b.fakeReplace(desktop([entry("Name", ""), focused(password())]));
        return out;
      },
    });
    const e = await rejects(s.typeText("a".repeat(100), { snapshot: false }));
    expect(e.code).toBe("POLICY_DENIED");
    expect(e.delivery).toBe("delivery_uncertain");
    expect(e.message).toMatch(/32 of 100 characters were typed/);
    expect(typed(b)).toEqual([`type ${"a".repeat(32)}`]);
  });
});

describe("item 10: keys go through the destructive guard", () => {
  it("typeText(' ') or '\\n' onto a Delete button and Return on a focused Delete need confirm", async () => {
    const { b, s } = setup(desktop([focused(button("Delete account"))]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const target = indexOf(snap, "Delete account");
    expect((await rejects(s.typeText(" ", { target }))).code).toBe("POLICY_DENIED");
    expect((await rejects(s.typeText("\n", { target }))).code).toBe("POLICY_DENIED");
    expect((await rejects(s.pressKey("Return"))).code).toBe("POLICY_DENIED");
    expect((await rejects(s.pressKey("space"))).code).toBe("POLICY_DENIED");
    expect(typed(b)).toEqual([]);
  });

  it("lets plain text into a text field named like a destructive word, but not Return", async () => {
    const asked: string[] = [];
    const { b, s } = setup(desktop([focused(entry("Send a message", ""))]), {
      confirm: (r) => {
        asked.push(r.action);
        return false;
      },
    });
    await s.snapshot({ app: "Editor", screenshot: false });
    await s.typeText("hello", { snapshot: false });
    expect((await rejects(s.pressKey("Return"))).code).toBe("POLICY_DENIED");
    expect(asked).toEqual(["pressKey"]);
    expect(typed(b)).toEqual(["type hello"]);
  });
});

describe("items 12 and 13: typing inserts, never rewrites", () => {
  it("inserts at the end of a 15,000-character field instead of writing back what it read", async () => {
    const long = "x".repeat(15_000);
    const { b, s } = setup(desktop([entry("Body", long)]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.typeText("END", { target: indexOf(snap, "Body"), snapshot: false });
    expect(result.delivery).toBe("delivered_verified");
    expect(b.fakeLog().filter((l) => !l.startsWith("focus"))).toEqual([
      `insert ${snap.records.find((r) => r.title === "Body")!.handle} END`,
    ]);
    const after = await s.snapshot({ app: "Editor", screenshot: false, textLimit: "max" });
    expect(after.text).toContain(`${long}END`);
  });

  it("two sessions typing into one field concurrently lose nothing", async () => {
    const { b, s } = setup(desktop([entry("Body", "start")]));
    const s2 = createSession({ backend: b, deadlineMs: 1000 });
    open[0]!.s.push(s2);
    const a = await s.snapshot({ app: "Editor", screenshot: false });
    const c = await s2.snapshot({ app: "Editor", screenshot: false });
    await Promise.all([
      s.typeText("-one", { target: indexOf(a, "Body"), snapshot: false }),
      s2.typeText("-two", { target: indexOf(c, "Body"), snapshot: false }),
    ]);
    const after = await s.snapshot({ app: "Editor", screenshot: false });
    expect(after.text).toMatch(/start(-one-two|-two-one)/);
  });
});

describe("item 14: a timeout after the request left is delivery_uncertain", () => {
  it("reports delivery_uncertain, retry unsafe, when the app stalls after the press was sent", async () => {
    const { b, s } = setup(desktop([button("Buy", { fault: { actionHangMs: 3000 } })]), { deadlineMs: 300 });
    const snap = await s.snapshot({ app: "Editor", screenshot: false, deadlineMs: 1000 });
    const outcome = await s.click(indexOf(snap, "Buy"), { snapshot: false }).catch((e: AxsnapError) => e);
    expect(outcome.delivery).toBe("delivery_uncertain");
    expect(outcome.retry).toBe("unsafe");
    expect(b.fakeLog()).toEqual([expect.stringMatching(/^action \d+ click$/)]);
  });
});

describe("item 16: codes that say what happened", () => {
  it("a ref into an app that exited is APP_NOT_FOUND, not IDENTITY_UNPROVEN", async () => {
    const { b, s } = setup(desktop([button("OK")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace({ apps: [] });
    const e = await rejects(s.click(`@${snap.id}:e${indexOf(snap, "OK")}`));
    expect(e.code).toBe("APP_NOT_FOUND");
    expect(e.delivery).toBe("not_delivered");
  });

  it("clickAt on a snapshot whose screenshot failed is ACTION_FAILED, not INVALID_ARGUMENT", async () => {
    const noFrame = {
      apps: [
        {
          name: "Editor",
          pid: 77,
          windows: [{ title: "W", root: { role: "frame", title: "W", children: [button("OK")] } }],
        },
      ],
    };
    const { s } = setup(noFrame);
    const snap = await s.snapshot({ app: "Editor" });
    expect(snap.screenshot).toBeUndefined();
    const e = await rejects(s.clickAt(10, 10));
    expect(e.code).toBe("ACTION_FAILED");
    expect(e.message).toMatch(/no screenshot/);
    // Asked without a screenshot, it is the caller's argument.
    await s.snapshot({ app: "Editor", screenshot: false });
    expect((await rejects(s.clickAt(10, 10))).code).toBe("INVALID_ARGUMENT");
  });
});

describe("item 18: every call settles by its deadline; typing is cut into chunks", () => {
  it("cuts a long typing run at the deadline and says how much was typed", async () => {
    const { b, s } = setup(desktop([focused(entry("Name", ""))], { typeMsPerChar: 5 }));
    await s.snapshot({ app: "Editor", screenshot: false });
    const cjk = "漢".repeat(600);
    const started = performance.now();
    const e = await rejects(s.typeText(cjk, { deadlineMs: 500, snapshot: false }));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(e.delivery).toBe("delivery_uncertain");
    const m = /(\d+) of 600 characters were typed/.exec(e.message);
    expect(m).not.toBeNull();
    const n = Number(m![1]);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(600);
    expect(
      Array.from(
        typed(b)
          .map((l) => l.slice(5))
          .join(""),
      ).length,
    ).toBe(n);
  });

  it("lets a concurrent snapshot run between typing chunks", async () => {
    const { s } = setup(desktop([focused(entry("Name", ""))], { typeMsPerChar: 4 }));
    await s.snapshot({ app: "Editor", screenshot: false });
    const typing = s.typeText("漢".repeat(600), { deadlineMs: 10_000, snapshot: false });
    await new Promise((r) => setTimeout(r, 100));
    const snap = await s.snapshot({ app: "Editor", screenshot: false, deadlineMs: 1000 });
    expect(snap.complete).toBe(true);
    await typing;
  });

  it("refuses a per-call deadline out of range", async () => {
    const { s } = setup(desktop([button("OK")]));
    await s.snapshot({ app: "Editor", screenshot: false });
    for (const deadlineMs of [0, 0.5, -1, Number.NaN, 700_000])
      expect((await rejects(s.click(0, { deadlineMs }))).code).toBe("INVALID_ARGUMENT");
  });
});

describe("item 20: AbortSignal", () => {
  it("an aborted signal refuses before anything is sent", async () => {
    const { b, s } = setup(desktop([button("OK")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const e = await rejects(s.click(indexOf(snap, "OK"), { signal: AbortSignal.abort() }));
    expect(e.code).toBe("ABORTED");
    expect(e.delivery).toBe("not_delivered");
    expect((await rejects(s.snapshot({ app: "Editor", signal: AbortSignal.abort() }))).code).toBe("ABORTED");
    expect(b.fakeLog()).toEqual([]);
  });

  it("an abort after the request left is ABORTED with delivery_uncertain", async () => {
    const { b, s } = setup(desktop([button("Buy", { fault: { actionHangMs: 2000 } })]), { deadlineMs: 5000 });
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const controller = new AbortController();
    const p = s.click(indexOf(snap, "Buy"), { signal: controller.signal, snapshot: false });
    setTimeout(() => controller.abort(new Error("user pressed stop")), 100);
    const started = performance.now();
    const e = await rejects(p);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(e.code).toBe("ABORTED");
    expect(e.delivery).toBe("delivery_uncertain");
    expect(e.message).toMatch(/user pressed stop/);
    expect(b.fakeLog()).toEqual([expect.stringMatching(/^action \d+ click$/)]);
  });

  it("an aborted snapshot settles at once, and the walk's handles are released when it ends", async () => {
    const slow = button("Slow", { fault: { hangMs: 400 } });
    const { b, s } = setup(desktop([slow, button("Other")]));
    const controller = new AbortController();
    const p = s.snapshot({ app: "Editor", screenshot: false, deadlineMs: 3000, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expect((await rejects(p)).code).toBe("ABORTED");
    expect(performance.now() - started).toBeLessThan(300);
    const before = b.fakeReleased();
    await new Promise((r) => setTimeout(r, 800));
    expect(b.fakeReleased()).toBeGreaterThan(before);
  });
});

describe("item 22: notes are cut", () => {
  it("cuts a 10,000-character read-back note to the text limit", async () => {
    const { s } = setup(desktop([entry("Body", "y".repeat(10_000), { fault: { ignoreSet: true } })]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const result = await s.setValue(indexOf(snap, "Body"), "short", { snapshot: false });
    expect(result.delivery).toBe("delivered_unverified");
    for (const n of result.notes) expect(n.length).toBeLessThanOrEqual(503);
    expect(result.notes.join(" ")).toMatch(/asked for "short"; it became "y+\.\.\./);
  });
});

describe("review follow-ups", () => {
  it("item 10: the key guard reads the live name: a focused button renamed to Delete after the snapshot", async () => {
    const { b, s } = setup(desktop([focused(button("Buy"))]));
    await s.snapshot({ app: "Editor", screenshot: false });
    await b.fakeReplace(desktop([focused(button("Delete all"))]));
    expect((await rejects(s.pressKey("Return"))).code).toBe("POLICY_DENIED");
    expect((await rejects(s.typeText(" "))).code).toBe("POLICY_DENIED");
    expect(typed(b)).toEqual([]);
  });

  it("item 8: with nothing focused, text is not typed blind; keys that cannot insert pass", async () => {
    const { b, s } = setup(desktop([entry("Name", ""), password()]));
    await s.snapshot({ app: "Editor", screenshot: false });
    const e = await rejects(s.typeText("abc"));
    expect(e.code).toBe("POLICY_DENIED");
    expect(e.message).toMatch(/no element of the app has keyboard focus/);
    await s.pressKey("Tab", { snapshot: false });
    expect(typed(b)).toEqual(["keys Tab"]);
  });

  it("item 6: typing into a target stops when focus moves to another field between chunks", async () => {
    const { b, s } = setup(desktop([entry("First", ""), entry("Second", "")]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    const typeChunk = b.typeText.bind(b);
    let chunks = 0;
    Object.defineProperty(b, "typeText", {
      configurable: true,
      value: async (w: Parameters<NativeBackend["typeText"]>[0], t: string, d: number) => {
        const out = await typeChunk(w, t, d);
        if (++chunks === 1) await b.fakeReplace(desktop([entry("First", ""), focused(entry("Second", ""))]));
        return out;
      },
    });
    // "First" cannot insert (not editable), so it is focused and typed with key events.
    await b.fakeReplace(desktop([entry("First", "", { states: { editable: false } }), entry("Second", "")]));
    const e = await rejects(s.typeText("x".repeat(70), { target: indexOf(snap, "First"), snapshot: false }));
    expect(e.code).toBe("ACTION_FAILED");
    expect(e.message).toMatch(/keyboard focus left element \d+/);
    expect(e.delivery).toBe("delivery_uncertain");
    expect(typed(b).filter((l) => l.startsWith("type "))).toEqual([`type ${"x".repeat(32)}`]);
  });

  it("item 18: the fresh snapshot after an action fits in the call's deadline", async () => {
    const slow = { role: "panel", title: "slow", frame: at(), fault: { hangMs: 5000 } };
    const { s } = setup(desktop([button("OK"), slow]), { deadlineMs: 5000 });
    const snap = await s
      .snapshot({ app: "Editor", screenshot: false, deadlineMs: 200 })
      .catch(() => undefined);
    const target = snap ? indexOf(snap, "OK") : 1;
    const started = performance.now();
    const result = await s.click(target, { deadlineMs: 400 }).catch((e: AxsnapError) => e);
    expect(performance.now() - started).toBeLessThan(400 + 300);
    expect(result).toBeDefined();
  });

  it('a destructive action name goes through confirm (performAction "Remove")', async () => {
    const { b, s } = setup(desktop([button("Inbox", { actions: ["click", "Remove"] })]));
    const snap = await s.snapshot({ app: "Editor", screenshot: false });
    expect((await rejects(s.performAction(indexOf(snap, "Inbox"), "Remove"))).code).toBe("POLICY_DENIED");
    expect(b.fakeLog()).toEqual([]);
  });

  it("a drag stays in one app and its ends go through the destructive guard", async () => {
    const { b, s } = setup({
      apps: [app([button("Trash can"), button("Delete zone")], 77), app([button("Other")], 78)],
    });
    const one = await s.snapshot({ app: 77, screenshot: false });
    const two = await s.snapshot({ app: 78, screenshot: false });
    const e = await rejects(
      s.drag(`@${one.id}:e${indexOf(one, "Trash can")}`, `@${two.id}:e${indexOf(two, "Other")}`),
    );
    expect(e.code).toBe("INVALID_ARGUMENT");
    const d = await rejects(
      s.drag(`@${one.id}:e${indexOf(one, "Trash can")}`, `@${one.id}:e${indexOf(one, "Delete zone")}`),
    );
    expect(d.code).toBe("POLICY_DENIED");
    expect(b.fakeLog()).toEqual([]);
  });
});
