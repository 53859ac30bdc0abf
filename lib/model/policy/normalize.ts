/**
 * Matching names the way a person reads them. A name that prints like
 * "Delete" must match "delete" whatever code points spell it: fullwidth or
 * mathematical letters, letters from another script that look the same, and
 * characters that print nothing (soft hyphen, zero-width, bidi controls).
 *
 * normalizeForMatch: NFKC, invisible and format characters removed, case
 * folded, look-alikes mapped to a Latin prototype, blanks collapsed. It is a
 * matching key, never printed.
 *
 * The look-alike step follows the idea of the skeleton in Unicode TR39
 * (Unicode Security Mechanisms, section 4 "Confusable Detection", data file
 * confusables.txt): map each character to a prototype it is visually
 * confusable with, so two strings that look the same get the same key. The
 * table below is a small hand-written subset for Latin letters (the scripts an
 * attacker mixes into Latin words most), not the full data file; NFKC already
 * takes care of fullwidth and mathematical alphanumerics. Unlike TR39 the key
 * is case-folded first, because destructive words are matched
 * case-insensitively.
 */

// Characters that print nothing or only steer layout: Default_Ignorable_Code_Point
// (soft hyphen, ZWSP/ZWNJ/ZWJ, word joiner, bidi marks, embeddings, overrides and
// isolates, variation selectors, BOM, Hangul fillers) and every format character (Cf).
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/gu;
const BLANKS = /\s+/gu;

/**
 * Look-alikes of Latin letters, to their lowercase Latin prototype. Lowercase
 * entries are enough where a letter's capital folds to a lowercase that is
 * itself listed (Cyrillic А → а → a); capitals are listed where the capital
 * looks Latin and its lowercase does not (Greek Β looks like B, β does not).
 */
const PROTOTYPE: Record<string, string> = {
  // Cyrillic lowercase
  "\u0430": "a", // а
  "\u0432": "b", // в (small capital B)
  "\u0441": "c", // с
  "\u0501": "d", // ԁ
  "\u0435": "e", // е
  "\u04BB": "h", // һ
  "\u043D": "h", // н (small capital H)
  "\u0456": "i", // і
  "\u0458": "j", // ј
  "\u043A": "k", // к (small capital K)
  "\u04CF": "l", // ӏ palochka
  "\u043C": "m", // м (small capital M)
  "\u043E": "o", // о
  "\u0440": "p", // р
  "\u051B": "q", // ԛ
  "\u0455": "s", // ѕ
  "\u0442": "t", // т (small capital T)
  "\u0443": "y", // у
  "\u0445": "x", // х
  "\u051D": "w", // ԝ
  "\u04C0": "l", // Ӏ palochka (capital; its lowercase ӏ is above)
  // Greek lowercase
  "\u03B1": "a", // α
  "\u03B5": "e", // ε
  "\u03B9": "i", // ι
  "\u03BA": "k", // κ
  "\u03BD": "v", // ν
  "\u03BF": "o", // ο
  "\u03C1": "p", // ρ
  "\u03C4": "t", // τ
  "\u03C5": "u", // υ
  "\u03C7": "x", // χ
  "\u03B3": "y", // γ
  "\u03B7": "n", // η
  // Greek capitals whose lowercase does not look Latin
  "\u0392": "b", // Β
  "\u0396": "z", // Ζ
  "\u0397": "h", // Η
  "\u039C": "m", // Μ
  "\u039D": "n", // Ν
  "\u03A5": "y", // Υ
  "\u03A7": "x", // Χ
  // Latin small capitals and other Latin look-alikes NFKC keeps
  "\u1D00": "a", // ᴀ
  "\u0299": "b", // ʙ
  "\u1D04": "c", // ᴄ
  "\u1D05": "d", // ᴅ
  "\u1D07": "e", // ᴇ
  "\uA730": "f", // ꜰ
  "\u0262": "g", // ɢ
  "\u029C": "h", // ʜ
  "\u026A": "i", // ɪ
  "\u0131": "i", // ı dotless i
  "\u1D0A": "j", // ᴊ
  "\u1D0B": "k", // ᴋ
  "\u029F": "l", // ʟ
  "\u1D0D": "m", // ᴍ
  "\u0274": "n", // ɴ
  "\u1D0F": "o", // ᴏ
  "\u1D18": "p", // ᴘ
  "\u0280": "r", // ʀ
  "\uA731": "s", // ꜱ
  "\u1D1B": "t", // ᴛ
  "\u1D1C": "u", // ᴜ
  "\u1D20": "v", // ᴠ
  "\u1D21": "w", // ᴡ
  "\u028F": "y", // ʏ
  "\u1D22": "z", // ᴢ
  "\u0251": "a", // ɑ
  "\u0261": "g", // ɡ
  "\u0269": "i", // ɩ
};

// Printable ASCII has no entry in the table: a plain name skips the per-character pass.
const NON_ASCII = /[^ -~]/;

function mapPrototypes(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  let out = "";
  for (const ch of text) out += Object.hasOwn(PROTOTYPE, ch) ? PROTOTYPE[ch] : ch;
  return out;
}

/** The matching key of a name: what it reads as, not how it is spelled. */
export function normalizeForMatch(text: string): string {
  let s = text.replace(INVISIBLE, "").normalize("NFKC").replace(INVISIBLE, "");
  // Capitals first (Greek Β, Η, Ν look Latin, their lowercase does not), then
  // full case folding (the upper/lower round trip folds ß to ss, ς to σ), then
  // the lowercase look-alikes the folding produced.
  s = mapPrototypes(s);
  s = s.toUpperCase().toLowerCase();
  s = mapPrototypes(s);
  return s.replace(BLANKS, " ").trim();
}

// Capital I and the letters drawn like it read as a small l in most UI fonts ("DeIete").
const CAPITAL_I_LIKE = /[I\u0406\u0399\u04C0]/;
const CAPITAL_I_LIKE_ALL = /[I\u0406\u0399\u04C0]/g;

/**
 * The first of `words` that the name contains once both are normalised, as
 * the word was given (so a refusal can name it); undefined when none does.
 * A word that normalises to nothing never matches.
 */
export function destructiveWordIn(name: string, words: readonly string[]): string | undefined {
  const key = normalizeForMatch(name);
  const keys = [key];
  if (CAPITAL_I_LIKE.test(name)) keys.push(normalizeForMatch(name.replace(CAPITAL_I_LIKE_ALL, "l")));
  for (const word of words) {
    const w = normalizeForMatch(word);
    if (w.length > 0 && keys.some((k) => k.includes(w))) return word;
  }
  return undefined;
}
