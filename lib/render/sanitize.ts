/**
 * Text hygiene for every printed field: one element must stay on one line, so
 * newlines become a visible `\n`, other control characters are dropped, and a
 * field longer than the text limit is cut with `...`.
 */

export type TextLimit = number | "max";

// C0/C1 controls, DEL, and the Unicode line/paragraph separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being removed
const NEEDS_WORK = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: line breaks become a visible \n
const LINE_BREAK = /\r\n|[\r\n\u2028\u2029\u000b\u000c\u0085]/g;
const TAB = /\t/g;
// U+FFFC stands in AT-SPI text for an embedded child object: it is not text.
const OBJECT_REPLACEMENT = /\uFFFC/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being dropped
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

export function sanitize(text: string, limit: TextLimit): string {
  // Leading and trailing blanks carry nothing on a line and hide as trailing whitespace.
  let out = text.includes("\uFFFC") ? text.replace(OBJECT_REPLACEMENT, "").trim() : text.trim();
  if (NEEDS_WORK.test(out)) {
    // A tab would read as one more level of depth, so it becomes a space.
    out = out.replace(LINE_BREAK, "\\n").replace(TAB, " ").replace(CONTROL, "");
  }
  return limit === "max" ? out : cut(out, limit);
}

/** Cuts to `limit` code points and marks the cut; never splits a surrogate pair. */
export function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}

/** Text that holds something worth printing. */
export function present(text: string | undefined): text is string {
  if (text === undefined) return false;
  // A scan, not replace + trim: this runs several times per element, and almost
  // always stops at the first character.
  for (let i = 0; i < text.length; i++) if (!isBlank(text.charCodeAt(i))) return true;
  return false;
}

/** Whitespace as String.prototype.trim sees it, and U+FFFC. */
function isBlank(c: number): boolean {
  if (c > 0x20 && c < 0x7f) return false;
  return (
    c <= 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff ||
    c === 0xfffc
  );
}
