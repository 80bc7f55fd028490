import { sql, type SQL } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import { porterStem, words } from "./tokenize";

/**
 * The lexical leg: FTS5 finds candidates, this module scores them.
 *
 *  1. One D1 round trip: FTS5 (`porter unicode61`, the knowledge base selected
 *     inside MATCH) returns the best CANDIDATES passages for the query's words
 *     OR-ed together, with their text, and the same batch counts the knowledge
 *     base's passages and each query word's document frequency in it.
 *  2. BM25 over those candidates, computed here with this knowledge base's
 *     statistics only (FTS5's bm25() uses the whole table, every tenant's
 *     passages included), fields weighted (FIELD_WEIGHTS: the document's title
 *     and the heading path above the body).
 *  3. Query expansion (RM3-style pseudo-relevance feedback): the terms that
 *     weigh most in the best FEEDBACK_PASSAGES passages join the query with a
 *     smaller weight and every candidate is scored again. Expansion terms take
 *     their document frequency from the candidates (measured on SciFact: as
 *     good as exact counts, and no second round trip).
 *  4. Character n-grams: the best NGRAM_DEPTH passages are re-ordered by a
 *     BM25 over the query words' character trigrams (document frequencies
 *     taken among those passages), mixed with the BM25 score. It gives credit
 *     for partial word matches the stemmer misses (miRNA / microRNAs,
 *     T-cell / Tcells, chemical names, numbers with units).
 *
 * The constants were chosen by measurement on SciFact (README "Retrieval
 * quality"); each stage can be switched off for ablations. The user's text
 * never reaches MATCH as syntax: it is reduced to word tokens, each quoted.
 */
export const CANDIDATES = 200;
/** FTS rows fetched per wanted candidate: room for rows of replaced generations or deleted documents. */
const FTS_OVERFETCH = 2;
export const FIELD_WEIGHTS = { title: 2, heading: 3, body: 1 };
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
export const MAX_QUERY_TERMS = 32;
export const FEEDBACK_PASSAGES = 5;
export const EXPANSION_TERMS = 20;
/** Share of the expanded query's weight kept by the original terms. */
export const ORIGINAL_WEIGHT = 0.7;
export const NGRAM = 3;
export const NGRAM_DEPTH = 50;
export const NGRAM_WEIGHT = 0.5;

/** Dropped from queries (unless nothing else is left). */
const QUERY_STOPWORDS = new Set(
  "a an and are as at be by for from has have how i in is it of on or that the this to was what when where which who why will with".split(" "),
);
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

export interface LexicalStages {
  /** BM25 with this knowledge base's statistics; false = FTS5's bm25() order (and no later stage). */
  rescore?: boolean;
  expansion?: boolean;
  ngrams?: boolean;
  /** Candidates fetched from FTS5 (evaluation; default CANDIDATES). */
  depth?: number;
}

interface Term {
  stem: string;
  /** A word that FTS5 tokenizes to `stem` (quoted in MATCH). */
  word: string;
}

/** The query's distinct terms (by stem), stopwords dropped unless nothing else is left, at most MAX_QUERY_TERMS. */
export function queryTerms(query: string): Term[] {
  const all = words(query);
  const meaningful = all.filter((w) => !QUERY_STOPWORDS.has(w));
  const seen = new Map<string, Term>();
  for (const word of meaningful.length ? meaningful : all) {
    const stem = porterStem(word);
    if (!seen.has(stem)) seen.set(stem, { stem, word });
    if (seen.size >= MAX_QUERY_TERMS) break;
  }
  return [...seen.values()];
}

/** Quoted words OR-ed together; the words hold only letters and digits, so no FTS5 syntax can be injected. */
const matchOf = (terms: Term[]) => terms.map((t) => `"${t.word}"`).join(" OR ");
// kb ids are [a-z0-9_] only; stripping anything else keeps the quoted phrase inert.
const kbPhrase = (kbId: string) => `knowledge_base_id : "${kbId.replace(/[^A-Za-z0-9_]/g, "")}"`;

const documentFilter = (ids?: string[]) =>
  ids ? sql`AND c.document_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))` : sql``;

/**
 * CROSS JOIN fixes the join order: FTS5's best rows first, each joined by
 * primary key. Left to itself SQLite would walk every chunk of the knowledge
 * base (chunks_kb_idx) and probe the FTS results, which grows with its size.
 */
function candidatesSql(kbId: string, terms: Term[], n: number, ids: string[] | undefined): SQL {
  const expression = `${kbPhrase(kbId)} AND (${matchOf(terms)})`;
  const w = FIELD_WEIGHTS;
  const ranking = `bm25(${w.title.toFixed(1)}, ${w.heading.toFixed(1)}, ${w.body.toFixed(1)}, 0.0)`;
  return sql`
    SELECT c.seq, c.id, c.document_id, c.title, c.heading, c.body, c.page, d.filename, d.source_url
    FROM (
      SELECT rowid, rank FROM chunks_fts
      WHERE chunks_fts MATCH ${expression} AND rank MATCH ${ranking}
      ${ids ? sql`` : sql`ORDER BY rank LIMIT ${n * FTS_OVERFETCH}`}
    ) f
    CROSS JOIN chunks c ON c.seq = f.rowid
    CROSS JOIN documents d ON d.id = c.document_id
    WHERE c.knowledge_base_id = ${kbId}
      AND c.generation = d.index_generation AND d.status NOT IN ('deleted', 'pending_upload')
      ${documentFilter(ids)}
    ORDER BY f.rank LIMIT ${n}`;
}

/** Passages of the knowledge base (N of BM25) and, per term, how many contain it. */
function statisticsSql(kbId: string, terms: Term[]): SQL {
  const parts: SQL[] = [sql`(SELECT count(*) FROM chunks WHERE knowledge_base_id = ${kbId}) AS total`];
  terms.forEach((t, i) => {
    const expression = `${kbPhrase(kbId)} AND "${t.word}"`;
    parts.push(sql`(SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ${expression}) AS ${sql.raw(`d${i}`)}`);
  });
  return sql`SELECT ${sql.join(parts, sql`, `)}`;
}

/** A candidate's terms per field (FTS5's tokens), computed once per query. */
interface Analyzed {
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

function analyzer() {
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

/** Lucene's BM25 idf: positive even for terms in most passages (FTS5's can reach zero in small knowledge bases). */
const idf = (total: number, df: number) => Math.log(1 + (total - df + 0.5) / (df + 0.5));

function bm25(pool: Analyzed[], weights: Map<string, number>, idfs: Map<string, number>): LexicalHit[] {
  const avg = pool.reduce((s, a) => s + a.length, 0) / (pool.length || 1) || 1;
  const w = [FIELD_WEIGHTS.title, FIELD_WEIGHTS.heading, FIELD_WEIGHTS.body];
  return pool
    .map((a) => {
      let score = 0;
      for (const [stem, qw] of weights) {
        const tf = w[0] * (a.fields[0].get(stem) ?? 0) + w[1] * (a.fields[1].get(stem) ?? 0) + w[2] * (a.fields[2].get(stem) ?? 0);
        if (!tf) continue;
        score += (qw * (idfs.get(stem) ?? 0) * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * a.length) / avg));
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
function expansionTerms(ranked: LexicalHit[], analyzed: Map<number, Analyzed>): Map<string, { word: string; weight: number }> {
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
function ngramScores(hits: LexicalHit[], analyzed: Map<number, Analyzed>, queryWords: string[]): number[] {
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
      s += (idf(m, df.get(g)!) * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * p.length) / avg));
    }
    return s;
  });
}

function minMax(xs: number[]): number[] {
  const max = Math.max(...xs);
  const min = Math.min(...xs);
  return xs.map((x) => (max > min ? (x - min) / (max - min) : 0));
}

/** Lexical candidates of the knowledge base for `query`, best first (at most CANDIDATES). */
export async function lexicalSearch(
  db: Database,
  kbId: string,
  query: string,
  opts: { documentIds?: string[]; stages?: LexicalStages; timings?: Record<string, number> } = {},
): Promise<LexicalHit[]> {
  let t = Date.now();
  const mark = (name: string) => {
    if (opts.timings) opts.timings[name] = (opts.timings[name] ?? 0) + Date.now() - t;
    t = Date.now();
  };
  const terms = queryTerms(query);
  if (!terms.length) return [];
  const stages = { rescore: true, expansion: true, ngrams: true, ...stripUndefined(opts.stages ?? {}) };
  const ids = opts.documentIds;
  const depth = Math.max(10, Math.min(stages.depth ?? CANDIDATES, 500));

  if (!stages.rescore) {
    const rows = (await batchSql(db, [candidatesSql(kbId, terms, depth, ids)]))[0].results as unknown as LexicalRow[];
    return rows.map((row, i) => ({ row, score: 1 / (i + 1) }));
  }

  const [first, firstStats] = await batchSql(db, [candidatesSql(kbId, terms, depth, ids), statisticsSql(kbId, terms)]);
  mark("d1");
  const analyze = analyzer();
  const analyzed = new Map<number, Analyzed>();
  for (const row of first.results as unknown as LexicalRow[]) analyzed.set(row.seq, analyze(row));
  const pool = [...analyzed.values()];
  const stats = firstStats.results[0] as Record<string, number>;
  const total = Math.max(Number(stats.total) || 0, pool.length, 1);
  const idfs = new Map(terms.map((t, i) => [t.stem, idf(total, Number(stats[`d${i}`]) || 0)]));
  // Every query term weighs 1 here: the feedback weights below are exp(score differences) on this scale.
  let ranked = bm25(pool, new Map(terms.map((t) => [t.stem, 1])), idfs);
  mark("bm25");

  if (stages.expansion && ranked.length) {
    const expansion = expansionTerms(ranked, analyzed);
    const sum = [...expansion.values()].reduce((s, v) => s + v.weight, 0) || 1;
    const weights = new Map(terms.map((t) => [t.stem, ORIGINAL_WEIGHT / terms.length]));
    for (const [s, v] of expansion) {
      weights.set(s, (weights.get(s) ?? 0) + ((1 - ORIGINAL_WEIGHT) * v.weight) / sum);
      if (!idfs.has(s)) {
        const df = pool.reduce((n, a) => n + (a.fields[0].has(s) || a.fields[1].has(s) || a.fields[2].has(s) ? 1 : 0), 0);
        idfs.set(s, idf(pool.length, df));
      }
    }
    ranked = bm25(pool, weights, idfs);
    mark("expansion");
  }

  if (stages.ngrams && ranked.length > 1) {
    const head = ranked.slice(0, NGRAM_DEPTH);
    const queryWords = [...new Set(words(query).filter((w) => !QUERY_STOPWORDS.has(w)))];
    const lexical = minMax(head.map((h) => h.score));
    const ngram = minMax(ngramScores(head, analyzed, queryWords));
    const mixed = head
      .map((h, i) => ({ row: h.row, score: lexical[i] + NGRAM_WEIGHT * ngram[i], bm25: h.score }))
      .sort((x, y) => y.score - x.score || x.row.seq - y.row.seq)
      .map(({ row, bm25: s }) => ({ row, score: s }));
    ranked = [...mixed, ...ranked.slice(NGRAM_DEPTH)];
    mark("ngrams");
  }
  return ranked.filter((h) => h.score > 0);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
