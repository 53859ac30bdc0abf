/**
 * The caller of a command: what a command reads and writes outside the
 * desktop on behalf of whoever ran it — its environment, its working
 * directory, the files it names. In a process of its own that is the
 * process itself (`ownCaller`). In the warm process it is the client on
 * the other end of the socket (lib/doors/cli/daemon.ts): the environment the
 * client sent, paths resolved against its directory, and the files it names
 * read and written by the client itself (`readCallerText`, `writeCallerFile`
 * run there), so /dev/stdout, /dev/stdin, its umask and its permissions are
 * its own.
 *
 * Loaded on every start (the client answers the warm process's writes), so
 * only node's own modules here.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Env } from "./daemon-address.js";

/** What became of writing a file the caller named: the absolute path, and why it failed. */
export interface Written {
  path: string;
  error?: string;
}

/** A file the caller named for the command to read, read by the caller before the command ran. */
export interface CallerInput {
  /** The name as the command line gives it ("-" is stdin). */
  file: string;
  text?: string;
  /** Why it could not be read (the message of the caller's read). */
  error?: string;
}

export interface Caller {
  /** The caller's environment: for what a command reads that the warm process's address does not fix. */
  readonly env: Env;
  /** A path the command keeps (--session DIR), absolute, against the caller's working directory. */
  resolve(path: string): string;
  /** The text of a file the caller named (--calls-file; "-" is its stdin). Throws as a read would. */
  readText(file: string): string;
  /** Writes a file the caller named (--screenshot FILE), as the caller. */
  writeFile(file: string, data: Uint8Array): Promise<Written>;
  /**
   * Appends a trace batch to the trace directory `dir` (absolute) as the
   * caller: the warm process's client does it. Absent: this process appends
   * itself (lib/session/trace/sink.ts DirectorySink).
   */
  appendTrace?(
    dir: string,
    batch: { screenshots: boolean; entries: object[]; files: { name: string; data: Uint8Array }[] },
  ): Promise<{ runId: string; first: number; last: number }>;
}

/**
 * The command line names a file the warm process cannot read as its caller
 * (one the client did not read beforehand): the command runs in the
 * caller's own process instead. Never shown to anyone.
 */
export class NotServedHere extends Error {}

/** Reads a file the caller named, in the caller's own process. */
export function readCallerText(file: string): string {
  return readFileSync(file === "-" ? 0 : file, "utf8");
}

/** Writes a file the caller named, in the caller's own process: its directory, umask and descriptors. */
export function writeCallerFile(file: string, data: Uint8Array): Written {
  // Outside the try, as before: a relative path in a deleted directory is no write error.
  const path = resolve(file);
  try {
    writeFileSync(path, data);
    return { path };
  } catch (e) {
    return { path, error: (e as Error).message };
  }
}

/** Reads the file a command line names for input, for a process that may hand the command on. */
export function readInput(file: string): CallerInput {
  try {
    return { file, text: readCallerText(file) };
  } catch (e) {
    return { file, error: (e as Error).message };
  }
}

/**
 * This process as the caller. `input`: a file read already (stdin cannot be
 * read twice) by the entry before it tried the warm process.
 */
export function ownCaller(input?: CallerInput): Caller {
  return {
    env: process.env,
    resolve: (path) => resolve(path),
    readText: (file) =>
      input !== undefined && file === input.file ? inputText(input) : readCallerText(file),
    writeFile: async (file, data) => writeCallerFile(file, data),
  };
}

/** The text of an input read beforehand, or its read's error thrown again. */
export function inputText(input: CallerInput): string {
  if (input.text !== undefined) return input.text;
  throw new Error(input.error ?? "not read");
}
