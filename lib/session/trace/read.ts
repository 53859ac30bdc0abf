/**
 * Reading a trace directory back (docs/trace.md): the header, every
 * snapshot by id and the steps in the order they finished. A last line cut
 * short (its writer was killed mid-append) is skipped and reported; any
 * other line that does not parse is a damaged trace.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import {
  type ReadTrace,
  TRACE_FORMAT,
  TRACE_VERSION,
  type TraceHeader,
  type TraceSnapshotLine,
  type TraceStepLine,
} from "./types.js";

export const HEADER_FILE = "trace.json";
export const STEPS_FILE = "steps.jsonl";
export const SHOTS_DIR = "shots";

export function readTrace(path: string): ReadTrace {
  if (typeof path !== "string" || path === "")
    throw invalidArgument("a trace path must be a non-empty string");
  if (!existsSync(path) || !statSync(path).isDirectory())
    throw new AxsnapError("INVALID_ARGUMENT", `no trace at ${path}`, {
      hint: "pass the .axtrace directory a run recorded with --trace (or createSession({ trace }))",
    });
  const header = readHeader(path);
  const snapshots = new Map<string, TraceSnapshotLine>();
  const steps: TraceStepLine[] = [];
  let truncated = false;
  const stepsPath = join(path, STEPS_FILE);
  const text = existsSync(stepsPath) ? readFileSync(stepsPath, "utf8") : "";
  const lines = text.split("\n");
  // A complete file ends with "\n": its last piece is empty.
  const last = lines.pop();
  if (last !== undefined && last !== "") truncated = true;
  lines.forEach((line, i) => {
    if (line === "") return;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      throw damaged(path, i + 1, "not JSON");
    }
    const kind = (entry as { kind?: unknown } | null)?.kind;
    if (kind === "snapshot") {
      const s = entry as TraceSnapshotLine;
      if (typeof s.id !== "string") throw damaged(path, i + 1, "a snapshot without an id");
      snapshots.set(s.id, s);
    } else if (kind === "step") {
      const s = entry as TraceStepLine;
      if (typeof s.n !== "number" || typeof s.method !== "string")
        throw damaged(path, i + 1, "a step without n or method");
      steps.push(s);
    }
    // Other kinds are a later version's additions this reader does not know: skipped.
  });
  steps.sort((a, b) => a.n - b.n);
  return { path, header, snapshots, steps, truncated };
}

function readHeader(path: string): TraceHeader {
  let header: TraceHeader;
  try {
    header = JSON.parse(readFileSync(join(path, HEADER_FILE), "utf8")) as TraceHeader;
  } catch (e) {
    throw new AxsnapError("INVALID_ARGUMENT", `${path} has no readable ${HEADER_FILE}`, {
      hint: "pass a directory an axsnap trace wrote",
      cause: e,
    });
  }
  if (header?.format !== TRACE_FORMAT)
    throw invalidArgument(`${path} is not an axsnap trace (format ${JSON.stringify(header?.format)})`);
  if (typeof header.version !== "number" || header.version > TRACE_VERSION)
    throw new AxsnapError(
      "INVALID_ARGUMENT",
      `${path} was written by trace format version ${String(header.version)}; this axsnap reads up to ${TRACE_VERSION}`,
      { hint: "read it with the axsnap version that recorded it, or a newer one" },
    );
  return header;
}

function damaged(path: string, line: number, why: string): AxsnapError {
  return new AxsnapError("INVALID_ARGUMENT", `${join(path, STEPS_FILE)} line ${line} is damaged: ${why}`, {
    hint: "the trace was edited or written by something else; record it again",
  });
}
