/** `axsnap trace show FILE`: one line a step (WP-D). */
import type { ReadTrace } from "./types.js";

export function showTrace(_trace: ReadTrace): string {
  throw new Error("not built yet (WP-D)");
}
