/**
 * A token count for snapshot text without a tokenizer at run time: the
 * budget (`maxTokens`) needs a count on every rendering it tries, and axsnap
 * must not ship a 2 MB vocabulary for it (gpt-tokenizer is a dev dependency,
 * used only to calibrate and to check this estimate in tests).
 *
 * The text is split the way o200k's pre-tokenizer splits it (letter runs
 * with their leading space or mark, digit runs, punctuation runs, whitespace
 * runs) and each piece is costed by its class: a letter run is one token up
 * to a length where the vocabulary stops holding whole words, then about one
 * token per few more letters; digits go three to a token; punctuation
 * mostly one or two characters to a token; a run of tabs is one token; any
 * other script costs per character.
 *
 * Measured against o200k_base (gpt-tokenizer 4.0.0) on every text of 200
 * tokens or more: the fixture trees in both styles, as skeletons and at a
 * budget, worst error 6.3% over 42 texts (test/render/tokens.test.ts); real windows
 * (gtk3-widget-factory, galculator, Chromium with test/pages/huge.html?n=5000:
 * full, skeleton, budget, subtree), worst 5.0% over 20 texts
 * (test/linux/skeleton.test.ts). It mostly leans high. The stated error,
 * TOKEN_ESTIMATE_ERROR, is 10%: what a budget may be over by the real count
 * (test/render/outline-properties.test.ts checks it over random trees too, whose
 * rare scripts are costed by their bytes so the estimate stays high there).
 */

/** Largest relative error of estimateTokens against o200k on the test texts (see above). */
export const TOKEN_ESTIMATE_ERROR = 0.1;

// Letters (with a leading non-letter, non-space mark such as `"`), digits, one space then
// punctuation, other punctuation, newlines with their indent, other whitespace.
const PIECE =
  /[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+(?:'[a-z]+)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;

/** ASCII letters and common Latin ones: whole words are in the vocabulary. */
const LATIN = /^[^\p{L}]?[A-Za-z\u00C0-\u024F]+(?:'[a-z]+)?$/u;

function letterCost(piece: string): number {
  if (LATIN.test(piece)) {
    const n = piece.length;
    // Words up to about 8 letters are mostly one token; longer ones split every ~5 letters.
    return n <= 8 ? 1 : 1 + Math.ceil((n - 8) / 5);
  }
  return Math.max(1, Math.ceil(charsCost(piece, 0.6)));
}

/**
 * Per character, where the vocabulary holds few whole words: CJK and Hangul
 * about one token a character; the scripts the vocabulary knows well (Latin,
 * Greek, Cyrillic, Hebrew, Arabic, the Indic ones) `common`; anything else
 * falls back to its UTF-8 bytes, a token each (o200k merges rare
 * characters, and every character beyond the BMP, not at all).
 */
function charsCost(piece: string, common: number): number {
  let cost = 0;
  for (const ch of piece) {
    const c = ch.codePointAt(0)!;
    if (c < 0x80) cost += 0.5;
    else if (c > 0xffff) cost += 4;
    else if ((c >= 0x3000 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff))
      cost += 1.2;
    else if (c < 0x0e00 || (c >= 0x2000 && c <= 0x206f)) cost += common;
    else cost += c < 0x800 ? 2 : 3;
  }
  return cost;
}

function punctCost(piece: string): number {
  const body = piece.replace(/^ /, "").replace(/[\r\n]+$/, "");
  if (body.length <= 2 && /^[\x20-\x7e]*$/.test(body)) return 1;
  return Math.max(1, Math.ceil(charsCost(body, 1)));
}

/** Estimated o200k tokens of `text` (see the module comment for the method and its error). */
export function estimateTokens(text: string): number {
  let total = 0;
  for (const m of text.matchAll(PIECE)) {
    const piece = m[0];
    const c = piece.charCodeAt(piece.length - 1);
    if (/[\p{L}\p{M}]/u.test(piece)) total += letterCost(piece);
    else if (c >= 48 && c <= 57) total += 1;
    else if (/\S/.test(piece)) total += punctCost(piece);
    else total += 1;
  }
  return total;
}
