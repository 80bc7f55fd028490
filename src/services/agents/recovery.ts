import { and, inArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { agentRuns } from "../../db/schema";
import { registerRecovery } from "../recovery/supervisor";
import { settleFromChat } from "./execute";
import { failRun, getRun, runLeaseLapsed } from "./runs";

/** Runs whose worker is gone, settled per pass. */
const LAPSED_PER_PASS = 100;

/**
 * Runs in flight whose worker is gone (their lease lapsed and their chat has no live turn): each ends at once in
 * one terminal state — from its chat's saved answer when there is one (a checkpointed partial answer makes it
 * `failed` / `interrupted` with that output, sources and usage kept), else `failed` / `interrupted` with nothing
 * to keep. Runs after the turns task, so an interrupted turn's answer is already settled. Returns when to look
 * again (the earliest lease of a run still in flight; a run whose turn is live is covered by the turn's lease).
 */
export async function settleLapsedRuns(db: Database, now = Date.now()): Promise<number | null> {
  const at = new Date(now).toISOString();
  const lapsed = await db.select({ id: agentRuns.id }).from(agentRuns).where(runLeaseLapsed(at)).limit(LAPSED_PER_PASS).all();
  for (const { id } of lapsed) {
    const run = await getRun(db, id);
    if (!run || (run.status !== "queued" && run.status !== "running")) continue;
    await settleFromChat(db, run);
    await failRun(db, id, "interrupted", "The run was interrupted before it produced an answer (the service stopped while it ran)");
  }
  if (lapsed.length === LAPSED_PER_PASS) return now + 100;
  const next = await db
    .select({ at: sql<string | null>`MIN(${agentRuns.leaseExpiresAt})` })
    .from(agentRuns)
    .where(and(inArray(agentRuns.status, ["queued", "running"]), sql`${agentRuns.leaseExpiresAt} >= ${at}`))
    .get();
  return next?.at ? Date.parse(next.at) + 1_000 : null;
}

registerRecovery("agent runs", 20, ({ db, now }) => settleLapsedRuns(db, now));
