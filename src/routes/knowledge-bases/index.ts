import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonBody, jsonContent, noContent, pageBody, pageSchema, pagingQuery } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { deleteWithCleanup } from "../../services/cleanup";
import { createKnowledgeBaseFor, deleteKnowledgeBase, knowledgeBaseFor, listKnowledgeBasesFor, promptOf, publicKnowledgeBase, updateKnowledgeBase } from "../../services/knowledge-bases";
import { CreateKnowledgeBaseBody, KnowledgeBaseSchema, PromptSchema, UpdateKnowledgeBaseBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Knowledge bases"]);

export const knowledgeBaseRoutes = createRouter();

const list = route("get", "/knowledge-bases", "documents:read", {
  operationId: "listKnowledgeBases", summary: "Knowledge bases of a tenant",
  request: { query: pagingQuery(200, 100).extend({ tenant_id: z.string().min(1).max(128) }) },
  responses: { 200: jsonContent(pageSchema("knowledge_bases", KnowledgeBaseSchema), "Knowledge bases") },
});
knowledgeBaseRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  return c.json(pageBody("knowledge_bases", await listKnowledgeBasesFor(ctxOf(c), q.tenant_id, q), q, publicKnowledgeBase), 200);
});

const get = route("get", "/knowledge-bases/{id}", "documents:read", {
  operationId: "getKnowledgeBase", summary: "One knowledge base",
  responses: { 200: jsonContent(KnowledgeBaseSchema, "The knowledge base") },
});
knowledgeBaseRoutes.openapi(get, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  return c.json(publicKnowledgeBase(kb), 200);
});

const getPrompt = route("get", "/knowledge-bases/{id}/prompt", "documents:read", {
  operationId: "getKnowledgeBasePrompt", summary: "The knowledge base's prompt fields",
  responses: { 200: jsonContent(PromptSchema, "Prompt fields") },
});
knowledgeBaseRoutes.openapi(getPrompt, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  return c.json(promptOf(kb), 200);
});

const create = route("post", "/knowledge-bases", "documents:write", {
  operationId: "createKnowledgeBase", summary: "Create a knowledge base (subject to the tenant's knowledge base quota)",
  request: { body: jsonBody(CreateKnowledgeBaseBody) },
  responses: { 201: jsonContent(KnowledgeBaseSchema, "The knowledge base") },
});
knowledgeBaseRoutes.openapi(create, async (c) => {
  const kb = await createKnowledgeBaseFor(ctxOf(c), c.req.valid("json"));
  return c.json(publicKnowledgeBase(kb), 201);
});

const update = route("patch", "/knowledge-bases/{id}", "documents:write", {
  operationId: "updateKnowledgeBase",
  summary: "Change only the fields sent; null clears a prompt field or the description",
  request: { body: jsonBody(UpdateKnowledgeBaseBody) },
  responses: { 200: jsonContent(KnowledgeBaseSchema, "The knowledge base") },
});
knowledgeBaseRoutes.openapi(update, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:write");
  const updated = await updateKnowledgeBase(c.get("db"), kb.id, c.req.valid("json"));
  return c.json(publicKnowledgeBase(updated), 200);
});

const remove = route("delete", "/knowledge-bases/{id}", "documents:delete", {
  operationId: "deleteKnowledgeBase",
  summary: "Delete a knowledge base with its documents, stored files, chunks and vectors (irreversible)",
  responses: { 204: noContent },
});
knowledgeBaseRoutes.openapi(remove, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:delete");
  await deleteWithCleanup(ctxOf(c), "knowledge_base", kb.id, (db) => deleteKnowledgeBase(db, kb.id));
  return c.body(null, 204);
});
