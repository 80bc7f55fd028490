import { sql, type SQL } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import type { KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { retrievalConfig } from "../../lib/config";
import { ApiError } from "../../lib/errors";
import type { Actor } from "../billing/metering";
import { embedderFor, type Embedder } from "../embeddings";
import { meterEmbedding } from "../embeddings/metering";
import { getKnowledgeBase } from "../knowledge-bases";
import { vectorIndexFor, type VectorMatch } from "../vector-index";
import { lexicalPlan, queryTerms, type LexicalRow } from "./lexical";
import { rerankerFor } from "./rerank";

/**
 * Knowledge-base search, the one retrieval function behind fast-raw-query,
 * raw-query, fast-query and the answer pipeline: a lexical leg (FTS5
 * candidates scored with BM25, query expansion and character n-grams:
 * ./lexical.ts) and a vector leg (the embedding of the query against the
 * vector index; ids only, text joined from D1), fused by weighted reciprocal
 * rank fusion, then optionally reordered by a reranker (./rerank.ts).
 *
 * Only chunks of a document's active index generation are returned, never
 * those of deleted documents or of another knowledge base: a document being
 * reprocessed keeps answering from its previous index, once, and a deleted
 * one is gone at once. Vector matches are candidates only; D1 decides what is
 * live.
 */
export { MAX_QUERY_TERMS } from "./lexical";
/** Vector candidates asked for: Vectorize returns at most 100 ids per query (20 with metadata, which we never ask for). */
export const VECTOR_CANDIDATES = 100;

export interface Passage {
  document_id: string;
  filename: string;
  chunk_id: string;
  text: string;
  /** Fused score (higher is better). */
  score: number;
  page: number | null;
  heading: string | null;
  /** The page a web document came from. */
  url: string | null;
  /** The parts of the fused score: the lexical (BM25) score and the cosine similarity, higher is better; the reranker's score when one ran. */
  scores: { fts: number | null; vector: number | null; rerank?: number | null };
}

export interface RetrievalStages {
  /** Lexical: BM25 with the knowledge base's own statistics (false: FTS5's bm25() order). */
  rescore?: boolean;
  /** Lexical: pseudo-relevance-feedback query expansion. */
  expansion?: boolean;
  /** Lexical: character n-gram re-scoring of the best candidates. */
  ngrams?: boolean;
  /** The configured reranker (RERANK_PROVIDER); default: on when one is configured. */
  rerank?: boolean;
  /** Lexical candidates fetched from FTS5 (default 200). */
  depth?: number;
}

export interface SearchOptions {
  knowledgeBaseId: string;
  /** The knowledge base's row when the caller already has it (a turn does): saves its lookup. */
  knowledgeBase?: KnowledgeBase;
  query: string;
  /** Passages to return (default 10, at most 200; the endpoints allow 50). */
  limit?: number;
  /** Only these documents. */
  documentIds?: string[];
  /** Turn a leg off (for evaluation). */
  fts?: boolean;
  vector?: boolean;
  /** Switch individual stages off, or change the candidate depth (evaluation ablations); unset = the default. */
  stages?: RetrievalStages;
  /** Evaluation: fusion constants other than the configured ones. */
  fusion?: { rrfK?: number; vectorWeight?: number };
  /** Evaluation: filled with the milliseconds spent per stage. */
  timings?: Record<string, number>;
  /** Who asked: recorded on the usage log when the query embedding is paid (openai, workers-ai). */
  actor?: Actor | null;
  /**
   * Given: a paid query embedding is reported here instead of recorded (a search started before its request was
   * authorized is charged only once it is: src/services/chats/search-ahead.ts).
   */
  onEmbeddingUsage?: (usage: { model: string; tokens: number }) => void;
  /**
   * Sends the search's statements when they were ready at once (no query embedding or vector index to wait for):
   * a turn's search lets them ride in the turn's read (src/db/rider.ts). Otherwise they go as a batch of their own.
   */
  send?: (statements: SQL[]) => Promise<D1Result[]>;
}

/** The query as an FTS5 expression of quoted terms joined by OR; null when it has no word characters. */
export function ftsQuery(query: string): string | null {
  const terms = queryTerms(query);
  return terms.length ? terms.map((t) => `"${t.word}"`).join(" OR ") : null;
}

type Row = Pick<LexicalRow, "id" | "document_id" | "heading" | "page" | "filename" | "source_url"> & { body?: string };

/**
 * Live chunk rows of the given ids, best first. Vector matches are mostly outranked, so only the first
 * `withText` come with their text (enough for the passages a search returns, so no second round trip
 * is needed for them); the others' texts are read only if they are returned after all (withTexts).
 * CROSS JOIN: the ids are looked up by the unique index, never by walking the knowledge base's chunks.
 */
function rowsByIdsSql(kbId: string, chunkIds: string[], withText: number, ids?: string[]): SQL {
  return sql`
    SELECT c.id, c.document_id, c.heading, c.page, d.filename, d.source_url, CASE WHEN j.key < ${withText} THEN c.body END AS body
    FROM json_each(${JSON.stringify(chunkIds)}) j
    CROSS JOIN chunks c ON c.id = j.value
    CROSS JOIN documents d ON d.id = c.document_id
    WHERE c.knowledge_base_id = ${kbId}
      AND c.generation = d.index_generation AND d.status NOT IN ('deleted', 'pending_upload')
      ${ids ? sql`AND c.document_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))` : sql``}`;
}

/** The vector matches that are live chunks (the rows of rowsByIdsSql), best first; ranks count only those. */
function vectorHitsOf(matches: VectorMatch[], liveRows: Array<Row & { body: string | null }>) {
  const rows = new Map(liveRows.map(({ body, ...row }): [string, Row] => [row.id, body === null ? row : { ...row, body }]));
  // Stale vectors (a replaced generation awaiting cleanup) are skipped.
  return matches.flatMap((m) => (rows.has(m.id) ? [{ row: rows.get(m.id)!, score: m.score }] : []));
}

/** Fills in the text of rows that have none (by chunk id, within the knowledge base). */
async function withTexts(db: Database, kbId: string, rows: Row[]): Promise<void> {
  const missing = rows.filter((r) => r.body === undefined).map((r) => r.id);
  if (!missing.length) return;
  const texts = await db.all<{ id: string; body: string }>(sql`
    SELECT c.id, c.body FROM json_each(${JSON.stringify(missing)}) j
    CROSS JOIN chunks c ON c.id = j.value
    WHERE c.knowledge_base_id = ${kbId}`);
  const byId = new Map(texts.map((t) => [t.id, t.body]));
  for (const r of rows) if (r.body === undefined) r.body = byId.get(r.id) ?? "";
}

/**
 * The vector index's best matches for the query (ids and scores); [] when the provider or index is unavailable.
 * The knowledge base's index version lets the local index answer from this isolate's copy of a small one.
 */
async function vectorMatches(env: Env, embedder: Embedder, kb: KnowledgeBase, query: string): Promise<VectorMatch[]> {
  try {
    const [vector] = await embedder.embed([query], "query");
    const index = vectorIndexFor(env);
    return await index.query(kb.id, vector, Math.min(index.maxTopK, VECTOR_CANDIDATES), kb.indexVersion);
  } catch (e) {
    // Full-text results still answer when the embedding provider or index is unavailable.
    console.warn(`vector search unavailable for ${kb.id}; full-text only:`, e);
    return [];
  }
}

/**
 * The same matches at once, without waiting for anything, when they can be had so: an embedder that computes
 * here (the hash embedder) and this isolate's copy of the knowledge base's vectors (local index). Null otherwise.
 */
function vectorMatchesNow(env: Env, embedder: Embedder, kb: KnowledgeBase, query: string): VectorMatch[] | null {
  if (!embedder.embedNow) return null;
  try {
    const index = vectorIndexFor(env);
    if (!index.queryCopy) return null;
    return index.queryCopy(kb.id, embedder.embedNow(query), Math.min(index.maxTopK, VECTOR_CANDIDATES), kb.indexVersion);
  } catch {
    return null; // the index's own call reports it
  }
}

function timedNow<T>(timings: Record<string, number> | undefined, name: string, f: () => T): T {
  const started = Date.now();
  try {
    return f();
  } finally {
    if (timings) timings[name] = Date.now() - started;
  }
}

async function timed<T>(timings: Record<string, number> | undefined, name: string, p: Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await p;
  } finally {
    if (timings) timings[name] = Date.now() - started;
  }
}

export async function searchKnowledgeBase(env: Env, db: Database, opts: SearchOptions): Promise<Passage[]> {
  const limit = Math.max(1, Math.min(opts.limit ?? 10, 200));
  const kb = opts.knowledgeBase?.id === opts.knowledgeBaseId ? opts.knowledgeBase : await getKnowledgeBase(db, opts.knowledgeBaseId);
  if (!kb) throw new ApiError("not_found", "Knowledge base not found");
  const config = retrievalConfig(env);

  const wantLexical = opts.fts !== false;
  const wantVector = opts.vector !== false && !!kb.embeddingModel && !!opts.query.trim();
  let embeddingTokens = 0;
  const embedder = wantVector ? embedderFor(env, { onUsage: (t) => (embeddingTokens += t) }) : null;
  if (embedder) {
    if (embedder.model !== kb.embeddingModel || (embedder.dimensions && kb.embeddingDimensions && embedder.dimensions !== kb.embeddingDimensions)) {
      throw new ApiError(
        "embedding_mismatch",
        `This knowledge base is indexed with ${kb.embeddingModel} but the service now embeds with ${embedder.model}; ` +
          "its vectors cannot be searched with another model. Delete and upload its documents again, or use a new knowledge base.",
      );
    }
  }

  // One D1 round trip: the vector matches come first (the embedding and the index, no D1), then the lexical
  // leg's statements and the matches' live rows go in one batch.
  const lexical = wantLexical ? lexicalPlan(kb.id, opts.query, { documentIds: opts.documentIds, stages: opts.stages, timings: opts.timings }) : null;
  const matchesNow = embedder ? timedNow(opts.timings, "vector", () => vectorMatchesNow(env, embedder, kb, opts.query)) : [];
  const matches = matchesNow ?? (await timed(opts.timings, "vector", vectorMatches(env, embedder!, kb, opts.query)));
  const lexicalStatements = lexical?.statements ?? [];
  const rowsStatement = matches.length ? [rowsByIdsSql(kb.id, matches.map((m) => m.id), textsWanted(limit), opts.documentIds)] : [];
  const statements = [...lexicalStatements, ...rowsStatement];
  // Ready before anything was awaited, the statements may ride in the request's next batch (opts.send).
  const results = statements.length && opts.send && matchesNow ? await opts.send(statements) : await batchSql(db, statements);
  const lexicalHits = lexical && lexicalStatements.length ? lexical.rank(results.slice(0, lexicalStatements.length)) : [];
  const vectorHits = rowsStatement.length ? vectorHitsOf(matches, results[lexicalStatements.length].results as Array<Row & { body: string | null }>) : [];
  // A paid query embedding is charged to the knowledge base's tenant (the hash embedder reports nothing).
  if (opts.onEmbeddingUsage) opts.onEmbeddingUsage({ model: embedder?.model ?? "", tokens: embeddingTokens });
  else await meterEmbedding(db, env, { organizationId: kb.organizationId, tenantId: kb.tenantId, model: embedder?.model ?? "", tokens: embeddingTokens, actor: opts.actor });

  const vectorWeight = opts.fusion?.vectorWeight ?? (embedder ? config.vectorWeight(embedder.provider) : 0);
  let ranked = fuse(lexicalHits, vectorHits, {
    lexicalWeight: config.lexicalWeight,
    // A leg on its own keeps its order whatever its weight.
    vectorWeight: wantLexical ? vectorWeight : 1,
    rrfK: opts.fusion?.rrfK ?? config.rrfK,
  });
  const reranker = opts.stages?.rerank === false ? null : rerankerFor(env);
  if (reranker && ranked.length > 1) ranked = await rerankHead(db, kb.id, opts.query, ranked, reranker, Math.max(limit, config.rerankDepth));
  await withTexts(db, kb.id, ranked.slice(0, limit).map((h) => h.row));
  return passagesOf(ranked.slice(0, limit)).map((p, i) => {
    const rerank = ranked[i].rerank;
    return rerank === undefined ? p : { ...p, scores: { ...p.scores, rerank } };
  });
}

/**
 * Vector matches read with their text. A match that only the vector leg found is in fusion's best `limit` only
 * if it is among that leg's best `limit` live matches (every better-ranked match outscores it), and lexical hits
 * bring their own text; the margin covers stale vectors ranked before it. Otherwise texts are read apart.
 */
const textsWanted = (limit: number) => Math.max(2 * limit, 20);

type Ranked = { row: Row; score: number; fts: number | null; vector: number | null; rerank?: number };

/**
 * Weighted reciprocal rank fusion. The hash embedder is a lexical signal of its own and much weaker than the
 * lexical leg, so by default it only breaks ties and adds candidates; a learned embedding model weighs as much
 * as the lexical leg (retrievalConfig).
 */
function fuse(
  lexicalHits: Array<{ row: Row; score: number }>,
  vectorHits: Array<{ row: Row; score: number }>,
  w: { lexicalWeight: number; vectorWeight: number; rrfK: number },
): Ranked[] {
  const fused = new Map<string, Ranked>();
  const add = (row: Row, weight: number, rank: number, part: { fts?: number; vector?: number }) => {
    const cur = fused.get(row.id) ?? { row, score: 0, fts: null, vector: null };
    cur.score += weight / (w.rrfK + rank + 1);
    if (part.fts !== undefined) cur.fts = part.fts;
    if (part.vector !== undefined) cur.vector = part.vector;
    fused.set(row.id, cur);
  };
  lexicalHits.forEach((h, i) => add(h.row, w.lexicalWeight, i, { fts: h.score }));
  vectorHits.forEach(({ row, score }, i) => add(row, w.vectorWeight, i, { vector: score }));
  return [...fused.values()].sort((a, b) => b.score - a.score);
}

const passagesOf = (rows: Ranked[]) =>
  rows.map(({ row, score, fts, vector }) => ({
    document_id: row.document_id,
    filename: row.filename,
    chunk_id: row.id,
    text: row.body ?? "",
    score,
    page: row.page,
    heading: row.heading || null,
    url: row.source_url,
    scores: { fts, vector },
  })) as Passage[];

/** The reranker reorders the head; passages it did not return keep their fused order after the ones it did. */
async function rerankHead(db: Database, kbId: string, query: string, ranked: Ranked[], reranker: NonNullable<ReturnType<typeof rerankerFor>>, depth: number): Promise<Ranked[]> {
  const head = ranked.slice(0, depth);
  await withTexts(db, kbId, head.map((h) => h.row));
  const results = await reranker.rerank(query, passagesOf(head));
  if (!results) return ranked;
  const returned = new Set(results.map((r) => r.index));
  return [...results.map((r) => ({ ...head[r.index], rerank: r.score })), ...head.filter((_, i) => !returned.has(i)), ...ranked.slice(head.length)];
}
