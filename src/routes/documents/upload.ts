import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authorize, requireCaller } from "../../auth/authorize";
import type { Caller } from "../../auth/caller";
import { ApiError } from "../../lib/errors";
import { errorResponses, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { presignUpload } from "../../services/documents/uploads";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import type { AppEnv } from "../../types";
import { PresignBody, PresignResponse } from "./schemas";

const tags = ["Documents"];

export const creatorOf = (caller: Caller) => (caller.type === "user" ? caller.user.id : caller.key.id);

/**
 * Loads the knowledge base a body names (kb_id) and authorizes the caller on
 * it; a tenant_id that is not the knowledge base's tenant is refused (400).
 */
export async function knowledgeBaseForWrite(c: Context<AppEnv>, kbId: string, tenantId: string) {
  const kb = await getKnowledgeBase(c.get("db"), kbId);
  await authorize(c, "documents:write", knowledgeBaseScope(kb), { what: "Knowledge base", addressedBy: "param" });
  if (kb!.tenantId !== tenantId) {
    throw new ApiError("tenant_mismatch", "tenant_id does not match the knowledge base's tenant", {
      details: [{ path: "body.tenant_id", message: "Must be the knowledge base's tenant" }],
    });
  }
  return kb!;
}

const presign = createRoute({
  method: "post",
  path: "/documents/presign",
  tags,
  operationId: "presignDocumentUpload",
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
  const caller = requireCaller(c);
  const body = c.req.valid("json");
  const kb = await knowledgeBaseForWrite(c, body.kb_id, body.tenant_id);
  const result = await presignUpload(c.env, c.get("db"), kb, body, creatorOf(caller));
  return c.json(result, 201);
});
