/**
 * Appending to a trace directory (docs/trace.md "Format"): every process of
 * a run (the API, the MCP server, each CLI command, the CLI's warm process)
 * appends its steps to the same `steps.jsonl` under a lock file, so that
 * steps are numbered 1, 2, … once each across processes, under the one run
 * id of `trace.json`. Node modules only: the CLI client loads this file.
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { packageVersion } from "../../package-version.js";
import { isMaskEntry, mergeMasks, type SecretMask } from "./masks.js";
import { HEADER_FILE, STEPS_FILE } from "./read.js";
import { type Appended, TRACE_FORMAT, TRACE_VERSION, type TraceBatch, type TraceHeader } from "./types.js";

export type { Appended, TraceBatch } from "./types.js";

export const LOCK_FILE = "lock";
export const SEQ_FILE = "seq";
const LOCK_RETRY_MS = 5;
const LOCK_WAIT_MS = 2000;
/** A lock this old was left by a writer that was killed: no append holds it this long. */
const LOCK_STALE_MS = 10_000;

const ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789";

/** `r` + 8 characters, the snapshot ids' alphabet. */
export function newRunId(): string {
  let id = "r";
  for (const b of randomBytes(8)) id += ID_ALPHABET[b % ID_ALPHABET.length];
  return id;
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * Appends one batch under the trace's lock. Throws INVALID_ARGUMENT for a
 * trace of another version (or not a trace), TIMEOUT when another writer held
 * the lock for 2 s.
 */
export function appendToTrace(dir: string, batch: TraceBatch): Appended {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const unlock = lock(dir);
  try {
    const header = headerOf(dir, batch.screenshots);
    const seqPath = join(dir, SEQ_FILE);
    const last = existsSync(seqPath) ? Number(readFileSync(seqPath, "utf8").trim()) : 0;
    let n = Number.isInteger(last) && last >= 0 ? last : countSteps(dir);
    const first = n + 1;
    for (const f of batch.files) writeOnce(dir, f.name, f.data);
    const masks: SecretMask[] = [];
    let text = "";
    for (const entry of batch.entries) {
      if (isMaskEntry(entry)) {
        masks.push(entry.mask);
        continue;
      }
      const e = entry as { kind?: unknown; n?: number; runId?: string; secret?: { env?: string } };
      if (e.kind === "step") {
        n++;
        // Placed first, as the format documents a step's fields.
        const numbered = { kind: "step", n, runId: header.runId, ...e } as typeof e;
        numbered.n = n;
        numbered.runId = header.runId;
        if (numbered.secret && numbered.secret.env === undefined)
          numbered.secret = { env: `AXSNAP_SECRET_${n}` };
        text += `${JSON.stringify(numbered)}\n`;
      } else text += `${JSON.stringify(entry)}\n`;
    }
    // Before the steps: a process that reads this trace's masks once its steps are there finds them.
    if (masks.length > 0) mergeMasks(dir, masks);
    if (text !== "") appendLines(join(dir, STEPS_FILE), text);
    writeFileSync(seqPath, `${n}\n`);
    return { runId: header.runId, first: Math.min(first, n), last: n };
  } finally {
    unlock();
  }
}

/** The trace's header: created now when this is its first writer; refused when of another version. */
export function headerOf(dir: string, screenshots: boolean): TraceHeader {
  const path = join(dir, HEADER_FILE);
  if (!existsSync(path)) {
    const header: TraceHeader = {
      format: TRACE_FORMAT,
      version: TRACE_VERSION,
      runId: newRunId(),
      createdAt: new Date().toISOString(),
      axsnap: packageVersion(),
      platform: process.platform,
      screenshots,
    };
    writeFileSync(path, `${JSON.stringify(header)}\n`, { mode: 0o600 });
    return header;
  }
  return checkHeader(dir);
}

/** An existing trace's header, refused unless this version writes it. */
export function checkHeader(dir: string): TraceHeader {
  let header: TraceHeader;
  try {
    header = JSON.parse(readFileSync(join(dir, HEADER_FILE), "utf8")) as TraceHeader;
  } catch (e) {
    throw new AxsnapError("INVALID_ARGUMENT", `${dir} has an unreadable ${HEADER_FILE}`, {
      hint: "start a new trace in another directory",
      cause: e,
    });
  }
  if (header?.format !== TRACE_FORMAT)
    throw invalidArgument(`${dir} is not an axsnap trace`, "start a new trace in another directory");
  if (header.version !== TRACE_VERSION || typeof header.runId !== "string")
    throw new AxsnapError(
      "INVALID_ARGUMENT",
      `${dir} was written by another trace version (${String(header.version)}; this axsnap writes ${TRACE_VERSION})`,
      { hint: "start a new trace: pass another path" },
    );
  return header;
}

/** Takes the lock (`wx`: one creator wins), retried every 5 ms for 2 s; a stale one is taken over. */
function lock(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => {
        try {
          unlinkSync(path);
        } catch {
          // Taken over as stale by another writer (this one ran past 10 s): nothing of ours to remove.
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    try {
      if (Date.now() - statSync(path).mtimeMs > LOCK_STALE_MS) {
        unlinkSync(path);
        continue;
      }
    } catch {
      // Gone between open and stat: its writer finished; try again at once.
      continue;
    }
    if (Date.now() >= until)
      throw new AxsnapError(
        "TIMEOUT",
        `another writer held the lock of trace ${dir} for ${LOCK_WAIT_MS} ms`,
        {
          hint: `another process is writing this trace; if none is, delete ${path}`,
        },
      );
    sleepSync(LOCK_RETRY_MS);
  }
}

/**
 * Appends complete lines: a partial last line (its writer was killed mid-append)
 * is cut off first, so that it cannot swallow the first new line.
 */
function appendLines(path: string, text: string): void {
  const fd = openSync(path, "a+", 0o600);
  try {
    const size = fstatSync(fd).size;
    if (size > 0) {
      const end = lastNewline(fd, size);
      if (end !== size) ftruncateSync(fd, end);
    }
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** The offset just past the file's last "\n" (0 when it has none). */
function lastNewline(fd: number, size: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const read = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, read).lastIndexOf(0x0a);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/** A PNG is named by its snapshot id: one that exists is the same snapshot's, written before. */
function writeOnce(dir: string, name: string, data: Uint8Array): void {
  if (name.includes("..") || name.startsWith("/")) throw invalidArgument(`bad trace file name ${name}`);
  const path = join(dir, name);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, data, { flag: "wx", mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
  }
}

/** A trace without a `seq` file (written by hand, or its seq lost): numbering goes on from its lines. */
function countSteps(dir: string): number {
  const path = join(dir, STEPS_FILE);
  if (!existsSync(path)) return 0;
  let n = 0;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^\{"kind":"step","n":(\d+)/.exec(line);
    if (m) n = Math.max(n, Number(m[1]));
  }
  return n;
}
