import { createRoute } from "@hono/zod-openapi";
import { authorize } from "../../auth/authorize";
import { conflict } from "../../lib/errors";
import { errorResponses, IdParam, jsonContent, noContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { scheduleDocumentCleanup } from "../../services/documents/cleanup";
import { documentScope, getDocument, markDeleted, publicDocument, requeueDocument } from "../../services/documents/documents";
import { enqueueProcessing } from "../../services/ingest/messages";
import { DocumentSchema } from "./schemas";

const tags = ["Documents"];

const remove = createRoute({
  method: "delete",
  path: "/documents/{id}",
  tags,
  operationId: "deleteDocument",
  summary: "Delete a document: removed from search at once; its file, chunks and vectors are cleaned up",
  description: "Idempotent: deleting an already deleted document answers 204. A derived text document cannot be deleted on its own (409 derived_document).",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 204: noContent, ...errorResponses },
});

const reprocess = createRoute({
  method: "post",
  path: "/documents/{id}/reprocess",
  tags,
  operationId: "reprocessDocument",
  summary: "Queue a document for processing again",
  description:
    "Refused with 409: `document_deleted`, `derived_document`, `document_busy` (queued or processing), " +
    "`document_not_uploaded`. The current index keeps serving until the new one replaces it in one step.",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 202: jsonContent(DocumentSchema, "The document, queued"), ...errorResponses },
});

export const manageRoutes = createRouter()
  .openapi(remove, async (c) => {
    const db = c.get("db");
    const doc = await getDocument(db, c.req.valid("param").id);
    await authorize(c, "documents:delete", documentScope(doc), { what: "Document" });
    if (doc!.status !== "deleted") {
      if (doc!.parentDocumentId) throw conflict("derived_document", "This is a derived text document; delete its source document instead");
      await markDeleted(db, doc!);
      scheduleDocumentCleanup(c.env, db, doc!.id, (p) => c.executionCtx.waitUntil(p));
    }
    return c.body(null, 204);
  })
  .openapi(reprocess, async (c) => {
    const db = c.get("db");
    const doc = await getDocument(db, c.req.valid("param").id);
    await authorize(c, "documents:write", documentScope(doc), { what: "Document" });
    const queued = await requeueDocument(db, doc!);
    await enqueueProcessing(c.env, queued);
    return c.json(publicDocument(queued), 202);
  });
