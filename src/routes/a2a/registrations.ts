import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { extraErrors, jsonBody, jsonContent, noContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { a2aAgentFor, a2aAgentOf, createA2aAgent, seesA2aSecrets, deleteA2aAgent, publicA2aAgent, publicA2aAgentsOf, updateA2aAgent } from "../../services/a2a/registrations";
import { knowledgeBaseFor } from "../../services/knowledge-bases";
import { A2aAgentSchema, CreateA2aAgentBody, UpdateA2aAgentBody } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["External (A2A) agents"]);

export const a2aRegistrationRoutes = createRouter();

const list = route("get", "/knowledge-bases/{id}/a2a-agents", "documents:read", {
  operationId: "listA2aAgents",
  summary: "Registered external agents of a knowledge base (headers decrypted for those who may change them, otherwise \"[redacted]\")",
  responses: { 200: jsonContent(z.object({ a2a_agents: z.array(A2aAgentSchema) }), "Registrations") },
});
a2aRegistrationRoutes.openapi(list, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:read");
  return c.json(await publicA2aAgentsOf(c.env, c.get("db"), kb, await seesA2aSecrets(ctxOf(c), kb)), 200);
});

const create = route("post", "/knowledge-bases/{id}/a2a-agents", "documents:write", {
  operationId: "createA2aAgent", summary: "Register an external A2A agent (its card is fetched and validated now)",
  description:
    "The card is fetched through the URL guard: a private address → 400 url_not_allowed, unreachable → 422 fetch_failed, " +
    "not an A2A card → 422 invalid_agent_card. `headers` must be a serialized JSON object of string values.",
  request: { body: jsonBody(CreateA2aAgentBody) },
  responses: { 201: jsonContent(A2aAgentSchema, "The registration"), ...extraErrors(413, 422) },
});
a2aRegistrationRoutes.openapi(create, async (c) => {
  const kb = await knowledgeBaseFor(ctxOf(c), c.req.valid("param").id, "documents:write");
  const caller = c.get("caller");
  const row = await createA2aAgent(c.env, c.get("db"), kb, c.req.valid("json"), caller.type === "user" ? caller.user.id : caller.key.id);
  return c.json(await publicA2aAgent(c.env, row, true), 201);
});

const get = route("get", "/knowledge-bases/{id}/a2a-agents/{agentId}", "documents:read", {
  operationId: "getA2aAgent", summary: "One registration (headers decrypted for those who may change it, otherwise \"[redacted]\")",
  responses: { 200: jsonContent(A2aAgentSchema, "The registration") },
});
a2aRegistrationRoutes.openapi(get, async (c) => {
  const p = c.req.valid("param");
  const kb = await knowledgeBaseFor(ctxOf(c), p.id, "documents:read");
  const row = await a2aAgentOf(c.get("db"), kb, p.agentId);
  return c.json(await publicA2aAgent(c.env, row, await seesA2aSecrets(ctxOf(c), kb)), 200);
});

const update = route("patch", "/knowledge-bases/{id}/a2a-agents/{agentId}", "documents:write", {
  operationId: "updateA2aAgent", summary: "Change only the fields sent; a new cardUrl re-fetches the card",
  request: { body: jsonBody(UpdateA2aAgentBody) },
  responses: { 200: jsonContent(A2aAgentSchema, "The registration"), ...extraErrors(413, 422) },
});
a2aRegistrationRoutes.openapi(update, async (c) => {
  const p = c.req.valid("param");
  const row = await a2aAgentFor(ctxOf(c), p.id, p.agentId, "documents:write");
  return c.json(await publicA2aAgent(c.env, await updateA2aAgent(c.env, c.get("db"), row, c.req.valid("json")), true), 200);
});

const remove = route("delete", "/knowledge-bases/{id}/a2a-agents/{agentId}", "documents:delete", {
  operationId: "deleteA2aAgent",
  summary: "Remove a registration (chats and agents naming it get an error result from then on)",
  responses: { 204: noContent },
});
a2aRegistrationRoutes.openapi(remove, async (c) => {
  const p = c.req.valid("param");
  await deleteA2aAgent(c.get("db"), await a2aAgentFor(ctxOf(c), p.id, p.agentId, "documents:delete"));
  return c.body(null, 204);
});

