/**
 * What the warm process (lib/doors/cli/daemon.ts) keeps of the snapshots it
 * printed: their live elements, per session directory, as a library
 * session keeps its own (SharedSnapshots over act/store.ts: the newest
 * KEEP_PER_APP per app, older ones released). Each command still runs in a
 * session of its own (its policy, its --confirm); only the snapshots are
 * shared, so a ref into a snapshot this process printed is reached by its
 * element, with the library's identity checks, and elements with the same
 * role and name (twins) are never ambiguous to it. A process without them
 * (the warm process restarted, AXSNAP_DAEMON=off, a command run while it
 * was busy) finds the element by its stored identity (commands.ts).
 *
 * The session directory stays the authority on which refs exist: a held
 * snapshot is used only while its file is still stored there (lib/doors/cli/store.ts
 * prunes by age and count), so a ref means the same served or not.
 */
import { SharedSnapshots } from "../../session/session.js";

/** Snapshots kept per app and session directory: as many as one command's session keeps. */
export const KEEP_PER_APP = 20;
/** Session directories held at once; the one used least recently is let go first. */
export const MAX_DIRS = 8;

export class HeldSnapshots {
  private readonly byDir = new Map<string, SharedSnapshots>();

  /** The snapshots held for a session directory (an absolute path). */
  of(dir: string): SharedSnapshots {
    let shared = this.byDir.get(dir);
    if (shared) this.byDir.delete(dir);
    else shared = new SharedSnapshots(KEEP_PER_APP);
    // Newest last: a Map keeps insertion order.
    this.byDir.set(dir, shared);
    while (this.byDir.size > MAX_DIRS) {
      const [oldest, gone] = this.byDir.entries().next().value as [string, SharedSnapshots];
      this.byDir.delete(oldest);
      void gone.close().catch(() => undefined);
    }
    return shared;
  }

  /** Lets every held snapshot go (the warm process is ending). */
  async close(): Promise<void> {
    const all = [...this.byDir.values()];
    this.byDir.clear();
    await Promise.all(all.map((s) => s.close().catch(() => undefined)));
  }
}
