import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectStatus } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent } from "../agents/agent-helpers";

/**
 * Schedules remember downtime (README "Crash safety"): when an agent's alarm fires late — the service was down
 * across occurrences — the scheduler itself (not the minute cron, which `wrangler dev` never fires) applies the
 * rule to every occurrence since the armed one: the latest runs if it was missed by less than one period, every
 * other is recorded failed (missed_occurrence) at its own scheduled_for.
 */
const stubOf = (agentId: string) => env.AGENT_SCHEDULER.get(env.AGENT_SCHEDULER.idFromName(agentId));

/** The service was down since `armedFor`: the armed job (for `armedFor`) fires now, after the restart. */
async function fireAfterDowntime(agentId: string, armedFor: Date) {
  const stub = stubOf(agentId);
  await runInDurableObject(stub, async (_, state) => {
    const [job] = state.storage.sql.exec("SELECT id, payload FROM cf_agents_jobs").toArray() as Array<{ id: string; payload: string }>;
    const payload = JSON.parse(job.payload);
    payload.payload.scheduledFor = armedFor.toISOString();
    state.storage.sql.exec("UPDATE cf_agents_jobs SET time = ?, payload = ? WHERE id = ?", Date.now() - 1000, JSON.stringify(payload), job.id);
    await state.storage.setAlarm(Date.now() + 60_000);
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

const runsOf = async (agentId: string) =>
  (await env.DB.prepare("SELECT scheduled_for, status, error_code FROM agent_runs WHERE agent_id = ? ORDER BY scheduled_for").bind(agentId).all<any>()).results;

describe("an agent's alarm firing after downtime", () => {
  it("records every occurrence missed during the downtime and runs only the latest", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { schedule: "*/10 * * * *" });
    const now = Date.now();
    const latest = new Date(Math.floor(now / 600_000) * 600_000);
    // Down across four occurrences: the armed one 30 minutes before the latest, and the two between.
    const armedFor = new Date(latest.getTime() - 30 * 60_000);
    await fireAfterDowntime(a.id, armedFor);
    expect((await runsOf(a.id)).map((r: any) => [r.scheduled_for, r.status, r.error_code])).toEqual([
      [armedFor.toISOString(), "failed", "missed_occurrence"],
      [new Date(armedFor.getTime() + 600_000).toISOString(), "failed", "missed_occurrence"],
      [new Date(armedFor.getTime() + 1_200_000).toISOString(), "failed", "missed_occurrence"],
      [latest.toISOString(), "completed", null],
    ]);
    // The following occurrence is armed; the runs list shows the misses to the user.
    const after = expectStatus(await call(`/agents/${a.id}`, auth), 200);
    expect(after.schedule.next_run_at).toBe(new Date(latest.getTime() + 600_000).toISOString());
    const listed = expectStatus(await call(`/agents/${a.id}/runs?status=failed`, auth), 200).runs;
    expect(listed).toHaveLength(3);
    expect(listed.every((r: any) => r.trigger === "schedule" && r.error?.code === "missed_occurrence")).toBe(true);

    // The same late alarm delivered twice (a retry) records and runs nothing more.
    await fireAfterDowntime(a.id, armedFor);
    expect(await runsOf(a.id)).toHaveLength(4);
  });

  it("an alarm that is only a little late runs its occurrence", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { schedule: "*/10 * * * *" });
    const latest = new Date(Math.floor(Date.now() / 600_000) * 600_000);
    await fireAfterDowntime(a.id, latest);
    expect((await runsOf(a.id)).map((r: any) => [r.scheduled_for, r.status])).toEqual([[latest.toISOString(), "completed"]]);
  });
});
