import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { resolveApiKey } from "../../src/services/api-keys";
import { actorOf, assertCanSpend, recordUsage, type UsageRecordInput } from "../../src/services/billing/metering";
import { getModel, priceMicro } from "../../src/services/models/registry";
import { call, createKey, createOrg, createTenant, expectStatus, type TestOrg } from "../helpers";

const db = () => createDb(env.DB);
const local = () => getModel(env, "local-extractive")!;

function charge(org: TestOrg, tenantId: string, extra: Partial<UsageRecordInput> = {}) {
  return recordUsage(db(), {
    organizationId: org.id,
    tenantId,
    operation: "chat",
    model: "local-extractive",
    pricing: local().pricing,
    usage: { input_tokens: 1000, output_tokens: 500 },
    ...extra,
  });
}

async function totals(org: TestOrg, tenantId: string) {
  const credits = expectStatus(await call(`/billing/tenants/${tenantId}/credits`, { cookie: org.owner.cookie }), 200);
  const summary = expectStatus(await call(`/billing/tenants/${tenantId}/usage/summary`, { cookie: org.owner.cookie }), 200);
  const logs = expectStatus(await call(`/billing/tenants/${tenantId}/usage/logs?limit=500`, { cookie: org.owner.cookie }), 200);
  const logSum = logs.logs.reduce((s: number, l: any) => s + Math.round(l.credits_used * 1e6), 0) / 1e6;
  return { credits, summary, logs, logSum };
}

describe("pricing", () => {
  it("prices local-extractive at 1 credit per 1,000 input and output tokens, rounding up", () => {
    expect(local().pricing).toEqual({ input_per_1k: 1, output_per_1k: 1 });
    expect(priceMicro(local().pricing, { input_tokens: 1000, output_tokens: 500 })).toBe(1_500_000);
    expect(priceMicro({ input_per_1k: 0.15, output_per_1k: 0.6 }, { input_tokens: 1, output_tokens: 0 })).toBe(150);
    expect(priceMicro({ input_per_1k: 0.0001, output_per_1k: 0 }, { input_tokens: 1, output_tokens: 0 })).toBe(1);
    expect(priceMicro(local().pricing, { input_tokens: 0, output_tokens: 0 })).toBe(0);
  });

  it("reads provider models and prices from MODELS; a MODELS entry can reprice local-extractive", () => {
    const cfg = {
      ...env,
      OPENAI_API_KEY: "sk-test",
      MODELS: JSON.stringify([
        { id: "big", display_name: "Big", context_window: 32000, pricing: { input_per_1k: 2, output_per_1k: 4 } },
        { id: "local-extractive", pricing: { input_per_1k: 0.5, output_per_1k: 0.5 } },
      ]),
    };
    expect(getModel(cfg, "big")).toMatchObject({ available: true, upstream_model: "big", pricing: { input_per_1k: 2, output_per_1k: 4 } });
    expect(getModel(cfg, "local-extractive")!.pricing).toEqual({ input_per_1k: 0.5, output_per_1k: 0.5 });
    expect(getModel({ ...cfg, OPENAI_API_KEY: undefined }, "big")!.available).toBe(false);
    expect(getModel({ ...env, MODELS: "not json" }, "local-extractive")!.available).toBe(true);
  });
});

describe("metering", () => {
  it("charges the tenant and writes one usage record per call; balances, summaries and logs agree", async () => {
    const org = await createOrg();
    const r = await charge(org, org.tenantId, { chatId: "c1", messageId: "m1" });
    expect(r).toMatchObject({ input_tokens: 1000, output_tokens: 500, total_tokens: 1500, credits: 1.5, charged: true });
    await charge(org, org.tenantId, { operation: "summary", usage: { input_tokens: 200, output_tokens: 100 } });
    await charge(org, org.tenantId, { operation: "fast_query", usage: { input_tokens: 10, output_tokens: 5 } });
    const t = await totals(org, org.tenantId);
    expect(t.credits).toMatchObject({ credits_pool: 500, credits_used: 1.815, credits_available: 498.185 });
    expect(t.summary).toEqual({ credits_used: 1.815, total_tokens: 1815, input_tokens: 1210, output_tokens: 605, message_count: 2 });
    expect(t.logSum).toBe(1.815);
    expect(t.logs.total).toBe(3);
    expect(t.logs.logs[2]).toMatchObject({ operation: "chat", chat_id: "c1", message_id: "m1", model: "local-extractive", is_api_key: false, api_key_id: null });
  });

  it("never loses a charge under 50 concurrent turns", async () => {
    const org = await createOrg();
    const results = await Promise.all(Array.from({ length: 50 }, () => charge(org, org.tenantId)));
    expect(results.every((r) => r.charged)).toBe(true);
    const t = await totals(org, org.tenantId);
    expect(t.credits.credits_used).toBe(75);
    expect(t.summary.credits_used).toBe(75);
    expect(t.logs.total).toBe(50);
    expect(t.logSum).toBe(75);
  });

  it("keeps credits_available = pool - used while allocations race with charges", async () => {
    const org = await createOrg();
    const tenant = await createTenant(org, { credits_pool: 10 });
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      ops.push(charge(org, tenant.id, { usage: { input_tokens: 1000, output_tokens: 0 } }));
      ops.push(call(`/billing/tenants/${tenant.id}/credits`, { cookie: org.owner.cookie, body: { amount: 5 } }));
    }
    await Promise.all(ops);
    const t = await totals(org, tenant.id);
    expect(t.credits.credits_used).toBe(20);
    expect(t.credits.credits_pool).toBe(110);
    expect(t.credits.credits_available).toBe(90);
    expect(t.logSum).toBe(20);
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(billing.used_credits).toBe(20);
    expect(billing.available_credits).toBe(1000 - 500 - 110);
  });

  it("refuses new work at zero available credits (402), after charging a started turn in full", async () => {
    const org = await createOrg();
    const tenant = await createTenant(org, { credits_pool: 1 });
    await assertCanSpend(db(), tenant.id);
    await charge(org, tenant.id); // 1.5 credits: takes the tenant below zero
    const t = await totals(org, tenant.id);
    expect(t.credits.credits_available).toBe(-0.5);
    await expect(assertCanSpend(db(), tenant.id)).rejects.toMatchObject({ code: "insufficient_credits", status: 402 });
    expectStatus(await call(`/billing/tenants/${tenant.id}/credits`, { cookie: org.owner.cookie, body: { amount: 1 } }), 200);
    await assertCanSpend(db(), tenant.id);
  });

  it("charges once per idempotency key", async () => {
    const org = await createOrg();
    const a = await charge(org, org.tenantId, { idempotencyKey: "turn-123" });
    const b = await charge(org, org.tenantId, { idempotencyKey: "turn-123" });
    expect(a.charged).toBe(true);
    expect(b.charged).toBe(false);
    const t = await totals(org, org.tenantId);
    expect(t.credits.credits_used).toBe(1.5);
    expect(t.logs.total).toBe(1);
  });

  it("a tenant deleted mid-turn: the charge lands on the organization, and totals still agree", async () => {
    const org = await createOrg();
    const tenant = await createTenant(org, { credits_pool: 100 });
    await charge(org, tenant.id);
    expect((await call(`/tenants/${tenant.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    await charge(org, tenant.id); // the turn that was running
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    const summary = expectStatus(await call(`/billing/organizations/${org.id}/usage/summary`, { cookie: org.owner.cookie }), 200);
    expect(billing.used_credits).toBe(3);
    expect(summary.credits_used).toBe(3);
    expect(billing.available_credits).toBe(1000 - 500 - 3);
  });

  it("records the API key behind key-driven usage", async () => {
    const org = await createOrg();
    const { key, id } = await createKey(org, { scopes: ["query:rag", "tenants:read"] });
    const { caller } = await resolveApiKey(db(), key);
    const u = await userCaller(org);
    await charge(org, org.tenantId, { actor: actorOf(caller) });
    await charge(org, org.tenantId, { actor: actorOf(u) });
    const logs = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?is_api_key=true`, { key }), 200);
    expect(logs.logs).toHaveLength(1);
    expect(logs.logs[0]).toMatchObject({ api_key_id: id, is_api_key: true });
    const byKey = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?api_key_id=${id}`, { key }), 200);
    expect(byKey.total).toBe(1);
    const users = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?is_api_key=false`, { key }), 200);
    expect(users.logs).toHaveLength(1);
    expect(users.logs[0]).toMatchObject({ api_key_id: null, is_api_key: false });
  });
});

/** The owner as a caller object, as the authentication middleware would build it. */
async function userCaller(org: TestOrg) {
  const row = await env.DB.prepare("SELECT * FROM users WHERE id = ?").bind(org.owner.id).first<any>();
  return { type: "user" as const, sessionId: "s", user: row };
}
