import { and, eq, isNull, lte, or, sql } from "drizzle-orm";
import { keyHasScope, keyReach } from "../../auth/authorize";
import { keyStillBacked } from "../../contracts/access";
import type { KeyCaller } from "../../contracts/caller";
import { PERMISSIONS } from "../../auth/permissions";
import type { Scope } from "../../contracts/scopes";
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
import { leaseUntil } from "../recovery/leases";
import { periodAfter, previousOccurrences } from "./schedule";

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
    // The same rule as a request with the key (src/contracts/access.ts): it stops with its member.
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
    .set({ status: "running", startedAt: at, leaseExpiresAt: leaseUntil(Date.parse(at)) })
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

/** Occurrences recorded `missed_occurrence` at most per catch-up (the most recent ones). */
export const MAX_MISSED_RECORDED = 1_000;

/** Records occurrences nobody ran in time, each at its own `scheduled_for` (existing ones are left as they are). */
async function recordMissed(db: Database, agent: Agent, occurrences: Date[]) {
  if (!occurrences.length) return;
  const at = nowIso();
  const rows = JSON.stringify(occurrences.map((d) => [newId("run"), d.toISOString()]));
  await db.run(sql`
    INSERT INTO agent_runs (id, agent_id, organization_id, tenant_id, agent_version, status, trigger, scheduled_for,
      error_code, error_message, started_at, ended_at, created_at)
    SELECT json_extract(value, '$[0]'), ${agent.id}, ${agent.organizationId}, ${agent.tenantId}, ${agent.agentVersion}, 'failed', 'schedule',
      json_extract(value, '$[1]'), 'missed_occurrence', 'The occurrence was missed by more than one period', ${at}, ${at}, ${at}
    FROM json_each(${rows}) WHERE true
    ON CONFLICT (agent_id, scheduled_for) DO NOTHING`);
}

/**
 * The downtime rule (API-DECISIONS "Agents"), applied to every occurrence from `from` (the one armed after the
 * last recorded one, inclusive) up to `at`: the latest runs if it was missed by less than one period; every other
 * one is recorded `failed` with `missed_occurrence` at its own `scheduled_for`. Returns the occurrence to run.
 */
export async function catchUpOccurrences(db: Database, agent: Agent, from: Date, at: Date): Promise<{ run: string | null; missed: number }> {
  const cron = agent.scheduleCron!;
  const tz = agent.scheduleTimezone ?? "UTC";
  // Newest first; `at` itself counts.
  const due = previousOccurrences(cron, tz, at, MAX_MISSED_RECORDED + 1).filter((d) => d.getTime() >= from.getTime());
  const latest = due[0];
  if (!latest) return { run: null, missed: 0 };
  const runLatest = at.getTime() - latest.getTime() < periodAfter(cron, tz, latest);
  const missed = runLatest ? due.slice(1) : due;
  await recordMissed(db, agent, missed);
  return { run: runLatest ? latest.toISOString() : null, missed: missed.length };
}

/**
 * The Cron Trigger's safety net: every enabled schedule whose armed occurrence is more than SWEEP_GRACE_MS
 * overdue lost its alarm; the downtime rule is applied from the armed occurrence (catchUpOccurrences), then the
 * alarm is re-armed. (An alarm that fires late applies the same rule itself: src/durable/agent-scheduler.ts.)
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
    if (agent.nextRunAt) {
      const plan = await catchUpOccurrences(db, agent, new Date(agent.nextRunAt), at);
      missed += plan.missed;
      if (plan.run) {
        ran++;
        waitUntil(schedulerStub(env, agent.id).runNow(agent.id, plan.run));
      }
    }
    await armSchedule(env, agent.id);
  }
  return { rearmed: due.length, ran, missed };
}

/** The time of an agent's next scheduled run as its scheduler armed it (null: disarmed). */
export async function setNextRunAt(db: Database, agentId: string, at: string | null): Promise<void> {
  await db.update(agents).set({ nextRunAt: at }).where(eq(agents.id, agentId));
}
