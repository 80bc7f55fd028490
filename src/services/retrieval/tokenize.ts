/**
 * The FTS5 `porter unicode61` tokenizer, reproduced in TypeScript, so that
 * terms counted here (query expansion, BM25 over candidates) are the terms
 * FTS5 indexed. unicode61: case folded, diacritics removed, tokens are runs of
 * letters, numbers and private-use characters. porter: SQLite's FTS5 variant
 * of the Porter stemmer (ext/fts5/fts5_tokenize.c), which differs from the
 * textbook algorithm in small ways (a rule group stops at its first matching
 * suffix even when the rule's condition fails; tokens shorter than 3 or longer
 * than 64 bytes are not stemmed). test/retrieval/tokenize.test.ts checks the
 * two agree with the D1 FTS5 index. Known difference: SQLite's character
 * tables predate some Unicode additions (it reads e.g. emoji skin-tone
 * modifiers as letters); such tokens only shift a score here.
 */

const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
const ASCII_TOKEN = /[a-z0-9]+/g;
/** Case-folding pairs unicode61 applies that toLowerCase() does not (micro sign, Greek symbol variants, long s). */
const FOLD: Record<string, string> = { "µ": "μ", "ς": "σ", "ϐ": "β", "ϑ": "θ", "ϕ": "φ", "ϖ": "π", "ϰ": "κ", "ϱ": "ρ", "ϵ": "ε", "ſ": "s" };
const FOLDABLE = /[µςϐϑϕϖϰϱϵſ]/gu;
const MAX_STEM_BYTES = 64;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Lower-cased, diacritic-free word tokens, as unicode61 produces them (before stemming). */
export function words(text: string): string[] {
  if (/^[\x00-\x7f]*$/.test(text)) return text.toLowerCase().match(ASCII_TOKEN) ?? [];
  // Decompose to drop diacritics, then recompose what is left (Hangul syllables, for one).
  const folded = text
    .normalize("NFD")
    .replace(/\p{Mn}+/gu, "")
    .normalize("NFC")
    .toLowerCase()
    .replace(FOLDABLE, (c) => FOLD[c]);
  return folded.match(TOKEN) ?? [];
}

const isVowelAt = (w: string, i: number, yIsVowel: boolean) => {
  const c = w[i];
  return c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || (yIsVowel && c === "y");
};

/** Index just past the first vowel-consonant sequence of w[from..to), or 0 when there is none. */
function gobbleVC(w: string, from: number, to: number, prevConsonant: boolean): number {
  let consonant = prevConsonant;
  let i = from;
  for (; i < to; i++) {
    consonant = !isVowelAt(w, i, consonant);
    if (!consonant) break;
  }
  for (i++; i < to; i++) {
    consonant = !isVowelAt(w, i, consonant);
    if (consonant) return i + 1;
  }
  return 0;
}

/** Porter's measure conditions on the stem w[0..n). */
const mGt0 = (w: string, n: number) => gobbleVC(w, 0, n, false) !== 0;
function mGt1(w: string, n: number) {
  const k = gobbleVC(w, 0, n, false);
  return k !== 0 && gobbleVC(w, k, n, true) !== 0;
}
function mEq1(w: string, n: number) {
  const k = gobbleVC(w, 0, n, false);
  return k !== 0 && gobbleVC(w, k, n, true) === 0;
}
/** *o: the stem ends consonant-vowel-consonant, the last not w, x or y. */
function oStar(w: string, n: number) {
  const last = w[n - 1];
  if (last === "w" || last === "x" || last === "y") return false;
  let mask = 0;
  let consonant = false;
  for (let i = 0; i < n; i++) {
    consonant = !isVowelAt(w, i, consonant);
    mask = ((mask << 1) | (consonant ? 1 : 0)) & 0x7;
  }
  return mask === 0x5;
}
/** *v*: the stem contains a vowel. */
function hasVowel(w: string, n: number) {
  for (let i = 0; i < n; i++) if (isVowelAt(w, i, i > 0)) return true;
  return false;
}
const mGt1AndSorT = (w: string, n: number) => (w[n - 1] === "s" || w[n - 1] === "t") && mGt1(w, n);

type Cond = (w: string, n: number) => boolean;
/** [suffix, replacement, condition on the stem, "rule fired" flag (step 1b only)] in SQLite's order. */
type Rule = readonly [string, string, Cond | null, boolean?];

const STEP_1B: Rule[] = [
  ["eed", "ee", mGt0],
  ["ed", "", hasVowel, true],
  ["ing", "", hasVowel, true],
];
const STEP_1B2: Rule[] = [
  ["at", "ate", null, true],
  ["bl", "ble", null, true],
  ["iz", "ize", null, true],
];
const STEP_2: Rule[] = [
  ["ational", "ate", mGt0], ["tional", "tion", mGt0],
  ["enci", "ence", mGt0], ["anci", "ance", mGt0],
  ["izer", "ize", mGt0],
  ["logi", "log", mGt0],
  ["bli", "ble", mGt0], ["alli", "al", mGt0], ["entli", "ent", mGt0], ["eli", "e", mGt0], ["ousli", "ous", mGt0],
  ["ization", "ize", mGt0], ["ation", "ate", mGt0], ["ator", "ate", mGt0],
  ["alism", "al", mGt0], ["iveness", "ive", mGt0], ["fulness", "ful", mGt0], ["ousness", "ous", mGt0],
  ["aliti", "al", mGt0], ["iviti", "ive", mGt0], ["biliti", "ble", mGt0],
];
const STEP_3: Rule[] = [
  ["ical", "ic", mGt0],
  ["ness", "", mGt0],
  ["icate", "ic", mGt0], ["iciti", "ic", mGt0],
  ["ful", "", mGt0],
  ["ative", "", mGt0],
  ["alize", "al", mGt0],
];
const STEP_4: Rule[] = [
  ["al", "", mGt1],
  ["ance", "", mGt1], ["ence", "", mGt1],
  ["er", "", mGt1],
  ["ic", "", mGt1],
  ["able", "", mGt1], ["ible", "", mGt1],
  ["ant", "", mGt1], ["ement", "", mGt1], ["ment", "", mGt1], ["ent", "", mGt1],
  ["ion", "", mGt1AndSorT], ["ou", "", mGt1],
  ["ism", "", mGt1],
  ["ate", "", mGt1], ["iti", "", mGt1],
  ["ous", "", mGt1],
  ["ive", "", mGt1],
  ["ize", "", mGt1],
];

/**
 * Applies the first rule whose suffix ends the word (the word must be longer
 * than the suffix). Its condition decides whether it changes anything; either
 * way no later rule is tried, as in SQLite (rules are grouped by the
 * penultimate letter and one group holds at most one matching suffix chain).
 */
function applyRules(w: string, rules: Rule[]): { word: string; fired: boolean } {
  for (const [suffix, replacement, cond, flag] of rules) {
    if (w.length > suffix.length && w.endsWith(suffix)) {
      const stem = w.length - suffix.length;
      if (!cond || cond(w, stem)) return { word: w.slice(0, stem) + replacement, fired: !!flag };
      return { word: w, fired: false };
    }
  }
  return { word: w, fired: false };
}

function step1a(w: string): string {
  const n = w.length;
  if (w[n - 1] !== "s") return w;
  if (w[n - 2] === "e") {
    if ((n > 4 && w[n - 4] === "s" && w[n - 3] === "s") || (n > 3 && w[n - 3] === "i")) return w.slice(0, n - 2);
    return w.slice(0, n - 1);
  }
  return w[n - 2] !== "s" ? w.slice(0, n - 1) : w;
}

/** SQLite FTS5's Porter stemmer applied to one lower-cased token. */
export function porterStem(token: string): string {
  // FTS5 stems UTF-8 bytes: a non-ASCII character is several "consonants" to
  // the measure and *o conditions, so non-ASCII tokens are stemmed byte-wise.
  if (/^[\x00-\x7f]*$/.test(token)) return token.length < 3 || token.length > MAX_STEM_BYTES ? token : stemBytes(token);
  const bytes = encoder.encode(token);
  if (bytes.length < 3 || bytes.length > MAX_STEM_BYTES) return token;
  const stemmed = stemBytes(String.fromCharCode(...bytes));
  return decoder.decode(Uint8Array.from(stemmed, (c) => c.charCodeAt(0)));
}

function stemBytes(token: string): string {
  let w = step1a(token);
  const b = applyRules(w, STEP_1B);
  w = b.word;
  if (b.fired) {
    const b2 = applyRules(w, STEP_1B2);
    w = b2.word;
    if (!b2.fired) {
      const c = w[w.length - 1];
      if (!isVowelAt(w, w.length - 1, false) && c !== "l" && c !== "s" && c !== "z" && c === w[w.length - 2]) {
        w = w.slice(0, -1);
      } else if (mEq1(w, w.length) && oStar(w, w.length)) {
        w += "e";
      }
    }
  }
  if (w[w.length - 1] === "y" && hasVowel(w, w.length - 1)) w = w.slice(0, -1) + "i";
  w = applyRules(w, STEP_2).word;
  w = applyRules(w, STEP_3).word;
  w = applyRules(w, STEP_4).word;
  if (w[w.length - 1] === "e" && (mGt1(w, w.length - 1) || (mEq1(w, w.length - 1) && !oStar(w, w.length - 1)))) {
    w = w.slice(0, -1);
  }
  if (w.length > 1 && w[w.length - 1] === "l" && w[w.length - 2] === "l" && mGt1(w, w.length - 1)) w = w.slice(0, -1);
  return w;
}

/** The terms FTS5 (`porter unicode61`) indexes for `text`, in order. */
export function ftsTerms(text: string): string[] {
  return words(text).map(porterStem);
}
