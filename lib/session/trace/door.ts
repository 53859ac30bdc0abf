/**
 * Which door a call came through (issue 34): the CLI and the MCP server run
 * each command or tool call inside inDoorCall, so the one recorder behind the
 * Session can say "mcp click_element {…}" and join the reply the agent read
 * to the step. Outside any door scope the door is "api".
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { TraceDoor } from "./types.js";

export interface DoorCall {
  door: Exclude<TraceDoor, "api">;
  /** The door's name for the call: the CLI command or the MCP tool. */
  call: string;
  args: Record<string, unknown>;
}

/** A step recorded inside a door scope, waiting for the scope to end. */
export interface PendingStep {
  /** Writes the step, with the reply text when it is the scope's last. */
  flush(reply: string | undefined): void;
}

export interface DoorScope {
  readonly call: DoorCall;
  readonly pending: PendingStep[];
}

const scopes = new AsyncLocalStorage<DoorScope>();

/** The door call the current async context runs in, if any. */
export function currentDoorCall(): DoorScope | undefined {
  return scopes.getStore();
}

/**
 * Runs one door call; steps recorded inside it are written when it ends,
 * with `replyText(result)` (the text the agent read) on the last of them.
 * A call that throws writes its steps without a reply: their error says it.
 */
export async function inDoorCall<T>(
  call: DoorCall,
  body: () => Promise<T>,
  replyText?: (result: T) => string | undefined,
): Promise<T> {
  // A door call inside another (the CLI's warm process serving a command) is recorded by the outer one.
  if (scopes.getStore() !== undefined) return body();
  const scope: DoorScope = { call, pending: [] };
  let result: T;
  try {
    result = await scopes.run(scope, body);
  } catch (e) {
    flushAll(scope, undefined);
    throw e;
  }
  let reply: string | undefined;
  try {
    reply = replyText?.(result);
  } catch {
    // The reply text is the door's to compose; a failure there must not lose the steps.
    reply = undefined;
  }
  flushAll(scope, reply);
  return result;
}

function flushAll(scope: DoorScope, reply: string | undefined): void {
  const steps = scope.pending.splice(0);
  steps.forEach((s, i) => {
    s.flush(i === steps.length - 1 ? reply : undefined);
  });
}
