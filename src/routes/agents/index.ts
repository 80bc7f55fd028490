import { createRoute, z } from "@hono/zod-openapi";
import { authorize } from "../../auth/authorize";
import { routePermission } from "../../auth/route-permission";
import { badRequest } from "../../lib/errors";
import { errorResponses, IdParam, jsonBody, jsonContent, noContent, pagingQuery, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import {
  agentFor,
  archiveAgent,
  createAgent,
  deployAgent,
  getAgent,
  listAgents,
  listVersions,
  publicAgent,
  publicVersion,
  setScheduleEnabled,
} from "../../services/agents/agents";
import { armSchedule } from "../../services/agents/scheduler";
import { getTenant, tenantScope } from "../../services/tenants";
import { AgentSchema, CreateAgentBody, DeployAgentBody, VersionSchema } from "./schemas";
import { agentRunRoutes } from "./runs";

const tags = ["Agents"];

const create = createRoute({
  method: "post",
  path: "/agents",
  tags,
  operationId: "createAgent",
  ...routePermission("agents:write"),
  summary: "Create an agent (version 1)",
  description:
    "Everything is validated up front, each failure a 400 naming the field: the knowledge base (reachable by the caller, " +
    "in `tenant_id`), the model (supported and available), skills (active in the tenant), MCP servers (of the organization), " +
    "connectors, delegates, the schedule (5-field cron, IANA time zone). A schedule binds the caller's identity: scheduled " +
    "runs act as it.",
  security: userOrKey,
  request: { body: jsonBody(CreateAgentBody) },
  responses: { 201: jsonContent(AgentSchema, "The agent"), ...errorResponses },
});

const list = createRoute({
  method: "get",
  path: "/agents",
  tags,
  operationId: "listAgents",
  ...routePermission("agents:read"),
  summary: "Agents of a tenant",
  security: userOrKey,
  request: {
    query: pagingQuery(100, 50).extend({ tenant_id: z.string().min(1).max(128), status: z.enum(["active", "archived"]).optional() }),
  },
  responses: {
    200: jsonContent(
      z.object({ agents: z.array(AgentSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
      "Agents, newest first",
    ),
    ...errorResponses,
  },
});

const get = createRoute({
  method: "get",
  path: "/agents/{id}",
  tags,
  operationId: "getAgent",
  ...routePermission("agents:read"),
  summary: "One agent (its current version)",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(AgentSchema, "The agent"), ...errorResponses },
});

const versions = createRoute({
  method: "get",
  path: "/agents/{id}/versions",
  tags,
  operationId: "listAgentVersions",
  ...routePermission("agents:read"),
  summary: "Every published version, oldest first",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 200: jsonContent(z.object({ versions: z.array(VersionSchema) }), "Versions"), ...errorResponses },
});

const deploy = createRoute({
  method: "post",
  path: "/agents/{id}/deploy",
  tags,
  operationId: "deployAgent",
  ...routePermission("agents:write"),
  summary: "Publish a new immutable version (agentVersion + 1); an empty body republishes",
  description: "Takes any configuration field except `tenant_id` and `knowledge_base_id` (400). Runs in flight keep their version.",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(DeployAgentBody) },
  responses: { 200: jsonContent(AgentSchema, "The agent at its new version"), ...errorResponses },
});

const schedule = createRoute({
  method: "patch",
  path: "/agents/{id}/schedule",
  tags,
  operationId: "setAgentSchedule",
  ...routePermission("agents:write"),
  summary: "Enable or disable the schedule at once, without a new version (re-binds the identity)",
  security: userOrKey,
  request: { params: IdParam, body: jsonBody(z.object({ enabled: z.boolean() })) },
  responses: { 200: jsonContent(AgentSchema, "The agent"), ...errorResponses },
});

const remove = createRoute({
  method: "delete",
  path: "/agents/{id}",
  tags,
  operationId: "deleteAgent",
  ...routePermission("agents:write"),
  summary: "Archive the agent: schedule off, runs kept",
  security: userOrKey,
  request: { params: IdParam },
  responses: { 204: noContent, ...errorResponses },
});

export const agentRoutes = createRouter()
  .openapi(create, async (c) => {
    const agent = await createAgent(c, c.req.valid("json"));
    if (agent.scheduleEnabled) await armSchedule(c.env, agent.id);
    return c.json(publicAgent((await getAgent(c.get("db"), agent.id))!), 201);
  })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("db");
    const caller = c.get("caller");
    const tenant = await getTenant(db, q.tenant_id);
    await authorize(c, "agents:read", tenantScope(tenant), { what: "Tenant", addressedBy: "param" });
    const onlyKbId = caller.type === "api_key" ? caller.key.knowledgeBaseId : null;
    const { rows, total } = await listAgents(db, tenant!.id, { onlyKbId, limit: q.limit, offset: q.offset, status: q.status });
    return c.json({ agents: rows.map(publicAgent), total, limit: q.limit, offset: q.offset }, 200);
  })
  .openapi(get, async (c) => c.json(publicAgent(await agentFor(c, c.req.valid("param").id, "agents:read")), 200))
  .openapi(versions, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:read");
    return c.json({ versions: (await listVersions(c.get("db"), agent.id)).map(publicVersion) }, 200);
  })
  .openapi(deploy, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:write");
    const body = c.req.valid("json");
    for (const f of ["tenant_id", "knowledge_base_id"] as const) {
      if (body[f] !== undefined) throw badRequest(`${f} is fixed at creation and cannot be deployed`, [{ path: `body.${f}`, message: "Not accepted by deploy" }]);
    }
    const { tenant_id: _t, knowledge_base_id: _k, ...config } = body;
    const updated = await deployAgent(c, agent, config);
    if (config.schedule !== undefined) await armSchedule(c.env, agent.id);
    return c.json(publicAgent((await getAgent(c.get("db"), updated.id))!), 200);
  })
  .openapi(schedule, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:write");
    await setScheduleEnabled(c, agent, c.req.valid("json").enabled);
    await armSchedule(c.env, agent.id);
    return c.json(publicAgent((await getAgent(c.get("db"), agent.id))!), 200);
  })
  .openapi(remove, async (c) => {
    const agent = await agentFor(c, c.req.valid("param").id, "agents:write");
    await archiveAgent(c.get("db"), agent.id);
    if (agent.scheduleCron) await armSchedule(c.env, agent.id);
    return c.body(null, 204);
  })
  .route("/", agentRunRoutes);
