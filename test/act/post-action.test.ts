/**
 * Issue 10 item 15: the snapshot an action returns keeps the options of the
 * snapshot it acted on (style, screenshot, limits) unless the call overrides
 * them; bad overrides are refused before anything is sent.
 */
import { describe, expect, it } from "vitest";
import { AxsnapError } from "../../lib/index.js";
import { useFakeSessions } from "../support/editor.js";

const sessions = useFakeSessions();
const buttons = Array.from({ length: 30 }, (_, i) => ({
  role: "push button",
  title: `Button ${i}`,
  actions: ["click"],
  frame: { x: 120, y: 110 + i * 18, w: 200, h: 16 },
}));

const setup = () => sessions.setup(buttons);

describe("the post-action snapshot", () => {
  it("keeps the style, screenshot setting and limits of the snapshot acted on", async () => {
    const { s } = setup();
    const snap = await s.snapshot({ app: "Editor", style: "compact", screenshot: false, maxNodes: 10 });
    const result = await s.click(3);
    expect(result.snapshot!.style).toBe("compact");
    expect(result.snapshot!.screenshot).toBeUndefined();
    expect(result.snapshot!.records.length).toBe(snap.records.length);
    expect(result.snapshot!.complete).toBe(false);
  });

  it("takes overrides from the call", async () => {
    const { s } = setup();
    await s.snapshot({ app: "Editor", style: "compact", screenshot: false });
    const result = await s.click(3, { snapshot: { style: "tree", screenshot: true } });
    expect(result.snapshot!.style).toBe("tree");
    expect(result.snapshot!.screenshot?.format).toBe("png");
  });

  it("refuses a bad override before anything is sent", async () => {
    const { b, s } = setup();
    await s.snapshot({ app: "Editor", screenshot: false });
    for (const bad of [
      { style: "fancy" },
      { maxNodes: -1 },
      { app: "Other" },
      { screenshot: "yes" },
      7,
      null,
    ]) {
      const e = await s.click(3, { snapshot: bad as never }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(AxsnapError);
      expect((e as AxsnapError).code).toBe("INVALID_ARGUMENT");
    }
    expect(b.fakeLog()).toEqual([]);
  });
});
