/**
 * `next:` lines: a command the agent can run exactly as printed, in a POSIX
 * shell, from any directory. It carries the context options the printing
 * command was given, so it reaches the same desktop (--desktop) and the same
 * snapshot store (--session, made absolute); without them a command after
 * `launch --desktop D` would look for the app on the user's own desktop.
 */
import type { Globals } from "./grammar.js";

/** What a next command must keep of the command that printed it: --desktop, and --session as an absolute path. */
export type NextContext = Pick<Globals, "desktop" | "session">;

/** A word as a POSIX shell reads it back: bare when plainly one word, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** `axsnap ARGS` with the context options, quoted for the shell. */
export function nextCommand(args: string[], context: NextContext): string {
  return [
    "axsnap",
    ...args,
    ...(context.desktop === undefined ? [] : ["--desktop", context.desktop]),
    ...(context.session === undefined ? [] : ["--session", context.session]),
  ]
    .map(shellWord)
    .join(" ");
}

/**
 * A hint's commands (`axsnap …` in backquotes) with the context options the
 * refused command was given, so each runs as printed against the same
 * desktop and snapshot store; `desktop` commands name theirs themselves.
 */
export function withContext(text: string, context: NextContext): string {
  const extra = nextCommand([], context).slice("axsnap".length);
  if (extra === "") return text;
  return text.replace(/`axsnap ([^`]*)`/g, (whole, args: string) =>
    /^desktop\b/.test(args) || /(^| )--(desktop|session)\b/.test(args) ? whole : `\`axsnap ${args}${extra}\``,
  );
}
