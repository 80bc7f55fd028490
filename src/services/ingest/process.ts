import { and, eq, sql } from "drizzle-orm";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import { documents, type DocumentRow, type KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { ingestConfig } from "../../lib/config";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { drainGarbage } from "../documents/cleanup";
import { documentLeaseHasLapsed, documentLeaseLapsed, documentPrefix, getDocument } from "../documents/documents";
import { detectKind, isBinaryKind } from "../documents/types";
import { EmbeddingConfigError, EmbeddingRateLimitError } from "../embeddings";
import { getKnowledgeBase } from "../knowledge-bases";
import { chunkSections } from "../parsing/chunker";
import { parseDocument, UnparseableDocumentError } from "../parsing";
import { loadDocumentTables } from "../tables/load";
import { vectorIndexFor } from "../vector-index";
import { indexVersionRaised } from "../vector-index/isolate-copies";
import { checkAfter, heartbeat, HEARTBEAT_MS, LEASE_MS, leaseUntil } from "../recovery/leases";
import { wakeSupervisor } from "../recovery/supervisor";
import { PermanentIngestError } from "./errors";
import { indexChunks } from "./index-chunks";
import { MAX_ATTEMPTS, type ProcessMessage } from "./messages";

export { MAX_ATTEMPTS };

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
 * that seq, is acknowledged without work; so is a duplicate delivery while
 * another attempt holds the document's lease. Attempts of the same seq write
 * the same deterministic chunk ids, so nothing is ever duplicated.
 */
export async function processMessage(env: Env, db: Database, msg: ProcessMessage, opts: { redelivered?: boolean } = {}): Promise<ProcessOutcome> {
  const doc = await getDocument(db, msg.document_id);
  if (!doc) return { kind: "skipped", reason: "document not found" };
  if (doc.ingestSeq !== msg.seq) return { kind: "skipped", reason: `stale message (seq ${msg.seq}, document at ${doc.ingestSeq})` };
  if (doc.status !== "queued" && doc.status !== "processing") return { kind: "skipped", reason: `document is ${doc.status}` };

  const now = nowIso();
  // A redelivery means this message's earlier delivery is over (its worker died): its lease is void.
  const takeOver = opts.redelivered === true;
  if (doc.status === "processing") {
    // Another delivery holds the lease and is working: this duplicate leaves it alone (if that worker dies,
    // the supervisor re-queues the document when the lease lapses).
    if (!takeOver && !documentLeaseHasLapsed(doc, Date.parse(now))) return { kind: "skipped", reason: "another attempt holds the document's lease" };
    if (doc.attempts >= MAX_ATTEMPTS) {
      // The last attempts never reported back: the Worker running them was stopped (CPU or memory limit),
      // which a further try will not change.
      const error =
        `Processing stopped before finishing, ${doc.attempts} times (the file may be too large or complex to ` +
        `process within the Worker's CPU and memory limits)`;
      await markFailed(db, doc, error);
      return { kind: "failed", error };
    }
  }
  const claimed = await claim(db, msg, now, takeOver);
  if (!claimed) return { kind: "skipped", reason: "document changed before processing started" };

  // The lease is renewed while the pipeline runs; a worker that dies stops renewing it.
  const stopBeating = heartbeat(`document ${claimed.id}`, HEARTBEAT_MS, () =>
    db.run(sql`
      UPDATE documents SET lease_expires_at = ${leaseUntil()}
      WHERE id = ${claimed.id} AND ingest_seq = ${claimed.ingestSeq} AND status = 'processing'`),
  );
  try {
    return await runPipeline(env, db, claimed);
  } catch (e) {
    return await afterFailedAttempt(env, db, claimed, e);
  } finally {
    stopBeating();
  }
}

/** queued (or processing whose lease lapsed, or taken over) -> processing, with a new attempt and a fresh lease. */
async function claim(db: Database, msg: ProcessMessage, now: string, takeOver: boolean): Promise<DocumentRow | undefined> {
  return db
    .update(documents)
    .set({ status: "processing", attempts: sql`${documents.attempts} + 1`, updatedAt: now, leaseExpiresAt: leaseUntil(Date.parse(now)) })
    .where(
      and(
        eq(documents.id, msg.document_id),
        eq(documents.ingestSeq, msg.seq),
        takeOver
          ? sql`${documents.status} IN ('queued', 'processing')`
          : sql`(${documents.status} = 'queued' OR (${documents.status} = 'processing' AND ${documentLeaseLapsed(now)}))`,
      ),
    )
    .returning()
    .get();
}

/** A failed attempt: the document fails (permanent error, or out of attempts) or is queued for a retry. */
async function afterFailedAttempt(env: Env, db: Database, claimed: DocumentRow, e: unknown): Promise<ProcessOutcome> {
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
      // The retry message arrives after its delay: the lease covers the wait.
      leaseExpiresAt: leaseUntil(Date.now(), delaySeconds * 1000),
    })
    .where(and(eq(documents.id, claimed.id), eq(documents.ingestSeq, claimed.ingestSeq), eq(documents.status, "processing")));
  await wakeSupervisor(env, checkAfter(Date.now() + delaySeconds * 1000 + LEASE_MS));
  return { kind: "retry", delaySeconds, error: message };
}

/** Final failure: the document stays visible, deletable and reprocessable; the previous index (if any) keeps serving. */
export async function markFailed(db: Database, doc: DocumentRow, error: string): Promise<void> {
  await db
    .update(documents)
    .set({ status: "failed", error, updatedAt: nowIso(), leaseExpiresAt: null })
    .where(and(eq(documents.id, doc.id), eq(documents.ingestSeq, doc.ingestSeq), sql`${documents.status} IN ('queued', 'processing')`));
  // This attempt's partial chunks are never searchable; remove them now.
  await db.run(sql`
    DELETE FROM chunks WHERE document_id = ${doc.id} AND generation = ${doc.ingestSeq}
      AND generation <> (SELECT index_generation FROM documents WHERE id = ${doc.id})`);
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
  const chunks = await chunkSections(parsed.sections);
  if (!chunks.length) throw new PermanentIngestError("The file contains no text to index");

  const written = await indexChunks(env, db, kb, doc, generation, chunks);
  if (isBinaryKind(kind)) await storeDerivedText(env, db, kb, doc, parsed.markdown);
  // Connected data: CSV, XLSX and JSON documents also become tables (replacing this document's earlier ones).
  await loadDocumentTables(env, doc, kind, bytes);

  // The swap: one statement makes the new generation the one search reads (the index version is raised with it:
  // isolates' copies of the vectors, taken before, are no longer used).
  const now = nowIso();
  const [flipped] = await batchSql(db, [
    sql`
    UPDATE documents SET status = 'processed', index_generation = ${generation}, chunk_count = ${chunks.length}, lease_expires_at = NULL,
      page_count = ${parsed.pageCount ?? null}, error = NULL, processed_at = ${now}, updated_at = ${now}
    WHERE id = ${doc.id} AND ingest_seq = ${generation} AND status = 'processing'`,
    indexVersionRaised(kb.id),
  ]);
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
