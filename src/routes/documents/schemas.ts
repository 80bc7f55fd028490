import { z } from "@hono/zod-openapi";
import { DOCUMENT_STATUSES } from "../../db/schema";
import { pageSchema, Timestamp } from "../../lib/openapi";
import { ACCEPTED_MIME_TYPES } from "../../services/documents/types";

const id = () => z.string().min(1).max(128);

export const DocumentSchema = z
  .object({
    id: z.string(),
    document_id: z.string(),
    knowledge_base_id: z.string(),
    tenant_id: z.string(),
    filename: z.string(),
    mime_type: z.string(),
    size_bytes: z.number().int(),
    status: z.enum(DOCUMENT_STATUSES).openapi({
      description: "pending_upload → queued → processing → processed | failed; deleted after DELETE",
    }),
    is_processing: z.boolean().openapi({ description: "true while queued or processing" }),
    error: z.string().nullable().openapi({ description: "Why processing failed (human-readable), or null" }),
    chunk_count: z.number().int(),
    page_count: z.number().int().nullable(),
    source_url: z.string().nullable().openapi({ description: "The page a web document was fetched from" }),
    parent_document_id: z.string().nullable().openapi({ description: "Set on a derived text document (extracted text of a binary file)" }),
    s3_key: z.string().openapi({ description: "Opaque storage identifier; do not interpret it" }),
    created_at: Timestamp,
    updated_at: Timestamp,
    processed_at: Timestamp.nullable(),
  })
  .openapi("Document");

export const PresignBody = z.object({
  kb_id: id(),
  tenant_id: id().openapi({ description: "Must be the knowledge base's tenant" }),
  filename: z.string().trim().min(1).max(255).openapi({ example: "handbook.pdf" }),
  mime_type: z.string().trim().min(1).max(255).openapi({ description: `One of: ${ACCEPTED_MIME_TYPES.join(", ")}`, example: "application/pdf" }),
  size_bytes: z.number().int().min(1).openapi({ description: "Exact size of the file in bytes", example: 482113 }),
});

export const PresignResponse = z
  .object({
    document_id: z.string(),
    upload_url: z.string().openapi({ description: "PUT the raw bytes here before expires_at" }),
    s3_key: z.string(),
    expires_at: Timestamp,
    method: z.literal("PUT"),
    headers: z.object({ "Content-Type": z.string() }).openapi({ description: "Send these headers with the upload" }),
  })
  .openapi("PresignedUpload");

export const DocumentIdQuery = z.object({ document_id: id() });

export const ListDocumentsQuery = z.object({
  kb_id: id(),
  status: z.enum(DOCUMENT_STATUSES).exclude(["deleted"]).optional().openapi({ description: "Only documents in this state" }),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const DocumentListSchema = pageSchema("documents", DocumentSchema).openapi("DocumentList");

export const DownloadSchema = z
  .object({ download_url: z.string(), filename: z.string(), expires_at: Timestamp })
  .openapi("DocumentDownload");

export const UploadUrlBody = z.object({
  kb_id: id(),
  tenant_id: id(),
  url: z.string().trim().min(1).max(2048).openapi({ description: "https:// is added when the scheme is omitted", example: "example.com/docs" }),
});

export const UploadSiteBody = UploadUrlBody.extend({
  include_subdomains: z.boolean().default(false),
});

export const SiteUrlsSchema = z.object({ urls: z.array(z.string()).max(25) }).openapi("DiscoveredUrls");
