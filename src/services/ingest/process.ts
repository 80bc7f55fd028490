import { and, eq, sql } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import { chunks as chunksTable, documents, knowledgeBases, type DocumentRow, type KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { ingestConfig } from "../../lib/config";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { drainGarbage } from "../documents/cleanup";
import { documentPrefix, getDocument } from "../documents/documents";
import { detectKind, isBinaryKind } from "../documents/types";
import { EmbeddingConfigError, EmbeddingRateLimitError, embedderFor, type Embedder } from "../embeddings";
import { meterEmbedding } from "../embeddings/metering";
import { getKnowledgeBase } from "../knowledge-bases";
import { chunkSections, type Chunk } from "../parsing/chunker";
import { parseDocument, UnparseableDocumentError } from "../parsing";
import { loadDocumentTables } from "../tables/load";
import { vectorIndexFor } from "../vector-index";
import type { ProcessMessage } from "./messages";

/** Attempts per queued document before it is marked failed (API-DECISIONS.md). */
export const MAX_ATTEMPTS = 3;
/** Rows per chunk insert statement (one JSON parameter carries them all). */
const INSERT_BATCH = 50;

/** A failure retrying will not fix: the document fails at once with this message. */
export class PermanentIngestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PermanentIngestError";
  }
}

export type ProcessOutcome =
  | { kind: "processed"; chunkCount: number }
  | { kind: "skipped"; reason: string }
  | { kind: "failed"; error: string }
  | { kind: "retry"; delaySeconds: number; error: string };

const isPermanent = (e: unknown) =>
  e instanceof PermanentIngestError || e instanceof UnparseableDocumentError || e instanceof EmbeddingConfigError;

function describe(e: unknown): string {
  if (e instanceof EmbeddingRateLimitError) return e.message;
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(/\s+/g, " ").slice(0, 500) || "unknown error";
}

/** Exponential backoff: base, base x 4, ... (Retry-After wins when the provider sent one). */
export function retryDelaySeconds(env: Env, attempts: number, e: unknown): number {
  const base = ingestConfig(env).retryBaseSeconds;
  const backoff = base * 4 ** Math.max(0, attempts - 1);
  if (e instanceof EmbeddingRateLimitError && e.retryAfterSeconds !== null) return Math.ceil(Math.max(e.retryAfterSeconds, base));
  return Math.min(backoff, 12 * 60 * 60);
}

/**
 * Handles one `process` message. Idempotent: a message whose seq is not the
 * document's current one, or whose document is already processed/failed at
 * that seq, is acknowledged without work; concurrent or redelivered attempts
 * of the same seq write the same deterministic chunk ids, so nothing is
 * duplicated.
 */
export async function processMessage(env: Env, db: Database, msg: ProcessMessage): Promise<ProcessOutcome> {
  const doc = await getDocument(db, msg.document_id);
  if (!doc) return { kind: "skipped", reason: "document not found" };
  if (doc.ingestSeq !== msg.seq) return { kind: "skipped", reason: `stale message (seq ${msg.seq}, document at ${doc.ingestSeq})` };
  if (doc.status !== "queued" && doc.status !== "processing") return { kind: "skipped", reason: `document is ${doc.status}` };

  if (doc.status === "processing" && doc.attempts >= MAX_ATTEMPTS) {
    // The last attempts never reported back: the Worker running them was
    // stopped (CPU or memory limit), which a further try will not change.
    const error =
      `Processing stopped before finishing, ${doc.attempts} times (the file may be too large or complex to ` +
      `process within the Worker's CPU and memory limits)`;
    await markFailed(db, doc, error);
    return { kind: "failed", error };
  }
  const now = nowIso();
  const claimed = await db
    .update(documents)
    .set({ status: "processing", attempts: sql`${documents.attempts} + 1`, updatedAt: now })
    .where(and(eq(documents.id, doc.id), eq(documents.ingestSeq, msg.seq), sql`${documents.status} IN ('queued', 'processing')`))
    .returning()
    .get();
  if (!claimed) return { kind: "skipped", reason: "document changed before processing started" };

  try {
    return await runPipeline(env, db, claimed);
  } catch (e) {
    const message = describe(e);
    if (isPermanent(e)) {
      await markFailed(db, claimed, message);
      return { kind: "failed", error: message };
    }
    console.warn(`processing ${claimed.id} (attempt ${claimed.attempts}) failed:`, e);
    if (claimed.attempts >= MAX_ATTEMPTS) {
      const final = `Processing failed after ${MAX_ATTEMPTS} attempts: ${message}`;
      await markFailed(db, claimed, final);
      return { kind: "failed", error: final };
    }
    const delaySeconds = retryDelaySeconds(env, claimed.attempts, e);
    await db
      .update(documents)
      .set({
        status: "queued",
        error: `Attempt ${claimed.attempts} of ${MAX_ATTEMPTS} failed (${message}); retrying in ${delaySeconds} s`,
        updatedAt: nowIso(),
      })
      .where(and(eq(documents.id, claimed.id), eq(documents.ingestSeq, claimed.ingestSeq), eq(documents.status, "processing")));
    return { kind: "retry", delaySeconds, error: message };
  }
}

/** Final failure: the document stays visible, deletable and reprocessable; the previous index (if any) keeps serving. */
export async function markFailed(db: Database, doc: DocumentRow, error: string): Promise<void> {
  await db
    .update(documents)
    .set({ status: "failed", error, updatedAt: nowIso() })
    .where(and(eq(documents.id, doc.id), eq(documents.ingestSeq, doc.ingestSeq), sql`${documents.status} IN ('queued', 'processing')`));
  // This attempt's partial chunks are never searchable; remove them now.
  await db.run(sql`
    DELETE FROM chunks WHERE document_id = ${doc.id} AND generation = ${doc.ingestSeq}
      AND generation <> (SELECT index_generation FROM documents WHERE id = ${doc.id})`);
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
    UPDATE knowledge_bases SET embedding_model = ${embedder.model}, embedding_dimensions = ${dims}, updated_at = ${nowIso()}
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
  await batchSql(db, statements);
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
  }
  return written;
}

/** Stores the extracted text of a binary source as its derived text document (one per source). */
async function storeDerivedText(env: Env, db: Database, kb: KnowledgeBase, doc: DocumentRow, markdown: string) {
  const key = `${documentPrefix(kb, doc.id)}extracted.md`;
  const bytes = new TextEncoder().encode(markdown);
  await env.BUCKET.put(key, bytes, { httpMetadata: { contentType: "text/markdown; charset=utf-8" }, customMetadata: { document_id: doc.id } });
  const now = nowIso();
  await batchSql(db, [
    sql`
      INSERT INTO documents (id, organization_id, environment_id, tenant_id, knowledge_base_id, parent_document_id, filename,
        mime_type, size_bytes, status, s3_key, source_url, created_by, created_at, updated_at, processed_at)
      VALUES (${newId("doc")}, ${doc.organizationId}, ${doc.environmentId}, ${doc.tenantId}, ${doc.knowledgeBaseId}, ${doc.id},
        ${`${doc.filename}.md`.slice(0, 255)}, 'text/markdown', ${bytes.byteLength}, 'processed', ${key}, ${doc.sourceUrl},
        ${doc.createdBy}, ${now}, ${now}, ${now})
      ON CONFLICT DO NOTHING`,
    sql`
      UPDATE documents SET size_bytes = ${bytes.byteLength}, updated_at = ${now}, processed_at = ${now}
      WHERE parent_document_id = ${doc.id} AND status <> 'deleted'`,
  ]);
}

async function runPipeline(env: Env, db: Database, doc: DocumentRow): Promise<ProcessOutcome> {
  const generation = doc.ingestSeq;
  const kb = await getKnowledgeBase(db, doc.knowledgeBaseId);
  if (!kb) return { kind: "skipped", reason: "knowledge base deleted" };
  const kind = detectKind(doc.mimeType, doc.filename);
  if (!kind) throw new PermanentIngestError(`Files of type '${doc.mimeType}' cannot be processed`);

  const object = await env.BUCKET.get(doc.s3Key);
  if (!object) throw new PermanentIngestError("The stored file is missing; delete this document and upload it again");
  const bytes = new Uint8Array(await object.arrayBuffer());
  const parsed = await parseDocument(kind, bytes);
  const chunks = chunkSections(parsed.sections);
  if (!chunks.length) throw new PermanentIngestError("The file contains no text to index");

  const written = await indexChunks(env, db, kb, doc, generation, chunks);
  if (isBinaryKind(kind)) await storeDerivedText(env, db, kb, doc, parsed.markdown);
  // Connected data: CSV, XLSX and JSON documents also become tables (replacing this document's earlier ones).
  await loadDocumentTables(env, doc, kind, bytes);

  // The swap: one statement makes the new generation the one search reads.
  const now = nowIso();
  const flipped = await db.run(sql`
    UPDATE documents SET status = 'processed', index_generation = ${generation}, chunk_count = ${chunks.length},
      page_count = ${parsed.pageCount ?? null}, error = NULL, processed_at = ${now}, updated_at = ${now}
    WHERE id = ${doc.id} AND ingest_seq = ${generation} AND status = 'processing'`);
  if (!flipped.meta.changes) return afterLostSwap(env, db, kb.id, doc.id, generation, written);
  // Older generations are no longer read; their vectors go through the garbage list.
  await db.run(sql`DELETE FROM chunks WHERE document_id = ${doc.id} AND generation <> ${generation}`);
  try {
    await drainGarbage(env, db, { knowledgeBaseId: kb.id, maxRows: 2000 });
  } catch (e) {
    console.warn("garbage drain after processing failed (housekeeping will finish it):", e);
  }
  return { kind: "processed", chunkCount: chunks.length };
}

/** Chunk rows of the new generation, then their vectors; every provider call that succeeded is charged. */
async function indexChunks(env: Env, db: Database, kb: KnowledgeBase, doc: DocumentRow, generation: number, chunks: ReturnType<typeof chunkSections>): Promise<string[]> {
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

/**
 * The swap did not happen: a concurrent delivery finished first (its result stands), or the document was
 * deleted or queued again meanwhile, and this attempt's chunks and vectors must not linger.
 */
async function afterLostSwap(env: Env, db: Database, kbId: string, docId: string, generation: number, written: string[]): Promise<ProcessOutcome> {
  const current = await getDocument(db, docId);
  if (current && current.status !== "deleted" && current.indexGeneration === generation) {
    return { kind: "skipped", reason: "already processed by a concurrent delivery" };
  }
  const now = nowIso();
  await batchSql(db, [
    sql`DELETE FROM chunks WHERE document_id = ${docId} AND generation = ${generation}
      AND generation <> (SELECT index_generation FROM documents WHERE id = ${docId})`,
    sql`UPDATE documents SET status = 'deleted', deleted_at = ${now}, updated_at = ${now}
      WHERE parent_document_id = ${docId} AND status <> 'deleted'
        AND (SELECT status FROM documents WHERE id = ${docId}) = 'deleted'`,
  ]);
  // Vectors written after a concurrent cleanup ran have no chunk row left to record them on the garbage
  // list: delete them directly. Generation ids never come back once the document is deleted or queued again.
  try {
    await vectorIndexFor(env).deleteByIds(kbId, written);
    await drainGarbage(env, db, { knowledgeBaseId: kbId, maxRows: 2000 });
  } catch (e) {
    console.warn("cleanup after a concurrent change failed (housekeeping will finish it):", e);
  }
  return { kind: "skipped", reason: "document changed during processing" };
}
