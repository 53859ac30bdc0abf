/**
 * How a process came to run a command line: what the entry (lib/cli.ts)
 * hands to runCommandLine (main.ts), and what the warm process (daemon.ts)
 * hands to every command it serves. Its own module, so the daemon's modules
 * name it without importing main.ts, which loads them.
 */
import type { Caller } from "./caller.js";
import type { HeldSnapshots } from "./held.js";

export interface Context {
  /** The package root (the directory holding package.json). */
  root: URL;
  /** The entry's own URL (dist/cli.js or lib/cli.ts): the MCP server is found beside it. */
  entry: URL;
  /** The CLI file node runs (dist/cli.js, or lib/cli.ts under tsx): what a warm process is started with. */
  script: string;
  /** Served by the warm process: its backend is warm already, so no walk is started early. */
  warm?: boolean;
  /** Whom the command runs for (lib/doors/cli/caller.ts); default this process. */
  caller?: Caller;
  /** The warm process's snapshots, live, per session directory (lib/doors/cli/held.ts); none in a process of its own. */
  held?: HeldSnapshots;
}

/** Runs one command line in this process; the exit status (main.ts's runCommandLine). */
export type RunCommandLine = (argv: string[], context: Context) => Promise<number>;

/** How the warm process runs command lines: main.ts's runCommandLine and servedHere, passed in. */
export interface Serve {
  run: RunCommandLine;
  /** Whether it may run this command line for this caller at all (else the caller runs it itself). */
  servedHere: (argv: string[], caller: Caller) => boolean;
}
