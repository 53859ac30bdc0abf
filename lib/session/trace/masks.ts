/**
 * Secret fields across processes (docs/trace.md "Secrets"). The process that
 * types a secret scrubs the string itself (scrub.ts), but a CLI command run
 * later in another process never saw it, yet prints the field's value again.
 * So the typing process leaves the field's mask in the trace directory: its
 * locator, app and window, never the secret. Every recorder appending to the
 * trace finds masked fields in the snapshots it writes and prints their
 * values as «secret». Node modules only on the writing side (append.ts, which
 * the CLI client loads, merges masks under the trace's lock).
 */
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SECRET_MARK } from "./scrub.js";

export const MASKS_FILE = "secrets.json";

/** A field a secret went into, named the way any later snapshot can find it again. */
export interface SecretMask {
  /** printLocator of the field in the snapshot it was typed into. */
  locator: string;
  app: string;
  window: { title: string; kind: string };
}

/** How a recorder hands a mask to the appender: an entry of its batch, never written to steps.jsonl. */
export interface MaskEntry {
  kind: "mask";
  mask: SecretMask;
}

export function isMaskEntry(e: unknown): e is MaskEntry {
  return (e as MaskEntry)?.kind === "mask" && isMask((e as MaskEntry).mask);
}

interface MasksFile {
  masks: SecretMask[];
}

function isMask(m: unknown): m is SecretMask {
  const x = m as SecretMask;
  return (
    typeof x?.locator === "string" &&
    typeof x.app === "string" &&
    typeof x.window?.title === "string" &&
    typeof x.window.kind === "string"
  );
}

/** The masks a trace directory holds; none when it has no (or an unreadable) file. */
export function readMasks(dir: string): SecretMask[] {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, MASKS_FILE), "utf8")) as Partial<MasksFile>;
    return Array.isArray(parsed.masks) ? parsed.masks.filter(isMask) : [];
  } catch {
    return [];
  }
}

/**
 * Adds masks to the trace's file. Called under the trace's lock (append.ts),
 * so writers never lose each other's masks; written whole and renamed into
 * place, since readers do not take the lock.
 */
export function mergeMasks(dir: string, masks: readonly SecretMask[]): void {
  const kept = readMasks(dir);
  const known = new Set(kept.map(maskKey));
  let added = false;
  for (const m of masks) {
    if (!isMask(m) || known.has(maskKey(m))) continue;
    known.add(maskKey(m));
    kept.push({ locator: m.locator, app: m.app, window: { title: m.window.title, kind: m.window.kind } });
    added = true;
  }
  if (!added) return;
  const path = join(dir, MASKS_FILE);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ masks: kept } satisfies MasksFile)}\n`, { mode: 0o600 });
  renameSync(tmp, path);
}

export function maskKey(m: SecretMask): string {
  return JSON.stringify([m.locator, m.app, m.window.title, m.window.kind]);
}

/** A trace's masks file, read again only when it changed (one stat per look). */
export class MaskFile {
  private stamp = "";
  private masks: SecretMask[] = [];

  constructor(private readonly dir: string) {}

  current(): SecretMask[] {
    let stamp: string;
    try {
      const st = statSync(join(this.dir, MASKS_FILE));
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      stamp = "";
    }
    if (stamp !== this.stamp) {
      this.stamp = stamp;
      this.masks = stamp === "" ? [] : readMasks(this.dir);
    }
    return this.masks;
  }
}

/** A masked field's value as its line prints it: `Value: «secret»` where the style labels it, else `«secret»`. */
export function maskedValue(value: string): string {
  return value.startsWith("Value: ") ? `Value: ${SECRET_MARK}` : SECRET_MARK;
}
