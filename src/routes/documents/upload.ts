import { callerId } from "../../contracts/caller";
import { ctxOf } from "../context";
import { jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { presignUpload } from "../../services/documents/uploads";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { PresignBody, PresignResponse } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Documents"]);

const presign = route("post", "/documents/presign", "documents:write", {
  operationId: "presignDocumentUpload", summary: "Create a document and a time-limited upload URL",
  description:
    "Document and storage quotas are checked first (403 quota_exceeded), then the type (415) and size (413). " +
    "PUT the raw bytes to `upload_url` with the returned headers before `expires_at` (15 minutes); processing then " +
    "starts automatically.",
  request: { body: jsonBody(PresignBody) }, responses: { 201: jsonContent(PresignResponse, "The upload URL") },
});

export const uploadRoutes = createRouter().openapi(presign, async (c) => {
  const body = c.req.valid("json");
  const kb = await knowledgeBaseFor(ctxOf(c), body.kb_id, "documents:write", { addressedBy: "param", tenantId: body.tenant_id });
  const result = await presignUpload(c.env, c.get("db"), kb, body, callerId(c.get("caller")));
  return c.json(result, 201);
});
