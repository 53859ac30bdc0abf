/**
 * Issue 33 item 1: the MCP tool list a model pays on every turn. Measured with
 * o200k through the SDK's own client (an in-memory connection to
 * createMcpServer: listing tools needs no desktop), both as `tools/list`
 * returns it (output schemas, titles, annotations included) and as clients
 * show it to a model (per tool, { name, description, input_schema }); the
 * server instructions, paid once per conversation, are bounded too. The
 * reply format the tools share is said once, in the instructions: the test
 * checks that what an agent needs from it is still there. Action replies'
 * structured content must validate against the lean output schema, both as
 * the server checks it (zod) and as a client does (the SDK's Ajv validator).
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionOutputSchema, actionReply } from "../../lib/doors/mcp/reply.js";
import { createMcpServer } from "../../lib/mcp.js";
import type { RawNode, RawSnapshot } from "../../lib/model/model.js";
import { diffSnapshots } from "../../lib/observe/diff.js";
import { createSnapshot, type Snapshot } from "../../lib/observe/snapshot.js";
import type { ActionResult } from "../../lib/session/act/result.js";
import { createSession, type Session } from "../../lib/session/session.js";

/** The bounds of issue 33 item 1, in o200k tokens. */
const SHOWN_LIMIT = 3000;
const RETURNED_LIMIT = 6000;
const INSTRUCTIONS_LIMIT = 600;

const ACTIONS = [
  "click",
  "perform_secondary_action",
  "set_value",
  "type_text",
  "press_key",
  "scroll",
  "drag",
];

const tokens = (s: string) => encode(s).length;
/** A tool as most clients show it to a model: its name, description and input schema. */
const shownOf = (t: Tool) =>
  JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema });

let session: Session;
let client: Client;
let tools: Tool[];
let listed: string;
let instructions: string;

beforeAll(async () => {
  session = createSession();
  const [a, b] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "axsnap-tool-list", version: "0.0.0" });
  await Promise.all([createMcpServer(session, {}).connect(b), client.connect(a)]);
  const result = await client.listTools();
  tools = result.tools;
  listed = JSON.stringify(result);
  instructions = client.getInstructions() ?? "";
});

afterAll(async () => {
  await client?.close();
  await session?.close();
});

describe("the MCP tool list's cost (o200k)", () => {
  it(`all tools: at most ${SHOWN_LIMIT} tokens as shown, ${RETURNED_LIMIT} as tools/list returns them; instructions at most ${INSTRUCTIONS_LIMIT}`, () => {
    const shown = tokens(tools.map(shownOf).join(""));
    const returned = tokens(listed);
    const told = tokens(instructions);
    const rows = tools.map(
      (t) =>
        `  ${t.name.padEnd(26)} shown ${String(tokens(shownOf(t))).padStart(5)}  outputSchema ${String(tokens(JSON.stringify(t.outputSchema ?? {}))).padStart(5)}`,
    );
    console.log(
      `tool list: ${tools.length} tools, shown ${shown}, returned ${returned}, instructions ${told}\n${rows.join("\n")}`,
    );
    expect({ shown, returned, instructions: told }).toEqual({
      shown: expect.toSatisfy((n: number) => n <= SHOWN_LIMIT, `at most ${SHOWN_LIMIT}`),
      returned: expect.toSatisfy((n: number) => n <= RETURNED_LIMIT, `at most ${RETURNED_LIMIT}`),
      instructions: expect.toSatisfy((n: number) => n <= INSTRUCTIONS_LIMIT, `at most ${INSTRUCTIONS_LIMIT}`),
    });
  });

  it("the reply format, delivery and retry, refs and pixels, and the safety rules are said once, in the instructions", () => {
    for (const word of [
      "not_delivered",
      "delivered_unverified",
      "delivered_verified",
      "delivery_uncertain",
      '"safe"',
      '"unsafe"',
      "semantic",
      "synthetic",
      "element_index",
      "@<snapshot id>:e<N>",
      "STALE_REF",
      "changes since",
      "the whole window",
      'reply: "full"',
      "screenshot: true",
      "pixels",
      "POLICY_DENIED",
      "--confirm-destructive",
      "hint",
      // Issue 34: the locator grammar, said once here, not in each action's locator field.
      "locator",
      ">>",
      'window:dialog="Save As"',
      "/regex/i",
      "[nth=2]",
      "ELEMENT_NOT_FOUND",
      "AMBIGUOUS_TARGET",
    ])
      expect(instructions, word).toContain(word);
    for (const name of ACTIONS) {
      const description = tools.find((t) => t.name === name)?.description ?? "";
      // Said once: no action repeats the delivery vocabulary, the safety list or the locator grammar.
      expect(description, name).not.toMatch(/delivered_unverified|sign out|log out|>>/);
    }
  });

  it("every tool says what it does and what its arguments are, in a few lines", () => {
    for (const t of tools) {
      expect(t.description?.length ?? 0, t.name).toBeGreaterThan(40);
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        const s = schema as { description?: string; enum?: unknown[] };
        // A field's name says enough only when its values are listed, or it is one of the shared ones.
        const obvious = ["element_index", "ref", "x", "y", "app"].includes(field) || s.enum !== undefined;
        if (!obvious) expect(s.description, `${t.name}.${field}`).toBeTruthy();
      }
    }
  });
});

const frame = { x: 0, y: 0, w: 600, h: 400 };
const box = (n: number, on: boolean): RawNode => ({
  role: "check box",
  title: `Option ${n}`,
  states: { checked: on, enabled: true },
  actions: ["click"],
  frame: { x: 10, y: 10 + 22 * n, w: 120, h: 20 },
  handle: 100 + n,
});
function snap(on: number[], count = 12): Snapshot {
  const children = Array.from({ length: count }, (_, i) => box(i, on.includes(i)));
  const raw = {
    version: 1,
    platform: "linux",
    app: { name: "demo", pid: 42 },
    window: { title: "Demo", frame, scale: 1, id: "/w/1" },
    root: { role: "frame", title: "Demo", frame, children },
    walk: { ended: "complete", nodesObserved: 1 },
  } as RawSnapshot;
  return createSnapshot({ raw });
}

describe("action replies' structured content against the lean output schema", () => {
  const from = snap([]);
  const fresh = snap([3], 11);
  const surface = {
    id: "/w/2",
    title: "Save As",
    kind: "dialog" as const,
    role: "dialog",
    frame,
    active: true,
    minimized: false,
    visible: true,
    modal: true,
    inParent: false,
    index: 1,
  };
  const results: [string, ActionResult][] = [
    [
      "a click with changes, an opened and a closed surface",
      {
        action: "click",
        delivery: "delivered_unverified",
        retry: "unsafe",
        channel: "semantic",
        notes: ["a note"],
        target: { snapshotId: from.id, index: 1 },
        snapshot: fresh,
        changes: diffSnapshots(from, fresh),
        changesFrom: from.id,
        sameSurface: true,
        text: fresh.text,
        settled: { mode: "quiet", ms: 152, events: 3, quietMs: 150 },
        opened: [surface],
        closed: [{ ...surface, id: "/w/3", kind: "menu" }],
      },
    ],
    [
      "a set_value read back",
      {
        action: "set_value",
        delivery: "delivered_verified",
        retry: "unsafe",
        channel: "semantic",
        notes: [],
        target: { snapshotId: from.id, index: 2 },
        applied: false,
        value: 7.5,
      },
    ],
    [
      "an app that exited",
      {
        action: "press_key",
        delivery: "delivered_unverified",
        retry: "unsafe",
        channel: "synthetic",
        notes: [],
        settled: { mode: "none", ms: 0, events: 0 },
        exited: { name: "demo", pid: 42 },
        closed: [surface],
      },
    ],
  ];

  for (const [what, result] of results)
    it(what, () => {
      const reply = actionReply(result, { mode: "diff", screenshots: "never", args: {}, atPixels: false });
      const data = reply.structuredContent;
      expect(actionOutputSchema.safeParse(data).error).toBeUndefined();
      for (const name of ACTIONS) {
        const schema = tools.find((t) => t.name === name)?.outputSchema;
        expect(schema, name).toBeDefined();
        const check = new AjvJsonSchemaValidator().getValidator(schema as never)(data);
        expect(check.errorMessage, name).toBeUndefined();
        expect(check.valid, name).toBe(true);
      }
    });
});
