import { sql, type SQL } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import type { Memory, MemoryKind } from "../../db/schema";
import type { Env } from "../../env";
import { retrievalConfig } from "../../lib/config";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { Actor } from "../billing/metering";
import { embedderFor } from "../embeddings";
import { meterEmbedding } from "../embeddings/metering";
import { porterStem, words } from "../retrieval/tokenize";
import { dedupeKey, graphOf, matchWords, similarity, type GraphPart } from "./rules";
import type { MemorySpace } from "./settings";

/**
 * Memories: writing (restatements update in place), deleting, forgetting,
 * listing, the graph, and recall — lexical (FTS5 over the subject's memory
 * space, BM25 with that space's statistics) and vector (the configured
 * embedder; vectors stored on the row, cosine over the space), fused by
 * weighted reciprocal rank fusion as document retrieval does
 * (services/retrieval/search.ts).
 */

/** At most this many memories per subject and space: the least recently updated go first. */
export const MAX_MEMORIES_PER_SPACE = 1000;
/** Two memories whose content words overlap this much (Jaccard) are the same memory restated. */
export const RESTATEMENT_SIMILARITY = 0.75;
/** Memories recalled into a turn. */
export const RECALL_LIMIT = 3;
/** Lexical hits weaker than this share of the best one are not recalled (one shared word among many). */
const RELATIVE_CUTOFF = 0.5;
/** A memory found only by the vector leg is recalled at this cosine or above (learned embedding models only). */
const VECTOR_ONLY_MIN = 0.45;
const FTS_CANDIDATES = 50;
const BM25_K1 = 1.2;
const BM25_B = 0.75;

export function publicMemory(m: Memory) {
  return {
    id: m.id,
    subject_id: m.subjectId,
    content: m.content,
    kind: m.kind,
    knowledge_base_id: m.knowledgeBaseId,
    source_chat_id: m.sourceChatId,
    source_message_id: m.sourceMessageId,
    entities: m.entities,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
  };
}

interface MemoryRow {
  seq: number;
  id: string;
  organization_id: string;
  tenant_id: string;
  knowledge_base_id: string | null;
  subject_id: string;
  scope_key: string;
  kind: MemoryKind;
  content: string;
  dedupe_key: string;
  entities: string;
  embedding: string | null;
  embedding_model: string | null;
  source_chat_id: string | null;
  source_message_id: string | null;
  created_at: string;
  updated_at: string;
}

function fromRow(r: MemoryRow): Memory {
  let entities: string[] = [];
  try {
    entities = JSON.parse(r.entities);
  } catch {
    /* stored by us; never malformed */
  }
  return {
    seq: r.seq,
    id: r.id,
    organizationId: r.organization_id,
    tenantId: r.tenant_id,
    knowledgeBaseId: r.knowledge_base_id,
    subjectId: r.subject_id,
    scopeKey: r.scope_key,
    kind: r.kind,
    content: r.content,
    dedupeKey: r.dedupe_key,
    entities,
    embedding: r.embedding,
    embeddingModel: r.embedding_model,
    sourceChatId: r.source_chat_id,
    sourceMessageId: r.source_message_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

// ---- Writing ----------------------------------------------------------------

export interface WriteInput {
  content: string;
  kind: MemoryKind;
  /** Entities and relations from a model; rules are used when absent. */
  graph?: GraphPart;
  sourceChatId: string | null;
  sourceMessageId: string | null;
}

export interface WriteContext {
  env: Env;
  db: Database;
  actor?: Actor | null;
}

async function embedOne(ctx: WriteContext, space: MemorySpace, text: string): Promise<{ vector: number[]; model: string } | null> {
  try {
    let tokens = 0;
    const embedder = embedderFor(ctx.env, { onUsage: (t) => (tokens += t) });
    const [v] = await embedder.embed([text], "document");
    await meterEmbedding(ctx.db, ctx.env, { organizationId: space.organizationId, tenantId: space.tenantId, model: embedder.model, tokens, actor: ctx.actor });
    return { vector: v.map((x) => Math.round(x * 1e5) / 1e5), model: embedder.model };
  } catch (e) {
    // The memory is still found by full text when the embedding provider is unavailable.
    console.warn("memory embedding unavailable; full-text only:", e);
    return null;
  }
}

/** The memory a new one restates: same key, or nearly the same words. */
async function restated(db: Database, space: MemorySpace, content: string, key: string): Promise<MemoryRow | null> {
  const same = await db.get<MemoryRow>(sql`SELECT * FROM memories WHERE scope_key = ${space.scopeKey} AND dedupe_key = ${key} LIMIT 1`);
  if (same) return same;
  const terms = matchWords(content);
  if (!terms.length) return null;
  const rows = await db.all<MemoryRow>(sql`
    SELECT m.* FROM (
      SELECT rowid FROM memories_fts WHERE memories_fts MATCH ${matchExpression(space.scopeKey, terms)} ORDER BY rank LIMIT 20
    ) f CROSS JOIN memories m ON m.seq = f.rowid WHERE m.scope_key = ${space.scopeKey}`);
  let best: MemoryRow | null = null;
  let bestSim = 0;
  for (const r of rows) {
    const s = similarity(r.content, content);
    if (s >= RESTATEMENT_SIMILARITY && s > bestSim) [best, bestSim] = [r, s];
  }
  return best;
}

/** Links a memory to its entities and relations, replacing what it had (nodes left without memories go, by trigger). */
function graphStatements(space: MemorySpace, memoryId: string, graph: GraphPart, now: string): SQL[] {
  const stmts: SQL[] = [];
  const keyOf = (name: string) => name.trim().toLowerCase();
  const names = new Map<string, { name: string; type: string }>();
  for (const e of graph.entities) if (e.name.trim()) names.set(keyOf(e.name), { name: e.name.trim().slice(0, 80), type: (e.type || "concept").slice(0, 40) });
  for (const r of graph.relations) {
    for (const n of [r.source, r.target]) if (n.trim() && !names.has(keyOf(n))) names.set(keyOf(n), { name: n.trim().slice(0, 80), type: "concept" });
  }
  const keys = [...names.keys()].map((k) => k.slice(0, 80));
  for (const [key, e] of names) {
    stmts.push(sql`INSERT INTO memory_entities (id, tenant_id, knowledge_base_id, scope_key, name, name_key, type, created_at)
      VALUES (${newId("ent")}, ${space.tenantId}, ${space.knowledgeBaseId}, ${space.scopeKey}, ${e.name}, ${key.slice(0, 80)}, ${e.type}, ${now})
      ON CONFLICT (scope_key, name_key) DO NOTHING`);
    stmts.push(sql`INSERT OR IGNORE INTO memory_entity_links (memory_id, entity_id)
      SELECT ${memoryId}, id FROM memory_entities WHERE scope_key = ${space.scopeKey} AND name_key = ${key.slice(0, 80)}`);
  }
  stmts.push(sql`DELETE FROM memory_relations WHERE memory_id = ${memoryId}`);
  for (const r of graph.relations) {
    if (!r.source.trim() || !r.target.trim() || keyOf(r.source) === keyOf(r.target)) continue;
    stmts.push(sql`INSERT INTO memory_relations (id, memory_id, source_entity_id, target_entity_id, relation)
      SELECT ${newId("rel")}, ${memoryId}, s.id, t.id, ${(r.relation || "related to").slice(0, 80)}
      FROM memory_entities s, memory_entities t
      WHERE s.scope_key = ${space.scopeKey} AND s.name_key = ${keyOf(r.source).slice(0, 80)}
        AND t.scope_key = ${space.scopeKey} AND t.name_key = ${keyOf(r.target).slice(0, 80)}`);
  }
  stmts.push(sql`DELETE FROM memory_entity_links WHERE memory_id = ${memoryId}
    AND entity_id NOT IN (SELECT id FROM memory_entities WHERE scope_key = ${space.scopeKey}
      AND name_key IN (SELECT value FROM json_each(${JSON.stringify(keys)})))`);
  return stmts;
}

/**
 * Stores a memory in a space, or updates the one it restates in place (same
 * id, new content, new source). Returns the memory and whether it is new.
 */
export async function writeMemory(ctx: WriteContext, space: MemorySpace, input: WriteInput): Promise<{ memory: Memory; created: boolean }> {
  const { db } = ctx;
  const content = input.content.trim();
  const key = dedupeKey(content);
  const graph = input.graph ?? graphOf(content);
  const entityNames = [...new Set(graph.entities.map((e) => e.name.trim()).filter(Boolean))].slice(0, 50);
  const existing = await restated(db, space, content, key);
  const embedding = await embedOne(ctx, space, content);
  const now = nowIso();
  const id = existing?.id ?? newId("mry");
  const vector = embedding ? JSON.stringify(embedding.vector) : null;
  const model = embedding?.model ?? null;
  const write = existing
    ? sql`UPDATE memories SET content = ${content}, kind = ${input.kind}, dedupe_key = ${key}, entities = ${JSON.stringify(entityNames)},
        embedding = ${vector}, embedding_model = ${model}, source_chat_id = ${input.sourceChatId}, source_message_id = ${input.sourceMessageId},
        updated_at = ${now} WHERE id = ${id}`
    : sql`INSERT INTO memories (id, organization_id, tenant_id, knowledge_base_id, subject_id, scope_key, kind, content, dedupe_key,
        entities, embedding, embedding_model, source_chat_id, source_message_id, created_at, updated_at)
        VALUES (${id}, ${space.organizationId}, ${space.tenantId}, ${space.knowledgeBaseId}, ${space.subjectId}, ${space.scopeKey},
          ${input.kind}, ${content}, ${key}, ${JSON.stringify(entityNames)}, ${vector}, ${model}, ${input.sourceChatId},
          ${input.sourceMessageId}, ${now}, ${now})`;
  const evict = existing
    ? []
    : [
        sql`DELETE FROM memories WHERE id IN (SELECT id FROM memories WHERE scope_key = ${space.scopeKey}
          ORDER BY updated_at DESC, seq DESC LIMIT -1 OFFSET ${MAX_MEMORIES_PER_SPACE})`,
      ];
  await batchSql(db, [write, ...graphStatements(space, id, graph, now), ...evict]);
  const row = await db.get<MemoryRow>(sql`SELECT * FROM memories WHERE id = ${id}`);
  return { memory: fromRow(row!), created: !existing };
}

/** Fills in the source message of memories written during a turn before its user message was known. */
export async function setSourceMessage(db: Database, chatId: string, messageId: string): Promise<void> {
  await db.run(sql`UPDATE memories SET source_message_id = ${messageId}
    WHERE source_chat_id = ${chatId} AND source_message_id IS NULL
      AND EXISTS (SELECT 1 FROM messages WHERE id = ${messageId} AND chat_id = ${chatId})`);
}

export async function deleteMemory(db: Database, id: string): Promise<void> {
  await db.run(sql`DELETE FROM memories WHERE id = ${id}`);
}

export async function getMemory(db: Database, id: string): Promise<Memory | null> {
  const row = await db.get<MemoryRow>(sql`SELECT * FROM memories WHERE id = ${id}`);
  return row ? fromRow(row) : null;
}

/**
 * "forget …": deletes the memories of the space that the words point at —
 * every memory holding most of the phrase's content words (at least 60%),
 * or else the single best match holding at least half. Returns what went.
 */
export async function forgetMatching(db: Database, space: MemorySpace, phrase: string): Promise<Memory[]> {
  const terms = matchWords(phrase);
  if (!terms.length) return [];
  const rows = await db.all<MemoryRow>(sql`
    SELECT m.* FROM (
      SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ${matchExpression(space.scopeKey, terms)} ORDER BY rank LIMIT ${FTS_CANDIDATES}
    ) f CROSS JOIN memories m ON m.seq = f.rowid WHERE m.scope_key = ${space.scopeKey} ORDER BY f.rank`);
  const wanted = new Set(terms.map(porterStem));
  const coverage = (r: MemoryRow) => {
    const have = new Set(words(r.content).map(porterStem));
    let n = 0;
    for (const s of wanted) if (have.has(s)) n++;
    return n / wanted.size;
  };
  let doomed = rows.filter((r) => coverage(r) >= 0.6);
  if (!doomed.length) {
    const best = rows.find((r) => coverage(r) >= 0.5);
    doomed = best ? [best] : [];
  }
  if (doomed.length) await batchSql(db, doomed.map((r) => sql`DELETE FROM memories WHERE id = ${r.id}`));
  return doomed.map(fromRow);
}

// ---- Lists and the graph ----------------------------------------------------

export interface MemoryFilter {
  tenantId: string;
  /** null: durable memories (no knowledge base). */
  knowledgeBaseId: string | null;
  /** Only this subject (the caller's own, or a filter). */
  subjectId?: string | null;
  q?: string | null;
}

function filterSql(f: MemoryFilter): SQL {
  return sql`m.tenant_id = ${f.tenantId}
    AND ${f.knowledgeBaseId ? sql`m.knowledge_base_id = ${f.knowledgeBaseId}` : sql`m.knowledge_base_id IS NULL`}
    ${f.subjectId != null ? sql`AND m.subject_id = ${f.subjectId}` : sql``}`;
}

/** `q`: every content word must appear (quoted tokens only: no FTS5 syntax reaches MATCH). */
function qExpression(q: string): string | null {
  const terms = matchWords(q);
  return terms.length ? terms.map((t) => `"${t}"`).join(" AND ") : null;
}

export async function listMemories(db: Database, f: MemoryFilter, page: { limit: number; offset: number }) {
  const q = f.q?.trim() ? qExpression(f.q) : null;
  if (f.q?.trim() && !q) return { rows: [] as Memory[], total: 0 };
  const from = q
    ? sql`(SELECT rowid FROM memories_fts WHERE memories_fts MATCH ${`content : (${q})`}) f CROSS JOIN memories m ON m.seq = f.rowid`
    : sql`memories m`;
  const where = filterSql(f);
  const [rows, total] = await Promise.all([
    db.all<MemoryRow>(sql`SELECT m.* FROM ${from} WHERE ${where} ORDER BY m.updated_at DESC, m.seq DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
    db.get<{ n: number }>(sql`SELECT count(*) AS n FROM ${from} WHERE ${where}`),
  ]);
  return { rows: rows.map(fromRow), total: total?.n ?? 0 };
}

export interface MemoryGraph {
  nodes: Array<{ id: string; name: string; type: string; memory_count: number }>;
  edges: Array<{ id: string; source: string; target: string; relation: string; memory_id: string }>;
}

export const EMPTY_GRAPH: MemoryGraph = { nodes: [], edges: [] };
const MAX_GRAPH_MEMORIES = 2000;

/** Nodes and edges of the memories the filter selects (the same memories a list would show). */
export async function memoryGraph(db: Database, f: Omit<MemoryFilter, "q">): Promise<MemoryGraph> {
  const selected = sql`SELECT m.id FROM memories m WHERE ${filterSql(f)} ORDER BY m.updated_at DESC LIMIT ${MAX_GRAPH_MEMORIES}`;
  const [nodes, edges] = await Promise.all([
    db.all<{ id: string; name: string; type: string; memory_count: number }>(sql`
      SELECT e.id, e.name, e.type, count(*) AS memory_count
      FROM memory_entity_links l CROSS JOIN memory_entities e ON e.id = l.entity_id
      WHERE l.memory_id IN (${selected})
      GROUP BY e.id ORDER BY memory_count DESC, e.name`),
    db.all<{ id: string; source: string; target: string; relation: string; memory_id: string }>(sql`
      SELECT r.id, r.source_entity_id AS source, r.target_entity_id AS target, r.relation, r.memory_id
      FROM memory_relations r WHERE r.memory_id IN (${selected}) ORDER BY r.memory_id, r.id`),
  ]);
  return { nodes, edges };
}

// ---- Recall -----------------------------------------------------------------

const matchExpression = (scopeKey: string, terms: string[]) =>
  `scope_key : "${scopeKey.replace(/[^a-z0-9]/g, "")}" AND content : (${terms.map((t) => `"${t}"`).join(" OR ")})`;

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

/**
 * The memories of a space most relevant to `query`, best first. Lexical: FTS5
 * finds the space's memories holding any content word of the query, scored by
 * BM25 with the space's own statistics; weak hits (one shared word among
 * many) are cut. Vector: the query's embedding against the space's stored
 * vectors of the same model. Fused by weighted reciprocal rank fusion with the
 * weights document retrieval uses.
 */
export async function recallMemories(
  ctx: WriteContext,
  space: Pick<MemorySpace, "scopeKey" | "organizationId" | "tenantId">,
  query: string,
  limit = RECALL_LIMIT,
): Promise<RecalledMemory[]> {
  const { db, env } = ctx;
  const terms = matchWords(query);
  const config = retrievalConfig(env);

  const lexical = async () => {
    if (!terms.length) return [] as Array<{ row: MemoryRow; score: number }>;
    const [cands, total] = await batchSql(db, [
      sql`SELECT m.* FROM (
            SELECT rowid, rank FROM memories_fts WHERE memories_fts MATCH ${matchExpression(space.scopeKey, terms)} ORDER BY rank LIMIT ${FTS_CANDIDATES}
          ) f CROSS JOIN memories m ON m.seq = f.rowid WHERE m.scope_key = ${space.scopeKey}`,
      sql`SELECT count(*) AS n FROM memories WHERE scope_key = ${space.scopeKey}`,
    ]);
    const rows = (cands.results ?? []) as MemoryRow[];
    const n = Math.max(((total.results?.[0] as { n: number } | undefined)?.n ?? rows.length), rows.length);
    const stems = [...new Set(terms.map(porterStem))];
    const docs = rows.map((r) => {
      const tf = new Map<string, number>();
      const ws = words(r.content).map(porterStem);
      for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
      return { row: r, tf, len: ws.length };
    });
    const avg = docs.reduce((s, d) => s + d.len, 0) / (docs.length || 1) || 1;
    const df = new Map(stems.map((s) => [s, docs.filter((d) => d.tf.has(s)).length]));
    const scored = docs.map((d) => {
      let score = 0;
      for (const s of stems) {
        const f = d.tf.get(s) ?? 0;
        if (!f) continue;
        const idf = Math.log(1 + (n - df.get(s)! + 0.5) / (df.get(s)! + 0.5));
        score += (idf * f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * d.len) / avg));
      }
      return { row: d.row, score };
    });
    scored.sort((a, b) => b.score - a.score);
    const best = scored[0]?.score ?? 0;
    return scored.filter((s) => s.score > 0 && s.score >= best * RELATIVE_CUTOFF);
  };

  const vector = async () => {
    if (!query.trim()) return { hits: [] as Array<{ row: MemoryRow; score: number }>, provider: "hash" };
    try {
      let tokens = 0;
      const embedder = embedderFor(env, { onUsage: (t) => (tokens += t) });
      const rows = await db.all<MemoryRow>(sql`SELECT * FROM memories WHERE scope_key = ${space.scopeKey}
        AND embedding_model = ${embedder.model} ORDER BY updated_at DESC LIMIT ${MAX_MEMORIES_PER_SPACE}`);
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
  };

  const [lex, vec] = await Promise.all([lexical(), vector()]);
  const vectorWeight = config.vectorWeight(vec.provider);
  const fused = new Map<string, { row: MemoryRow; score: number; fts: number | null; vector: number | null }>();
  lex.forEach((h, i) => fused.set(h.row.id, { row: h.row, score: config.lexicalWeight / (config.rrfK + i + 1), fts: h.score, vector: null }));
  vec.hits.forEach((h, i) => {
    const cur = fused.get(h.row.id);
    if (cur) {
      cur.score += vectorWeight / (config.rrfK + i + 1);
      cur.vector = h.score;
    } else if (vec.provider !== "hash" && h.score >= VECTOR_ONLY_MIN) {
      // Without a shared word, only a learned model's close match is a memory worth recalling.
      fused.set(h.row.id, { row: h.row, score: vectorWeight / (config.rrfK + i + 1), fts: null, vector: h.score });
    }
  });
  return [...fused.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((f) => ({ memory: fromRow(f.row), score: f.score, scores: { fts: f.fts, vector: f.vector } }));
}
