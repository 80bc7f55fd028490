import { coversFocus, focusTerms, oneSpelling } from "../../lib/question-focus";
import { estimateTokens, sentences, terms as textTerms } from "../../lib/text";

/** Terms with one spelling for words spelled two ways ("color" and "colour" match). */
const terms = (text: string) => textTerms(text).map(oneSpelling);
import { idf, saturatedTf } from "../retrieval/bm25";

/**
 * The `local-extractive` model: it answers by SELECTING sentences from the
 * retrieved passages and citing them; it never generates text. Sentences are
 * ranked against the question (BM25-style term weights over the candidate
 * sentences, a bonus for matching consecutive question terms, and the
 * passage's retrieval rank), then picked greedily while dropping ones that
 * repeat what is already selected (maximal marginal relevance). A remembered
 * statement (a memory passage) is quoted whole, and only when it contains
 * everything the question is about (lib/question-focus.ts): a question about
 * something never said gets the no-answer reply, not another memory.
 */

export interface ExtractivePassage {
  index: number; // citation number [n]
  text: string;
  heading?: string | null;
  /** A recalled memory ("You told me: …"): one statement, quoted whole or not at all. */
  memory?: boolean;
}

export interface ExtractiveOptions {
  maxSentences?: number;
  /** Sentences scoring below this share of the best one are left out. */
  relativeFloor?: number;
}

interface Candidate {
  text: string;
  index: number;
  rank: number; // passage rank, 0 = best
  position: number; // sentence position in its passage
  terms: string[];
  termSet: Set<string>;
  score: number;
}

const jaccard = (a: Set<string>, b: Set<string>) => {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  const union = a.size + b.size - inter;
  return union ? inter / union : 0;
};

export interface ExtractiveAnswer {
  /** Selected sentences in answer order, each with its citation. */
  picks: Array<{ text: string; index: number }>;
  /** True when nothing in the passages matched the question. */
  empty: boolean;
}

/**
 * Every sentence of the passages long enough to answer with (12–600 characters, 3 terms or more); a
 * memory is one candidate, and only when it covers the question's focus.
 */
function candidatesOf(passages: ExtractivePassage[], question: string): Candidate[] {
  const cands: Candidate[] = [];
  const focus = focusTerms(question);
  passages.forEach((p, rank) => {
    const pieces = p.memory ? (coversFocus(focus, p.text) ? [p.text.trim()] : []) : sentences(p.text);
    pieces.forEach((s, position) => {
      if (s.length < 12 || s.length > 600) return;
      const t = terms(s);
      if (t.length < 3) return;
      cands.push({ text: s, index: p.index, rank, position, terms: t, termSet: new Set(t), score: 0 });
    });
  });
  return cands;
}

/**
 * Scores each sentence: BM25 over sentences as documents, raised by how much of the question it
 * covers, its question bigrams, and how early its passage and its place in it come.
 */
function scoreCandidates(cands: Candidate[], qTerms: string[]) {
  const qSet = new Set(qTerms);
  const qBigrams = new Set(qTerms.slice(1).map((t, i) => `${qTerms[i]} ${t}`));
  const df = new Map<string, number>();
  for (const c of cands) for (const t of c.termSet) if (qSet.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  const N = cands.length;
  const avgLen = cands.reduce((s, c) => s + c.terms.length, 0) / N;
  for (const c of cands) {
    let s = 0;
    const tf = new Map<string, number>();
    for (const t of c.terms) if (qSet.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, f] of tf) {
      s += idf(N, df.get(t) ?? 0) * saturatedTf(f, c.terms.length, avgLen);
    }
    if (s === 0) continue;
    let bigramHits = 0;
    for (let i = 1; i < c.terms.length; i++) if (qBigrams.has(`${c.terms[i - 1]} ${c.terms[i]}`)) bigramHits++;
    const coverage = tf.size / qSet.size;
    c.score = s * (1 + 0.5 * coverage) + 0.6 * bigramHits + 0.8 / (1 + c.rank) + 0.15 / (1 + c.position);
  }
}

/** Up to `max` of the best-ranked sentences, each saying something the others do not (MMR-like). */
function pickDiverse(ranked: Candidate[], max: number, floor: number): Candidate[] {
  const chosen: Candidate[] = [];
  const best = ranked[0].score;
  while (chosen.length < max) {
    let pick: Candidate | null = null;
    let pickValue = -Infinity;
    for (const c of ranked) {
      if (chosen.includes(c)) continue;
      if (c.score < best * floor) break;
      const redundancy = chosen.reduce((m, x) => Math.max(m, jaccard(x.termSet, c.termSet)), 0);
      if (redundancy > 0.6) continue; // says the same thing again
      const value = c.score - 0.7 * best * redundancy;
      if (value > pickValue) {
        pickValue = value;
        pick = c;
      }
    }
    if (!pick) break;
    chosen.push(pick);
  }
  return chosen;
}

export function selectSentences(question: string, passages: ExtractivePassage[], opts: ExtractiveOptions = {}): ExtractiveAnswer {
  const qTerms = terms(question);
  const cands = candidatesOf(passages, question);
  if (!cands.length || !qTerms.length) return { picks: [], empty: true };
  scoreCandidates(cands, qTerms);
  const ranked = cands.filter((c) => c.score > 0).sort((a, z) => z.score - a.score);
  if (!ranked.length) return { picks: [], empty: true };
  const chosen = pickDiverse(ranked, opts.maxSentences ?? 4, opts.relativeFloor ?? 0.35);
  // Read in document order: by passage rank, then position within the passage.
  chosen.sort((a, z) => a.rank - z.rank || a.position - z.position);
  return { picks: chosen.map((c) => ({ text: c.text, index: c.index })), empty: false };
}

/** Renders picks as prose with a [n] citation after each sentence. */
export function renderExtractive(picks: ExtractiveAnswer["picks"]): string {
  return picks
    .map(({ text, index }) => {
      const t = text.replace(/\s+/g, " ").trim();
      const ends = /[.!?]$/.test(t);
      return ends ? `${t.slice(0, -1)} [${index}]${t.slice(-1)}` : `${t} [${index}].`;
    })
    .join(" ");
}

export const NO_ANSWER = "I could not find anything about that in this knowledge base.";

export function extractiveAnswer(question: string, passages: ExtractivePassage[], opts?: ExtractiveOptions) {
  const { picks, empty } = selectSentences(question, passages, opts);
  const content = empty ? NO_ANSWER : renderExtractive(picks);
  const inputTokens = estimateTokens(question) + passages.reduce((s, p) => s + estimateTokens(p.text), 0);
  return { content, cited: [...new Set(picks.map((p) => p.index))], usage: { input_tokens: inputTokens, output_tokens: estimateTokens(content) } };
}
