import { stem, STOPWORDS, words } from "./text";

/**
 * What a question is about, for the places where no model judges relevance
 * (memory recall's full-text leg, the local-extractive model): a remembered
 * statement answers a question only if it contains every focus term. Sharing
 * one word is not enough: "What is my wife's name?" is not answered by "My
 * daughter's name is Mia", nor "What is my project deadline?" by "My project
 * code is ZEBRA-42".
 *
 * - "What car do I drive?", "Which team do I support?": the noun asked about (car, team);
 * - "Where do I live?", "When did I start my job?": the verb and what follows (live; start, job);
 * - otherwise every content word ("What is my wife's name?" -> wife, name).
 */

/** Spellings that mean the same. */
const SAME = new Map([
  ["favorite", "favourite"],
  ["color", "colour"],
  ["colors", "colours"],
  ["favorites", "favourites"],
]);
/** Words that ask (or ask to remember) rather than say. */
const ASKING = new Set([
  "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "remind", "recall", "say", "said", "told",
  "remember", "note", "forget", "memorize", "memorise", "mind", "keep",
]);
/** "What kind of car ...": the noun comes after these. */
const KIND = new Set(["kind", "sort", "type"]);
const AUX = "do|did|does|am|was|were|is|are|have|had|has|can|could|should|would|will";

/** One spelling for words spelled two ways ("color" -> "colour"); other words as they are. */
export const oneSpelling = (word: string): string => SAME.get(word) ?? word;

/** The other spellings of a word ("color" -> ["colour"]), for full-text search. */
export function otherSpellings(word: string): string[] {
  const w = word.toLowerCase();
  return [...SAME].flatMap(([us, uk]) => (w === us ? [uk] : w === uk ? [us] : []));
}

function norm(word: string): string {
  const w = word.replace(/['’]s$/, "");
  return stem(SAME.get(w) ?? w);
}

const content = (ws: string[]) => ws.filter((w) => !STOPWORDS.has(w) && !ASKING.has(w)).map(norm);

/** The stemmed focus terms of a question (empty when it names nothing). */
export function focusTerms(question: string): string[] {
  const ws = words(question.replace(/’/g, "'"));
  const text = ws.join(" ");
  let m = new RegExp(`^(?:what|which) (?:(?:kind|sort|type) of )?(\\S+) (?:${AUX}) (?:i|we)\\b`).exec(text);
  if (m && !KIND.has(m[1]) && !STOPWORDS.has(m[1])) return [norm(m[1])];
  m = new RegExp(`^(?:where|when|how|why) (?:${AUX}) (?:i|we) (.+)$`).exec(text);
  if (m) return [...new Set(content(m[1].split(" ")))];
  return [...new Set(content(ws))];
}

/** True when `text` contains every focus term (no focus: nothing to check against). */
export function coversFocus(focus: string[], text: string): boolean {
  if (!focus.length) return true;
  const have = new Set(words(text.replace(/’/g, "'")).map(norm));
  return focus.every((t) => have.has(t));
}
