/**
 * Runs the axsnap command line the way an agent runs it: each command a child
 * process (`node --import tsx lib/cli.ts ...`), so a ref printed by one
 * process is acted on by another, through the session directory.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** tsx and the entry by absolute location: the command may run in another working directory. */
const TSX = import.meta.resolve("tsx");
const ENTRY = fileURLToPath(new URL("../../lib/cli.ts", import.meta.url));

/**
 * Runs the CLI as a child process with this process's environment plus `env`,
 * in `cwd` (default this process's), with `input` on its stdin (default none);
 * `entry` is another copy's lib/cli.ts (default this checkout's).
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string; input?: string; entry?: string } = {},
): Promise<CliRun> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TSX, options.entry ?? ENTRY, ...args], {
      env: { ...process.env, ...env },
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on("data", (d: Buffer) => out.push(d));
    child.stderr?.on("data", (d: Buffer) => err.push(d));
    child.on("error", reject);
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ms: performance.now() - t0,
      }),
    );
  });
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON, checked field by field by the expectations
export type Json = any;

/** Runs the CLI with --json and parses its one envelope (the whole of stdout). */
export async function runCliJson(
  args: string[],
  env: Record<string, string> = {},
  options: { entry?: string } = {},
): Promise<CliRun & { env: Json }> {
  const r = await runCli([...args, "--json"], env, options);
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.stdout);
  } catch {
    throw new Error(`not one JSON envelope (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
  return { ...r, env: parsed };
}

/**
 * The index printed on the first line matching `re`, matched without its
 * indentation and without a reply's trailing `[changed: …]`/`[added]` mark
 * (snapshot and reply texts of the CLI and of MCP alike, or a snapshot's own).
 */
export function indexIn(of: string | { text: string }, re: RegExp): number {
  const text = typeof of === "string" ? of : of.text;
  for (const raw of text.split("\n")) {
    const line = raw.trim().replace(/ \[(changed|added)[^\]]*\]$/, "");
    const m = /^(\d+) /.exec(line);
    if (m && re.test(line)) return Number(m[1]);
  }
  throw new Error(`no line matches ${re} in:\n${text}`);
}

/**
 * The snapshot id a text names first: the CLI's header "snapshot s… of …",
 * get_app_state's "Snapshot s…", a reply's "snapshot s…, changes since …".
 */
export function snapshotIdIn(text: string): string {
  const m = /^[Ss]napshot (s[a-z0-9]{7})\b/m.exec(text);
  if (!m) throw new Error(`no snapshot id in:\n${text}`);
  return m[1]!;
}
