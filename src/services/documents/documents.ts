import { and, desc, eq, isNull, sql } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import { inKnowledgeBase, knowledgeBaseRowScope, registerResource, type KnowledgeBaseRow, type ResourceScope } from "../../auth/resources";
import { batchSql } from "../../db/batch";
import type { Database } from "../../db/client";
import { documents, tenants, type DocumentRow, type DocumentStatus, type KnowledgeBase } from "../../db/schema";
import { ApiError, conflict } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { BYTES_PER_GB } from "../tenants";
import { indexVersionRaised } from "../vector-index/isolate-copies";
import { storageSafeName } from "./types";
import { pageOf } from "../../db/page";
import { LEASE_MS, leaseUntil, UPLOAD_LEASE_MS } from "../recovery/leases";

/** Processing is under way: reprocess is refused (409 document_busy) while its lease holds. */
export const BUSY_STATUSES: readonly DocumentStatus[] = ["queued", "processing"];

/**
 * SQL: the document's lease lapsed at `nowIso` (its processing message or worker is gone). Rows written before
 * leases existed count from their last update.
 */
export const documentLeaseLapsed = (at: string) =>
  sql`COALESCE(${documents.leaseExpiresAt}, strftime('%Y-%m-%dT%H:%M:%fZ', ${documents.updatedAt}, ${`+${LEASE_MS / 1000} seconds`})) < ${at}`;

/** The same test on a loaded row. */
export const documentLeaseHasLapsed = (d: Pick<DocumentRow, "leaseExpiresAt" | "updatedAt">, now = Date.now()) =>
  (d.leaseExpiresAt ? Date.parse(d.leaseExpiresAt) : Date.parse(d.updatedAt) + LEASE_MS) < now;

/** The document record (API-DECISIONS.md, "Knowledge bases and documents"). */
export function publicDocument(d: DocumentRow) {
  return {
    id: d.id,
    document_id: d.id,
    knowledge_base_id: d.knowledgeBaseId,
    tenant_id: d.tenantId,
    filename: d.filename,
    mime_type: d.mimeType,
    size_bytes: d.sizeBytes,
    status: d.status,
    is_processing: BUSY_STATUSES.includes(d.status),
    error: d.error,
    chunk_count: d.chunkCount,
    page_count: d.pageCount,
    source_url: d.sourceUrl,
    parent_document_id: d.parentDocumentId,
    s3_key: d.s3Key,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
    processed_at: d.processedAt,
  };
}

export type PublicDocument = ReturnType<typeof publicDocument>;

export const documentScope = (d: KnowledgeBaseRow | undefined | null): ResourceScope | null => knowledgeBaseRowScope(d);

export async function getDocument(db: Database, id: string): Promise<DocumentRow | undefined> {
  return db.select().from(documents).where(eq(documents.id, id)).get();
}

registerResource("document", async (db, id) => documentScope(await getDocument(db, id)));

/** A document by id, authorized for `permission` by its knowledge base (404 when missing or out of reach). */
export async function documentFor(ctx: ServiceContext, id: string, permission: Permission): Promise<DocumentRow> {
  const doc = await getDocument(ctx.db, id);
  return (await loadAuthorized(ctx, permission, doc, (d) => documentScope(d)!, { what: "Document" })).row;
}

export async function getDocumentByKey(db: Database, key: string): Promise<DocumentRow | undefined> {
  return db.select().from(documents).where(eq(documents.s3Key, key)).get();
}

export async function getDerivedDocument(db: Database, parentId: string): Promise<DocumentRow | undefined> {
  return db.select().from(documents).where(eq(documents.parentDocumentId, parentId)).get();
}

/**
 * Storage key layout: everything of an organization, tenant, knowledge base or
 * document shares a prefix, so an operator can clean up by prefix.
 */
export function documentPrefix(kb: Pick<KnowledgeBase, "organizationId" | "tenantId" | "id">, documentId: string): string {
  return `o/${kb.organizationId}/t/${kb.tenantId}/kb/${kb.id}/d/${documentId}/`;
}

export function documentKey(kb: Pick<KnowledgeBase, "organizationId" | "tenantId" | "id">, documentId: string, filename: string) {
  return documentPrefix(kb, documentId) + storageSafeName(filename);
}

export function quotaExceeded(
  t: { documentCount: number; maxDocuments: number; storageUsedBytes: number; maxStorageGb: number },
  sizeBytes: number,
  opts: { documents?: boolean } = {},
): ApiError | null {
  if (opts.documents !== false && t.documentCount >= t.maxDocuments) {
    return new ApiError("quota_exceeded", `The tenant's document quota (${t.maxDocuments}) is reached`);
  }
  const max = Math.floor(t.maxStorageGb * BYTES_PER_GB);
  if (t.storageUsedBytes + sizeBytes > max) {
    return new ApiError(
      "quota_exceeded",
      `The tenant's storage quota (${t.maxStorageGb} GB) does not leave room for ${sizeBytes} more bytes (${t.storageUsedBytes} bytes used)`,
    );
  }
  return null;
}

/** Quotas first (API-DECISIONS.md): a read check, before type and size are looked at. */
export async function assertQuotas(db: Database, tenantId: string, sizeBytes: number, opts: { documents?: boolean } = {}): Promise<void> {
  const t = await db.select().from(tenants).where(eq(tenants.id, tenantId)).get();
  if (!t) throw new ApiError("not_found", "Tenant not found");
  const e = quotaExceeded(t, sizeBytes, opts);
  if (e) throw e;
}

export interface NewDocument {
  id?: string;
  kb: KnowledgeBase;
  filename: string;
  mimeType: string;
  sizeBytes: number;
  status: "pending_upload" | "queued";
  sourceUrl?: string | null;
  uploadExpiresAt?: string | null;
  createdBy: string | null;
  key?: string;
}

/**
 * Inserts a document. The tenant's document and storage quotas are checked in
 * the SAME statement as the insert, so concurrent presigns cannot overshoot
 * them; the counters then follow the row by trigger.
 */
export async function insertDocument(db: Database, input: NewDocument): Promise<DocumentRow> {
  const now = nowIso();
  const id = input.id ?? newId("doc");
  const row: DocumentRow = {
    id,
    ...inKnowledgeBase(input.kb),
    parentDocumentId: null,
    filename: input.filename,
    mimeType: input.mimeType,
    sizeBytes: input.sizeBytes,
    status: input.status,
    error: null,
    chunkCount: 0,
    pageCount: null,
    sourceUrl: input.sourceUrl ?? null,
    s3Key: input.key ?? documentKey(input.kb, id, input.filename),
    ingestSeq: input.status === "queued" ? 1 : 0,
    indexGeneration: 0,
    attempts: 0,
    uploadExpiresAt: input.uploadExpiresAt ?? null,
    uploadClaimedAt: null,
    leaseExpiresAt: input.status === "queued" ? leaseUntil(Date.parse(now)) : null,
    createdBy: input.createdBy,
    createdAt: now,
    updatedAt: now,
    processedAt: null,
    deletedAt: null,
  };
  const res = await db.run(sql`
    INSERT INTO documents (id, organization_id, environment_id, tenant_id, knowledge_base_id, parent_document_id,
      filename, mime_type, size_bytes, status, s3_key, source_url, ingest_seq, upload_expires_at, lease_expires_at,
      created_by, created_at, updated_at)
    SELECT ${row.id}, ${row.organizationId}, ${row.environmentId}, ${row.tenantId}, ${row.knowledgeBaseId}, NULL,
      ${row.filename}, ${row.mimeType}, ${row.sizeBytes}, ${row.status}, ${row.s3Key}, ${row.sourceUrl},
      ${row.ingestSeq}, ${row.uploadExpiresAt}, ${row.leaseExpiresAt}, ${row.createdBy}, ${now}, ${now}
    FROM tenants t
    WHERE t.id = ${row.tenantId}
      AND t.document_count < t.max_documents
      AND t.storage_used_bytes + ${row.sizeBytes} <= CAST(t.max_storage_gb * ${BYTES_PER_GB} AS INTEGER)`);
  if (!res.meta.changes) {
    const t = await db.select().from(tenants).where(eq(tenants.id, row.tenantId)).get();
    throw (t && quotaExceeded(t, row.sizeBytes)) || new ApiError("quota_exceeded", "The tenant's document or storage quota is reached");
  }
  return row;
}

export async function listDocuments(
  db: Database,
  knowledgeBaseId: string,
  opts: { limit: number; offset: number; status?: DocumentStatus },
) {
  // Deleted documents and derived text companions are not listed.
  const where = and(
    eq(documents.knowledgeBaseId, knowledgeBaseId),
    isNull(documents.parentDocumentId),
    opts.status ? eq(documents.status, opts.status) : sql`${documents.status} <> 'deleted'`,
  );
  return pageOf(db, documents, where, [desc(documents.createdAt), desc(documents.id)], opts);
}

/**
 * Deletes a document: one statement flips it (and its derived companion) to
 * `deleted`, which removes it from search at once. Chunks, vectors and the
 * stored files are cleaned up afterwards (services/documents/cleanup.ts).
 */
export async function markDeleted(db: Database, doc: DocumentRow): Promise<DocumentRow> {
  if (doc.parentDocumentId) {
    throw conflict("derived_document", "This is a derived text document; delete its source document instead");
  }
  const now = nowIso();
  await batchSql(db, [
    sql`
    UPDATE documents SET status = 'deleted', deleted_at = ${now}, updated_at = ${now}, upload_claimed_at = NULL
    WHERE (id = ${doc.id} OR parent_document_id = ${doc.id}) AND status <> 'deleted'`,
    indexVersionRaised(doc.knowledgeBaseId),
  ]);
  return (await getDocument(db, doc.id))!;
}

/**
 * Queues a document again (reprocess). Refusals per API-DECISIONS.md; a document that is queued or processing
 * is busy only while its lease holds: once its worker or message is gone it may be queued again at once.
 */
export async function requeueDocument(db: Database, doc: DocumentRow): Promise<DocumentRow> {
  if (doc.status === "deleted") throw conflict("document_deleted", "The document has been deleted and cannot be reprocessed");
  if (doc.parentDocumentId) {
    throw conflict("derived_document", "This is a derived text document; reprocess its source document instead");
  }
  if (doc.status === "pending_upload") {
    throw conflict("document_not_uploaded", "The document's file has not been uploaded yet; upload it first");
  }
  const now = nowIso();
  const row = await db
    .update(documents)
    .set({ status: "queued", ingestSeq: sql`${documents.ingestSeq} + 1`, attempts: 0, error: null, updatedAt: now, leaseExpiresAt: leaseUntil(Date.parse(now)) })
    .where(
      and(
        eq(documents.id, doc.id),
        sql`(${documents.status} IN ('processed', 'failed') OR (${documents.status} IN ('queued', 'processing') AND ${documentLeaseLapsed(now)}))`,
      ),
    )
    .returning()
    .get();
  if (!row) {
    const current = await getDocument(db, doc.id);
    if (current?.status === "deleted") throw conflict("document_deleted", "The document has been deleted and cannot be reprocessed");
    throw conflict("document_busy", `The document is ${current?.status ?? "busy"}; wait until it is processed or failed`);
  }
  return row;
}

/**
 * Reserves a pending upload for one uploader; false when another holds it or it is no longer pending. The
 * reservation is a lease renewed while bytes arrive (renewUploadClaim): an upload cut by a crash can be retried
 * as soon as it lapses.
 */
export async function claimUpload(db: Database, id: string): Promise<boolean> {
  const now = nowIso();
  const staleBefore = new Date(Date.parse(now) - UPLOAD_LEASE_MS).toISOString();
  const res = await db.run(sql`
    UPDATE documents SET upload_claimed_at = ${now}
    WHERE id = ${id} AND status = 'pending_upload' AND (upload_claimed_at IS NULL OR upload_claimed_at < ${staleBefore})`);
  return res.meta.changes > 0;
}

/** The upload is still receiving bytes: its reservation holds a while longer. */
export async function renewUploadClaim(db: Database, id: string): Promise<void> {
  await db.run(sql`UPDATE documents SET upload_claimed_at = ${nowIso()} WHERE id = ${id} AND status = 'pending_upload' AND upload_claimed_at IS NOT NULL`);
}

/** Seconds until a held upload reservation lapses (for Retry-After). */
export function uploadClaimRetryAfter(doc: Pick<DocumentRow, "uploadClaimedAt">, now = Date.now()): number {
  if (!doc.uploadClaimedAt) return 1;
  return Math.max(1, Math.ceil((Date.parse(doc.uploadClaimedAt) + UPLOAD_LEASE_MS - now) / 1000));
}

export async function releaseUploadClaim(db: Database, id: string): Promise<void> {
  await db.run(sql`UPDATE documents SET upload_claimed_at = NULL WHERE id = ${id} AND status = 'pending_upload'`);
}

/**
 * The file is stored: pending_upload -> queued, with a new ingest sequence.
 * Returns null when the document is no longer waiting for its bytes (deleted,
 * or already uploaded).
 */
export async function markUploaded(db: Database, id: string): Promise<DocumentRow | null> {
  const row = await db
    .update(documents)
    .set({ status: "queued", ingestSeq: sql`${documents.ingestSeq} + 1`, attempts: 0, error: null, uploadClaimedAt: null, updatedAt: nowIso(), leaseExpiresAt: leaseUntil() })
    .where(and(eq(documents.id, id), eq(documents.status, "pending_upload")))
    .returning()
    .get();
  return row ?? null;
}
