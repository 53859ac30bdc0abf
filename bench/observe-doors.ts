/**
 * bench/observe-doors: the observe loop of bench/observe-loop.ts through the
 * doors most agents use, the MCP server (the SDK's own client over stdio)
 * and the CLI (one process per command), counting what an agent reads per
 * step: text by o200k, images by width×height/750.
 *
 * Each task runs twice on a fresh app: "before" as the full-state convention
 * answers (MCP started with `--replies full --action-screenshots always`: the
 * whole fresh text and its PNG after every action, as every reply was before
 * issue 19; the CLI with `--full`), and "after" with the doors' defaults (the
 * diff with refs, no image).
 *
 * The agent model: it finds each step's target in what it has read, newest
 * reply first (a diff prints the fresh snapshot's indices), then the last
 * whole snapshot it read (a ref into that snapshot: identity-checked by the
 * library), and looks again (get_app_state / snapshot, charged to the step)
 * only when neither shows it or the library refused the ref as stale.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult, ListToolsResult } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer/encoding/o200k_base";

export interface DoorStep {
  name: string;
  /** The target's line, matched against a printed line without indentation, index and markers. */
  target?: RegExp;
  /** The MCP tool and its arguments besides the target (`ref`). */
  tool: string;
  args?: Record<string, unknown>;
  /** The CLI command line; `{ref}` is replaced by the target's ref, `{app}` by the app's pid. */
  cli: string[];
}

export interface DoorRow {
  name: string;
  text: number;
  image: number;
  relook: number;
  outcome: string;
  /** o200k tokens of the structured content the replies carried (MCP only): a client that shows it pays it too. */
  structured?: number;
  /** Every refusal's code, the ones a look again got past included. */
  refusals: string[];
}

const textTokens = (t: string) => encode(t).length;
const imageTokens = (w: number, h: number) => Math.round((w * h) / 750);

/** Numbered lines of a reply: tree (`\t12 role…`) and diff lines (the same, with `[changed: …]` after). */
function indexOf(text: string, re: RegExp): number | undefined {
  for (const raw of text.split("\n")) {
    const m = /^\t*(\d+) (.*?)(?: \[(?:added|changed[^\]]*)\])?$/.exec(raw);
    if (m && re.test(m[2]!)) return Number(m[1]);
  }
  return undefined;
}

/** The snapshot id a reply names (`Snapshot s…` in MCP, `snapshot s…` in the CLI). */
function snapshotIdOf(text: string): string | undefined {
  return /\b[Ss]napshot (s[a-z0-9]{7})\b/.exec(text)?.[1];
}

/**
 * What the agent has read: replies newest first, each with the snapshot id its indices belong
 * to, then the whole snapshots it read (a look, a reply that printed the whole window), newest
 * first: a short window of recent replies must not push out the one whole snapshot they are
 * changes of (the loop's first look), or every step after the eighth would look again.
 */
class Memory {
  private readonly reads: { id: string; text: string }[] = [];
  private readonly wholes: { id: string; text: string }[] = [];
  remember(text: string): void {
    const id = snapshotIdOf(text);
    if (id === undefined) return;
    this.reads.unshift({ id, text });
    this.reads.length = Math.min(this.reads.length, 8);
    if (!/, changes since s[a-z0-9]{7}\b/.test(text)) {
      this.wholes.unshift({ id, text });
      this.wholes.length = Math.min(this.wholes.length, 4);
    }
  }
  refFor(re: RegExp): string | undefined {
    for (const r of [...this.reads, ...this.wholes]) {
      const i = indexOf(r.text, re);
      if (i !== undefined) return `@${r.id}:e${i}`;
    }
    return undefined;
  }
}

function costOf(result: CallToolResult): { text: number; image: number; all: string; structured: number } {
  let text = 0;
  let image = 0;
  let all = "";
  for (const c of result.content) {
    if (c.type === "text") {
      text += textTokens(c.text);
      all += `${c.text}\n`;
    } else if (c.type === "image") {
      const png = Buffer.from(c.data, "base64");
      image += imageTokens(png.readUInt32BE(16), png.readUInt32BE(20));
    }
  }
  const structured = result.structuredContent ? textTokens(JSON.stringify(result.structuredContent)) : 0;
  return { text, image, all, structured };
}

const STALE = /STALE_REF|SNAPSHOT_NOT_FOUND|ELEMENT_NOT_FOUND|IDENTITY_UNPROVEN|AMBIGUOUS_TARGET/;

/** What one call through a door gave the agent to read, and what reading it cost. */
interface Read {
  all: string;
  text: number;
  image: number;
  structured?: number;
  /** The refusal's code, when the call was refused. */
  refused?: string;
}

/** A door as the loop drives it: a look at the app, a step's action, the end. */
interface Door {
  look(): Promise<Read>;
  act(step: DoorStep, ref: string | undefined): Promise<Read>;
  close(): Promise<void>;
}

/**
 * The steps through one door: look once, then for each step find the target in what was read
 * (looking again when it is not shown), act, and look again once when the ref was stale.
 */
async function doorLoop(door: Door, steps: DoorStep[]): Promise<DoorRow[]> {
  const memory = new Memory();
  const look = async () => {
    const r = await door.look();
    memory.remember(r.all);
    return r.text + r.image;
  };
  const rows: DoorRow[] = [];
  try {
    await look();
    for (const step of steps) {
      const row: DoorRow = {
        name: step.name,
        text: 0,
        image: 0,
        relook: 0,
        outcome: "ok",
        structured: 0,
        refusals: [],
      };
      rows.push(row);
      for (let attempt = 0; attempt < 2; attempt++) {
        let ref: string | undefined;
        if (step.target) {
          ref = memory.refFor(step.target);
          if (ref === undefined) {
            row.relook += await look();
            ref = memory.refFor(step.target);
            if (ref === undefined) {
              row.outcome = `not shown: ${step.target}`;
              break;
            }
          }
        }
        const r = await door.act(step, ref);
        row.text += r.text;
        row.image += r.image;
        if (r.structured !== undefined) row.structured = (row.structured ?? 0) + r.structured;
        if (r.refused !== undefined) row.refusals.push(r.refused);
        if (r.refused !== undefined && attempt === 0 && STALE.test(r.all)) {
          row.relook += await look();
          continue;
        }
        if (r.refused !== undefined) row.outcome = `refused: ${r.refused}`;
        else memory.remember(r.all);
        break;
      }
    }
  } finally {
    await door.close();
  }
  return rows;
}

let toolListPrinted = false;

/**
 * What the server's tool list costs every turn of every conversation: as `tools/list` returns it,
 * and as most clients show it to a model (each tool's name, description and input schema).
 */
export function toolListLine(list: ListToolsResult, instructions: string | undefined): string {
  const returned = textTokens(JSON.stringify(list));
  const shown = list.tools
    .map((t) =>
      textTokens(JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema })),
    )
    .reduce((a, b) => a + b, 0);
  const ins = textTokens(instructions ?? "");
  return `\nMCP tool list (${list.tools.length} tools, o200k): ${shown} tok as shown (target ≤ 3000), ${returned} as returned (target ≤ 6000); server instructions ${ins} tok`;
}

/** What `list_apps` costs with `launchable: true`, per entry it lists. */
async function listAppsLine(client: Client): Promise<string> {
  const r = (await client.callTool({ name: "list_apps", arguments: { launchable: true } })) as CallToolResult;
  const { text } = costOf(r);
  const structured = r.structuredContent === undefined ? 0 : textTokens(JSON.stringify(r.structuredContent));
  const sc = r.structuredContent as { launchable?: unknown[] } | undefined;
  const n = Array.isArray(sc?.launchable) ? sc.launchable.length : undefined;
  return `list_apps {launchable: true}: ${text} tok of text, ${structured} of structured content${n === undefined ? "" : ` (${n} launchable)`} (target ≤ 1500 for 90)`;
}

/** The steps through the MCP server started with `serverArgs`, on the app with this pid. */
export async function mcpLoop(
  pid: number,
  steps: DoorStep[],
  serverArgs: string[],
  env: Record<string, string>,
): Promise<DoorRow[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "lib/mcp-main.ts", ...serverArgs],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "ignore",
  });
  const client = new Client({ name: "axsnap-bench", version: "0.0.0" });
  await client.connect(transport);
  if (!toolListPrinted) {
    toolListPrinted = true;
    console.log(toolListLine(await client.listTools(), client.getInstructions()));
    console.log(await listAppsLine(client));
  }
  const call = async (name: string, args: Record<string, unknown>): Promise<Read> => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const cost: Read = costOf(r);
    // BENCH_LOG=1: every call and its text on stderr, to see why a step looked again.
    if (process.env.BENCH_LOG) console.error(`>>> ${name} ${JSON.stringify(args)}\n${cost.all}`);
    return r.isError ? { ...cost, refused: /"code": "(\w+)"/.exec(cost.all)?.[1] ?? "?" } : cost;
  };
  return doorLoop(
    {
      look: () => call("get_app_state", { app: pid }),
      act: (step, ref) => call(step.tool, { app: pid, ...(ref ? { ref } : {}), ...step.args }),
      close: () => client.close(),
    },
    steps,
  );
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "lib/cli.ts", ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    child.stderr.on("data", (d: Buffer) => out.push(d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out: Buffer.concat(out).toString("utf8") }));
  });
}

/**
 * The steps through the CLI, each command a process of its own; `extra` goes after every action.
 * The warm process is started first (not charged), as an agent's first command starts it: every
 * command of the loop is then served by it, and refs into the snapshots it printed are reached by
 * their live elements (lib/doors/cli/held.ts), in the loop before as in the loop after.
 */
export async function cliLoop(
  pid: number,
  steps: DoorStep[],
  extra: string[],
  env: Record<string, string>,
): Promise<DoorRow[]> {
  const started = await runCli(["daemon", "start"], env);
  if (started.code !== 0) throw new Error(`the warm process did not start:\n${started.out}`);
  const dir = mkdtempSync(join(tmpdir(), "axsnap-bench-cli-"));
  const session = ["--session", dir];
  const command = async (args: string[], refusal = false): Promise<Read> => {
    const r = await runCli([...args, ...session], env);
    const read: Read = { all: r.out, text: textTokens(r.out), image: 0 };
    if (!refusal || r.code === 0) return read;
    return { ...read, refused: /axsnap: (?:step \d+ \([^)]*\): )?(\w+)/.exec(r.out)?.[1] ?? "?" };
  };
  return doorLoop(
    {
      look: () => command(["snapshot", "--app", String(pid)]),
      act: (step, ref) =>
        command(
          [...step.cli.map((a) => a.replace("{ref}", ref ?? "").replace("{app}", String(pid))), ...extra],
          true,
        ),
      close: async () => rmSync(dir, { recursive: true, force: true }),
    },
    steps,
  );
}

function pad(s: string, n: number, right = false): string {
  return s.length >= n ? s : right ? s.padStart(n) : s.padEnd(n);
}

/** Before and after side by side, per step; returns the totals. */
export function doorTable(
  title: string,
  before: DoorRow[],
  after: DoorRow[],
): { before: number; after: number } {
  console.log(
    `\n${title}: tokens an agent reads per step (text o200k + images w×h/750; looks again included)`,
  );
  const head = [
    "step",
    "before txt",
    "before img",
    "after txt",
    "after img",
    "ratio",
    "struct b/a",
    "outcome (after)",
  ];
  const w = [34, 10, 10, 9, 9, 6, 11, 0];
  console.log(head.map((h, i) => pad(h, w[i]!, i >= 1 && i <= 6)).join("  "));
  let tb = 0;
  let ta = 0;
  let sb = 0;
  let sa = 0;
  for (const [i, b] of before.entries()) {
    const a = after[i];
    const bt = b.text + b.image + b.relook;
    const at = a ? a.text + a.image + a.relook : 0;
    tb += bt;
    ta += at;
    const cells = [
      b.name,
      String(b.text + b.relook),
      String(b.image),
      a ? String(a.text + a.relook) : "",
      a ? String(a.image) : "",
      bt > 0 && a ? (at / bt).toFixed(3) : "",
      (b.structured ?? 0) + (a?.structured ?? 0) === 0 ? "" : `${b.structured ?? 0}/${a?.structured ?? 0}`,
      [
        a?.outcome ?? "",
        a && a.relook > 0 ? `looked again (${a.relook} tok)` : "",
        b.outcome === "ok" ? "" : `before: ${b.outcome}`,
      ]
        .filter((x) => x && x !== "ok")
        .join(" | "),
    ];
    sb += b.structured ?? 0;
    sa += a?.structured ?? 0;
    console.log(cells.map((c, j) => pad(c, w[j]!, j >= 1 && j <= 6)).join("  "));
  }
  const most = (rows: DoorRow[]) => Math.max(0, ...rows.map((r) => r.structured ?? 0));
  const struct =
    sb + sa > 0
      ? `; structured content (not counted above) before ${sb} tok (most in one step ${most(before)}), after ${sa} tok (most ${most(after)})`
      : "";
  console.log(`total: before ${tb} tok, after ${ta} tok, ratio ${(ta / tb).toFixed(3)}${struct}`);
  return { before: tb, after: ta };
}
