import { Agent, type AgentContext } from "agents";
import { withSimulatedHops } from "../lib/distance";
import { CAPABILITIES } from "../capabilities";
import { jobContext } from "../contracts/context";
import { getAgent } from "../services/agents/agents";
import { nextOccurrence } from "../services/agents/schedule";
import { catchUpOccurrences, runOccurrence, setNextRunAt, type OccurrenceResult } from "../services/agents/scheduler";

interface FirePayload {
  agentId: string;
  scheduledFor: string;
}

/**
 * One Durable Object per scheduled agent (named by the agent id), built on the
 * `agents` SDK: it keeps ONE one-shot schedule (a DO alarm) for the agent's
 * next occurrence, computed by croner in the schedule's time zone (the SDK's
 * own cron is UTC only). When it fires it arms the following occurrence first,
 * then runs this one (runOccurrence is exactly-once per occurrence).
 * RPC methods return plain JSON (see STACK-WAVE2 on DO RPC types).
 */

declare module "../env" {
  interface DurableObjectClasses {
    AgentScheduler: AgentScheduler;
  }
}

export class AgentScheduler extends Agent<Cloudflare.Env> {
  constructor(ctx: AgentContext, env: Cloudflare.Env) {
    super(ctx, withSimulatedHops(env)); // untouched unless a benchmark simulates distance (src/lib/distance.ts)
  }

  async onStart(): Promise<void> {
    // workerd may lose ctx.id.name when an alarm wakes the object after a restart (STACK.md §5).
    await this.ctx.storage.put("__ps_name", this.name);
  }

  /** Re-reads the agent and (re)arms or disarms its alarm. */
  async arm(agentId: string): Promise<{ next_run_at: string | null }> {
    for (const s of await this.listSchedules()) await this.cancelSchedule(s.id);
    return this.armNext(agentId, new Date());
  }

  private async armNext(agentId: string, after: Date): Promise<{ next_run_at: string | null }> {
    const { db } = this.job();
    const agent = await getAgent(db, agentId);
    if (!agent || agent.status !== "active" || !agent.scheduleEnabled || !agent.scheduleCron) {
      if (agent) await setNextRunAt(db, agentId, null);
      return { next_run_at: null };
    }
    const next = nextOccurrence(agent.scheduleCron, agent.scheduleTimezone ?? "UTC", after);
    if (!next) return { next_run_at: null };
    const scheduledFor = next.toISOString();
    await this.schedule(next, "fire", { agentId, scheduledFor } satisfies FirePayload);
    await setNextRunAt(db, agentId, scheduledFor);
    return { next_run_at: scheduledFor };
  }

  /**
   * The alarm callback. An alarm that fires late (the service was down across one or more occurrences) applies
   * the downtime rule itself to every occurrence since the armed one: the latest runs if it was missed by less
   * than one period, every other is recorded `missed_occurrence` at its own time (catchUpOccurrences).
   */
  async fire(payload: FirePayload): Promise<void> {
    const at = new Date(Math.max(Date.now(), new Date(payload.scheduledFor).getTime()));
    const { env, db } = this.job();
    let armed = false;
    const armNext = async () => {
      armed = true;
      await this.armNext(payload.agentId, at);
    };
    try {
      const agent = await getAgent(db, payload.agentId);
      if (!agent || agent.status !== "active" || !agent.scheduleEnabled || !agent.scheduleCron) return;
      const { run } = await catchUpOccurrences(db, agent, new Date(payload.scheduledFor), at);
      // Claim the occurrence first (its start time), then arm the next one, then do the work.
      if (run) await runOccurrence(env, db, payload.agentId, run, armNext);
    } finally {
      if (!armed) await armNext();
    }
  }

  /** Runs one occurrence now (the sweep's catch-up); a duplicate is a no-op. */
  async runNow(agentId: string, scheduledFor: string): Promise<{ result: OccurrenceResult }> {
    const { env, db } = this.job();
    return { result: await runOccurrence(env, db, agentId, scheduledFor) };
  }

  /** The context of one call or alarm (the database, the configuration checked). */
  private job() {
    return jobContext(this.env, { capabilities: CAPABILITIES, waitUntil: (p) => this.ctx.waitUntil(p) });
  }
}
