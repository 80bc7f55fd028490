import { sql, type SQL } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import { idf } from "./bm25";
import { keptStatistics, matchedTerms, searchStatistics, toCount } from "./lexical-statistics";
import { analyzer, bm25, expansionTerms, FIELD_WEIGHTS, minMax, ngramScores, type Analyzed, type LexicalHit, type LexicalRow } from "./lexical-scoring";
import { porterStem, words } from "./tokenize";

export type { LexicalHit, LexicalRow } from "./lexical-scoring";

/**
 * The lexical leg: FTS5 finds candidates, this module scores them.
 *
 *  1. One D1 round trip: FTS5 (`porter unicode61`, the knowledge base selected
 *     inside MATCH) returns the best CANDIDATES passages for the query's words
 *     OR-ed together, with their text, and the same batch counts the knowledge
 *     base's passages and each query word's document frequency in it (a large
 *     knowledge base keeps its counts a while, and leaves its commonest words
 *     out of the MATCH: lexical-statistics.ts).
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
export const MAX_QUERY_TERMS = 32;
/** Share of the expanded query's weight kept by the original terms. */
export const ORIGINAL_WEIGHT = 0.7;
export const NGRAM_DEPTH = 50;
export const NGRAM_WEIGHT = 0.5;

/** Dropped from queries (unless nothing else is left). */
const QUERY_STOPWORDS = new Set(
  "a an and are as at be by for from has have how i in is it of on or that the this to was what when where which who why will with".split(" "),
);
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

/** Passages of the knowledge base (N of BM25; unless kept) and, per term, how many contain it (d0, d1, …). */
function statisticsSql(kbId: string, terms: Term[], withTotal: boolean): SQL {
  const parts: SQL[] = withTotal ? [sql`(SELECT count(*) FROM chunks WHERE knowledge_base_id = ${kbId}) AS total`] : [];
  terms.forEach((t, i) => {
    const expression = `${kbPhrase(kbId)} AND "${t.word}"`;
    parts.push(sql`(SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ${expression}) AS ${sql.raw(`d${i}`)}`);
  });
  return sql`SELECT ${sql.join(parts, sql`, `)}`;
}

/** Lexical candidates of the knowledge base for `query`, best first (at most CANDIDATES): one D1 batch. */
export async function lexicalSearch(db: Database, kbId: string, query: string, opts: LexicalOptions = {}): Promise<LexicalHit[]> {
  const plan = lexicalPlan(kbId, query, opts);
  return plan.statements.length ? plan.rank(await batchSql(db, plan.statements)) : [];
}

export interface LexicalOptions {
  documentIds?: string[];
  stages?: LexicalStages;
  timings?: Record<string, number>;
}

/**
 * The lexical leg in two halves, so a caller can send its statements in a batch of its own (the search's one
 * round trip with the vector matches' rows, search.ts): the statements, and the ranking of their results (in
 * the same order). No statements: the query has no terms, and `rank` answers [].
 */
export interface LexicalPlan {
  statements: SQL[];
  rank(results: D1Result[]): LexicalHit[];
}

export function lexicalPlan(kbId: string, query: string, opts: LexicalOptions = {}): LexicalPlan {
  let t = Date.now();
  const mark = (name: string) => {
    if (opts.timings) opts.timings[name] = (opts.timings[name] ?? 0) + Date.now() - t;
    t = Date.now();
  };
  const terms = queryTerms(query);
  if (!terms.length) return { statements: [], rank: () => [] };
  const stages = { rescore: true, expansion: true, ngrams: true, ...stripUndefined(opts.stages ?? {}) };
  const ids = opts.documentIds;
  const depth = Math.max(10, Math.min(stages.depth ?? CANDIDATES, 500));
  if (!stages.rescore) {
    return {
      statements: [candidatesSql(kbId, terms, depth, ids)],
      rank: ([first]) => (first.results as unknown as LexicalRow[]).map((row, i) => ({ row, score: 1 / (i + 1) })),
    };
  }
  // The counts a large knowledge base keeps in the isolate (lexical-statistics.ts): only the others are counted.
  const known = keptStatistics(kbId);
  const count = toCount(known, terms);
  const counting = count.total || count.terms.length > 0;
  return {
    statements: [candidatesSql(kbId, matchedTerms(terms, known), depth, ids), ...(counting ? [statisticsSql(kbId, count.terms, count.total)] : [])],
    rank: ([first, counts]) => {
      mark("d1");
      const row = (counts?.results[0] ?? {}) as Record<string, number>;
      const counted = { total: count.total ? Number(row.total) || 0 : undefined, df: new Map(count.terms.map((t, i) => [t.stem, Number(row[`d${i}`]) || 0])) };
      const stats = searchStatistics(kbId, known, counted, terms.map((t) => t.stem));
      return rescored(query, terms, stages, first.results as unknown as LexicalRow[], stats, mark);
    },
  };
}

/** Stages 2-4: BM25 with the knowledge base's statistics, query expansion, character n-grams. */
function rescored(
  query: string,
  terms: Term[],
  stages: LexicalStages,
  rows: LexicalRow[],
  stats: { total: number; df: Map<string, number> },
  mark: (stage: string) => void,
): LexicalHit[] {
  const analyze = analyzer();
  const analyzed = new Map<number, Analyzed>();
  for (const row of rows) analyzed.set(row.seq, analyze(row));
  const pool = [...analyzed.values()];
  const total = Math.max(stats.total, pool.length, 1);
  const idfs = new Map(terms.map((t) => [t.stem, idf(total, stats.df.get(t.stem) ?? 0)]));
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
