import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonBody, jsonContent, Timestamp } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { EMBED_TTL, MAX_EMBED_ORIGINS, mintEmbedToken, publicEmbedToken } from "../../services/embed/tokens";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { SubjectId } from "../chats/schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Embedding"]);

const MintBody = z.object({
  tenant_id: z.string().min(1).max(128),
  knowledge_base_id: z.string().min(1).max(128),
  external_subject_id: SubjectId.optional().openapi({
    description: "The end user the page's visitor is; every chat of the token belongs to it. Without it, the token has a subject of its own.",
  }),
  allowed_origins: z
    .array(z.string().max(255))
    .min(1)
    .max(MAX_EMBED_ORIGINS)
    .openapi({ description: "Origins (`https://shop.example.com`, `http://localhost:3000`) whose pages may use the token", example: ["https://shop.example.com"] }),
  ttl_seconds: z.number().int().min(EMBED_TTL.min).max(EMBED_TTL.max).optional().openapi({ description: "Lifetime, 60–3600 s (default 900)" }),
});

export const EmbedTokenSchema = z
  .object({
    token: z.string().openapi({ description: "The bearer credential `kbe_...`, shown only here", example: "kbe_4pQ..." }),
    expires_at: Timestamp,
    id: z.string(),
    tenant_id: z.string(),
    knowledge_base_id: z.string(),
    external_subject_id: z.string().nullable(),
    allowed_origins: z.array(z.string()),
  })
  .openapi("EmbedToken");

const mint = route("post", "/embed/tokens", "embed:mint", {
  operationId: "createEmbedToken", summary: "Mint a short-lived embed token for a web page (the chat widget)",
  description:
    "Called by the customer's backend with its API key (`query:rag`) or by a signed-in owner, billing admin or developer. " +
    "The token (`Authorization: Bearer kbe_...`) can only create and use chats on this knowledge base (create, send, stream, " +
    "stop, messages, follow-up questions), as this one end user, from requests whose `Origin` is listed; anything else " +
    "answers 403. Only its hash is stored; it stops working when it expires or when the key that minted it is revoked " +
    "(or the user who minted it leaves the organization).",
  request: { body: jsonBody(MintBody) }, responses: { 201: jsonContent(EmbedTokenSchema, "The token") },
});

export const embedRoutes = createRouter().openapi(mint, async (c) => {
  const caller = c.get("caller");
  const body = c.req.valid("json");
  const kb = await knowledgeBaseFor(ctxOf(c), body.knowledge_base_id, "embed:mint", { addressedBy: "param", tenantId: body.tenant_id });
  const minter = caller.type === "user" ? { userId: caller.user.id } : { apiKeyId: caller.key.id };
  const { token, record } = await mintEmbedToken(c.get("db"), kb, body, minter);
  return c.json(publicEmbedToken(token, record), 201);
});
