import type { Agent } from "../../db/schema";
import type { ServiceContext } from "../../contracts/context";
import { badRequest } from "../../lib/errors";
import { tenantFor } from "../tenants";
import { archiveAgent, createAgent, deployAgent, getAgent, listAgents, publicAgent, setScheduleEnabled, type AgentConfigInput } from "./agents";
import { armSchedule } from "./scheduler";
import { pageBody } from "../../lib/page-body";

/**
 * What the agents API does for its caller, around the agent records: every change that touches the
 * schedule re-arms the agent's scheduler (which disarms it when there is nothing left to run), and
 * every answer is the agent as stored afterwards.
 */

async function stored(c: ServiceContext, id: string) {
  return publicAgent((await getAgent(c.db, id))!);
}

export async function createAgentFor(c: ServiceContext, input: AgentConfigInput & { tenant_id: string; knowledge_base_id: string }) {
  const agent = await createAgent(c, input);
  if (agent.scheduleEnabled) await armSchedule(c.env, agent.id);
  return stored(c, agent.id);
}

/** The tenant's agents; a key restricted to one knowledge base sees only that knowledge base's agents. */
export async function listAgentsFor(c: ServiceContext, q: { tenant_id: string; limit: number; offset: number; status?: "active" | "archived" }) {
  const caller = c.caller;
  const tenant = await tenantFor(c, q.tenant_id, "agents:read", { addressedBy: "param" });
  const onlyKbId = caller.type === "api_key" ? caller.key.knowledgeBaseId : null;
  const { rows, total } = await listAgents(c.db, tenant.id, { onlyKbId, limit: q.limit, offset: q.offset, status: q.status });
  return pageBody("agents", { rows, total }, q, publicAgent);
}

/** A new version from the fields sent; the tenant and knowledge base are fixed at creation (400). */
export async function deployAgentFor(
  c: ServiceContext,
  agent: Agent,
  body: Partial<AgentConfigInput> & { tenant_id?: unknown; knowledge_base_id?: unknown },
) {
  for (const f of ["tenant_id", "knowledge_base_id"] as const) {
    if (body[f] !== undefined) throw badRequest(`${f} is fixed at creation and cannot be deployed`, [{ path: `body.${f}`, message: "Not accepted by deploy" }]);
  }
  const { tenant_id: _t, knowledge_base_id: _k, ...config } = body;
  const updated = await deployAgent(c, agent, config);
  if (config.schedule !== undefined) await armSchedule(c.env, agent.id);
  return stored(c, updated.id);
}

export async function switchSchedule(c: ServiceContext, agent: Agent, enabled: boolean) {
  await setScheduleEnabled(c, agent, enabled);
  await armSchedule(c.env, agent.id);
  return stored(c, agent.id);
}

/** Archives the agent; a scheduled one is disarmed (its runs and chats stay readable). */
export async function archiveAgentFor(c: ServiceContext, agent: Agent): Promise<void> {
  await archiveAgent(c.db, agent.id);
  if (agent.scheduleCron) await armSchedule(c.env, agent.id);
}
