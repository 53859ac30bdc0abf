/**
 * What launchApp accepts as an app's arguments and environment, checked
 * before anything is asked or started. A NUL cannot reach a program (the C
 * strings of argv and environ end there: GIO would cut the string, spawn()
 * throws after the call counted as sent) and an env key with "=" would set
 * another variable than the one named, so both are INVALID_ARGUMENT with
 * nothing started.
 */
import { invalidArgument } from "../../model/errors.js";

/** Linux's limit for one argv or environ string (MAX_ARG_STRLEN, 32 pages), less its NUL. */
export const MAX_ARG_CHARS = 131_071;
/** More arguments or variables than any app is started with; the kernel's own bound is the total size. */
export const MAX_ARGS = 4096;
/** The whole argv, well under the kernel's ARG_MAX (2 MiB here) that argv and environ share. */
export const MAX_ARGS_TOTAL = 1_048_576;

function noNul(what: string, s: string): void {
  if (s.includes("\0"))
    throw invalidArgument(
      `${what} contains a NUL character, which no program can receive`,
      "remove the NUL characters",
    );
}

export function checkedArgs(value: unknown): string[] {
  const args = value ?? [];
  if (!Array.isArray(args) || args.some((a) => typeof a !== "string"))
    throw invalidArgument("args must be an array of strings");
  if (args.length > MAX_ARGS) throw invalidArgument(`at most ${MAX_ARGS} args, got ${args.length}`);
  let total = 0;
  args.forEach((a: string, i) => {
    noNul(`args[${i}]`, a);
    if (a.length > MAX_ARG_CHARS)
      throw invalidArgument(`args[${i}] is ${a.length} characters; at most ${MAX_ARG_CHARS}`);
    total += a.length + 1;
  });
  if (total > MAX_ARGS_TOTAL)
    throw invalidArgument(`the args come to ${total} characters; at most ${MAX_ARGS_TOTAL} in all`);
  return args;
}

export function checkedEnv(value: unknown): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw invalidArgument("env must be an object of strings");
  const entries = Object.entries(value);
  if (entries.length > MAX_ARGS)
    throw invalidArgument(`at most ${MAX_ARGS} env variables, got ${entries.length}`);
  for (const [k, v] of entries) {
    if (k === "" || k.includes("="))
      throw invalidArgument(
        `env key ${JSON.stringify(k)} is not a variable name: it must be non-empty, without "="`,
        'pass each variable as { NAME: "value" }',
      );
    noNul(`env key ${JSON.stringify(k)}`, k);
    if (typeof v !== "string") throw invalidArgument(`env.${k} must be a string`);
    noNul(`env.${k}`, v);
    if (k.length + v.length + 1 > MAX_ARG_CHARS)
      throw invalidArgument(`env.${k} is ${v.length} characters; at most ${MAX_ARG_CHARS - k.length - 1}`);
  }
  return value as Record<string, string>;
}
