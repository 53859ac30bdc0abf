/**
 * Which launchable entry a name means, and, when none does, the closest
 * ones for the hint. Only exact matches start anything (an id, a name, an
 * executable, case-insensitive): starting an app is not undone by taking a
 * new snapshot, so a near miss is a refusal that names the candidates.
 */
import { AxsnapError, invalidArgument } from "../../model/errors.js";
import type { NativeLaunchable } from "../../native.js";

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

/**
 * The longest name matched: ids, names and executables are far shorter, and
 * the hint's edit distances must stay cheap on the JS thread (a 10,000-character
 * name over 150 entries took seconds).
 */
export const MAX_APP_NAME = 256;

/** Refuses a name no entry can have before any work is done on it. */
export function checkAppName(query: string): void {
  if (query.length > MAX_APP_NAME)
    throw invalidArgument(
      `app must be at most ${MAX_APP_NAME} characters (a name, an id or a path), got ${query.length}`,
      "pass an app's name or id as listLaunchable() lists it",
    );
}

/**
 * Levenshtein distance, given up past `max`: only the band of width
 * 2·max+1 around the diagonal can stay within it, so the work is
 * O(len · max) over two reused rows, and a row wholly past `max` ends it
 * (the answer is then max + 1).
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  const bound = Math.min(max, Math.max(a.length, b.length));
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  const over = bound + 1;
  let prev = new Int32Array(b.length + 2).fill(over);
  let row = new Int32Array(b.length + 2).fill(over);
  for (let j = 0; j <= Math.min(b.length, bound); j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - bound);
    const to = Math.min(b.length, i + bound);
    row[from - 1] = from === 1 && i <= bound ? i : over;
    let least = row[from - 1]!;
    for (let j = from; j <= to; j++) {
      const d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1), over);
      row[j] = d;
      if (d < least) least = d;
    }
    // The next row reads one cell past this band: it must count as out of reach.
    row[to + 1] = over;
    if (least > bound) return over;
    [prev, row] = [row, prev];
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
const MAX_NEAR = 12;
/** Ids, names and executables fit in this; past it only the containment test looks (it is linear). */
const DISTANCE_CHARS = 64;

export function closestEntries(query: string, entries: LaunchableApp[], limit = 5): LaunchableApp[] {
  const q = query.toLowerCase();
  const qNear = q.slice(0, DISTANCE_CHARS);
  // Names are short: a query further than this from every spelling has no useful neighbour to name.
  const near = Math.min(MAX_NEAR, Math.max(3, Math.ceil(q.length / 3)));
  const scored = entries.map((e) => {
    let best = Number.POSITIVE_INFINITY;
    for (const whole of spellings(e).flat()) {
      const d = editDistance(qNear, whole.slice(0, DISTANCE_CHARS), near);
      const contained = whole.includes(q) || q.includes(whole) ? Math.abs(whole.length - q.length) / 4 : d;
      best = Math.min(best, d, contained);
    }
    return { e, best };
  });
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
  checkAppName(query);
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
