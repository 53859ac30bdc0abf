/** The CLI's help text, printed from the two tables in grammar.ts. */
import { MCP_OPTION_HELP } from "../mcp/options.js";
import { COMMANDS, OPTIONS, type OptionSpec, TARGET_NOTE, UsageError } from "./grammar.js";

/** An option's help line: its synopsis in a column of 20, then what it does. */
function helpLine({ flag, value, short, help }: OptionSpec): string {
  const synopsis = `${short ? `-${short}, ` : ""}--${flag}${value ? ` ${value}` : ""}`;
  return `  ${synopsis.length > 20 ? `${synopsis} ` : synopsis.padEnd(20)} ${help}`;
}

/** The usage line's words after the command: its own synopsis, else its positionals. */
function usageOf(name: string): string {
  const spec = COMMANDS[name]!;
  const args = spec.args.map((a) =>
    a.endsWith("?") ? `[${a.slice(0, -1).toUpperCase()}]` : a.toUpperCase(),
  );
  return [name, spec.usage ?? args.join(" ")].filter(Boolean).join(" ");
}

// --version prints the version whatever else is typed: the main help lists it, once.
const commandGlobals = OPTIONS.global.filter((x) => x.flag !== "version");

export function helpText(topic?: string): string {
  if (topic !== undefined) {
    const spec = COMMANDS[topic];
    if (!spec) throw new UsageError(`no command "${topic}"; run \`axsnap help\` for the list`, "help");
    const lines = [`usage: axsnap ${usageOf(topic)} [options]`, "", spec.summary];
    if (spec.args.some((a) => ["target", "from", "to"].includes(a)) || spec.options.includes("into"))
      lines.push(TARGET_NOTE);
    if (spec.details) lines.push("", spec.details);
    lines.push("", "options:");
    // `mcp` takes the server's own options (lib/doors/mcp/options.ts), which print their own help lines.
    if (topic === "mcp") lines.push(...MCP_OPTION_HELP.map((l) => `  ${l}`));
    else lines.push(...[...spec.options.flatMap((g) => OPTIONS[g]), ...commandGlobals].map(helpLine));
    return `${lines.join("\n")}\n`;
  }
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return `${[
    "axsnap: desktop apps as numbered accessibility lines, and actions that reach exactly the printed element",
    "",
    "usage: axsnap COMMAND [ARGS] [options]",
    "",
    "commands:",
    ...Object.entries(COMMANDS).map(([name, spec]) => `  ${name.padEnd(width)}  ${spec.summary}`),
    "",
    "  axsnap snapshot --app gtk3-widget-factory      prints `snapshot s8f3k2p9 ...` and the lines",
    "  axsnap click @s8f3k2p9:e12                     clicks the element printed as 12, from any later process",
    "",
    TARGET_NOTE,
    "A ref is checked against a new observation before acting: the element must still be there, and be the only one",
    "with its identity (role, name, id); otherwise STALE_REF, AMBIGUOUS_TARGET or IDENTITY_UNPROVEN, nothing sent.",
    "",
    "global options:",
    ...OPTIONS.global.map(helpLine),
    "",
    "exit status: 0 ok, 1 an axsnap error (its code, message and hint on stderr), 2 a usage error",
    "`axsnap help COMMAND` or `axsnap COMMAND --help` for one command.",
  ].join("\n")}\n`;
}
