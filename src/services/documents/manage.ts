import type { Database } from "../../db/client";
import type { DocumentRow } from "../../db/schema";
import type { Env } from "../../env";
import { conflict } from "../../lib/errors";
import { enqueueProcessing } from "../ingest/messages";
import { wakeSupervisor } from "../recovery/supervisor";
import { scheduleDocumentCleanup } from "./cleanup-tasks";
import { CLEANUP_CHECK_MS } from "../recovery/leases";
import { markDeleted, requeueDocument } from "./documents";
import { r2PresignedUrl, usesR2Presigning, workerSignedUrl } from "./signed-urls";

/**
 * DELETE /documents/{id}: out of search at once, its file, chunks and vectors
 * cleaned up after the response (the same statement records what to remove,
 * and the supervisor finishes it if the background work is cut short).
 * Idempotent; a derived text document goes only with its source (409
 * derived_document).
 */
export async function deleteDocument(env: Env, db: Database, doc: DocumentRow, waitUntil: (p: Promise<unknown>) => void) {
  if (doc.status === "deleted") return;
  if (doc.parentDocumentId) throw conflict("derived_document", "This is a derived text document; delete its source document instead");
  await markDeleted(db, doc);
  await wakeSupervisor(env, Date.now() + CLEANUP_CHECK_MS);
  scheduleDocumentCleanup(env, db, doc.id, doc.knowledgeBaseId, waitUntil);
}

/** POST /documents/{id}/reprocess: queued again (the current index serves until the new one replaces it). */
export async function reprocessDocument(env: Env, db: Database, doc: DocumentRow): Promise<DocumentRow> {
  const queued = await requeueDocument(db, doc);
  await enqueueProcessing(env, queued);
  return queued;
}

/** GET /documents/{id}/download: a time-limited URL for the stored file. */
export async function downloadUrlFor(env: Env, doc: DocumentRow) {
  if (doc.status === "deleted") throw conflict("document_deleted", "The document has been deleted");
  if (doc.status === "pending_upload") throw conflict("document_not_uploaded", "The document's file has not been uploaded yet");
  const signed = usesR2Presigning(env)
    ? await r2PresignedUrl(env, "GET", doc.s3Key, { downloadFilename: doc.filename })
    : await workerSignedUrl(env, "download", doc.id);
  return { download_url: signed.url, filename: doc.filename, expires_at: signed.expiresAt };
}
