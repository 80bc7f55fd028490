import { idf, saturatedTf } from "./bm25";
import { porterStem, words } from "./tokenize";

// Scoring the lexical candidates (see lexical.ts): BM25 with the knowledge base's statistics, RM3 expansion terms,
// character n-grams.

export const FIELD_WEIGHTS = { title: 2, heading: 3, body: 1 };
export const FEEDBACK_PASSAGES = 5;
export const EXPANSION_TERMS = 20;
export const NGRAM = 3;

/** Never used as expansion terms (as stems, below). */
const EXPANSION_STOPWORDS = new Set(
  (
    "a about above after again against all also am an and any are as at be because been before being below between both but by " +
    "can could did do does doing down during each few for from further had has have having he her here hers herself him himself " +
    "his how however i if in into is it its itself just may me might more most must my myself no nor not now of off on once only " +
    "or other our ours ourselves out over own same shall she should so some such than that the their theirs them themselves then " +
    "there these they this those through to too under until up very was we were what when where which while who whom why will " +
    "with would you your yours yourself yourselves"
  )
    .split(" ")
    .map(porterStem),
);

export interface LexicalRow {
  seq: number;
  id: string;
  document_id: string;
  title: string;
  heading: string;
  body: string;
  page: number | null;
  filename: string;
  source_url: string | null;
}

export interface LexicalHit {
  row: LexicalRow;
  /** The lexical score (higher is better). */
  score: number;
}

/** A candidate's terms per field (FTS5's tokens), computed once per query. */
export interface Analyzed {
  row: LexicalRow;
  fields: [Map<string, number>, Map<string, number>, Map<string, number>];
  length: number;
  /** heading + body words (unstemmed), for n-grams. */
  words: string[];
}

/** Stems of words seen recently, shared by the requests of an isolate (words recur across queries). */
const STEM_CACHE_SIZE = 50_000;
let stemCache = new Map<string, string>();
function stem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    if (stemCache.size >= STEM_CACHE_SIZE) stemCache = new Map();
    stemCache.set(word, (s = porterStem(word)));
  }
  return s;
}

export function analyzer() {
  const counts = (ws: string[]) => {
    const m = new Map<string, number>();
    for (const w of ws) {
      const s = stem(w);
      m.set(s, (m.get(s) ?? 0) + 1);
    }
    return m;
  };
  return (row: LexicalRow): Analyzed => {
    const t = words(row.title);
    const h = words(row.heading);
    const b = words(row.body);
    return { row, fields: [counts(t), counts(h), counts(b)], length: t.length + h.length + b.length, words: [...h, ...b] };
  };
}

export function bm25(pool: Analyzed[], weights: Map<string, number>, idfs: Map<string, number>): LexicalHit[] {
  const avg = pool.reduce((s, a) => s + a.length, 0) / (pool.length || 1) || 1;
  const w = [FIELD_WEIGHTS.title, FIELD_WEIGHTS.heading, FIELD_WEIGHTS.body];
  return pool
    .map((a) => {
      let score = 0;
      for (const [stem, qw] of weights) {
        const tf = w[0] * (a.fields[0].get(stem) ?? 0) + w[1] * (a.fields[1].get(stem) ?? 0) + w[2] * (a.fields[2].get(stem) ?? 0);
        if (!tf) continue;
        score += qw * (idfs.get(stem) ?? 0) * saturatedTf(tf, a.length, avg);
      }
      return { row: a.row, score };
    })
    .sort((x, y) => y.score - x.score || x.row.seq - y.row.seq);
}

/**
 * RM3's relevance model over the best passages: each term weighs its share of
 * a passage's length, the passages weighted by exp(score - best score).
 * Numbers and stopwords are left out.
 */
export function expansionTerms(ranked: LexicalHit[], analyzed: Map<number, Analyzed>): Map<string, { word: string; weight: number }> {
  const top = ranked.slice(0, FEEDBACK_PASSAGES).filter((h) => h.score > 0);
  const best = top[0]?.score ?? 0;
  const model = new Map<string, { word: string; weight: number }>();
  for (const hit of top) {
    const a = analyzed.get(hit.row.seq)!;
    const length = a.words.length || 1;
    const passageWeight = Math.exp(hit.score - best);
    const counts = new Map<string, { word: string; n: number }>();
    for (const word of a.words) {
      const s = stem(word);
      if (EXPANSION_STOPWORDS.has(s) || /^\d+$/.test(s)) continue;
      const c = counts.get(s);
      if (c) c.n++;
      else counts.set(s, { word, n: 1 });
    }
    for (const [s, { word, n }] of counts) {
      const cur = model.get(s);
      const add = (passageWeight * n) / length;
      if (cur) cur.weight += add;
      else model.set(s, { word, weight: add });
    }
  }
  return new Map([...model.entries()].sort((x, y) => y[1].weight - x[1].weight).slice(0, EXPANSION_TERMS));
}

/** Character n-gram BM25 of the best passages against the query words (document frequencies among those passages). */
export function ngramScores(hits: LexicalHit[], analyzed: Map<number, Analyzed>, queryWords: string[]): number[] {
  const grams = new Set<string>();
  for (const w of queryWords) for (let i = 0; i + NGRAM <= w.length; i++) grams.add(w.slice(i, i + NGRAM));
  if (!grams.size) return hits.map(() => 0);
  const perPassage = hits.map((h) => {
    const a = analyzed.get(h.row.seq)!;
    const tf = new Map<string, number>();
    let length = 0;
    for (const w of a.words) {
      for (let i = 0; i + NGRAM <= w.length; i++) {
        length++;
        const g = w.slice(i, i + NGRAM);
        if (grams.has(g)) tf.set(g, (tf.get(g) ?? 0) + 1);
      }
    }
    return { tf, length };
  });
  const m = perPassage.length;
  const df = new Map<string, number>();
  for (const p of perPassage) for (const g of p.tf.keys()) df.set(g, (df.get(g) ?? 0) + 1);
  const avg = perPassage.reduce((s, p) => s + p.length, 0) / (m || 1) || 1;
  return perPassage.map((p) => {
    let s = 0;
    for (const [g, tf] of p.tf) {
      s += idf(m, df.get(g)!) * saturatedTf(tf, p.length, avg);
    }
    return s;
  });
}

export function minMax(xs: number[]): number[] {
  const max = Math.max(...xs);
  const min = Math.min(...xs);
  return xs.map((x) => (max > min ? (x - min) / (max - min) : 0));
}
