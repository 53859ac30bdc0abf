/** `axsnap trace view FILE`: one self-contained HTML page (WP-D). */
import type { ReadTrace } from "./types.js";

export interface ViewOptions {
  /** "inline" (default): screenshots as data URIs, one file to share; "files": links to the trace's shots/. */
  images?: "inline" | "files";
}

export function renderTraceHtml(_trace: ReadTrace, _options: ViewOptions = {}): string {
  throw new Error("not built yet (WP-D)");
}
