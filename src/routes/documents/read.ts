import { createRoute } from "@hono/zod-openapi";
import { authorize } from "../../auth/authorize";
import { conflict } from "../../lib/errors";
import { errorResponses, IdParam, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { documentScope, getDocument, listDocuments, publicDocument } from "../../services/documents/documents";
import { r2PresignedUrl, usesR2Presigning, workerSignedUrl } from "../../services/documents/signed-urls";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import { DocumentIdQuery, DocumentListSchema, DocumentSchema, DownloadSchema, ListDocumentsQuery } from "./schemas";

const tags = ["Documents"];

const status = createRoute({
  method: "get",
  path: "/documents/status",
  tags,
  operationId: "getDocumentStatus",
  summary: "Processing status of a document (poll with backoff until processed or failed)",
  security: userOrKey,
  request: { query: DocumentIdQuery },
  responses: { 200: jsonContent(DocumentSchema, "The document with its status and timestamps"), ...errorResponses },
});

const list = createRoute({
  method: "get",
  path: "/documents",
  tags,
  operationId: "listDocuments",
  summary: "Documents of a knowledge base, newest first (deleted and derived text documents excluded)",
  security: userOrKey,
  request: { query: ListDocumentsQuery },
  responses: { 200: jsonContent(DocumentListSchema, "Documents"), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/documents/{id}",
  tags,
  operationId: "getDocument",
  summary: "Document metadata including processing state",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(DocumentSchema, "The document"), ...errorResponses },
});

const download = createRoute({
  method: "get",
  path: "/documents/{id}/download",
  tags,
  operationId: "getDocumentDownloadUrl",
  summary: "A time-limited URL that returns the stored file without credentials",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(DownloadSchema, "The download URL"), ...errorResponses },
});

// /documents/status is registered before /documents/{id} so "status" is never taken for an id.
export const readRoutes = createRouter()
  .openapi(status, async (c) => {
    const doc = await getDocument(c.get("db"), c.req.valid("query").document_id);
    await authorize(c, "documents:read", documentScope(doc), { what: "Document" });
    return c.json(publicDocument(doc!), 200);
  })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("db");
    const kb = await getKnowledgeBase(db, q.kb_id);
    await authorize(c, "documents:read", knowledgeBaseScope(kb), { what: "Knowledge base", addressedBy: "param" });
    const { rows, total } = await listDocuments(db, kb!.id, { limit: q.limit, offset: q.offset, status: q.status });
    return c.json({ documents: rows.map(publicDocument), total, limit: q.limit, offset: q.offset }, 200);
  })
  .openapi(get, async (c) => {
    const doc = await getDocument(c.get("db"), c.req.valid("param").id);
    await authorize(c, "documents:read", documentScope(doc), { what: "Document" });
    return c.json(publicDocument(doc!), 200);
  })
  .openapi(download, async (c) => {
    const doc = await getDocument(c.get("db"), c.req.valid("param").id);
    await authorize(c, "documents:read", documentScope(doc), { what: "Document" });
    if (doc!.status === "deleted") throw conflict("document_deleted", "The document has been deleted");
    if (doc!.status === "pending_upload") throw conflict("document_not_uploaded", "The document's file has not been uploaded yet");
    const signed = usesR2Presigning(c.env)
      ? await r2PresignedUrl(c.env, "GET", doc!.s3Key, { downloadFilename: doc!.filename })
      : await workerSignedUrl(c.env, "download", doc!.id);
    return c.json({ download_url: signed.url, filename: doc!.filename, expires_at: signed.expiresAt }, 200);
  });
