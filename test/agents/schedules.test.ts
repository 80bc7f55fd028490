import { createExecutionContext, createScheduledController, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { call, createKb, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent } from "./agent-helpers";

/**
 * Schedules through the real Durable Object alarm (agents SDK) and the
 * Worker's scheduled() handler. A yearly cron keeps the alarm from firing by
 * itself during a test; `fireAlarm` makes the armed job due and runs the alarm.
 */
const YEARLY = "0 0 1 1 *";

const stubOf = (agentId: string) => env.AGENT_SCHEDULER.get(env.AGENT_SCHEDULER.idFromName(agentId));

async function jobs(agentId: string): Promise<Array<{ time: number; payload: string }>> {
  return runInDurableObject(stubOf(agentId), (_, state) => state.storage.sql.exec("SELECT time, payload FROM cf_agents_jobs").toArray() as any);
}

async function fireAlarm(agentId: string) {
  const stub = stubOf(agentId);
  await runInDurableObject(stub, async (_, state) => {
    state.storage.sql.exec("UPDATE cf_agents_jobs SET time = ?", Date.now() - 1000);
    await state.storage.setAlarm(Date.now() + 60_000);
  });
  expect(await runDurableObjectAlarm(stub)).toBe(true);
}

async function runsOf(agentId: string) {
  return (await env.DB.prepare("SELECT * FROM agent_runs WHERE agent_id = ? ORDER BY scheduled_for").bind(agentId).all<any>()).results;
}

async function sweep(at = new Date()) {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *", scheduledTime: at.getTime() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("scheduled runs", () => {
  it("arms the next occurrence in the schedule's time zone and runs it once from the alarm", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { schedule: { cron: YEARLY, timezone: "Europe/Berlin", message: "Summarize the refund policy" } });
    // Midnight on 1 January in Berlin (CET, UTC+1) is 23:00 UTC the day before.
    expect(a.schedule).toMatchObject({ cron: YEARLY, timezone: "Europe/Berlin", enabled: true, message: "Summarize the refund policy", bound_identity: { type: "user" } });
    expect(a.schedule.next_run_at).toMatch(/-12-31T23:00:00\.000Z$/);
    const armed = await jobs(a.id);
    expect(armed).toHaveLength(1);
    expect(JSON.parse(armed[0].payload).payload).toEqual({ agentId: a.id, scheduledFor: a.schedule.next_run_at });

    await fireAlarm(a.id);
    const runs = await runsOf(a.id);
    expect(runs).toHaveLength(1);
    const run = expectStatus(await call(`/agents/${a.id}/runs/${runs[0].id}`, auth), 200);
    expect(run).toMatchObject({ trigger: "schedule", status: "completed", scheduled_for: a.schedule.next_run_at, agentVersion: 1 });
    expect(run.snapshot.task).toBe("Summarize the refund policy");
    expect(run.output).toMatch(/refund/i);
    // The chat of a scheduled run belongs to the bound identity.
    const msgs = expectStatus(await call(`/chats/${run.chat_id}/messages`, auth), 200);
    expect(msgs.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200).logs;
    expect(logs.find((l: any) => l.agent_run_id === run.id)).toMatchObject({ operation: "agent_run" });

    // The following occurrence is armed (one job, a year later).
    const after = expectStatus(await call(`/agents/${a.id}`, auth), 200);
    expect(new Date(after.schedule.next_run_at).getTime()).toBeGreaterThan(new Date(a.schedule.next_run_at).getTime());
    const next = await jobs(a.id);
    expect(next).toHaveLength(1);
    expect(JSON.parse(next[0].payload).payload.scheduledFor).toBe(after.schedule.next_run_at);
  });

  it("exactly once: duplicate triggers and retries of an occurrence reuse it", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { schedule: YEARLY });
    const occurrence = a.schedule.next_run_at;
    const stub = stubOf(a.id);
    // Three triggers at once (alarm, sweep, a retry), then two more afterwards.
    const results = await Promise.all([stub.runNow(a.id, occurrence), stub.runNow(a.id, occurrence), stubOf(a.id).runNow(a.id, occurrence)]);
    expect(results.map((r) => r.result).sort()).toEqual(["duplicate", "duplicate", "ran"]);
    await fireAlarm(a.id);
    expect((await stub.runNow(a.id, occurrence)).result).toBe("duplicate");
    let runs = await runsOf(a.id);
    expect(runs.filter((r: any) => r.scheduled_for === occurrence)).toHaveLength(1);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "completed", trigger: "schedule" });

    // A retry after a crash before the claim (the row is still queued) takes it over, once.
    const later = "2031-01-01T00:00:00.000Z";
    await env.DB.prepare(
      "INSERT INTO agent_runs (id, agent_id, organization_id, tenant_id, agent_version, status, trigger, scheduled_for, created_at) VALUES (?, ?, ?, ?, 1, 'queued', 'schedule', ?, ?)",
    )
      .bind("run_crashedbeforeclaim", a.id, runs[0].organization_id, kb.tenant_id, later, new Date().toISOString())
      .run();
    const retried = await Promise.all([stub.runNow(a.id, later), stub.runNow(a.id, later)]);
    expect(retried.map((r) => r.result).sort()).toEqual(["duplicate", "ran"]);
    runs = await runsOf(a.id);
    expect(runs).toHaveLength(2);
    expect(runs.find((r: any) => r.scheduled_for === later)).toMatchObject({ id: "run_crashedbeforeclaim", status: "completed" });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM chats WHERE json_extract(settings, '$.agent_id') = ?").bind(a.id).first("n")).toBe(2);
  });

  it("the minute cron re-arms a lost alarm, runs an occurrence missed by less than a period and records older ones as missed", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { schedule: "*/10 * * * *" });
    // Lose the alarm, and pretend it was armed for an occurrence 35 minutes ago.
    await runInDurableObject(stubOf(a.id), async (_, state) => {
      state.storage.sql.exec("DELETE FROM cf_agents_jobs");
      await state.storage.deleteAlarm();
    });
    const now = new Date();
    const base = new Date(Math.floor(now.getTime() / 600_000) * 600_000);
    const armedFor = new Date(base.getTime() - 30 * 60_000);
    await env.DB.prepare("UPDATE agents SET next_run_at = ? WHERE id = ?").bind(armedFor.toISOString(), a.id).run();

    await sweep(now);
    const runs = await runsOf(a.id);
    // Occurrences armedFor, +10, +20 are older than one period before the latest (base): missed; base runs.
    expect(runs.map((r: any) => [r.scheduled_for, r.status, r.error_code])).toEqual([
      [armedFor.toISOString(), "failed", "missed_occurrence"],
      [new Date(armedFor.getTime() + 600_000).toISOString(), "failed", "missed_occurrence"],
      [new Date(armedFor.getTime() + 1_200_000).toISOString(), "failed", "missed_occurrence"],
      [base.toISOString(), "completed", null],
    ]);
    const after = expectStatus(await call(`/agents/${a.id}`, auth), 200);
    expect(after.schedule.next_run_at).toBe(new Date(base.getTime() + 600_000).toISOString());
    expect(await jobs(a.id)).toHaveLength(1);

    // A second sweep (a duplicate cron) changes nothing.
    await sweep(now);
    expect(await runsOf(a.id)).toHaveLength(4);

    // An armed alarm that is not overdue is left alone.
    const b = await createAgent(auth, kb, { schedule: YEARLY });
    await sweep(now);
    expect(await runsOf(b.id)).toHaveLength(0);
    expect(await jobs(b.id)).toHaveLength(1);
  });

  it("an occurrence missed by more than one period is recorded failed (missed_occurrence)", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const a = await createAgent({ cookie: org.owner.cookie }, kb, { schedule: "0 0 * * *" });
    const now = new Date();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    // The alarm was lost two days ago; both missed occurrences are a day or more old... except today's (less than a day).
    const armedFor = new Date(today.getTime() - 2 * 86_400_000);
    await env.DB.prepare("UPDATE agents SET next_run_at = ? WHERE id = ?").bind(armedFor.toISOString(), a.id).run();
    await sweep(now);
    const runs = await runsOf(a.id);
    expect(runs.map((r: any) => [r.scheduled_for, r.status, r.error_code])).toEqual([
      [armedFor.toISOString(), "failed", "missed_occurrence"],
      [new Date(armedFor.getTime() + 86_400_000).toISOString(), "failed", "missed_occurrence"],
      [today.toISOString(), "completed", null],
    ]);
  });

  it("a revoked identity fails the run (identity_revoked) without any work", async () => {
    const { org, kb } = await kbWithDocument();
    const key = await createKey(org, { scopes: ["agents:write", "agents:read", "query:rag"] });
    const a = await createAgent({ key: key.key }, kb, { schedule: YEARLY });
    expect(a.schedule.bound_identity).toEqual({ type: "api_key", id: key.id });
    expectStatus(await call(`/api-keys/${key.id}`, { cookie: org.owner.cookie, method: "DELETE" }), 204);
    await fireAlarm(a.id);
    const runs = await runsOf(a.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", error_code: "identity_revoked", chat_id: null, trigger: "schedule" });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_logs WHERE tenant_id = ?").bind(kb.tenant_id).first("n")).toBe(0);

    // Setting the schedule again (as the owner) binds the new identity.
    const re = expectStatus(await call(`/agents/${a.id}/schedule`, { cookie: org.owner.cookie, method: "PATCH", body: { enabled: true } }), 200);
    expect(re.schedule.bound_identity).toEqual({ type: "user", id: org.owner.id });
    // (The alarm is forced early in tests: the occurrence it was armed for already has its failed row,
    // so a later occurrence shows the new identity at work.)
    expect((await stubOf(a.id).runNow(a.id, "2035-01-01T00:00:00.000Z")).result).toBe("ran");
    const after = await runsOf(a.id);
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ status: "completed", scheduled_for: "2035-01-01T00:00:00.000Z" });
  });

  it("a member who left: identity_revoked", async () => {
    const { org, kb } = await kbWithDocument();
    const { addMember } = await import("../helpers");
    const dev = await addMember(org, "developer");
    const a = await createAgent({ cookie: dev.cookie }, kb, { schedule: YEARLY });
    const members = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie }), 200).members;
    const m = members.find((x: any) => x.user_id === dev.id);
    expectStatus(await call(`/organizations/${org.id}/members/${m.member_id}`, { cookie: org.owner.cookie, method: "DELETE" }), 204);
    await fireAlarm(a.id);
    expect((await runsOf(a.id))[0]).toMatchObject({ status: "failed", error_code: "identity_revoked" });
  });

  it("no credits: failed (insufficient_credits) before any work", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const poor = await createTenant(org, { credits_pool: 0 });
    const kb = await createKb(org, { tenant_id: poor.id });
    // Creating and scheduling needs no credits; running does.
    const a = await createAgent(auth, kb, { schedule: YEARLY });
    await fireAlarm(a.id);
    const runs = await runsOf(a.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: "failed", error_code: "insufficient_credits", chat_id: null });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM usage_logs WHERE tenant_id = ?").bind(poor.id).first("n")).toBe(0);
    const api = expectStatus(await call(`/agents/${a.id}/runs/${runs[0].id}`, auth), 200);
    expect(api.error).toMatchObject({ code: "insufficient_credits" });
  });

  it("disable and enable take effect at once, without a new version", async () => {
    const { kb, auth } = await kbWithDocument();
    const a = await createAgent(auth, kb, { schedule: YEARLY });
    const off = expectStatus(await call(`/agents/${a.id}/schedule`, { ...auth, method: "PATCH", body: { enabled: false } }), 200);
    expect(off).toMatchObject({ agentVersion: 1, schedule: { enabled: false, next_run_at: null } });
    expect(await jobs(a.id)).toHaveLength(0);
    // A trigger that was already on its way does nothing.
    expect((await stubOf(a.id).runNow(a.id, a.schedule.next_run_at)).result).toBe("skipped");
    await sweep();
    expect(await runsOf(a.id)).toHaveLength(0);

    const on = expectStatus(await call(`/agents/${a.id}/schedule`, { ...auth, method: "PATCH", body: { enabled: true } }), 200);
    expect(on).toMatchObject({ agentVersion: 1, schedule: { enabled: true, next_run_at: a.schedule.next_run_at } });
    expect(await jobs(a.id)).toHaveLength(1);
    await fireAlarm(a.id);
    expect(await runsOf(a.id)).toHaveLength(1);

    // Deploying without a schedule keeps it; deploying schedule: null removes it.
    expect(expectStatus(await call(`/agents/${a.id}/deploy`, { ...auth, body: { goal: "g2" } }), 200).schedule.enabled).toBe(true);
    const removed = expectStatus(await call(`/agents/${a.id}/deploy`, { ...auth, body: { schedule: null } }), 200);
    expect(removed.schedule).toBeNull();
    expect(await jobs(a.id)).toHaveLength(0);
    expectError(await call(`/agents/${a.id}/schedule`, { ...auth, method: "PATCH", body: { enabled: true } }), 400);
    // Archiving turns it off.
    const b = await createAgent(auth, kb, { schedule: YEARLY });
    expectStatus(await call(`/agents/${b.id}`, { ...auth, method: "DELETE" }), 204);
    expect(await jobs(b.id)).toHaveLength(0);
    expectError(await call(`/agents/${b.id}/schedule`, { ...auth, method: "PATCH", body: { enabled: true } }), 409, "agent_archived");
    expectError(await call(`/agents/${a.id}/schedule`, { ...auth, method: "PATCH", body: {} }), 400);
  });
});
