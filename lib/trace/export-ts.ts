/** `axsnap trace export FILE --to ts`: a TypeScript program against the public API (WP-E). */
import type { ReadTrace } from "./types.js";

export interface ExportTsOptions {
  /** The module the program imports the API from. Default "axsnap". */
  importFrom?: string;
}

export function exportTs(_trace: ReadTrace, _options: ExportTsOptions = {}): string {
  throw new Error("not built yet (WP-E)");
}
