/**
 * The CLI's session directory: what a later process needs to act on a ref
 * printed by an earlier one. One JSON file per snapshot (`<id>.json`), in a
 * directory only its owner can read (0700, files 0600), pruned by age (1 h)
 * and count (50 newest) on every write.
 *
 * A stored snapshot holds the app (pid, name), the window (id, title, kind,
 * frame) and, per printed index, what finds the element again and what acts
 * on it: the identity predicate with its capture proof, the path, frames,
 * click point, role, actions, settable and secure flags. Never a value: no field values,
 * no snapshot text (which prints values), and a secure field's value never
 * reaches the model in the first place. A later process re-observes the app
 * and finds the element by its identity (`findAgain`), never by index alone.
 * Every file is checked against one schema (schema.ts) when read: a file that
 * fails it is SNAPSHOT_NOT_FOUND, before anything is observed or sent.
 */
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import { copyOcrMark } from "../../model/model.js";
import { collapsedInto } from "../../observe/collapsed.js";
import type { Snapshot } from "../../observe/snapshot.js";
import type { StoredOptions, StoredRecord, StoredSnapshot } from "./schema.js";
import { STORE_FORMAT, STORE_VERSION } from "./store-format.js";

export { STORE_FORMAT, STORE_VERSION, type StoredOptions, type StoredRecord, type StoredSnapshot };

/** Stored snapshots older than this are deleted, and refs to them are SNAPSHOT_NOT_FOUND. */
export const STORE_MAX_AGE_MS = 60 * 60 * 1000;
/** At most this many stored snapshots; the oldest go first. */
export const STORE_MAX_COUNT = 50;
/**
 * How far in the future a takenAt may be (the clock of the writing process,
 * read a moment before this one's): beyond it the file is not believed, else a
 * snapshot stamped tomorrow would stay fresh for a day.
 */
const CLOCK_SLACK_MS = 2000;

const ID = /^s[a-z0-9]{7}$/;
const FILE = /^(s[a-z0-9]{7})\.json$/;
const KINDS: readonly string[] = ["window", "dialog", "menu", "popup", "sheet"];

/** The schema, loaded by the first read: a snapshot command, which only writes, never loads zod. */
let schema: Promise<typeof import("./schema.js")> | undefined;
const loadSchema = () => {
  schema ??= import("./schema.js");
  return schema;
};

function recordOf(r: Snapshot["records"][number], inside: number | undefined): StoredRecord {
  // Field by field: a new field on ElementRecord (a value, say) never lands in the store by accident.
  return {
    index: r.index,
    role: r.role,
    ...(r.subrole === undefined ? {} : { subrole: r.subrole }),
    roleText: r.roleText,
    identity: { ...r.identity },
    proof: { ...r.proof },
    pathRoot: r.pathRoot,
    path: [...r.path],
    ...(r.frame ? { frame: { ...r.frame } } : {}),
    ...(r.screenFrame ? { screenFrame: { ...r.screenFrame } } : {}),
    ...(r.clickPoint ? { clickPoint: { ...r.clickPoint } } : {}),
    actions: [...r.actions],
    settable: r.settable,
    secure: r.secure,
    synthetic: r.synthetic,
    ...(r.ocr === undefined ? {} : { ocr: copyOcrMark(r.ocr) }),
    ...(inside === undefined ? {} : { inside }),
  };
}

export function storedOf(snap: Snapshot, options: StoredOptions, screenshotPath?: string): StoredSnapshot {
  const shot = snap.screenshot;
  return {
    format: STORE_FORMAT,
    version: STORE_VERSION,
    id: snap.id,
    takenAt: snap.takenAt,
    app: {
      name: snap.app.name,
      pid: snap.app.pid,
      ...(snap.app.bundleId === undefined ? {} : { bundleId: snap.app.bundleId }),
    },
    window: {
      id: snap.window.id ?? "",
      title: snap.window.title,
      kind: (KINDS.includes(snap.window.kind ?? "")
        ? snap.window.kind
        : "window") as StoredSnapshot["window"]["kind"],
      frame: { ...snap.window.frame },
      scale: snap.window.scale,
    },
    options,
    complete: snap.complete,
    cutBy: [...snap.cutBy],
    ...(shot
      ? {
          screenshot: {
            pixelWidth: shot.pixelWidth,
            pixelHeight: shot.pixelHeight,
            scale: shot.scale,
            windowOrigin: { ...shot.windowOrigin },
            ...(screenshotPath === undefined ? {} : { path: screenshotPath }),
          },
        }
      : {}),
    records: snap.records.map((r) => recordOf(r, collapsedInto(snap, r.index))),
  };
}

/** $XDG_STATE_HOME/axsnap, else ~/.local/state/axsnap. */
export function defaultStoreDir(): string {
  const xdg = process.env.XDG_STATE_HOME;
  // The XDG spec: a relative path is invalid and ignored.
  const base = xdg?.startsWith("/") ? xdg : join(homedir(), ".local", "state");
  return join(base, "axsnap");
}

const SESSION_HINT = "pass --session DIR with a directory of your own";

export class Store {
  readonly dir: string;
  private ready = false;

  constructor(dir?: string) {
    this.dir = resolve(dir ?? defaultStoreDir());
  }

  /** Creates the directory (0700) or checks it: a directory, ours, and closed to others. */
  private ensure(): void {
    if (this.ready) return;
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw invalidArgument(
        `cannot create the session directory ${this.dir}: ${(e as Error).message}`,
        SESSION_HINT,
      );
    }
    const st = lstatSync(this.dir);
    if (!st.isDirectory())
      throw invalidArgument(`the session path ${this.dir} is not a directory`, SESSION_HINT);
    if (typeof process.getuid === "function" && st.uid !== process.getuid())
      throw invalidArgument(`the session directory ${this.dir} belongs to another user`, SESSION_HINT);
    if ((st.mode & 0o077) !== 0) chmodSync(this.dir, 0o700);
    this.ready = true;
  }

  private file(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  /** Writes a snapshot (atomically, 0600) and prunes. Returns the file. */
  save(stored: StoredSnapshot): string {
    this.ensure();
    const final = this.file(stored.id);
    const tmp = `${final}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, `${JSON.stringify(stored)}\n`, { mode: 0o600, flag: "wx" });
      renameSync(tmp, final);
    } catch (e) {
      try {
        unlinkSync(tmp);
      } catch {
        // Never written.
      }
      throw invalidArgument(
        `cannot write to the session directory ${this.dir}: ${(e as Error).message}`,
        SESSION_HINT,
      );
    }
    this.prune();
    return final;
  }

  /** The stored snapshot with this id, or SNAPSHOT_NOT_FOUND saying what to do in CLI terms. */
  async load(id: string, appHint = "NAME"): Promise<StoredSnapshot> {
    const missing = (why: string) =>
      new AxsnapError("SNAPSHOT_NOT_FOUND", `no snapshot ${id} ${why}`, {
        hint: `run \`axsnap snapshot --app ${appHint}\` and use a ref it prints`,
      });
    if (!ID.test(id)) throw missing("(not a snapshot id)");
    const file = this.file(id);
    let text: string;
    try {
      const st = lstatSync(file);
      if (!st.isFile() || (typeof process.getuid === "function" && st.uid !== process.getuid()))
        throw missing(`in ${this.dir} (not a file of this user)`);
      text = readFileSync(file, "utf8");
    } catch (e) {
      if (e instanceof AxsnapError) throw e;
      throw missing(
        `is kept in ${this.dir} (snapshots are kept ${STORE_MAX_AGE_MS / 60_000} minutes, the newest ${STORE_MAX_COUNT}; another --session?)`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw missing(`in ${this.dir}: its file is not readable JSON; nothing was sent`);
    }
    const parsed = (await loadSchema()).parseStored(value);
    if ("problem" in parsed)
      throw missing(
        `in ${this.dir}: its file is not a stored snapshot of this version (${parsed.problem}); nothing was sent`,
      );
    const stored = parsed.stored;
    if (stored.id !== id)
      throw missing(`in ${this.dir}: its file holds snapshot ${stored.id}; nothing was sent`);
    const age = Date.now() - stored.takenAt;
    if (age < -CLOCK_SLACK_MS)
      throw missing(
        `in ${this.dir}: its file says it was taken ${Math.round(-age / 1000)} s in the future; nothing was sent`,
      );
    if (age > STORE_MAX_AGE_MS)
      throw missing(`any more: it is older than ${STORE_MAX_AGE_MS / 60_000} minutes`);
    return stored;
  }

  /** Stored snapshot ids, newest first. */
  private listed(): { id: string; file: string; mtimeMs: number }[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: { id: string; file: string; mtimeMs: number }[] = [];
    for (const name of names) {
      const m = FILE.exec(name);
      const file = join(this.dir, name);
      if (!m) {
        // A temporary file left by a process that died mid-write.
        if (/\.json\.tmp-\d+$/.test(name)) removeIfOlder(file, 60_000);
        continue;
      }
      try {
        out.push({ id: m[1]!, file, mtimeMs: statSync(file).mtimeMs });
      } catch {
        // Pruned by another process meanwhile.
      }
    }
    return out.sort((a, b) => b.mtimeMs - a.mtimeMs);
  }

  /** The newest stored snapshot that passes `test` (and is not expired). */
  async newest(test: (s: StoredSnapshot) => boolean): Promise<StoredSnapshot | undefined> {
    for (const { id } of this.listed()) {
      try {
        const s = await this.load(id);
        if (test(s)) return s;
      } catch {
        // Expired, or unreadable: not a candidate.
      }
    }
    return undefined;
  }

  /** Deletes stored snapshots older than an hour, then all but the newest 50. */
  prune(now = Date.now()): void {
    const all = this.listed();
    all.forEach((f, i) => {
      if (i >= STORE_MAX_COUNT || now - f.mtimeMs > STORE_MAX_AGE_MS) removeIfOlder(f.file, -1);
    });
  }
}

function removeIfOlder(file: string, ageMs: number): void {
  try {
    if (ageMs >= 0 && Date.now() - statSync(file).mtimeMs < ageMs) return;
    unlinkSync(file);
  } catch {
    // Gone already (another process pruned it).
  }
}
