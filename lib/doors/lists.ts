/**
 * The lists the doors answer (what can be launched, what runs), composed in
 * one place: one entry a line, never pretty-printed JSON, so a list costs
 * about what its entries say: 96 launchable entries were 5,674 o200k tokens
 * as pretty-printed JSON with their paths and executables, and are 796 as
 * `id<TAB>name` lines (test/linux/mcp-budget.test.ts).
 */
import type { LaunchableApp } from "../session/launch/match.js";

/** What can be launched: `id<TAB>name`, one a line; launch_app / `axsnap launch` take either. */
export function launchableText(entries: readonly LaunchableApp[]): string {
  return entries.map((e) => `${e.id}\t${e.name}${e.hidden ? "\t(hidden from menus)" : ""}\n`).join("");
}

/** A launchable entry as data: what launching it takes (the path and executable stay with the library). */
export function launchableData(e: LaunchableApp): { id: string; name: string; hidden?: true } {
  return { id: e.id, name: e.name, ...(e.hidden ? { hidden: true as const } : {}) };
}

/** A JSON array with one compact entry a line: parses as JSON, reads as lines. */
export function jsonLines(entries: readonly unknown[]): string {
  return entries.length === 0 ? "[]" : `[\n${entries.map((e) => JSON.stringify(e)).join(",\n")}\n]`;
}
