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

async function stored(ctx: ServiceContext, id: string) {
  return publicAgent((await getAgent(ctx.db, id))!);
}

export async function createAgentFor(ctx: ServiceContext, input: AgentConfigInput & { tenant_id: string; knowledge_base_id: string }) {
  const agent = await createAgent(ctx, input);
  if (agent.scheduleEnabled) await armSchedule(ctx.env, agent.id);
  return stored(ctx, agent.id);
}

/** The tenant's agents; a key restricted to one knowledge base sees only that knowledge base's agents. */
export async function listAgentsFor(ctx: ServiceContext, q: { tenant_id: string; limit: number; offset: number; status?: "active" | "archived" }) {
  const caller = ctx.caller;
  const tenant = await tenantFor(ctx, q.tenant_id, "agents:read", { addressedBy: "param" });
  const onlyKbId = caller.type === "api_key" ? caller.key.knowledgeBaseId : null;
  const { rows, total } = await listAgents(ctx.db, tenant.id, { onlyKbId, limit: q.limit, offset: q.offset, status: q.status });
  return pageBody("agents", { rows, total }, q, publicAgent);
}

/** A new version from the fields sent; the tenant and knowledge base are fixed at creation (400). */
export async function deployAgentFor(
  ctx: ServiceContext,
  agent: Agent,
  body: Partial<AgentConfigInput> & { tenant_id?: unknown; knowledge_base_id?: unknown },
) {
  for (const f of ["tenant_id", "knowledge_base_id"] as const) {
    if (body[f] !== undefined) throw badRequest(`${f} is fixed at creation and cannot be deployed`, [{ path: `body.${f}`, message: "Not accepted by deploy" }]);
  }
  const { tenant_id: _t, knowledge_base_id: _k, ...config } = body;
  const updated = await deployAgent(ctx, agent, config);
  if (config.schedule !== undefined) await armSchedule(ctx.env, agent.id);
  return stored(ctx, updated.id);
}

export async function switchSchedule(ctx: ServiceContext, agent: Agent, enabled: boolean) {
  await setScheduleEnabled(ctx, agent, enabled);
  await armSchedule(ctx.env, agent.id);
  return stored(ctx, agent.id);
}

/** Archives the agent; a scheduled one is disarmed (its runs and chats stay readable). */
export async function archiveAgentFor(ctx: ServiceContext, agent: Agent): Promise<void> {
  await archiveAgent(ctx.db, agent.id);
  if (agent.scheduleCron) await armSchedule(ctx.env, agent.id);
}
