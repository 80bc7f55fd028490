import { DurableObject } from "cloudflare:workers";
import { CAPABILITIES } from "../capabilities";
import { jobContext } from "../contracts/context";
import type { Env } from "../env";
import { withSimulatedHops } from "../lib/distance";
import { runRecoveryPass } from "../services/recovery/supervisor";

/**
 * The supervisor (one instance, named "supervisor"): an alarm that runs the recovery pass
 * (src/services/recovery/supervisor.ts) whenever a lease may have lapsed or something is left to clean up, and
 * re-arms itself while there is. Its alarm lives in the object's storage, so it survives restarts and deploys;
 * an alarm that fell due while the service was down fires as soon as it is back (the recovery pass at
 * start-up). RPC methods return plain JSON.
 */

declare module "../env" {
  interface DurableObjectClasses {
    Supervisor: Supervisor;
  }
}

export class Supervisor extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, withSimulatedHops(env)); // untouched unless a benchmark simulates distance (src/lib/distance.ts)
  }

  /** A pass no later than `atMs`; returns the alarm time now set. */
  async wake(atMs: number): Promise<{ alarm_at: number }> {
    const at = Math.max(atMs, Date.now());
    const current = await this.ctx.storage.getAlarm();
    if (current !== null && current <= at) return { alarm_at: current };
    await this.ctx.storage.setAlarm(at);
    return { alarm_at: at };
  }

  /** A pass now (the cron safety net and tests); the alarm follows what it found. */
  async pass(): Promise<{ next_at: number | null }> {
    const job = this.job();
    const next = await runRecoveryPass(job.env, job.db, Date.now());
    if (next !== null) await this.wake(next);
    return { next_at: next };
  }

  async alarm(): Promise<void> {
    const job = this.job();
    const next = await runRecoveryPass(job.env, job.db, Date.now());
    // A wake during the pass may have set an earlier alarm already; keep the earlier one.
    if (next !== null) await this.wake(next);
  }

  /** The context of one pass (a call or an alarm). */
  private job() {
    return jobContext(this.env, { capabilities: CAPABILITIES, waitUntil: (p) => this.ctx.waitUntil(p) });
  }
}
