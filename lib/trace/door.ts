/**
 * Which door a call came through (issue 34): the CLI and the MCP server run
 * each command or tool call inside inDoorCall, so the one recorder behind the
 * Session can say "mcp click_element {…}" and join the reply the agent read
 * to the step. Outside any door scope the door is "api".
 */
import type { TraceDoor } from "./types.js";

export interface DoorCall {
  door: Exclude<TraceDoor, "api">;
  /** The door's name for the call: the CLI command or the MCP tool. */
  call: string;
  args: Record<string, unknown>;
}

/**
 * Runs one door call; steps recorded inside it are written when it ends,
 * with `replyText(result)` (the text the agent read) on the last of them.
 */
export function inDoorCall<T>(
  call: DoorCall,
  body: () => Promise<T>,
  _replyText?: (result: T) => string | undefined,
): Promise<T> {
  void call;
  // WP-A: AsyncLocalStorage scope.
  return body();
}
