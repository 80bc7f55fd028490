import { and, eq, sql } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import { chunks as chunksTable, knowledgeBases, type DocumentRow, type KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { yieldToEventLoop } from "../../lib/slices";
import { nowIso } from "../../lib/time";
import { embedderFor, type Embedder } from "../embeddings";
import { meterEmbedding } from "../embeddings/metering";
import type { Chunk } from "../parsing/chunker";
import { vectorIndexFor } from "../vector-index";
import { PermanentIngestError } from "./errors";

// Indexing a document's new generation: its chunk rows, then their vectors in the knowledge base's embedding space.

/** Rows per chunk insert statement (one JSON parameter carries them all). */
const INSERT_BATCH = 50;
/**
 * Statements per D1 batch: one batch runs as one transaction in D1, which
 * (locally, in the same process) serves nothing else meanwhile; a 1 MB
 * document's chunks in one batch held it for up to 250 ms.
 */
const STATEMENTS_PER_BATCH = 2;

/** Chunk rows of the new generation, then their vectors; every provider call that succeeded is charged. */
export async function indexChunks(env: Env, db: Database, kb: KnowledgeBase, doc: DocumentRow, generation: number, chunks: Chunk[]): Promise<string[]> {
  let embeddingTokens = 0;
  const embedder = embedderFor(env, { onUsage: (t) => (embeddingTokens += t) });
  await ensureEmbeddingSpace(db, kb, embedder);
  await insertChunks(db, doc, generation, doc.filename, chunks);
  try {
    return await embedPending(env, db, kb, doc, generation, embedder);
  } finally {
    // Charged even if a later batch failed.
    await meterEmbedding(db, env, { organizationId: doc.organizationId, tenantId: doc.tenantId, model: embedder.model, tokens: embeddingTokens });
  }
}

function embeddingInput(title: string, c: { heading: string; body: string }): string {
  return `${title}\n${c.heading}\n\n${c.body}`.slice(0, 8000);
}

/**
 * Records the knowledge base's embedding space on first indexing and refuses
 * a different one: vectors of two models are not comparable. A knowledge base
 * with nothing searchable left may switch to the configured model.
 */
export async function ensureEmbeddingSpace(db: Database, kb: KnowledgeBase, embedder: Embedder): Promise<void> {
  const dims = embedder.dimensions || null;
  await db.run(sql`
    UPDATE knowledge_bases SET embedding_model = ${embedder.model}, embedding_dimensions = ${dims}, updated_at = ${nowIso()},
      index_version = index_version + 1
    WHERE id = ${kb.id} AND (embedding_model IS NULL OR (embedding_model <> ${embedder.model} AND NOT EXISTS (
      SELECT 1 FROM chunks c JOIN documents d ON d.id = c.document_id
      WHERE c.knowledge_base_id = ${kb.id} AND c.generation = d.index_generation AND d.status <> 'deleted')))`);
  if (dims) {
    await db.run(sql`
      UPDATE knowledge_bases SET embedding_dimensions = ${dims}
      WHERE id = ${kb.id} AND embedding_model = ${embedder.model} AND embedding_dimensions IS NULL`);
  }
  const current = await db.select().from(knowledgeBases).where(eq(knowledgeBases.id, kb.id)).get();
  if (!current) throw new PermanentIngestError("The knowledge base no longer exists");
  if (current.embeddingModel !== embedder.model || (dims && current.embeddingDimensions && current.embeddingDimensions !== dims)) {
    throw new PermanentIngestError(
      `This knowledge base is indexed with the embedding model ${current.embeddingModel} (${current.embeddingDimensions ?? "?"} dimensions) ` +
        `but the service is configured for ${embedder.model} (${dims ?? "?"} dimensions); vectors of different models cannot be mixed. ` +
        `Delete the knowledge base's documents and upload them again, or use a new knowledge base.`,
    );
  }
}

async function insertChunks(db: Database, doc: DocumentRow, generation: number, title: string, chunks: Chunk[]) {
  const now = nowIso();
  const statements = [];
  for (let i = 0; i < chunks.length; i += INSERT_BATCH) {
    const rows = chunks.slice(i, i + INSERT_BATCH).map((c) => ({
      id: `${doc.id}:${generation}:${c.ordinal}`,
      ordinal: c.ordinal,
      heading: c.heading,
      body: c.body,
      page: c.page,
      tokens: c.tokens,
    }));
    // ON CONFLICT DO NOTHING: a redelivered attempt of the same generation adds nothing.
    statements.push(
      sql`
        INSERT INTO chunks (id, document_id, knowledge_base_id, tenant_id, generation, ordinal, title, heading, body, page, token_count, created_at)
        SELECT json_extract(value, '$.id'), ${doc.id}, ${doc.knowledgeBaseId}, ${doc.tenantId}, ${generation},
          json_extract(value, '$.ordinal'), ${title}, json_extract(value, '$.heading'), json_extract(value, '$.body'),
          json_extract(value, '$.page'), json_extract(value, '$.tokens'), ${now}
        FROM json_each(${JSON.stringify(rows)}) WHERE true
        ON CONFLICT(id) DO NOTHING`,
    );
  }
  // Separate batches are safe: inserts are idempotent and the generation is not searchable before the swap.
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) {
    await batchSql(db, statements.slice(i, i + STATEMENTS_PER_BATCH));
    await yieldToEventLoop();
  }
}

/**
 * Embeds the chunks of `generation` not yet embedded, batch by batch, and puts
 * their vectors in the index. Returns the ids written to the index.
 */
async function embedPending(env: Env, db: Database, kb: KnowledgeBase, doc: DocumentRow, generation: number, embedder: Embedder) {
  const index = vectorIndexFor(env);
  const pending = await db
    .select({ id: chunksTable.id, heading: chunksTable.heading, body: chunksTable.body, title: chunksTable.title })
    .from(chunksTable)
    .where(and(eq(chunksTable.documentId, doc.id), eq(chunksTable.generation, generation), eq(chunksTable.embedded, false)))
    .orderBy(chunksTable.ordinal)
    .all();
  let spaceChecked = false;
  const written: string[] = [];
  for (let i = 0; i < pending.length; i += embedder.maxBatchSize) {
    const batch = pending.slice(i, i + embedder.maxBatchSize);
    // Only this batch is retried on failure: earlier batches are already marked embedded.
    const vectors = await embedder.embed(batch.map((c) => embeddingInput(c.title, c)), "document");
    if (!spaceChecked) {
      await ensureEmbeddingSpace(db, kb, embedder);
      spaceChecked = true;
    }
    await index.upsert(kb.id, batch.map((c, j) => ({ id: c.id, documentId: doc.id, values: vectors[j] })));
    written.push(...batch.map((c) => c.id));
    await db.run(sql`UPDATE chunks SET embedded = 1 WHERE id IN (SELECT value FROM json_each(${JSON.stringify(batch.map((c) => c.id))}))`);
    await yieldToEventLoop();
  }
  return written;
}
