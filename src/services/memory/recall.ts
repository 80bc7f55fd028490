import { sql } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Memory } from "../../db/schema";
import { retrievalConfig } from "../../lib/config";
import { coversFocus, focusTerms, otherSpellings } from "../../lib/question-focus";
import { embedderFor } from "../embeddings";
import { meterEmbedding } from "../embeddings/metering";
import { porterStem, words } from "../retrieval/tokenize";
import { matchWords } from "./rules";
import type { MemorySpace } from "./settings";
import { FTS_CANDIDATES, fromRow, matchExpression, MAX_MEMORIES_PER_SPACE, type MemoryRow, type WriteContext } from "./memories";
import { idf, saturatedTf } from "../retrieval/bm25";
import type { RecallReads } from "../../contracts/memory";

export type { RecallReads };

/**
 * Recall: lexical (FTS5 over the subject's memory space, BM25 with that space's statistics) and vector (the
 * configured embedder; vectors stored on the row, cosine over the space), fused by weighted reciprocal rank
 * fusion as document retrieval does (services/retrieval/search.ts).
 */

/** Memories recalled into a turn. */
export const RECALL_LIMIT = 3;
/** Lexical hits weaker than this share of the best one are not recalled (one shared word among many). */
const RELATIVE_CUTOFF = 0.5;
/** A memory found only by the vector leg is recalled at this cosine or above (learned embedding models only). */
const VECTOR_ONLY_MIN = 0.45;

export interface RecalledMemory {
  memory: Memory;
  score: number;
  scores: { fts: number | null; vector: number | null };
}

function cosine(a: number[], b: number[]): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

type Hit = { row: MemoryRow; score: number };
type Space = Pick<MemorySpace, "scopeKey" | "organizationId" | "tenantId">;

/** The recall's words (and their other spellings): what its lexical leg matches. */
const recallTerms = (query: string) => {
  const words = matchWords(query);
  return [...words, ...words.flatMap(otherSpellings)];
};

/**
 * Everything a recall reads, in ONE D1 batch: FTS5 candidates of the space holding any query word, the space's
 * size (BM25 uses the space's own statistics), and the space's stored vectors of the configured embedding model.
 * Nothing here is charged or embedded: the query's embedding is made when the reads are scored (recallFrom).
 */
export async function recallReads(db: WriteContext["db"], env: WriteContext["env"], space: Pick<Space, "scopeKey">, query: string): Promise<RecallReads> {
  const terms = recallTerms(query);
  const model = query.trim() ? embeddingModel(env) : null;
  const statements = [
    ...(terms.length
      ? [
          sql`SELECT m.* FROM (
          SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ${matchExpression(space.scopeKey, terms)} ORDER BY rank LIMIT ${FTS_CANDIDATES}
        ) f CROSS JOIN memories m ON m.seq = f.rowid WHERE m.scope_key = ${space.scopeKey}`,
          sql`SELECT count(*) AS n FROM memories WHERE scope_key = ${space.scopeKey}`,
        ]
      : []),
    ...(model
      ? [sql`SELECT * FROM memories WHERE scope_key = ${space.scopeKey} AND embedding_model = ${model} ORDER BY updated_at DESC LIMIT ${MAX_MEMORIES_PER_SPACE}`]
      : []),
  ];
  const results = await batchSql(db, statements);
  const [cands, total] = terms.length ? results : [];
  const vec = model ? results[results.length - 1] : undefined;
  const rows = (cands?.results ?? []) as MemoryRow[];
  const n = Math.max(((total?.results?.[0] as { n: number } | undefined)?.n ?? rows.length), rows.length);
  return { lexical: { rows, total: n }, vector: { model: model ?? "", rows: (vec?.results ?? []) as MemoryRow[] } };
}

/** The configured embedding model; null (full-text only) when the embedder is misconfigured. */
function embeddingModel(env: WriteContext["env"]): string | null {
  try {
    return embedderFor(env).model;
  } catch (e) {
    console.warn("memory vector recall unavailable; full-text only:", e);
    return null;
  }
}

/** BM25 with the space's own statistics over the lexical candidates; weak hits cut. */
function lexicalRecall(reads: RecallReads["lexical"], terms: string[]): Hit[] {
  if (!terms.length) return [];
  const scored = bm25(reads.rows, [...new Set(terms.map(porterStem))], reads.total);
  scored.sort((a, b) => b.score - a.score);
  const best = scored[0]?.score ?? 0;
  return scored.filter((s) => s.score > 0 && s.score >= best * RELATIVE_CUTOFF);
}

function bm25(rows: MemoryRow[], stems: string[], spaceSize: number): Hit[] {
  const docs = rows.map((r) => {
    const tf = new Map<string, number>();
    const ws = words(r.content).map(porterStem);
    for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
    return { row: r, tf, len: ws.length };
  });
  const avg = docs.reduce((s, d) => s + d.len, 0) / (docs.length || 1) || 1;
  const df = new Map(stems.map((s) => [s, docs.filter((d) => d.tf.has(s)).length]));
  return docs.map((d) => {
    let score = 0;
    for (const s of stems) {
      const f = d.tf.get(s) ?? 0;
      if (!f) continue;
      score += idf(spaceSize, df.get(s)!) * saturatedTf(f, d.len, avg);
    }
    return { row: d.row, score };
  });
}

/** The query's embedding against the space's stored vectors of the same model (full-text only when unavailable). */
async function vectorRecall(ctx: WriteContext, space: Space, query: string, reads: RecallReads["vector"]): Promise<{ hits: Hit[]; provider: string }> {
  const { db, env } = ctx;
  if (!query.trim()) return { hits: [], provider: "hash" };
  try {
    let tokens = 0;
    const embedder = embedderFor(env, { onUsage: (t) => (tokens += t) });
    // Rows read for another model (the configuration changed in between) cannot be compared: none then.
    const rows = reads.model === embedder.model ? reads.rows : [];
    if (!rows.length) return { hits: [], provider: embedder.provider };
    const [q] = await embedder.embed([query], "query");
    await meterEmbedding(db, env, { organizationId: space.organizationId, tenantId: space.tenantId, model: embedder.model, tokens, actor: ctx.actor });
    const hits = rows
      .map((row) => ({ row, score: cosine(q, JSON.parse(row.embedding!) as number[]) }))
      .filter((h) => h.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, FTS_CANDIDATES);
    return { hits, provider: embedder.provider };
  } catch (e) {
    console.warn("memory vector recall unavailable; full-text only:", e);
    return { hits: [], provider: "hash" };
  }
}

/**
 * The memories of a space most relevant to `query`, best first: the lexical and the vector leg fused by
 * weighted reciprocal rank fusion with the weights document retrieval uses. A lexical hit must contain
 * everything the question is about (lib/question-focus.ts), not just share a word with it ("my wife's
 * name" does not recall "my daughter's name"). Without a shared word, only a learned model's close match
 * is recalled.
 */
export async function recallMemories(ctx: WriteContext, space: Space, query: string, limit = RECALL_LIMIT): Promise<RecalledMemory[]> {
  return recallFrom(ctx, space, query, await recallReads(ctx.db, ctx.env, space, query), limit);
}

/** recallMemories on reads already made (recallReads of the same space and query: a recall read ahead of its turn). */
export async function recallFrom(ctx: WriteContext, space: Space, query: string, reads: RecallReads, limit = RECALL_LIMIT): Promise<RecalledMemory[]> {
  const config = retrievalConfig(ctx.env);
  const focus = focusTerms(query);
  const allLex = lexicalRecall(reads.lexical, recallTerms(query));
  const vec = await vectorRecall(ctx, space, query, reads.vector);
  const lex = allLex.filter((h) => coversFocus(focus, h.row.content));
  const vectorWeight = config.vectorWeight(vec.provider);
  const fused = new Map<string, { row: MemoryRow; score: number; fts: number | null; vector: number | null }>();
  lex.forEach((h, i) => fused.set(h.row.id, { row: h.row, score: config.lexicalWeight / (config.rrfK + i + 1), fts: h.score, vector: null }));
  vec.hits.forEach((h, i) => {
    const cur = fused.get(h.row.id);
    if (cur) {
      cur.score += vectorWeight / (config.rrfK + i + 1);
      cur.vector = h.score;
    } else if (vec.provider !== "hash" && h.score >= VECTOR_ONLY_MIN) {
      fused.set(h.row.id, { row: h.row, score: vectorWeight / (config.rrfK + i + 1), fts: null, vector: h.score });
    }
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((f) => ({ memory: fromRow(f.row), score: f.score, scores: { fts: f.fts, vector: f.vector } }));
}
