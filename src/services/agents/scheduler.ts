import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import { keyHasScope, keyReach } from "../../auth/authorize";
import { keyStillBacked } from "../../auth/policy";
import type { KeyCaller } from "../../auth/caller";
import { PERMISSIONS } from "../../auth/permissions";
import type { Scope } from "../../auth/scopes";
import type { Database } from "../../db/client";
import { agentRuns, agents, apiKeys, organizationMembers, organizations, tenants, type Agent } from "../../db/schema";
import type { Env } from "../../env";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { Actor } from "../billing/metering";
import { getKnowledgeBase } from "../knowledge-bases";
import { getModel } from "../models/registry";
import { getAgent } from "./agents";
import { executeRunJson } from "./execute";
import { failRun, startRun } from "./runs";
import { nextOccurrence, periodAfter } from "./schedule";

/**
 * Scheduled runs. Each scheduled agent has one Durable Object
 * (src/durable/agent-scheduler.ts) holding an alarm for its next occurrence;
 * the Worker's minute cron (`sweepSchedules`) re-arms lost alarms and handles
 * missed occurrences. An occurrence is the row (agent_id, scheduled_for),
 * UNIQUE in D1: whoever inserts it first owns it, every other trigger (a
 * duplicate alarm, the sweep, a retry) finds it and does nothing, so it runs
 * once.
 */

/** Don't second-guess an alarm that is only a little late: the sweep acts after this. */
export const SWEEP_GRACE_MS = 30_000;

function schedulerStub(env: Env, agentId: string) {
  return env.AGENT_SCHEDULER.get(env.AGENT_SCHEDULER.idFromName(agentId));
}

/** (Re)arms or disarms the agent's alarm from its row; returns the next occurrence. Enable/disable act at once. */
export async function armSchedule(env: Env, agentId: string): Promise<string | null> {
  const r = await schedulerStub(env, agentId).arm(agentId);
  return r.next_run_at;
}

export interface BoundIdentity {
  actor: Actor;
  subject: string;
  owner: { userId: string | null; apiKeyId: string | null; externalSubjectId: string | null };
}

/**
 * The identity bound when the schedule was last set, if it may still run the
 * agent: a member whose role allows agents:run, or a live key with query:rag
 * that still reaches the agent's tenant and knowledge base. Null = revoked.
 */
export async function boundIdentity(db: Database, agent: Agent): Promise<BoundIdentity | null> {
  const org = await db.select({ status: organizations.status }).from(organizations).where(eq(organizations.id, agent.organizationId)).get();
  if (!org || org.status !== "active") return null;
  const rule = PERMISSIONS["agents:run"];
  if (agent.scheduleUserId) {
    const m = await db
      .select({ role: organizationMembers.role })
      .from(organizationMembers)
      .where(and(eq(organizationMembers.organizationId, agent.organizationId), eq(organizationMembers.userId, agent.scheduleUserId)))
      .get();
    if (!m || !(rule.roles as readonly string[]).includes(m.role)) return null;
    return { actor: { userId: agent.scheduleUserId }, subject: `user:${agent.scheduleUserId}`, owner: { userId: agent.scheduleUserId, apiKeyId: null, externalSubjectId: null } };
  }
  if (agent.scheduleApiKeyId) {
    const key = await db.select().from(apiKeys).where(eq(apiKeys.id, agent.scheduleApiKeyId)).get();
    if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= nowIso())) return null;
    // The same rule as a request with the key (src/auth/policy.ts): it stops with its member.
    const creator = key.createdBy
      ? await db.select({ role: organizationMembers.role }).from(organizationMembers)
          .where(and(eq(organizationMembers.organizationId, key.organizationId), eq(organizationMembers.userId, key.createdBy))).get()
      : undefined;
    if (!keyStillBacked(creator?.role ?? null, key.scopes)) return null;
    const scopes = new Set(key.scopes as Scope[]);
    const caller: KeyCaller = { type: "api_key", key, scopes, isAdmin: scopes.has("admin:full" as Scope), organizationStatus: org.status };
    if (!keyHasScope(caller, rule.scope)) return null;
    const reach = keyReach(caller, { organizationId: agent.organizationId, environmentId: agent.environmentId, tenantId: agent.tenantId, knowledgeBaseId: agent.knowledgeBaseId });
    if (reach !== "ok") return null;
    return { actor: { apiKeyId: key.id }, subject: `key:${key.id}`, owner: { userId: null, apiKeyId: key.id, externalSubjectId: null } };
  }
  return null;
}

export type OccurrenceResult = "ran" | "duplicate" | "skipped" | "failed";

/** Creates the occurrence row if it is new; true when this caller owns it (and must run it). */
async function claimOccurrence(db: Database, agent: Agent, scheduledFor: string): Promise<string | null> {
  const at = nowIso();
  await db.run(sql`
    INSERT INTO agent_runs (id, agent_id, organization_id, tenant_id, agent_version, status, trigger, scheduled_for, created_at)
    VALUES (${newId("run")}, ${agent.id}, ${agent.organizationId}, ${agent.tenantId}, ${agent.agentVersion}, 'queued', 'schedule', ${scheduledFor}, ${at})
    ON CONFLICT (agent_id, scheduled_for) DO NOTHING`);
  // queued -> running exactly once, whoever inserted the row (a retry after a crash before this point takes it over).
  const claimed = await db
    .update(agentRuns)
    .set({ status: "running", startedAt: at })
    .where(and(eq(agentRuns.agentId, agent.id), eq(agentRuns.scheduledFor, scheduledFor), eq(agentRuns.status, "queued")))
    .returning({ id: agentRuns.id })
    .all();
  return claimed[0]?.id ?? null;
}

/**
 * Runs one occurrence, at most once whatever calls it how often. `afterClaim`
 * runs right after the occurrence is claimed (the scheduler arms the next
 * alarm there, so a long run never delays the next occurrence).
 */
export async function runOccurrence(
  env: Env,
  db: Database,
  agentId: string,
  scheduledFor: string,
  afterClaim?: () => Promise<unknown>,
): Promise<OccurrenceResult> {
  const agent = await getAgent(db, agentId);
  if (!agent || agent.status !== "active" || !agent.scheduleEnabled || !agent.scheduleCron) return "skipped";
  const runId = await claimOccurrence(db, agent, scheduledFor);
  if (!runId) return "duplicate";
  await afterClaim?.();

  const identity = await boundIdentity(db, agent);
  if (!identity) {
    await failRun(db, runId, "identity_revoked", "The identity bound to this schedule no longer has access to the agent; set the schedule again");
    return "failed";
  }
  // Credits before any work: recorded as a failed run.
  const t = await db.select({ pool: tenants.creditsPool, used: tenants.creditsUsed }).from(tenants).where(eq(tenants.id, agent.tenantId)).get();
  if (!t || t.pool - t.used <= 0) {
    await failRun(db, runId, "insufficient_credits", "The tenant has no available credits");
    return "failed";
  }
  const kb = await getKnowledgeBase(db, agent.knowledgeBaseId);
  if (!kb || kb.status !== "active") {
    await failRun(db, runId, "knowledge_base_inactive", "The agent's knowledge base is inactive");
    return "failed";
  }
  const model = getModel(env, agent.config.model);
  if (!model?.available) {
    await failRun(db, runId, "model_unavailable", `Model ${agent.config.model} is not available`);
    return "failed";
  }
  try {
    const { cmd } = await startRun(db, {
      agent,
      kb,
      trigger: "schedule",
      content: agent.scheduleMessage || agent.config.goal,
      actor: identity.actor,
      subject: identity.subject,
      chat: null,
      owner: identity.owner,
      scheduledFor,
      runId,
      stream: false,
    });
    await executeRunJson(env, db, cmd);
  } catch (e) {
    console.error(`agent ${agentId}: scheduled run ${runId} failed`, e);
    await failRun(db, runId, "internal_error", "The scheduled run could not be completed");
    return "failed";
  }
  return "ran";
}

/** Records an occurrence nobody ran in time (no-op when it exists). */
async function recordMissed(db: Database, agent: Agent, scheduledFor: string) {
  const at = nowIso();
  await db.run(sql`
    INSERT INTO agent_runs (id, agent_id, organization_id, tenant_id, agent_version, status, trigger, scheduled_for,
      error_code, error_message, started_at, ended_at, created_at)
    VALUES (${newId("run")}, ${agent.id}, ${agent.organizationId}, ${agent.tenantId}, ${agent.agentVersion}, 'failed', 'schedule',
      ${scheduledFor}, 'missed_occurrence', 'The occurrence was missed by more than one period', ${at}, ${at}, ${at})
    ON CONFLICT (agent_id, scheduled_for) DO NOTHING`);
}

const MAX_MISSED_RECORDED = 100;

/**
 * The Cron Trigger's safety net: every enabled schedule whose armed occurrence
 * is more than SWEEP_GRACE_MS overdue lost its alarm. The latest occurrence due
 * is run if it was missed by less than one period; older ones are recorded
 * failed (`missed_occurrence`); then the alarm is re-armed.
 */
export async function sweepSchedules(env: Env, db: Database, at: Date, waitUntil: (p: Promise<unknown>) => void): Promise<{ rearmed: number; ran: number; missed: number }> {
  const cutoff = new Date(at.getTime() - SWEEP_GRACE_MS).toISOString();
  const due = await db
    .select()
    .from(agents)
    .where(and(eq(agents.status, "active"), eq(agents.scheduleEnabled, true), or(isNull(agents.nextRunAt), lte(agents.nextRunAt, cutoff))))
    .limit(500)
    .all();
  let ran = 0;
  let missed = 0;
  for (const agent of due) {
    const cron = agent.scheduleCron!;
    const tz = agent.scheduleTimezone ?? "UTC";
    if (agent.nextRunAt) {
      // Every occurrence from the armed one up to now.
      const occ: Date[] = [];
      for (let d: Date | null = new Date(agent.nextRunAt); d && d <= at && occ.length < MAX_MISSED_RECORDED + 1; d = nextOccurrence(cron, tz, d)) occ.push(d);
      const latest = occ.at(-1);
      for (const d of occ.slice(0, -1)) {
        await recordMissed(db, agent, d.toISOString());
        missed++;
      }
      if (latest) {
        if (at.getTime() - latest.getTime() < periodAfter(cron, tz, latest)) {
          ran++;
          const p = schedulerStub(env, agent.id).runNow(agent.id, latest.toISOString());
          waitUntil(p);
        } else {
          await recordMissed(db, agent, latest.toISOString());
          missed++;
        }
      }
    }
    await armSchedule(env, agent.id);
  }
  // Runs left "running" for an hour lost their turn (a crash): settle them as failed.
  await db.run(sql`
    UPDATE agent_runs SET status = 'failed', error_code = 'interrupted', error_message = 'The run was interrupted', ended_at = ${at.toISOString()}
    WHERE status IN ('queued', 'running') AND created_at < ${new Date(at.getTime() - 3_600_000).toISOString()}`);
  return { rearmed: due.length, ran, missed };
}
