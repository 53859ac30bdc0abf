#!/usr/bin/env node
/**
 * The axsnap command line, for agents that shell out: `axsnap snapshot --app
 * NAME` prints the window as numbered lines under a header naming the
 * snapshot id, and every action takes a ref `@<id>:e<index>` from it, in
 * this or any later process (the snapshot is kept in the session directory;
 * see lib/doors/cli/store.ts). `--json` prints one envelope per run. `axsnap help`
 * lists the commands.
 *
 * This entry first hands the command line to the warm process of this
 * environment (lib/doors/cli/daemon.ts), which answers without loading anything or
 * walking a cold app, as this process's caller: with its environment, umask
 * and working directory, the files it reads and writes read and written
 * here; when none can take it, the command runs here (lib/doors/cli/main.ts) and,
 * if none was listening, a warm process is started for the next one.
 * AXSNAP_DAEMON=off runs every command here.
 *
 * Exit status: 0 ok, 1 an axsnap error, 2 a usage error. Output is written
 * with process.stdout.write and the status set on process.exitCode, never
 * process.exit: the process ends once stdout has drained, so a pipe gets all
 * of a big snapshot.
 */
import { type CallerInput, ownCaller } from "./doors/cli/caller.js";
import {
  addressOf,
  appWord,
  callsInput,
  commandWord,
  runServed,
  servable,
  spawnDaemon,
} from "./doors/cli/daemon-client.js";

const argv = process.argv.slice(2);
// fileURLToPath without node:url: a file: URL's path, percent-decoded (POSIX paths only reach here).
const script = decodeURIComponent(new URL(import.meta.url).pathname);
const context = { root: new URL("..", import.meta.url), entry: new URL(import.meta.url), script };

/** A served command whose warm process ended before its exit status: it may have acted. */
function lost(): number {
  const error = {
    code: "INTERNAL",
    message: "the warm process ended during the command; it may have acted",
    hint: "take a new snapshot (`axsnap snapshot --app NAME`) to see the app's state before trying again; AXSNAP_DAEMON=off runs each command in its own process",
    delivery: "delivery_uncertain",
    retry: "unsafe",
  };
  if (argv.includes("--json"))
    process.stdout.write(`${JSON.stringify({ ok: false, command: commandWord(argv), error })}\n`);
  else
    process.stderr.write(
      `axsnap: ${error.code}: ${error.message} (delivery ${error.delivery}, retry ${error.retry})\nhint: ${error.hint}\n`,
    );
  return 1;
}

/** The value of --desktop NAME (or --desktop=NAME) before any `--`. */
function desktopWord(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") return undefined;
    if (a === "--desktop") return args[i + 1];
    if (a.startsWith("--desktop=")) return a.slice("--desktop=".length);
  }
  return undefined;
}

/**
 * --desktop NAME: the desktop's DISPLAY and bus go into this process's
 * environment before the warm process is picked, so one that serves another
 * desktop is never asked (the address is a hash of that environment). False
 * when the desktop cannot be used: the command then runs here and says why.
 */
async function pointAtDesktop(name: string): Promise<boolean> {
  try {
    const { useDesktop } = await import("./observe/agent-desktop/use.js");
    useDesktop(name, { clean: false });
    return true;
  } catch {
    return false;
  }
}

/** This process's working directory; undefined when it has been deleted (nothing can name a path in it). */
function cwdOrNone(): string | undefined {
  try {
    return process.cwd();
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  let startOne = false;
  let serve = servable(argv, process.env);
  const desktop = serve ? desktopWord(argv) : undefined;
  if (desktop !== undefined) serve = await pointAtDesktop(desktop);
  // In a deleted directory the command runs here, where it means what it always means.
  const cwd = serve ? cwdOrNone() : undefined;
  const address = cwd !== undefined ? addressOf(process.env, script) : undefined;
  // Read once (stdin cannot be read twice), for the warm process or for the command run here.
  let input: CallerInput | undefined;
  if (address !== undefined && cwd !== undefined) {
    input = callsInput(argv);
    const r = await runServed(address, {
      argv,
      cwd,
      // Its values are strings: node keeps none undefined.
      env: process.env as Record<string, string>,
      umask: process.umask(),
      ...(input === undefined ? {} : { input }),
    });
    if (r.served) return "lost" in r ? lost() : r.code;
    startOne = !r.listening;
  }
  const { runCommandLine } = await import("./doors/cli/main.js");
  const code = await runCommandLine(argv, { ...context, caller: ownCaller(input) });
  if (startOne) await spawnDaemon(script, appWord(argv));
  return code;
}

// A reader that goes away (`axsnap snapshot | head`) is not an error of ours.
process.stdout.on("error", (e: NodeJS.ErrnoException) => {
  if (e.code !== "EPIPE") throw e;
});

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    // Never a stack trace: one line saying what went wrong.
    process.stderr.write(`axsnap: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
