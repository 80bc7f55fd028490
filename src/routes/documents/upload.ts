import { createRoute } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { callerId } from "../../auth/caller";
import { errorResponses, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { presignUpload } from "../../services/documents/uploads";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { PresignBody, PresignResponse } from "./schemas";

const tags = ["Documents"];

const presign = createRoute({
  method: "post",
  path: "/documents/presign",
  tags,
  operationId: "presignDocumentUpload",
  ...routePermission("documents:write"),
  summary: "Create a document and a time-limited upload URL",
  description:
    "Document and storage quotas are checked first (403 quota_exceeded), then the type (415) and size (413). " +
    "PUT the raw bytes to `upload_url` with the returned headers before `expires_at` (15 minutes); processing then " +
    "starts automatically.",
  security: userOrKey,
  request: { body: jsonBody(PresignBody) },
  responses: { 201: jsonContent(PresignResponse, "The upload URL"), ...errorResponses },
});

export const uploadRoutes = createRouter().openapi(presign, async (c) => {
  const body = c.req.valid("json");
  const kb = await knowledgeBaseFor(c, body.kb_id, "documents:write", { addressedBy: "param", tenantId: body.tenant_id });
  const result = await presignUpload(c.env, c.get("db"), kb, body, callerId(c.get("caller")));
  return c.json(result, 201);
});
