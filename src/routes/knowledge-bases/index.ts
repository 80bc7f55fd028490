import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, IdParam, jsonBody, jsonContent, noContent, pagingQuery, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { runCleanup } from "../../services/cleanup";
import {
  createKnowledgeBaseFor,
  deleteKnowledgeBase,
  knowledgeBaseFor,
  listKnowledgeBasesFor,
  promptOf,
  publicKnowledgeBase,
  updateKnowledgeBase,
} from "../../services/knowledge-bases";
import { CreateKnowledgeBaseBody, KnowledgeBaseSchema, PromptSchema, UpdateKnowledgeBaseBody } from "./schemas";

const tags = ["Knowledge bases"];

export const knowledgeBaseRoutes = createRouter();

const list = createRoute({
  method: "get",
  path: "/knowledge-bases",
  tags,
  operationId: "listKnowledgeBases",
  ...routePermission("documents:read"),
  summary: "Knowledge bases of a tenant",
  security: userOrKey,
  request: { query: pagingQuery(200, 100).extend({ tenant_id: z.string().min(1).max(128) }) },
  responses: {
    200: jsonContent(
      z.object({ knowledge_bases: z.array(KnowledgeBaseSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
      "Knowledge bases",
    ),
    ...errorResponses,
  },
});
knowledgeBaseRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  const { rows, total } = await listKnowledgeBasesFor(c, q.tenant_id, q);
  return c.json({ knowledge_bases: rows.map(publicKnowledgeBase), total, limit: q.limit, offset: q.offset }, 200);
});

const get = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}",
  tags,
  operationId: "getKnowledgeBase",
  ...routePermission("documents:read"),
  summary: "One knowledge base",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(KnowledgeBaseSchema, "The knowledge base"), ...errorResponses },
});
knowledgeBaseRoutes.openapi(get, async (c) => {
  const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:read");
  return c.json(publicKnowledgeBase(kb), 200);
});

const getPrompt = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/prompt",
  tags,
  operationId: "getKnowledgeBasePrompt",
  ...routePermission("documents:read"),
  summary: "The knowledge base's prompt fields",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(PromptSchema, "Prompt fields"), ...errorResponses },
});
knowledgeBaseRoutes.openapi(getPrompt, async (c) => {
  const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:read");
  return c.json(promptOf(kb), 200);
});

const create = createRoute({
  method: "post",
  path: "/knowledge-bases",
  tags,
  operationId: "createKnowledgeBase",
  ...routePermission("documents:write"),
  summary: "Create a knowledge base (subject to the tenant's knowledge base quota)",
  security: userOrKey,
  request: { body: jsonBody(CreateKnowledgeBaseBody) },
  responses: { 201: jsonContent(KnowledgeBaseSchema, "The knowledge base"), ...errorResponses },
});
knowledgeBaseRoutes.openapi(create, async (c) => {
  const kb = await createKnowledgeBaseFor(c, c.req.valid("json"));
  return c.json(publicKnowledgeBase(kb), 201);
});

const update = createRoute({
  method: "patch",
  path: "/knowledge-bases/{id}",
  tags,
  operationId: "updateKnowledgeBase",
  ...routePermission("documents:write"),
  summary: "Change only the fields sent; null clears a prompt field or the description",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(UpdateKnowledgeBaseBody) },
  responses: { 200: jsonContent(KnowledgeBaseSchema, "The knowledge base"), ...errorResponses },
});
knowledgeBaseRoutes.openapi(update, async (c) => {
  const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:write");
  const updated = await updateKnowledgeBase(c.get("db"), kb.id, c.req.valid("json"));
  return c.json(publicKnowledgeBase(updated), 200);
});

const remove = createRoute({
  method: "delete",
  path: "/knowledge-bases/{id}",
  tags,
  operationId: "deleteKnowledgeBase",
  ...routePermission("documents:delete"),
  summary: "Delete a knowledge base with its documents, stored files, chunks and vectors (irreversible)",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 204: noContent, ...errorResponses },
});
knowledgeBaseRoutes.openapi(remove, async (c) => {
  const db = c.get("db");
  const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:delete");
  await runCleanup("knowledge_base", { db, env: c.env, waitUntil: (p) => c.executionCtx.waitUntil(p) }, kb.id);
  await deleteKnowledgeBase(db, kb.id);
  return c.body(null, 204);
});
