import { sql, type SQL } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import type { MemoryRow } from "../../contracts/memory";
import type { Memory, MemoryKind } from "../../db/schema";
import type { Env } from "../../env";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { Actor } from "../billing/metering";
import { embedderFor } from "../embeddings";
import { meterEmbedding } from "../embeddings/metering";
import { porterStem, words } from "../retrieval/tokenize";
import { dedupeKey, graphOf, matchWords, similarity, type GraphPart } from "./rules";
import type { MemorySpace } from "./settings";

export type { MemoryRow };

/**
 * Memories: writing (restatements update in place), deleting and forgetting.
 * Lists and the graph are in lists.ts, recall in recall.ts.
 */

/** At most this many memories per subject and space: the least recently updated go first. */
export const MAX_MEMORIES_PER_SPACE = 1000;
/** Two memories whose content words overlap this much (Jaccard) are the same memory restated. */
export const RESTATEMENT_SIMILARITY = 0.75;
/** FTS candidates read per lookup (restatements, forgetting, recall). */
export const FTS_CANDIDATES = 50;

/** FTS5 expression: the space's memories holding any of the terms. */
export const matchExpression = (scopeKey: string, terms: string[]) =>
  `scope_key : "${scopeKey.replace(/[^a-z0-9]/g, "")}" AND content : (${terms.map((t) => `"${t}"`).join(" OR ")})`;

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

export function fromRow(r: MemoryRow): Memory {
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
