import type { Database } from "../../db/client";
import type { DocumentRow, KnowledgeBase } from "../../db/schema";
import type { Env } from "../../env";
import { ingestConfig } from "../../lib/config";
import { ApiError, conflict, forbidden, notFound } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { enqueueProcessing } from "../ingest/messages";
import { heartbeat, UPLOAD_HEARTBEAT_MS } from "../recovery/leases";
import {
  assertQuotas,
  claimUpload,
  documentKey,
  getDocument,
  insertDocument,
  markUploaded,
  releaseUploadClaim,
  renewUploadClaim,
  uploadClaimRetryAfter,
} from "./documents";
import { contentDisposition, r2PresignedUrl, URL_TTL_SECONDS, usesR2Presigning, verifyWorkerSignature, workerSignedUrl } from "./signed-urls";
import { ACCEPTED_EXTENSIONS, ACCEPTED_MIME_TYPES, baseMime, cleanFilename, detectKind } from "./types";

export const unsupportedType = (mimeType: string, filename: string) =>
  new ApiError(
    "unsupported_media_type",
    `Files of type '${mimeType}' ('${filename}') are not accepted. Accepted types: ${ACCEPTED_MIME_TYPES.join(", ")} ` +
      `(extensions ${ACCEPTED_EXTENSIONS.map((e) => "." + e).join(", ")})`,
  );

export const tooLarge = (size: number, max: number) =>
  new ApiError("payload_too_large", `The file is ${size} bytes; the largest accepted upload is ${max} bytes`);

export interface PresignInput {
  filename: string;
  mime_type: string;
  size_bytes: number;
}

/**
 * Creates a `pending_upload` document and its upload URL. Order of checks
 * (API-DECISIONS.md): quotas first, then type, then size; the insert repeats
 * the quota check atomically.
 */
export async function presignUpload(env: Env, db: Database, kb: KnowledgeBase, input: PresignInput, createdBy: string | null) {
  await assertQuotas(db, kb.tenantId, input.size_bytes);
  const filename = cleanFilename(input.filename);
  if (!filename) throw new ApiError("invalid_request", "filename must contain printable characters", { details: [{ path: "body.filename", message: "Invalid filename" }] });
  if (!detectKind(input.mime_type, filename)) throw unsupportedType(input.mime_type, filename);
  const max = ingestConfig(env).maxUploadBytes;
  if (input.size_bytes > max) throw tooLarge(input.size_bytes, max);

  const id = newId("doc");
  const key = documentKey(kb, id, filename);
  const now = Date.now();
  const signed = usesR2Presigning(env)
    ? await r2PresignedUrl(env, "PUT", key, { contentType: input.mime_type }, now)
    : await workerSignedUrl(env, "upload", id, now);
  const doc = await insertDocument(db, {
    id,
    kb,
    filename,
    mimeType: input.mime_type,
    sizeBytes: input.size_bytes,
    status: "pending_upload",
    uploadExpiresAt: new Date(now + URL_TTL_SECONDS * 1000).toISOString(),
    createdBy,
    key,
  });
  return {
    document_id: doc.id,
    upload_url: signed.url,
    s3_key: doc.s3Key,
    expires_at: signed.expiresAt,
    method: "PUT" as const,
    headers: { "Content-Type": input.mime_type },
  };
}

/**
 * PUT to a Worker-signed upload URL: checks the signature, the declared size
 * and type, streams the body into R2 with a known length, then moves the
 * document to `queued` and queues its processing.
 */
export async function receiveUpload(
  env: Env,
  db: Database,
  documentId: string,
  req: Request,
  query: { expires?: string; sig?: string },
): Promise<DocumentRow> {
  const check = await verifyWorkerSignature(env, "upload", documentId, query.expires, query.sig);
  if (check === "missing") throw forbidden("This upload URL is not signed; request one with POST /api/v1/documents/presign");
  if (check === "invalid") throw forbidden("The upload URL's signature is invalid");
  if (check === "expired") throw forbidden("The upload URL has expired; request a new one with POST /api/v1/documents/presign");

  const doc = await getDocument(db, documentId);
  if (!doc) throw notFound("Document");
  if (doc.status === "deleted") throw conflict("document_deleted", "The document was deleted; request a new upload URL");
  if (doc.status !== "pending_upload") throw conflict("already_uploaded", "This document's file has already been uploaded");

  const max = ingestConfig(env).maxUploadBytes;
  const lengthHeader = req.headers.get("Content-Length");
  const length = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : null;
  if (length !== null && length > max) throw tooLarge(length, max);
  if (length === null) {
    throw new ApiError("invalid_request", `Send the file with a Content-Length header of exactly ${doc.sizeBytes} bytes`);
  }
  if (length !== doc.sizeBytes) {
    throw new ApiError("size_mismatch", `The body is ${length} bytes but the presign declared ${doc.sizeBytes} bytes`);
  }
  const contentType = req.headers.get("Content-Type") ?? "";
  if (baseMime(contentType) !== baseMime(doc.mimeType)) {
    throw new ApiError(
      "content_type_mismatch",
      `Content-Type must be '${doc.mimeType}' as given at presign (got '${contentType || "none"}')`,
    );
  }
  if (!req.body) throw new ApiError("invalid_request", "The upload has no body");

  if (!(await claimUpload(db, doc.id))) {
    const current = await getDocument(db, doc.id);
    throw new ApiError("already_uploaded", "This document's file has already been uploaded (or an upload is in progress)", {
      headers: current?.status === "pending_upload" ? { "Retry-After": String(uploadClaimRetryAfter(current)) } : undefined,
    });
  }
  // The reservation is renewed while bytes keep arriving: a PUT cut by a crash frees the document within seconds.
  let received = 0;
  let renewedAt = 0;
  const stopBeating = heartbeat(`upload ${doc.id}`, UPLOAD_HEARTBEAT_MS, async () => {
    if (received === renewedAt) return;
    renewedAt = received;
    await renewUploadClaim(db, doc.id);
  });
  try {
    // R2 needs a known length; FixedLengthStream also rejects a body that ends early or runs long.
    const counted = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const body = req.body.pipeThrough(counted).pipeThrough(new FixedLengthStream(doc.sizeBytes));
    await env.BUCKET.put(doc.s3Key, body, {
      httpMetadata: { contentType: doc.mimeType },
      customMetadata: { document_id: doc.id },
    });
  } catch (e) {
    await releaseUploadClaim(db, doc.id);
    console.warn(`upload of ${doc.id} failed:`, e);
    throw new ApiError("invalid_request", `The upload did not complete: the body must be exactly ${doc.sizeBytes} bytes`);
  } finally {
    stopBeating();
  }
  const queued = await markUploaded(db, doc.id);
  if (!queued) {
    // Deleted while the bytes were streaming (its cleanup may already have run), or stored by a retry that took
    // over a lapsed reservation: the file goes only with a deleted document.
    const current = await getDocument(db, doc.id);
    if (current?.status !== "deleted") return current!;
    await env.BUCKET.delete(doc.s3Key);
    throw conflict("document_deleted", "The document was deleted during the upload");
  }
  await enqueueProcessing(env, queued);
  return queued;
}

/**
 * GET /downloads/{id}: the stored bytes behind a Worker-signed download URL.
 * Always an attachment, never rendered on the service's origin: an uploaded
 * HTML file must not run as script here.
 */
export async function serveSignedDownload(
  env: Env,
  db: Database,
  id: string,
  q: { expires?: string; sig?: string },
): Promise<Response> {
  const check = await verifyWorkerSignature(env, "download", id, q.expires, q.sig);
  if (check === "missing" || check === "invalid") throw forbidden("The download URL's signature is missing or invalid");
  if (check === "expired") throw forbidden("The download URL has expired; request a new one");
  const doc = await getDocument(db, id);
  if (!doc) throw notFound("Document");
  if (doc.status === "deleted") throw conflict("document_deleted", "The document has been deleted");
  const object = await env.BUCKET.get(doc.s3Key);
  if (!object) throw new ApiError("not_found", "The document's file is not stored (was it uploaded?)");
  return new Response(object.body, {
    status: 200,
    headers: {
      "Content-Type": doc.mimeType,
      "Content-Length": String(object.size),
      "Content-Disposition": contentDisposition(doc.filename),
      "Content-Security-Policy": "sandbox; default-src 'none'",
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
      ETag: object.httpEtag,
    },
  });
}
