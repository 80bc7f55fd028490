import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { ServiceContext } from "../../contracts/context";
import { authorize, keyReach } from "../../auth/authorize";
import type { Caller } from "../../contracts/caller";
import { loadAuthorized } from "../../auth/load";
import type { Permission } from "../../auth/permissions";
import { registerResource, type ResourceScope } from "../../auth/resources";
import type { Database } from "../../db/client";
import { agents, agentVersions, type Agent, type AgentConfig, type AgentScheduleConfig, type AgentSkillRef, type AgentVersion } from "../../db/schema";
import { ApiError, badRequest, conflict } from "../../lib/errors";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import { getKnowledgeBase } from "../knowledge-bases";
import { getTenant, tenantScope } from "../tenants";
import { nextOccurrence, parseSchedule } from "./schedule";
import { validateConfig } from "./validate";
import { pageOf } from "../../db/page";

/**
 * Agents: a versioned configuration over one knowledge base. Creation is
 * version 1; every deploy publishes an immutable snapshot (agent_versions) and
 * makes it current. The schedule's enabled switch and its bound identity live
 * on the agent row and change without a new version.
 */

export const agentScope = (a: Pick<Agent, "organizationId" | "environmentId" | "tenantId" | "knowledgeBaseId"> | null | undefined): ResourceScope | null =>
  a ? { organizationId: a.organizationId, environmentId: a.environmentId, tenantId: a.tenantId, knowledgeBaseId: a.knowledgeBaseId } : null;

export async function getAgent(db: Database, id: string): Promise<Agent | undefined> {
  return db.select().from(agents).where(eq(agents.id, id)).get();
}

registerResource("agent", async (db, id) => agentScope(await getAgent(db, id)));

/** An agent by id, authorized for `permission` (404 when missing or out of reach). */
export async function agentFor(ctx: ServiceContext, id: string, permission: Permission): Promise<Agent> {
  const agent = await getAgent(ctx.db, id);
  return (await loadAuthorized(ctx, permission, agent, (a) => agentScope(a)!, { what: "Agent" })).row;
}

export function publicSchedule(a: Agent) {
  if (!a.scheduleCron) return null;
  return {
    cron: a.scheduleCron,
    timezone: a.scheduleTimezone ?? "UTC",
    enabled: a.scheduleEnabled,
    message: a.scheduleMessage,
    next_run_at: a.scheduleEnabled && a.status === "active" ? a.nextRunAt : null,
    bound_identity: a.scheduleUserId
      ? { type: "user" as const, id: a.scheduleUserId }
      : a.scheduleApiKeyId
        ? { type: "api_key" as const, id: a.scheduleApiKeyId }
        : null,
  };
}

function configFields(cfg: AgentConfig) {
  return {
    name: cfg.name,
    description: cfg.description,
    goal: cfg.goal,
    instructions: cfg.instructions,
    model: cfg.model,
    agent_mode: cfg.agent_mode,
    skills: cfg.skills,
    mcp_server_ids: cfg.mcp_server_ids,
    connector_slugs: cfg.connector_slugs,
    websearch_enable: cfg.websearch_enable,
    delegate_agent_ids: cfg.delegate_agent_ids,
    a2a_agent_ids: cfg.a2a_agent_ids,
  };
}

export function publicAgent(a: Agent) {
  return {
    id: a.id,
    tenant_id: a.tenantId,
    knowledge_base_id: a.knowledgeBaseId,
    agentVersion: a.agentVersion,
    status: a.status,
    ...configFields(a.config),
    schedule: publicSchedule(a),
    archived_at: a.archivedAt,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

export function publicVersion(v: AgentVersion) {
  return { agentVersion: v.version, config: { ...configFields(v.config), schedule: v.config.schedule }, created_at: v.createdAt, created_by: v.createdBy };
}

export interface AgentConfigInput {
  name: string;
  description?: string | null;
  goal: string;
  instructions?: string | null;
  model: string;
  agent_mode?: "quick" | "deep";
  skills?: AgentSkillRef[];
  mcp_server_ids?: string[];
  connector_slugs?: string[];
  websearch_enable?: boolean;
  delegate_agent_ids?: string[];
  a2a_agent_ids?: string[];
  schedule?: string | { cron: string; timezone?: string; enabled?: boolean; message?: string | null } | null;
}

const callerId = (caller: Caller) => (caller.type === "user" ? caller.user.id : caller.key.id);

function normalize(input: AgentConfigInput, base?: AgentConfig): AgentConfig {
  const pick = <K extends keyof AgentConfigInput>(k: K, dflt: any) => (input[k] !== undefined ? input[k] : base ? (base as any)[k] : dflt);
  const schedule = input.schedule !== undefined ? parseSchedule(input.schedule) : (base?.schedule ?? null);
  return {
    name: pick("name", ""),
    description: pick("description", null) ?? null,
    goal: pick("goal", ""),
    instructions: pick("instructions", null) ?? null,
    model: pick("model", ""),
    agent_mode: pick("agent_mode", "deep"),
    skills: pick("skills", []),
    mcp_server_ids: [...new Set<string>(pick("mcp_server_ids", []))],
    connector_slugs: [...new Set<string>(pick("connector_slugs", []))],
    websearch_enable: pick("websearch_enable", false),
    delegate_agent_ids: [...new Set<string>(pick("delegate_agent_ids", []))],
    a2a_agent_ids: [...new Set<string>(pick("a2a_agent_ids", []))],
    schedule,
  };
}

function scheduleColumns(s: AgentScheduleConfig | null, caller: Caller, now: Date) {
  if (!s) {
    return { scheduleCron: null, scheduleTimezone: null, scheduleMessage: null, scheduleEnabled: false, scheduleUserId: null, scheduleApiKeyId: null, nextRunAt: null };
  }
  const next = s.enabled ? nextOccurrence(s.cron, s.timezone, now) : null;
  return {
    scheduleCron: s.cron,
    scheduleTimezone: s.timezone,
    scheduleMessage: s.message,
    scheduleEnabled: s.enabled,
    // The identity the scheduled runs act as: whoever set the schedule last.
    scheduleUserId: caller.type === "user" ? caller.user.id : null,
    scheduleApiKeyId: caller.type === "api_key" ? caller.key.id : null,
    nextRunAt: next ? next.toISOString() : null,
  };
}

export async function createAgent(ctx: ServiceContext, input: AgentConfigInput & { tenant_id: string; knowledge_base_id: string }): Promise<Agent> {
  const db = ctx.db;
  const caller = ctx.caller;
  const tenant = await getTenant(db, input.tenant_id);
  await authorize(ctx, "agents:write", tenantScope(tenant), { what: "Tenant", addressedBy: "param" });

  // The knowledge base must be one this caller reaches, in this tenant.
  const kb = await getKnowledgeBase(db, input.knowledge_base_id);
  const reachable =
    kb &&
    kb.organizationId === tenant!.organizationId &&
    (caller.type === "user" || keyReach(caller, { organizationId: kb.organizationId, environmentId: kb.environmentId, tenantId: kb.tenantId, knowledgeBaseId: kb.id }) === "ok");
  if (!reachable) {
    throw badRequest("The knowledge base does not exist or is not accessible with these credentials", [
      { path: "body.knowledge_base_id", message: "Knowledge base not found or not accessible" },
    ]);
  }
  if (kb.tenantId !== tenant!.id) {
    throw new ApiError("tenant_mismatch", "tenant_id does not match the knowledge base's tenant", {
      details: [{ path: "body.tenant_id", message: "Does not match the knowledge base's tenant" }],
    });
  }
  const cfg = normalize(input);
  await validateConfig(ctx, { id: null, organizationId: kb.organizationId, environmentId: kb.environmentId, tenantId: kb.tenantId, knowledgeBaseId: kb.id }, cfg);

  const now = new Date();
  const at = now.toISOString();
  const agent: Agent = {
    id: newId("agt"),
    organizationId: kb.organizationId,
    environmentId: kb.environmentId,
    tenantId: kb.tenantId,
    knowledgeBaseId: kb.id,
    status: "active",
    agentVersion: 1,
    config: cfg,
    ...scheduleColumns(cfg.schedule, caller, now),
    createdBy: callerId(caller),
    archivedAt: null,
    createdAt: at,
    updatedAt: at,
  };
  await db.batch([
    db.insert(agents).values(agent),
    db.insert(agentVersions).values({ agentId: agent.id, version: 1, config: cfg, createdBy: callerId(caller), createdAt: at }),
  ]);
  return agent;
}

export function assertActive(agent: Agent) {
  if (agent.status !== "active") throw conflict("agent_archived", "This agent is archived; it no longer runs or changes");
}

/** Publishes version N+1: the current configuration with the sent fields changed (an empty body republishes). */
export async function deployAgent(ctx: ServiceContext, agent: Agent, input: Partial<AgentConfigInput>): Promise<Agent> {
  assertActive(agent);
  const db = ctx.db;
  const caller = ctx.caller;
  const cfg = normalize(input as AgentConfigInput, agent.config);
  await validateConfig(ctx, agent, cfg);
  const now = new Date();
  const at = now.toISOString();
  const version = agent.agentVersion + 1;
  // The schedule columns change only when the deploy names a schedule (that re-binds the identity).
  const sched = input.schedule !== undefined ? scheduleColumns(cfg.schedule, caller, now) : {};
  // Optimistic: two deploys racing cannot both publish the same number (PK on agent_versions).
  try {
    await db.batch([
      db.insert(agentVersions).values({ agentId: agent.id, version, config: cfg, createdBy: callerId(caller), createdAt: at }),
      db
        .update(agents)
        .set({ agentVersion: version, config: cfg, ...sched, updatedAt: at })
        .where(and(eq(agents.id, agent.id), eq(agents.agentVersion, agent.agentVersion))),
    ]);
  } catch (e) {
    if (String((e as Error).message).includes("UNIQUE")) throw conflict("conflict", "Another deploy of this agent happened at the same time; retry");
    throw e;
  }
  return (await getAgent(db, agent.id))!;
}

export async function setScheduleEnabled(ctx: ServiceContext, agent: Agent, enabled: boolean): Promise<Agent> {
  assertActive(agent);
  if (!agent.scheduleCron) {
    throw badRequest("This agent has no schedule; deploy one with `schedule` first", [{ path: "body.enabled", message: "The agent has no schedule" }]);
  }
  const now = new Date();
  const caller = ctx.caller;
  const next = enabled ? nextOccurrence(agent.scheduleCron, agent.scheduleTimezone ?? "UTC", now) : null;
  await ctx
    .db
    .update(agents)
    .set({
      scheduleEnabled: enabled,
      nextRunAt: next ? next.toISOString() : null,
      scheduleUserId: caller.type === "user" ? caller.user.id : null,
      scheduleApiKeyId: caller.type === "api_key" ? caller.key.id : null,
      updatedAt: now.toISOString(),
    })
    .where(eq(agents.id, agent.id));
  return (await getAgent(ctx.db, agent.id))!;
}

/** Archives: schedule off, runs kept. Idempotent. */
export async function archiveAgent(db: Database, agentId: string): Promise<void> {
  const at = nowIso();
  await db
    .update(agents)
    .set({ status: "archived", scheduleEnabled: false, nextRunAt: null, archivedAt: sql`COALESCE(${agents.archivedAt}, ${at})`, updatedAt: at })
    .where(eq(agents.id, agentId));
}

export async function listAgents(db: Database, tenantId: string, opts: { onlyKbId?: string | null; limit: number; offset: number; status?: "active" | "archived" }) {
  const conds = [eq(agents.tenantId, tenantId)];
  if (opts.onlyKbId) conds.push(eq(agents.knowledgeBaseId, opts.onlyKbId));
  if (opts.status) conds.push(eq(agents.status, opts.status));
  const where = and(...conds);
  return pageOf(db, agents, where, [desc(agents.createdAt), desc(agents.id)], opts);
}

export async function listVersions(db: Database, agentId: string) {
  return db.select().from(agentVersions).where(eq(agentVersions.agentId, agentId)).orderBy(asc(agentVersions.version)).all();
}

export async function agentsOfKnowledgeBase(db: Database, kbId: string) {
  return db.select().from(agents).where(eq(agents.knowledgeBaseId, kbId)).all();
}
