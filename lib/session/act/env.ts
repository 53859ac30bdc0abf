/**
 * What every action step needs from its session, as one narrow interface:
 * the held snapshots, the safety policy, the backend, and a way to take the
 * agent's next view. The steps (resolve, guards, delivery, results) are
 * plain functions over it, so each can be read, and tested, on its own.
 */

import type { NativeBackend } from "../../native.js";
import type { SnapshotOptions } from "../../observe/desktop.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { SnapshotStore } from "./store.js";

export interface ConfirmRequest {
  action: string;
  app: string;
  index: number;
  name: string;
  reason: string;
}

export interface Policy {
  /** Asked before a destructive action; without it such actions are refused. */
  confirm?: (request: ConfirmRequest) => boolean | Promise<boolean>;
  /** Words that make a target destructive, as configured (matching normalises both sides). */
  destructiveWords: string[];
  /** Coordinate and synthetic input need an observation of the app at most this old. */
  staleAfterMs: number;
}

export interface ActEnv {
  readonly store: SnapshotStore;
  readonly policy: Policy;
  /** A backend other than the desktop's (tests); undefined = the desktop's. */
  readonly backend: NativeBackend | undefined;
  /** Observes an app and keeps the snapshot: it becomes the app's latest (the agent's new view). */
  observe(options: SnapshotOptions): Promise<Snapshot>;
}
