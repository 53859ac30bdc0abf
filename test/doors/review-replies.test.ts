/**
 * Review of issue 19: the reply data of an outline. The diff text folds changes
 * inside collapsed lines into `[inside: 1 changed]` on the collapsed line; the
 * data (MCP structured content, CLI --json) must match it: a hidden record is
 * reported under its collapsed line, with that line's ref and none of its own,
 * since the store refuses a ref the text never printed.
 */
import { describe, expect, it } from "vitest";
import { MCP_WORDS } from "../../lib/doors/mcp/reply.js";
import { composeReply } from "../../lib/doors/reply.js";
import {
  button,
  editorDesktop as desktop,
  EDITOR_FRAME as frame,
  useFakeSessions,
} from "../support/editor.js";

const { setup } = useFakeSessions();

const tools = (b2: string, extra: Record<string, unknown>[] = []) => ({
  role: "panel",
  title: "Tools",
  frame,
  children: [button("Open", 120), button(b2, 140), ...extra],
});

describe("review 19: reply data of an outline", () => {
  it("every ref the reply's changes give for the fresh snapshot can be acted on", async () => {
    const { b, s } = setup([button("Top", 100), tools("Save")]);
    const before = await s.snapshot({ app: "Editor", screenshot: false, depth: 1 });
    await b.fakeReplace(desktop([button("Top", 100), tools("Save as")]));
    const top = before.records.find((r) => r.title === "Top")!;
    const result = await s.click(top.index);
    const reply = composeReply(result, { words: MCP_WORDS });
    const refs = [...(reply.data.changes?.changed ?? []), ...(reply.data.changes?.added ?? [])].map(
      (c) => c.ref ?? c.insideRef,
    );
    expect(refs.length).toBeGreaterThan(0);
    const refused = refs.filter((ref) => {
      try {
        s.address(ref!);
        return false;
      } catch {
        return true;
      }
    });
    expect(refused).toEqual([]);
  });

  it("a change inside a collapsed line is reported under that line, as the text shows it", async () => {
    const { b, s } = setup([button("Top", 100), tools("Save")]);
    const before = await s.snapshot({ app: "Editor", screenshot: false, depth: 1 });
    await b.fakeReplace(desktop([button("Top", 100), tools("Save as", [button("Close", 160)])]));
    const top = before.records.find((r) => r.title === "Top")!;
    const result = await s.click(top.index);
    const fresh = result.snapshot!;
    const panel = fresh.records.find((r) => r.title === "Tools")!;
    const reply = composeReply(result, { words: MCP_WORDS, mode: "diff" });
    const c = reply.data.changes!;
    const all = [...c.changed, ...c.added];
    // The collapsed line itself printed (its count of elements changed): it keeps its ref.
    expect(all.find((x) => x.name === "Tools")?.ref).toBe(`@${fresh.id}:e${panel.index}`);
    const hidden = all.filter((x) => x.name !== "Tools");
    expect(hidden.map((x) => x.name).sort()).toEqual(["Close", "Save as"]);
    for (const x of hidden) {
      expect(x.ref).toBeUndefined();
      expect(x.inside).toBe(panel.index);
      expect(x.insideRef).toBe(`@${fresh.id}:e${panel.index}`);
    }
    expect(result.changes!.text).toMatch(/\[inside: 1 changed, 1 added\]/);
  });
});
