/**
 * Which launchable entry a name means, and, when none does, the closest
 * ones for the hint. Only exact matches start anything (an id, a name, an
 * executable, case-insensitive): starting an app is not undone by taking a
 * new snapshot, so a near miss is a refusal that names the candidates.
 */
import { AxsnapError } from "../errors.js";
import type { NativeLaunchable } from "../native.js";

export type LaunchableApp = NativeLaunchable;

/** The id without its platform suffix: "gtk3-widget-factory.desktop" → "gtk3-widget-factory". */
function stem(id: string): string {
  return id.replace(/\.desktop$/i, "");
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The spellings an entry answers to, most specific first. */
function spellings(e: LaunchableApp): string[][] {
  return [[e.id, stem(e.id)], [e.name], e.executable ? [basename(e.executable)] : []].map((set) =>
    set.map((s) => s.toLowerCase()).filter((s) => s.length > 0),
  );
}

/** Levenshtein distance, one row at a time. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

function label(e: LaunchableApp): string {
  return e.name && e.name !== e.id ? `${e.id} ("${e.name}")` : e.id;
}

/**
 * The entries closest to `query`, best first: by edit distance to an id,
 * name or executable, a spelling that contains the query (or is contained
 * in it) counting as close. At most `limit`.
 */
export function closestEntries(query: string, entries: LaunchableApp[], limit = 5): LaunchableApp[] {
  const q = query.toLowerCase();
  const scored = entries.map((e) => {
    let best = Number.POSITIVE_INFINITY;
    for (const s of spellings(e).flat()) {
      const d = editDistance(q, s);
      const contained = s.includes(q) || q.includes(s) ? Math.abs(s.length - q.length) / 4 : d;
      best = Math.min(best, d, contained);
    }
    return { e, best };
  });
  const near = Math.max(3, Math.ceil(q.length / 3));
  return scored
    .filter((s) => s.best <= near)
    .sort((a, b) => a.best - b.best || a.e.id.localeCompare(b.e.id))
    .slice(0, limit)
    .map((s) => s.e);
}

/**
 * The one entry `query` names exactly: its id (with or without ".desktop"),
 * else its name, else its executable, case-insensitive. Several at the
 * same level: AMBIGUOUS_APP listing their ids. None: APP_NOT_FOUND with the
 * closest entries in the hint.
 */
export function matchLaunchable(query: string, entries: LaunchableApp[]): LaunchableApp {
  const q = query.trim().toLowerCase();
  for (let level = 0; level < 3; level++) {
    const hits = entries.filter((e) => spellings(e)[level]!.includes(q));
    // One entry installed twice (a user's copy over the system's) has one id: GIO already picks one.
    const ids = [...new Set(hits.map((e) => e.id))];
    if (ids.length === 1) return hits[0]!;
    if (ids.length > 1)
      throw new AxsnapError(
        "AMBIGUOUS_APP",
        `"${query}" names ${ids.length} launchable apps: ${hits.map(label).join(", ")}`,
        { hint: "pass the id of the one you mean (the message lists them)" },
      );
  }
  const close = closestEntries(query, entries);
  throw new AxsnapError("APP_NOT_FOUND", `no launchable app is called "${query}"`, {
    hint:
      close.length > 0
        ? `the closest launchable apps are ${close.map(label).join(", ")}: pass one of these ids, or see them all with listLaunchable()`
        : "no launchable app has a similar name: see them all with listLaunchable(), or pass the path of the program",
  });
}
