import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, extraErrors, IdParam, jsonBody, jsonContent, noContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  a2aAgentOf,
  createA2aAgent,
  deleteA2aAgent,
  listA2aAgents,
  publicA2aAgent,
  updateA2aAgent,
} from "../../services/a2a/registrations";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { A2aAgentParams, A2aAgentSchema, CreateA2aAgentBody, UpdateA2aAgentBody } from "./schemas";

const tags = ["External (A2A) agents"];

const list = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/a2a-agents",
  tags,
  operationId: "listA2aAgents",
  ...routePermission("documents:read"),
  summary: "Registered external agents of a knowledge base (with decrypted headers and metadata)",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(z.object({ a2a_agents: z.array(A2aAgentSchema) }), "Registrations"), ...errorResponses },
});

const create = createRoute({
  method: "post",
  path: "/knowledge-bases/{id}/a2a-agents",
  tags,
  operationId: "createA2aAgent",
  ...routePermission("documents:write"),
  summary: "Register an external A2A agent (its card is fetched and validated now)",
  description:
    "The card is fetched through the URL guard: a private address → 400 url_not_allowed, unreachable → 422 fetch_failed, " +
    "not an A2A card → 422 invalid_agent_card. `headers` must be a serialized JSON object of string values.",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(CreateA2aAgentBody) },
  responses: { 201: jsonContent(A2aAgentSchema, "The registration"), ...extraErrors(413, 422), ...errorResponses },
});

const get = createRoute({
  method: "get",
  path: "/knowledge-bases/{id}/a2a-agents/{agentId}",
  tags,
  operationId: "getA2aAgent",
  ...routePermission("documents:read"),
  summary: "One registration (with decrypted headers and metadata)",
  security: userOrKey,
  request: { params: A2aAgentParams },
  responses: { 200: jsonContent(A2aAgentSchema, "The registration"), ...errorResponses },
});

const update = createRoute({
  method: "patch",
  path: "/knowledge-bases/{id}/a2a-agents/{agentId}",
  tags,
  operationId: "updateA2aAgent",
  ...routePermission("documents:write"),
  summary: "Change only the fields sent; a new cardUrl re-fetches the card",
  security: userOrKey,
  request: { params: A2aAgentParams, body: jsonBody(UpdateA2aAgentBody) },
  responses: { 200: jsonContent(A2aAgentSchema, "The registration"), ...extraErrors(413, 422), ...errorResponses },
});

const remove = createRoute({
  method: "delete",
  path: "/knowledge-bases/{id}/a2a-agents/{agentId}",
  tags,
  operationId: "deleteA2aAgent",
  ...routePermission("documents:delete"),
  summary: "Remove a registration (chats and agents naming it get an error result from then on)",
  security: userOrKey,
  request: { params: A2aAgentParams },
  responses: { 204: noContent, ...errorResponses },
});

export const a2aRegistrationRoutes = createRouter()
  .openapi(list, async (c) => {
    const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:read");
    const rows = await listA2aAgents(c.get("db"), kb.id);
    return c.json({ a2a_agents: await Promise.all(rows.map((r) => publicA2aAgent(c.env, r))) }, 200);
  })
  .openapi(create, async (c) => {
    const kb = await knowledgeBaseFor(c, c.req.valid("param").id, "documents:write");
    const caller = c.get("caller");
    const row = await createA2aAgent(c.env, c.get("db"), kb, c.req.valid("json"), caller.type === "user" ? caller.user.id : caller.key.id);
    return c.json(await publicA2aAgent(c.env, row), 201);
  })
  .openapi(get, async (c) => {
    const p = c.req.valid("param");
    const kb = await knowledgeBaseFor(c, p.id, "documents:read");
    const row = await a2aAgentOf(c.get("db"), kb, p.agentId);
    return c.json(await publicA2aAgent(c.env, row), 200);
  })
  .openapi(update, async (c) => {
    const p = c.req.valid("param");
    const kb = await knowledgeBaseFor(c, p.id, "documents:write");
    const row = await a2aAgentOf(c.get("db"), kb, p.agentId);
    const updated = await updateA2aAgent(c.env, c.get("db"), row, c.req.valid("json"));
    return c.json(await publicA2aAgent(c.env, updated), 200);
  })
  .openapi(remove, async (c) => {
    const p = c.req.valid("param");
    const kb = await knowledgeBaseFor(c, p.id, "documents:delete");
    const row = await a2aAgentOf(c.get("db"), kb, p.agentId);
    await deleteA2aAgent(c.get("db"), row);
    return c.body(null, 204);
  });
