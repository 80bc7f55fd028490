import { jsonContent, pageBody } from "../../lib/openapi";
import { ctxOf } from "../context";
import { createRouter } from "../../lib/router";
import { documentFor, listDocuments, publicDocument } from "../../services/documents/documents";
import { downloadUrlFor } from "../../services/documents/manage";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { DocumentIdQuery, DocumentListSchema, DocumentSchema, DownloadSchema, ListDocumentsQuery } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Documents"]);

// /documents/status is registered before /documents/{id} so "status" is never taken for an id.

export const readRoutes = createRouter();

const status = route("get", "/documents/status", "documents:read", {
  operationId: "getDocumentStatus",
  summary: "Processing status of a document (poll with backoff until processed or failed)",
  request: { query: DocumentIdQuery },
  responses: { 200: jsonContent(DocumentSchema, "The document with its status and timestamps") },
});
readRoutes.openapi(status, async (c) => {
  const doc = await documentFor(ctxOf(c), c.req.valid("query").document_id, "documents:read");
  return c.json(publicDocument(doc), 200);
});

const list = route("get", "/documents", "documents:read", {
  operationId: "listDocuments",
  summary: "Documents of a knowledge base, newest first (deleted and derived text documents excluded)",
  request: { query: ListDocumentsQuery }, responses: { 200: jsonContent(DocumentListSchema, "Documents") },
});
readRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  const kb = await knowledgeBaseFor(ctxOf(c), q.kb_id, "documents:read", { addressedBy: "param" });
  const page = await listDocuments(c.get("db"), kb.id, q);
  return c.json(pageBody("documents", page, q, publicDocument), 200);
});

const get = route("get", "/documents/{id}", "documents:read", {
  operationId: "getDocument", summary: "Document metadata including processing state",
  responses: { 200: jsonContent(DocumentSchema, "The document") },
});
readRoutes.openapi(get, async (c) => {
  const doc = await documentFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  return c.json(publicDocument(doc), 200);
});

const download = route("get", "/documents/{id}/download", "documents:read", {
  operationId: "getDocumentDownloadUrl", summary: "A time-limited URL that returns the stored file without credentials",
  responses: { 200: jsonContent(DownloadSchema, "The download URL") },
});
readRoutes.openapi(download, async (c) => {
  const doc = await documentFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  return c.json(await downloadUrlFor(c.env, doc), 200);
});
