import { createRoute } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { documentFor, listDocuments, publicDocument } from "../../services/documents/documents";
import { downloadUrlFor } from "../../services/documents/manage";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { DocumentIdQuery, DocumentListSchema, DocumentSchema, DownloadSchema, ListDocumentsQuery } from "./schemas";

const tags = ["Documents"];

// /documents/status is registered before /documents/{id} so "status" is never taken for an id.

export const readRoutes = createRouter();

const status = createRoute({
  method: "get",
  path: "/documents/status",
  tags,
  operationId: "getDocumentStatus",
  ...routePermission("documents:read"),
  summary: "Processing status of a document (poll with backoff until processed or failed)",
  security: userOrKey,
  request: { query: DocumentIdQuery },
  responses: { 200: jsonContent(DocumentSchema, "The document with its status and timestamps"), ...errorResponses },
});
readRoutes.openapi(status, async (c) => {
  const doc = await documentFor(c, c.req.valid("query").document_id, "documents:read");
  return c.json(publicDocument(doc), 200);
});

const list = createRoute({
  method: "get",
  path: "/documents",
  tags,
  operationId: "listDocuments",
  ...routePermission("documents:read"),
  summary: "Documents of a knowledge base, newest first (deleted and derived text documents excluded)",
  security: userOrKey,
  request: { query: ListDocumentsQuery },
  responses: { 200: jsonContent(DocumentListSchema, "Documents"), ...errorResponses },
});
readRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  const kb = await knowledgeBaseFor(c, q.kb_id, "documents:read", { addressedBy: "param" });
  const { rows, total } = await listDocuments(c.get("db"), kb.id, { limit: q.limit, offset: q.offset, status: q.status });
  return c.json({ documents: rows.map(publicDocument), total, limit: q.limit, offset: q.offset }, 200);
});

const get = createRoute({
  method: "get",
  path: "/documents/{id}",
  tags,
  operationId: "getDocument",
  ...routePermission("documents:read"),
  summary: "Document metadata including processing state",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(DocumentSchema, "The document"), ...errorResponses },
});
readRoutes.openapi(get, async (c) => {
  const doc = await documentFor(c, c.req.valid("param").id, "documents:read");
  return c.json(publicDocument(doc), 200);
});

const download = createRoute({
  method: "get",
  path: "/documents/{id}/download",
  tags,
  operationId: "getDocumentDownloadUrl",
  ...routePermission("documents:read"),
  summary: "A time-limited URL that returns the stored file without credentials",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(DownloadSchema, "The download URL"), ...errorResponses },
});
readRoutes.openapi(download, async (c) => {
  const doc = await documentFor(c, c.req.valid("param").id, "documents:read");
  return c.json(await downloadUrlFor(c.env, doc), 200);
});
