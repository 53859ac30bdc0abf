/**
 * Abuse: every public function with wrong types, NaN, negative, fractional and
 * huge numbers, empty strings, unknown refs, refs to released snapshots, a
 * bare @e12, unknown action names and unknown apps. Each gets its typed error
 * with a hint; nothing reaches the app; the process lives on.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AxsnapError, createSnapshot, render } from "../../lib/index.js";
import { loadNative, type NativeBackend } from "../../lib/native.js";
import { snapshot as observe } from "../../lib/observe/desktop.js";
import { createSession, type Session } from "../../lib/session/session.js";

const frame = { x: 100, y: 100, w: 800, h: 600 };
const script = {
  apps: [
    {
      name: "Editor",
      pid: 7,
      windows: [
        {
          title: "W",
          frame,
          root: {
            role: "frame",
            title: "W",
            frame,
            children: [
              {
                role: "push button",
                title: "Go",
                actions: ["click"],
                frame: { x: 120, y: 120, w: 80, h: 20 },
              },
              {
                role: "text",
                title: "Name",
                settable: true,
                value: "x",
                frame: { x: 120, y: 150, w: 80, h: 20 },
              },
            ],
          },
        },
      ],
    },
  ],
};

let backend: NativeBackend;
let session: Session;

beforeAll(async () => {
  backend = new (loadNative().NativeBackend)("fake", script);
  session = createSession({ backend });
  await session.snapshot({ app: "Editor" });
});

afterAll(async () => {
  await session.close();
  await backend.close();
});

async function expectCode(run: () => unknown, code: string): Promise<void> {
  let caught: unknown;
  try {
    await run();
  } catch (e) {
    caught = e;
  }
  expect(caught, "should have thrown").toBeInstanceOf(AxsnapError);
  const err = caught as AxsnapError;
  expect(err.code).toBe(code);
  expect(err.hint.length).toBeGreaterThan(10);
  expect(err.retry).toBe("safe");
}

const badTargets: [string, unknown, string][] = [
  ["undefined", undefined, "INVALID_ARGUMENT"],
  ["null", null, "INVALID_ARGUMENT"],
  ["NaN", Number.NaN, "INVALID_ARGUMENT"],
  ["Infinity", Number.POSITIVE_INFINITY, "INVALID_ARGUMENT"],
  ["-1", -1, "INVALID_ARGUMENT"],
  ["1.5", 1.5, "INVALID_ARGUMENT"],
  ["1e12", 1e12, "INVALID_ARGUMENT"],
  ["an index never printed", 4096, "ELEMENT_NOT_FOUND"],
  ["empty string", "", "INVALID_ARGUMENT"],
  ["bare @e1", "@e1", "INVALID_ARGUMENT"],
  ["unknown ref", "@sabcdefg:e1", "SNAPSHOT_NOT_FOUND"],
  ["a boolean", true, "INVALID_ARGUMENT"],
  ["an array", [1], "INVALID_ARGUMENT"],
  ["a function", () => 1, "INVALID_ARGUMENT"],
];

describe("every action refuses bad targets", () => {
  const actions: [string, (t: never) => unknown][] = [
    ["click", (t) => session.click(t)],
    ["setValue", (t) => session.setValue(t, "v")],
    ["typeText", (t) => session.typeText("v", { target: t })],
    ["scroll", (t) => session.scroll(t, "down")],
    ["drag", (t) => session.drag(t, 1)],
    ["performAction", (t) => session.performAction(t, "click")],
    ["resolve", (t) => session.resolve(t)],
  ];
  for (const [name, act] of actions) {
    // typeText's target is optional: without one it types into the focused element.
    const cases = name === "typeText" ? badTargets.filter(([what]) => what !== "undefined") : badTargets;
    it.each(cases)(`${name} refuses %s`, async (_what, target, code) =>
      expectCode(() => act(target as never), code),
    );
  }
});

describe("every action refuses bad arguments", () => {
  it.each([
    ["setValue NaN", () => session.setValue(1, Number.NaN)],
    ["setValue an object", () => session.setValue(1, {} as never)],
    ["typeText empty", () => session.typeText("")],
    ["typeText a number", () => session.typeText(5 as never)],
    ["pressKey empty", () => session.pressKey("")],
    ["pressKey a number", () => session.pressKey(1 as never)],
    ["scroll a bad direction", () => session.scroll(1, "sideways" as never)],
    ["scroll 0 pages", () => session.scroll(1, "down", 0)],
    ["scroll 2.5 pages", () => session.scroll(1, "down", 2.5)],
    ["performAction empty name", () => session.performAction(1, "")],
    ["click count 3", () => session.click(1, { count: 3 as never })],
    ["click a bad button", () => session.click(1, { button: "middle" as never })],
    ["clickAt NaN", () => session.clickAt(Number.NaN, 1)],
    ["rightClickAt a string", () => session.rightClickAt("1" as never, 1)],
    ["doubleClickAt Infinity", () => session.doubleClickAt(1, Number.POSITIVE_INFINITY)],
    ["scrollAt no delta", () => session.scrollAt(1, 1, {})],
    ["scrollAt fractional", () => session.scrollAt(1, 1, { dy: 0.5 })],
    ["dragAt nothing", () => session.dragAt(undefined as never, { x: 1, y: 1 })],
    ["createSession negative staleAfterMs", () => createSession({ staleAfterMs: -5 })],
    ["createSession a string confirm", () => createSession({ confirm: "yes" as never })],
    ["createSession empty words", () => createSession({ destructiveWords: [""] })],
    ["render bad options", () => render({}, { maxNodes: -1 })],
    ["render not a tree", () => render("tree")],
    ["createSnapshot not a tree", () => createSnapshot({ raw: 5 })],
  ])("%s → INVALID_ARGUMENT", async (_what, run) => expectCode(run, "INVALID_ARGUMENT"));

  it("refuses an unknown action name with its list of actions", async () => {
    let err: AxsnapError | undefined;
    try {
      await session.performAction(1, "levitate");
    } catch (e) {
      err = e as AxsnapError;
    }
    expect(err?.code).toBe("ACTION_NOT_SUPPORTED");
    expect(err?.hint).toContain("click");
  });

  it("refuses refs to released snapshots", async () => {
    const old = await session.snapshot({ app: "Editor" });
    await old.release();
    await expectCode(() => session.click(`@${old.id}:e1`), "SNAPSHOT_NOT_FOUND");
  });
});

describe("snapshot refuses bad options", () => {
  it.each([
    ["no options", undefined, "INVALID_ARGUMENT"],
    ["no app", {}, "INVALID_ARGUMENT"],
    ["an empty app", { app: " " }, "INVALID_ARGUMENT"],
    ["a negative pid", { app: -3 }, "INVALID_ARGUMENT"],
    ["a fractional pid", { app: 3.5 }, "INVALID_ARGUMENT"],
    ["NaN maxNodes", { app: "Editor", maxNodes: Number.NaN }, "INVALID_ARGUMENT"],
    ["huge maxDepth", { app: "Editor", maxDepth: 1e9 }, "INVALID_ARGUMENT"],
    ["a string deadline", { app: "Editor", deadlineMs: "5" }, "INVALID_ARGUMENT"],
    ["a zero deadline", { app: "Editor", deadlineMs: 0 }, "INVALID_ARGUMENT"],
    ["screenshot as a string", { app: "Editor", screenshot: "yes" }, "INVALID_ARGUMENT"],
    ["an unknown style", { app: "Editor", style: "yaml" }, "INVALID_ARGUMENT"],
    ["an unknown app", { app: "NoSuchApp" }, "APP_NOT_FOUND"],
    ["an unknown pid", { app: 99999 }, "APP_NOT_FOUND"],
  ])("%s", async (_what, options, code) => expectCode(() => observe(options as never, backend), code));

  it("nothing above reached the app", () => {
    expect(backend.fakeLog()).toEqual([]);
  });
});

describe("fractions below the documented minimum (issue 9 item 22)", () => {
  it.each([
    ["keepSnapshots 0.5", () => createSession({ keepSnapshots: 0.5 })],
    ["keepSnapshots 2.5", () => createSession({ keepSnapshots: 2.5 })],
    ["keepSnapshots 0", () => createSession({ keepSnapshots: 0 })],
    ["keepSnapshots NaN", () => createSession({ keepSnapshots: Number.NaN })],
    ["keepSnapshots Infinity", () => createSession({ keepSnapshots: Number.POSITIVE_INFINITY })],
    ["session deadlineMs 0.5", () => createSession({ deadlineMs: 0.5 })],
    ["session staleAfterMs 0.5", () => createSession({ staleAfterMs: 0.5 })],
    ["snapshot deadlineMs 0.5", () => observe({ app: "Editor", deadlineMs: 0.5 }, backend)],
    ["snapshot deadlineMs 600001", () => observe({ app: "Editor", deadlineMs: 600_001 }, backend)],
  ])("%s → INVALID_ARGUMENT", async (_what, run) => expectCode(run, "INVALID_ARGUMENT"));

  it("accepts the documented minimum of 1", async () => {
    const s = createSession({ backend, keepSnapshots: 1, deadlineMs: 1000, staleAfterMs: 1 });
    await s.close();
    expect(() => createSession({ deadlineMs: 1 })).not.toThrow();
  });

  it("nothing above reached the app", () => {
    expect(backend.fakeLog()).toEqual([]);
  });
});
