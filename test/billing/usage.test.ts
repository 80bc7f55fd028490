import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { recordUsage } from "../../src/services/billing/metering";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus, type TestOrg } from "../helpers";

async function seed(org: TestOrg, tenantId: string, createdAt: string, extra: Record<string, unknown> = {}) {
  const r = await recordUsage(createDb(env.DB), {
    organizationId: org.id,
    tenantId,
    operation: "chat",
    model: "local-extractive",
    pricing: { input_per_1k: 1, output_per_1k: 1 },
    usage: { input_tokens: 100, output_tokens: 100 },
    ...extra,
  });
  await env.DB.prepare("UPDATE usage_logs SET created_at = ? WHERE id = ?").bind(createdAt, r.id).run();
  return r;
}

describe("usage endpoints", () => {
  it("filters logs by date range (inclusive, UTC) and pages them (1-500, default 50)", async () => {
    const org = await createOrg();
    await seed(org, org.tenantId, "2026-10-31T23:59:59.999Z");
    await seed(org, org.tenantId, "2026-11-01T00:00:00.000Z");
    await seed(org, org.tenantId, "2026-11-15T12:00:00.000Z");
    await seed(org, org.tenantId, "2026-11-30T23:59:59.000Z");
    await seed(org, org.tenantId, "2026-12-01T00:00:00.000Z");
    const nov = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?start_date=2026-11-01&end_date=2026-11-30`, { cookie: org.owner.cookie }), 200);
    expect(nov.total).toBe(3);
    expect(nov.limit).toBe(50);
    expect(nov.logs.map((l: any) => l.created_at)).toEqual(["2026-11-30T23:59:59.000Z", "2026-11-15T12:00:00.000Z", "2026-11-01T00:00:00.000Z"]);
    const sum = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/summary?start_date=2026-11-01&end_date=2026-11-30`, { cookie: org.owner.cookie }), 200);
    expect(sum).toEqual({ credits_used: 0.6, total_tokens: 600, input_tokens: 300, output_tokens: 300, message_count: 3 });
    const page = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?limit=2&offset=1`, { cookie: org.owner.cookie }), 200);
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 1 });
    expect(page.logs).toHaveLength(2);
    for (const q of ["limit=0", "limit=501", "limit=x", "offset=-1", "start_date=2026-13-01", "start_date=2026-02-30", "start_date=20261101", "end_date=2026-11-01&start_date=2026-11-02", "is_api_key=maybe"]) {
      expectError(await call(`/billing/tenants/${org.tenantId}/usage/logs?${q}`, { cookie: org.owner.cookie }), 400);
    }
    expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?limit=500`, { cookie: org.owner.cookie }), 200);
  });

  it("organization summary and logs span tenants; totals equal the sums of the logs", async () => {
    const org = await createOrg();
    const other = await createTenant(org, { credits_pool: 10 });
    await seed(org, org.tenantId, "2026-11-02T00:00:00.000Z");
    await seed(org, other.id, "2026-11-03T00:00:00.000Z", { operation: "embedding", usage: { input_tokens: 1000, output_tokens: 0 } });
    const s = expectStatus(await call(`/billing/organizations/${org.id}/usage/summary`, { cookie: org.owner.cookie }), 200);
    expect(s).toEqual({ credits_used: 1.2, total_tokens: 1200, input_tokens: 1100, output_tokens: 100, message_count: 1 });
    const logs = expectStatus(await call(`/billing/organizations/${org.id}/usage/logs`, { cookie: org.owner.cookie }), 200);
    expect(logs.total).toBe(2);
    const filtered = expectStatus(await call(`/billing/organizations/${org.id}/usage/logs?tenant_id=${other.id}`, { cookie: org.owner.cookie }), 200);
    expect(filtered.logs.map((l: any) => l.operation)).toEqual(["embedding"]);
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(billing.used_credits).toBe(s.credits_used);
  });

  it("authorization: members read; keys need tenants:read and stay in their reach; org usage is user-only", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const viewer = await addMember(org, "viewer");
    expectStatus(await call(`/billing/organizations/${org.id}/usage/summary`, { cookie: viewer.cookie }), 200);
    expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs`, { cookie: viewer.cookie }), 200);
    const reader = (await createKey(org, { scopes: ["tenants:read"], tenant_ids: [org.tenantId] })).key;
    expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/summary`, { key: reader }), 200);
    expectError(await call(`/billing/tenants/${other.id}/usage/summary`, { key: reader }), 404);
    expectError(await call(`/billing/tenants/${other.id}/usage/logs`, { key: reader }), 404);
    const noScope = (await createKey(org, { scopes: ["query:rag"] })).key;
    expectError(await call(`/billing/tenants/${org.tenantId}/usage/logs`, { key: noScope }), 403);
    expectError(await call(`/billing/organizations/${org.id}/usage/logs`, { key: reader }), 403);
    const stranger = await createOrg();
    expectError(await call(`/billing/organizations/${org.id}/usage/summary`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/billing/tenants/${org.tenantId}/usage/logs`, { cookie: stranger.owner.cookie }), 404);
  });
});
