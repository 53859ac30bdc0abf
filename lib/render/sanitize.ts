/**
 * Text hygiene for every printed field: one element must stay on one line, so
 * newlines become a visible `\n`, other control characters are dropped, and a
 * field longer than the text limit is cut with `...`. One meaning per text: a
 * backslash prints as `\\` and a tab as `\t`, so a printed `\n` is always a
 * newline, never a backslash followed by `n` (docs/cli.md, "Newlines, tabs and
 * backslashes"). Characters that print nothing are dropped too: they would let
 * a name read as one word and be another ("Del\u00ADete"), reorder what the
 * line says (bidi overrides and isolates), or carry text a model reads and a
 * person does not (tag characters, variation selectors).
 */

export type TextLimit = number | "max";

// C0/C1 controls, DEL, the Unicode line/paragraph separators, and the backslash (printed `\\`).
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being escaped or removed
const NEEDS_WORK = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: line breaks become a visible \n
const LINE_BREAK = /\r\n|[\r\n\u2028\u2029\u000b\u000c\u0085]/g;
const TAB = /\t/g;
const BACKSLASH = /\\/g;
/** Controls that print nothing: all but the line breaks and the tab, which print as escapes. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being dropped
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f-\u0084\u0086-\u009f]/g;
/** Blanks at a value's ends that print as nothing: not its line breaks and tabs, which are content. */
const EDGE_SPACES =
  /^[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+|[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+$/g;
/**
 * What prints nothing: soft hyphen, Arabic letter mark, Mongolian vowel
 * separator, zero-width space/non-joiner/joiner, LRM/RLM, bidi embeddings and
 * overrides (U+202A-U+202E), word joiner and invisible operators
 * (U+2060-U+2064), bidi isolates and deprecated format controls
 * (U+2066-U+206F), the BOM, U+FFFC (an embedded object in AT-SPI text), tag
 * characters (U+E0000-U+E007F) and every variation selector (U+180B-U+180F,
 * U+FE00-U+FE0F, U+E0100-U+E01EF).
 */
const INVISIBLE =
  /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufffc\u{e0000}-\u{e007f}\p{Variation_Selector}]/gu;
const HAS_INVISIBLE =
  /[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufffc\u{e0000}-\u{e007f}\p{Variation_Selector}]/u;

/**
 * Whether every character of `text` is one sanitize keeps as it is: no
 * control, no backslash, nothing invisible, no blank at either end (`label`:
 * no run of spaces either). Most names are plain, and one scan is cheaper than the
 * regular expressions and the trim it spares.
 */
function isPlain(text: string, label: boolean): boolean {
  const n = text.length;
  if (n === 0) return true;
  if (text.charCodeAt(0) === 0x20 || text.charCodeAt(n - 1) === 0x20) return false;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x20 && c < 0x7f && c !== 0x5c) {
      prev = c;
      continue;
    }
    if (c === 0x20) {
      if (label && prev === 0x20) return false;
    } else if (!keptAsIs(c)) return false;
    prev = c;
  }
  return true;
}

/**
 * Non-ASCII characters that are neither blank, control nor invisible
 * (Latin, Greek, Cyrillic, Hebrew, dashes and quotes, CJK); the rest takes
 * the full path.
 */
function keptAsIs(c: number): boolean {
  return (
    (c >= 0xa1 && c < 0x600 && c !== 0xad) ||
    (c >= 0x2010 && c <= 0x2027) ||
    (c >= 0x2030 && c <= 0x205e) ||
    (c >= 0x3001 && c < 0xd800)
  );
}

export function sanitize(text: string, limit: TextLimit): string {
  if (isPlain(text, false)) return limit === "max" ? text : cut(text, limit);
  // Leading and trailing blanks carry nothing on a line and hide as trailing whitespace.
  return escaped(withoutInvisible(text).trim(), limit);
}

/**
 * A value as printed: as `sanitize`, but a newline or tab at either end is
 * kept (as `\n`, `\t`): it is what the field holds, and what a typed Return
 * or Tab left there.
 */
export function sanitizeValue(text: string, limit: TextLimit): string {
  if (isPlain(text, false)) return limit === "max" ? text : cut(text, limit);
  return escaped(withoutInvisible(text).replace(EDGE_SPACES, ""), limit);
}

/**
 * A value as the field holds it, from its printed fact (`Value: one\ntwo`):
 * the label taken off and the escapes read back (`\n` a newline, `\t` a
 * tab, `\\` a backslash). What the printing dropped (invisible characters,
 * controls, a cut tail) cannot come back: compare with `includes` where that matters.
 */
export function readValue(fact: string): string {
  const bare = fact.startsWith("Value: ") ? fact.slice("Value: ".length) : fact;
  return bare.replace(/\\([\\nt])/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : "\\"));
}

function withoutInvisible(text: string): string {
  return HAS_INVISIBLE.test(text) ? text.replace(INVISIBLE, "") : text;
}

function escaped(text: string, limit: TextLimit): string {
  let out = text;
  if (NEEDS_WORK.test(out)) {
    // Controls go first: a dropped one must not join a backslash and an `n` into what reads as an escape.
    // A tab would read as one more level of depth: it prints as `\t`.
    out = out.replace(CONTROL, "").replace(BACKSLASH, "\\\\").replace(LINE_BREAK, "\\n").replace(TAB, "\\t");
  }
  return limit === "max" ? out : cutEscaped(out, limit);
}

const SPACE_RUN = /[ \t\u00a0]{2,}/g;

/**
 * A name or description as printed: `sanitize`, with a tab as a space and
 * runs of spaces as one ("Backspace    BackSpace" reads "Backspace
 * BackSpace"; "Open\tCtrl+O" reads "Open Ctrl+O"). Values keep their spaces
 * and tabs: they are the field's content.
 */
export function sanitizeLabel(text: string, limit: TextLimit): string {
  if (isPlain(text, true)) return limit === "max" ? text : cut(text, limit);
  return sanitize(text.replace(SPACE_RUN, " ").replace(TAB, " "), limit);
}

/** Cuts to `limit` code points and marks the cut; never splits a surrogate pair. */
export function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}

/** `cut` for escaped text: never leaves half an escape (a lone backslash) before the `...`. */
export function cutEscaped(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  let slashes = 0;
  while (slashes < end && text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
  if (slashes % 2 === 1) end -= 1;
  return `${text.slice(0, end)}...`;
}

/**
 * A field between double quotes, JSON-style: sanitized (so `\\`, `\n`, `\t`
 * as everywhere), and `"` escaped, so a title cannot close its quotes and go
 * on as text of the line; a cut keeps its escapes whole.
 */
export function quoted(text: string, limit: TextLimit): string {
  const out = sanitize(text, "max").replace(/"/g, '\\"');
  return `"${limit === "max" ? out : cutEscaped(out, limit)}"`;
}

/** Text that holds something worth printing. */
export function present(text: string | undefined): text is string {
  if (text === undefined) return false;
  // A scan, not replace + trim: this runs several times per element, and almost
  // always stops at the first character.
  for (let i = 0; i < text.length; i++) if (!isBlank(text.charCodeAt(i))) return true;
  return false;
}

/**
 * Whitespace as String.prototype.trim sees it, and what sanitize drops as
 * invisible (a high surrogate 0xDB40 starts a tag character or a
 * supplementary variation selector: plane 14 holds nothing printable).
 */
function isBlank(c: number): boolean {
  if (c > 0x20 && c < 0x7f) return false;
  return (
    c <= 0x20 ||
    c === 0xa0 ||
    c === 0xad ||
    c === 0x61c ||
    c === 0x1680 ||
    (c >= 0x180b && c <= 0x180f) ||
    (c >= 0x2000 && c <= 0x200f) ||
    (c >= 0x2028 && c <= 0x202f) ||
    (c >= 0x205f && c <= 0x2064) ||
    (c >= 0x2066 && c <= 0x206f) ||
    c === 0x3000 ||
    (c >= 0xfe00 && c <= 0xfe0f) ||
    c === 0xfeff ||
    c === 0xfffc ||
    c === 0xdb40 ||
    (c >= 0xdc00 && c <= 0xdfff)
  );
}
