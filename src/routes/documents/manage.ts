import { jsonContent, noContent } from "../../lib/openapi";
import { ctxOf } from "../context";
import { createRouter } from "../../lib/router";
import { documentFor, publicDocument } from "../../services/documents/documents";
import { deleteDocument, reprocessDocument } from "../../services/documents/manage";
import { DocumentSchema } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Documents"]);

export const manageRoutes = createRouter();

const remove = route("delete", "/documents/{id}", "documents:delete", {
  operationId: "deleteDocument",
  summary: "Delete a document: removed from search at once; its file, chunks and vectors are cleaned up",
  description: "Idempotent: deleting an already deleted document answers 204. A derived text document cannot be deleted on its own (409 derived_document).",
  responses: { 204: noContent },
});
manageRoutes.openapi(remove, async (c) => {
  const doc = await documentFor(ctxOf(c), c.req.valid("param").id, "documents:delete");
  await deleteDocument(c.env, c.get("db"), doc, (p) => c.executionCtx.waitUntil(p));
  return c.body(null, 204);
});

const reprocess = route("post", "/documents/{id}/reprocess", "documents:write", {
  operationId: "reprocessDocument", summary: "Queue a document for processing again",
  description:
    "Refused with 409: `document_deleted`, `derived_document`, `document_busy` (queued or processing), " +
    "`document_not_uploaded`. The current index keeps serving until the new one replaces it in one step.",
  responses: { 202: jsonContent(DocumentSchema, "The document, queued") },
});
manageRoutes.openapi(reprocess, async (c) => {
  const doc = await documentFor(ctxOf(c), c.req.valid("param").id, "documents:write");
  return c.json(publicDocument(await reprocessDocument(c.env, c.get("db"), doc)), 202);
});
