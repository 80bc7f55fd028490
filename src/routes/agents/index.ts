import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonBody, jsonContent, noContent, pageSchema, pagingQuery } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { agentFor, listVersions, publicAgent, publicVersion } from "../../services/agents/agents";
import { archiveAgentFor, createAgentFor, deployAgentFor, listAgentsFor, switchSchedule } from "../../services/agents/manage";
import { AgentSchema, CreateAgentBody, DeployAgentBody, VersionSchema } from "./schemas";
import { agentRunRoutes } from "./runs";
import { routesTagged } from "../define-route";

const route = routesTagged(["Agents"]);

export const agentRoutes = createRouter();

const create = route("post", "/agents", "agents:write", {
  operationId: "createAgent", summary: "Create an agent (version 1)",
  description:
    "Everything is validated up front, each failure a 400 naming the field: the knowledge base (reachable by the caller, " +
    "in `tenant_id`), the model (supported and available), skills (active in the tenant), MCP servers (of the organization), " +
    "connectors, delegates, the schedule (5-field cron, IANA time zone). A schedule binds the caller's identity: scheduled " +
    "runs act as it.",
  request: { body: jsonBody(CreateAgentBody) }, responses: { 201: jsonContent(AgentSchema, "The agent") },
});
agentRoutes.openapi(create, async (c) => c.json(await createAgentFor(ctxOf(c), c.req.valid("json")), 201));

const list = route("get", "/agents", "agents:read", {
  operationId: "listAgents", summary: "Agents of a tenant",
  request: {
    query: pagingQuery(100, 50).extend({ tenant_id: z.string().min(1).max(128), status: z.enum(["active", "archived"]).optional() }),
  },
  responses: { 200: jsonContent(pageSchema("agents", AgentSchema), "Agents, newest first") },
});
agentRoutes.openapi(list, async (c) => c.json(await listAgentsFor(ctxOf(c), c.req.valid("query")), 200));

const get = route("get", "/agents/{id}", "agents:read", {
  operationId: "getAgent", summary: "One agent (its current version)",
  responses: { 200: jsonContent(AgentSchema, "The agent") },
});
agentRoutes.openapi(get, async (c) => c.json(publicAgent(await agentFor(ctxOf(c), c.req.valid("param").id, "agents:read")), 200));

const versions = route("get", "/agents/{id}/versions", "agents:read", {
  operationId: "listAgentVersions", summary: "Every published version, oldest first",
  responses: { 200: jsonContent(z.object({ versions: z.array(VersionSchema) }), "Versions") },
});
agentRoutes.openapi(versions, async (c) => {
  const agent = await agentFor(ctxOf(c), c.req.valid("param").id, "agents:read");
  return c.json({ versions: (await listVersions(c.get("db"), agent.id)).map(publicVersion) }, 200);
});

const deploy = route("post", "/agents/{id}/deploy", "agents:write", {
  operationId: "deployAgent", summary: "Publish a new immutable version (agentVersion + 1); an empty body republishes",
  description: "Takes any configuration field except `tenant_id` and `knowledge_base_id` (400). Runs in flight keep their version.",
  request: { body: jsonBody(DeployAgentBody) },
  responses: { 200: jsonContent(AgentSchema, "The agent at its new version") },
});
agentRoutes.openapi(deploy, async (c) => {
  const agent = await agentFor(ctxOf(c), c.req.valid("param").id, "agents:write");
  return c.json(await deployAgentFor(ctxOf(c), agent, c.req.valid("json")), 200);
});

const schedule = route("patch", "/agents/{id}/schedule", "agents:write", {
  operationId: "setAgentSchedule",
  summary: "Enable or disable the schedule at once, without a new version (re-binds the identity)",
  request: { body: jsonBody(z.object({ enabled: z.boolean() })) },
  responses: { 200: jsonContent(AgentSchema, "The agent") },
});
agentRoutes.openapi(schedule, async (c) => {
  const agent = await agentFor(ctxOf(c), c.req.valid("param").id, "agents:write");
  return c.json(await switchSchedule(ctxOf(c), agent, c.req.valid("json").enabled), 200);
});

const remove = route("delete", "/agents/{id}", "agents:write", {
  operationId: "deleteAgent", summary: "Archive the agent: schedule off, runs kept", responses: { 204: noContent },
});
agentRoutes.openapi(remove, async (c) => {
  await archiveAgentFor(ctxOf(c), await agentFor(ctxOf(c), c.req.valid("param").id, "agents:write"));
  return c.body(null, 204);
});

agentRoutes.route("/", agentRunRoutes);
