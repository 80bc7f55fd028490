import type { Database } from "../../db/client";
import type { Env } from "../../env";

/**
 * The supervisor: what re-drives work whose worker is gone. One Durable Object (src/durable/supervisor.ts)
 * keeps an alarm while anything is in flight or left to clean up; alarms survive restarts and deploys and fire
 * under `wrangler dev` too, so a crash is recovered from as soon as the leases involved lapse. Capabilities
 * register a recovery task here; the Cron Triggers only wake the supervisor, as a safety net.
 */
export interface RecoveryContext {
  env: Env;
  db: Database;
  now: number;
}

/** Does the task's work for whatever lapsed; returns when it wants to look again (epoch ms), or null. */
export type RecoveryTask = (ctx: RecoveryContext) => Promise<number | null>;

/** A task that failed is tried again this soon. */
const RETRY_AFTER_MS = 5_000;

const tasks: Array<{ name: string; order: number; task: RecoveryTask }> = [];

/** `order`: turns (10) settle before the runs (20) that read their answers; documents 30; cleanup 40. */
export function registerRecovery(name: string, order: number, task: RecoveryTask): void {
  tasks.push({ name, order, task });
  tasks.sort((a, b) => a.order - b.order);
}

const earliest = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** One pass over every task; returns when the next pass is due (null: nothing in flight, nothing to clean up). */
export async function runRecoveryPass(env: Env, db: Database, now = Date.now()): Promise<number | null> {
  let next: number | null = null;
  for (const { name, task } of tasks) {
    try {
      next = earliest(next, await task({ env, db, now }));
    } catch (e) {
      console.error(`recovery task '${name}' failed (retried in ${RETRY_AFTER_MS / 1000} s):`, e);
      next = earliest(next, now + RETRY_AFTER_MS);
    }
  }
  return next;
}

function supervisorStub(env: Env) {
  return env.SUPERVISOR.get(env.SUPERVISOR.idFromName("supervisor"));
}

/**
 * When this isolate last learnt the supervisor's alarm time: a wake for a later time is then already covered
 * (that pass sees the new work, committed before this call, and re-arms for it), saving the round trip.
 */
let knownAlarmAt: number | null = null;

/**
 * A wake on its way to the supervisor: a wake for the same or a later time while it is in flight waits for it
 * instead of making its own call (ten turns starting at once make one call, not ten).
 */
let inFlight: { atMs: number; done: Promise<void> } | null = null;

/**
 * Makes sure a recovery pass runs no later than `atMs`. Called by every path that starts leased work or
 * records something to clean up, AFTER its write is committed. Never throws: the Cron Triggers wake the
 * supervisor too.
 */
export async function wakeSupervisor(env: Env, atMs: number): Promise<void> {
  if (knownAlarmAt !== null && knownAlarmAt > Date.now() + 1_000 && knownAlarmAt <= atMs) return;
  if (inFlight && inFlight.atMs <= atMs) return inFlight.done;
  const done = (async () => {
    try {
      knownAlarmAt = (await supervisorStub(env).wake(atMs)).alarm_at;
    } catch (e) {
      knownAlarmAt = null;
      console.error("could not wake the supervisor (the cron safety net will):", e);
    }
  })();
  const entry = { atMs, done };
  inFlight = entry;
  await done;
  if (inFlight === entry) inFlight = null;
}

/** Runs a pass now, in the supervisor (the cron safety net; tests). */
export async function runSupervisorNow(env: Env): Promise<{ next_at: number | null }> {
  return supervisorStub(env).pass();
}
