/**
 * Small text utilities shared by the answer pipeline: tokenization with a
 * light stemmer, stopwords, sentence splitting and token estimates.
 */

export const STOPWORDS = new Set(
  (
    "a about above after again against all am an and any are aren't as at be because been before being below between both " +
    "but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from further " +
    "had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's i " +
    "i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once " +
    "only or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than " +
    "that that's the their theirs them themselves then there there's these they they'd they'll they're they've this those " +
    "through to too under until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where " +
    "where's which while who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours " +
    "yourself yourselves also just may might must shall will would please tell explain describe give show find know list " +
    "does doc docs document documents knowledge base kb"
  ).split(/\s+/),
);

/** A light suffix-stripping stemmer (enough to match plural/verb forms). */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith("ies") && w.length > 4) return w.slice(0, -3) + "y";
  if (w.endsWith("sses")) return w.slice(0, -2);
  for (const suf of ["ational", "ization", "fulness", "iveness", "ingly", "ments", "ment", "ness", "ings", "ing", "edly", "ed", "ly", "es", "s"]) {
    if (w.endsWith(suf) && w.length - suf.length >= 3) {
      w = w.slice(0, -suf.length);
      break;
    }
  }
  if (w.length > 3 && w[w.length - 1] === w[w.length - 2] && !/[lsz]/.test(w[w.length - 1])) w = w.slice(0, -1);
  return w;
}

/** Lower-cased word tokens (letters and digits, any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu)?.map((w) => w.replace(/['’-]+$/g, "")) ?? [];
}

/** Content terms: words minus stopwords, stemmed. */
export function terms(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w)))
    .map(stem);
}

/** Splits prose into sentences; also breaks on line breaks and list bullets. */
export function sentences(text: string): string[] {
  const out: string[] = [];
  for (const block of text.split(/\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)/)) {
    const flat = block.replace(/\s+/g, " ").trim();
    if (!flat) continue;
    // A sentence ends at . ! ? followed by space and an upper-case letter, digit, quote or bracket.
    const parts = flat.split(/(?<=[.!?])\s+(?=[\p{Lu}\p{N}"'“(\[])/u);
    for (const p of parts) {
      const s = p.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, "").trim();
      if (s) out.push(s);
    }
  }
  return out;
}

/** Token estimate used where no tokenizer is available (about 4 characters per token). */
export function estimateTokens(text: string): number {
  return text ? Math.ceil(text.length / 4) : 0;
}
