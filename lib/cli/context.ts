/**
 * How a process came to run a command line: what the entry (lib/cli.ts)
 * hands to runCommandLine (main.ts), and what the warm process (daemon.ts)
 * hands to every command it serves. Its own module, so the daemon's modules
 * name it without importing main.ts, which loads them.
 */
export interface Context {
  /** The package root (the directory holding package.json). */
  root: URL;
  /** The entry's own URL (dist/cli.js or lib/cli.ts): the MCP server is found beside it. */
  entry: URL;
  /** The CLI file node runs (dist/cli.js, or lib/cli.ts under tsx): what a warm process is started with. */
  script: string;
  /** Served by the warm process: its backend is warm already, so no walk is started early. */
  warm?: boolean;
}

/** Runs one command line in this process; the exit status (main.ts's runCommandLine). */
export type RunCommandLine = (argv: string[], context: Context) => Promise<number>;
