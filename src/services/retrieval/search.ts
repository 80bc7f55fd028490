import { sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { ApiError } from "../../lib/errors";
import { embedderFor } from "../embeddings";
import { getKnowledgeBase } from "../knowledge-bases";
import { vectorIndexFor } from "../vector-index";

/**
 * Knowledge-base search: full-text (FTS5, BM25) and vector (cosine) candidates
 * fused with reciprocal rank fusion. Only chunks of a document's active index
 * generation are returned, and never those of deleted documents, so a
 * document being reprocessed keeps answering from its previous index and a
 * deleted one is gone at once.
 *
 * The FTS index (migrations/0003_documents.sql) is `chunks_fts(title, heading,
 * body, knowledge_base_id)` over `chunks`, tokenizer `porter unicode61`;
 * `title` is the document's filename (or page title), `heading` the heading
 * path. The knowledge base is selected inside MATCH, so FTS5 ranks (bm25) and
 * limits within it before anything is joined. The user's query is never
 * passed to MATCH as is: it is reduced to word tokens, each quoted.
 * Tuning knobs (weights, fusion constant, candidate counts) are exported for
 * the retrieval work that builds on this.
 */
export const FTS_WEIGHTS = { title: 1.0, heading: 2.0, body: 1.0 };
/** FTS candidates fetched per wanted candidate: room for rows of replaced generations or deleted documents. */
const FTS_OVERFETCH = 2;
export const RRF_K = 60;
export const MAX_QUERY_TERMS = 32;

const STOPWORDS = new Set(
  "a an and are as at be by for from has have how i in is it of on or that the this to was what when where which who why will with".split(" "),
);

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
  /** The parts of the fused score: BM25 rank value (lower is better) and cosine similarity. */
  scores: { fts: number | null; vector: number | null };
}

export interface SearchOptions {
  knowledgeBaseId: string;
  query: string;
  /** Passages to return (default 10, at most 50). */
  limit?: number;
  /** Only these documents. */
  documentIds?: string[];
  /** Turn a side off (for evaluation). */
  fts?: boolean;
  vector?: boolean;
}

/** The query as an FTS5 expression of quoted terms joined by OR; null when it has no word characters. */
export function ftsQuery(query: string): string | null {
  const terms = [...new Set(query.toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? [])];
  const meaningful = terms.filter((t) => !STOPWORDS.has(t));
  const chosen = (meaningful.length ? meaningful : terms).slice(0, MAX_QUERY_TERMS);
  // Terms contain only letters and digits, so quoting them cannot inject FTS syntax.
  return chosen.length ? chosen.map((t) => `"${t}"`).join(" OR ") : null;
}

type Row = { id: string; document_id: string; heading: string; body: string; page: number | null; filename: string; source_url: string | null };

const documentFilter = (ids?: string[]) =>
  ids ? sql`AND c.document_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))` : sql``;

async function ftsCandidates(db: Database, kbId: string, match: string, n: number, ids?: string[]) {
  // kb ids are [a-z0-9_] only, so the quoted phrase cannot inject FTS syntax.
  const expression = `knowledge_base_id : "${kbId.replace(/[^A-Za-z0-9_]/g, "")}" AND (${match})`;
  const ranking = `bm25(${FTS_WEIGHTS.title}, ${FTS_WEIGHTS.heading}, ${FTS_WEIGHTS.body}, 0.0)`;
  return db.all<Row & { rank: number }>(sql`
    SELECT c.id, c.document_id, c.heading, c.body, c.page, d.filename, d.source_url, f.rank AS rank
    FROM (
      SELECT rowid, rank FROM chunks_fts
      WHERE chunks_fts MATCH ${expression} AND rank MATCH ${ranking}
      ${ids ? sql`` : sql`ORDER BY rank LIMIT ${n * FTS_OVERFETCH}`}
    ) f
    JOIN chunks c ON c.seq = f.rowid
    JOIN documents d ON d.id = c.document_id
    WHERE c.knowledge_base_id = ${kbId}
      AND c.generation = d.index_generation AND d.status NOT IN ('deleted', 'pending_upload')
      ${documentFilter(ids)}
    ORDER BY f.rank LIMIT ${n}`);
}

async function rowsByIds(db: Database, kbId: string, chunkIds: string[], ids?: string[]) {
  if (!chunkIds.length) return [];
  return db.all<Row>(sql`
    SELECT c.id, c.document_id, c.heading, c.body, c.page, d.filename, d.source_url
    FROM chunks c JOIN documents d ON d.id = c.document_id
    WHERE c.id IN (SELECT value FROM json_each(${JSON.stringify(chunkIds)})) AND c.knowledge_base_id = ${kbId}
      AND c.generation = d.index_generation AND d.status NOT IN ('deleted', 'pending_upload')
      ${documentFilter(ids)}`);
}

/** Vector candidates joined to their live chunk rows, best first; [] when the provider or index is unavailable. */
async function vectorCandidates(env: Env, db: Database, kbId: string, query: string, n: number, ids?: string[]) {
  try {
    const [vector] = await embedderFor(env).embed([query], "query");
    const index = vectorIndexFor(env);
    const matches = await index.query(kbId, vector, Math.min(index.maxTopK, n));
    const rows = new Map((await rowsByIds(db, kbId, matches.map((m) => m.id), ids)).map((r) => [r.id, r]));
    // Ranks count only live chunks: stale vectors (a replaced generation awaiting cleanup) are skipped.
    return matches.flatMap((m) => (rows.has(m.id) ? [{ row: rows.get(m.id)!, score: m.score }] : []));
  } catch (e) {
    // Full-text results still answer when the embedding provider or index is unavailable.
    console.warn(`vector search unavailable for ${kbId}; full-text only:`, e);
    return [];
  }
}

export async function searchKnowledgeBase(env: Env, db: Database, opts: SearchOptions): Promise<Passage[]> {
  const limit = Math.max(1, Math.min(opts.limit ?? 10, 50));
  const candidates = Math.max(limit * 4, 40);
  const kb = await getKnowledgeBase(db, opts.knowledgeBaseId);
  if (!kb) throw new ApiError("not_found", "Knowledge base not found");

  const fused = new Map<string, { row: Row; score: number; fts: number | null; vector: number | null }>();
  const add = (row: Row, rank: number, part: { fts?: number; vector?: number }) => {
    const cur = fused.get(row.id) ?? { row, score: 0, fts: null, vector: null };
    cur.score += 1 / (RRF_K + rank + 1);
    if (part.fts !== undefined) cur.fts = part.fts;
    if (part.vector !== undefined) cur.vector = part.vector;
    fused.set(row.id, cur);
  };

  const match = opts.fts === false ? null : ftsQuery(opts.query);
  const wantVector = opts.vector !== false && !!kb.embeddingModel && !!opts.query.trim();
  if (wantVector) {
    const embedder = embedderFor(env);
    if (embedder.model !== kb.embeddingModel || (embedder.dimensions && kb.embeddingDimensions && embedder.dimensions !== kb.embeddingDimensions)) {
      throw new ApiError(
        "embedding_mismatch",
        `This knowledge base is indexed with ${kb.embeddingModel} but the service now embeds with ${embedder.model}; ` +
          "its vectors cannot be searched with another model. Delete and upload its documents again, or use a new knowledge base.",
        { status: 409 },
      );
    }
  }

  // Both sides run at once; the latency is the slower of the two.
  const [ftsRows, vectorHits] = await Promise.all([
    match ? ftsCandidates(db, kb.id, match, candidates, opts.documentIds) : Promise.resolve([]),
    wantVector ? vectorCandidates(env, db, kb.id, opts.query, candidates, opts.documentIds) : Promise.resolve([]),
  ]);
  ftsRows.forEach((r, i) => add(r, i, { fts: r.rank }));
  vectorHits.forEach(({ row, score }, i) => add(row, i, { vector: score }));

  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map(({ row, score, fts, vector }) => ({
      document_id: row.document_id,
      filename: row.filename,
      chunk_id: row.id,
      text: row.body,
      score,
      page: row.page,
      heading: row.heading || null,
      url: row.source_url,
      scores: { fts, vector },
    }));
}
