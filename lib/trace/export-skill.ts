/** `axsnap trace export FILE --to skill`: a Markdown procedure for a model (WP-E). */
import type { ReadTrace } from "./types.js";

export function exportSkill(_trace: ReadTrace): string {
  throw new Error("not built yet (WP-E)");
}
