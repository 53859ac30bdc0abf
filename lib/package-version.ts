/**
 * The installed package's version, for a trace's header and the MCP server's
 * info. Here at lib/'s top for the same reason as lib/native.ts: the package
 * root is the folder above this file's, from source, built (dist/) and
 * bundled (the CLI's chunks sit in dist/) alike.
 */
import { readFileSync } from "node:fs";

let version: string | undefined;

/** package.json's version; "0.0.0" when it cannot be read. */
export function packageVersion(): string {
  if (version === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
        version?: string;
      };
      version = pkg.version ?? "0.0.0";
    } catch {
      version = "0.0.0";
    }
  }
  return version;
}
