import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { render } from "../../lib/index.js";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import { identityOf } from "../../lib/render/identity.js";
import { snapshotArb } from "../support/arbitrary.js";

const RUNS = Number(process.env.PROPERTY_RUNS ?? 400);
const ELEMENT_LINE = /^(\t*)(\d+)(?: |$)/;

function nodeAt(snap: RawSnapshot, root: "window" | "menuBar", path: number[]): RawNode | undefined {
  let node: RawNode | undefined = root === "window" ? snap.root : snap.menuBar;
  for (const i of path) node = node?.children?.[i];
  return node;
}

describe("renderer properties over random trees", () => {
  it("numbers lines contiguously from 0, one line per record, each record pointing at its node", () => {
    fc.assert(
      fc.property(snapshotArb, fc.constantFrom("tree", "compact" as const), (snap, style) => {
        const r = render(snap, { style });
        const lines = r.text.split("\n");
        const indices: number[] = [];
        for (const line of lines) {
          const m = style === "tree" ? ELEMENT_LINE.exec(line) : /^( *)(\d+):/.exec(line);
          if (m) indices.push(Number(m[2]));
        }
        if (style === "tree") {
          expect(indices).toEqual(r.records.map((_, i) => i));
        } else {
          // Compact leaves out lines that say nothing, so its indices may skip but never repeat or reorder.
          for (let i = 1; i < indices.length; i++) expect(indices[i]!).toBeGreaterThan(indices[i - 1]!);
          for (const i of indices) expect(r.records[i]).toBeDefined();
        }
        r.records.forEach((rec, i) => {
          expect(rec.index).toBe(i);
          const node = nodeAt(snap, rec.pathRoot, rec.path);
          expect(node).toBeDefined();
          expect(rec.role).toBe(node!.role);
          expect(rec.identity).toEqual(identityOf(node!));
          if (node!.handle !== undefined) expect(rec.handle).toBe(node!.handle);
        });
      }),
      { numRuns: RUNS },
    );
  });

  it("prints the record's role text on its line", () => {
    fc.assert(
      fc.property(snapshotArb, (snap) => {
        const r = render(snap);
        const byIndex = new Map<number, string>();
        for (const line of r.text.split("\n")) {
          const m = ELEMENT_LINE.exec(line);
          if (m) byIndex.set(Number(m[2]), line.slice(m[0].length));
        }
        for (const rec of r.records) {
          const rest = byIndex.get(rec.index)!;
          if (rec.roleText.length > 0) expect(rest.startsWith(rec.roleText)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("never prints a raw newline, a control character, or a tab after the indentation", () => {
    fc.assert(
      fc.property(snapshotArb, fc.constantFrom("tree", "compact" as const), (snap, style) => {
        for (const line of render(snap, { style }).text.split("\n")) {
          const rest = line.replace(/^\t*/, "");
          // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting their absence
          expect(rest).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(snapshotArb, (snap) => {
        const a = render(snap);
        const b = render(structuredClone(snap));
        expect(b.text).toBe(a.text);
        expect(b.records).toEqual(a.records);
      }),
      { numRuns: RUNS },
    );
  });

  it("keeps compact and tree on the same records", () => {
    fc.assert(
      fc.property(snapshotArb, (snap) => {
        expect(render(snap, { style: "compact" }).records).toEqual(render(snap).records);
      }),
      { numRuns: RUNS },
    );
  });

  it("holds the node and depth limits and says when it cut", () => {
    fc.assert(
      fc.property(
        snapshotArb,
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 6 }),
        (snap, maxNodes, maxDepth) => {
          const r = render(snap, { maxNodes, maxDepth });
          expect(r.records.length).toBeLessThanOrEqual(maxNodes);
          for (const line of r.text.split("\n")) {
            const m = ELEMENT_LINE.exec(line);
            if (m) expect(m[1]!.length).toBeLessThanOrEqual(maxDepth);
          }
          const cut = r.cut.nodeLimit || r.cut.depthLimit || snap.walk.ended !== "complete";
          expect(r.complete).toBe(!cut);
          if (cut) expect(r.text.split("\n").at(-1)).toMatch(/^\(Snapshot incomplete: /);
          if (!r.complete) expect(r.records.every((x) => !x.proof.unique)).toBe(true);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("never leaks a secure field's value", () => {
    fc.assert(
      fc.property(snapshotArb, (snap) => {
        const secret = "S3cr3t-Value-xyz";
        snap.root.children = [
          ...(snap.root.children ?? []),
          {
            role: "AXTextField",
            subrole: "AXSecureTextField",
            value: secret,
            selectedText: secret,
            states: { focused: true },
          },
        ];
        for (const style of ["tree", "compact"] as const) {
          const r = render(snap, { style });
          expect(r.text).not.toContain(secret);
          expect(JSON.stringify(r.records)).not.toContain(secret);
          expect(r.selectedText).not.toBe(secret);
        }
      }),
      { numRuns: 200 },
    );
  });
});
