import { describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";

describe("credit allocation", () => {
  it("adds organization credits within the amount bounds (owner, billing_admin)", async () => {
    const org = await createOrg();
    const billing = await addMember(org, "billing_admin");
    const dev = await addMember(org, "developer");
    for (const amount of [0, -5, 1_000_000.5, "10", null]) {
      expectError(await call(`/billing/organizations/${org.id}/credits`, { cookie: org.owner.cookie, body: { amount } }), 400);
    }
    const r = expectStatus(await call(`/billing/organizations/${org.id}/credits`, { cookie: billing.cookie, body: { amount: 1_000_000 } }), 200);
    expect(r).toMatchObject({ total_credits: 1_001_000, allocated_credits: 500, available_credits: 1_000_500 });
    const r2 = expectStatus(await call(`/billing/organizations/${org.id}/credits`, { cookie: org.owner.cookie, body: { amount: 0.25 } }), 200);
    expect(r2.total_credits).toBe(1_001_000.25);
    expectError(await call(`/billing/organizations/${org.id}/credits`, { cookie: dev.cookie, body: { amount: 1 } }), 403);
  });

  it("moves available organization credits into a tenant, refusing more than available", async () => {
    const org = await createOrg();
    const t = await createTenant(org);
    const after = expectStatus(await call(`/billing/tenants/${t.id}/credits`, { cookie: org.owner.cookie, body: { amount: 499 } }), 200);
    expect(after).toEqual({ tenant_id: t.id, credits_pool: 499, credits_used: 0, credits_available: 499 });
    expectError(await call(`/billing/tenants/${t.id}/credits`, { cookie: org.owner.cookie, body: { amount: 2 } }), 400, "insufficient_organization_credits");
    expectStatus(await call(`/billing/tenants/${t.id}/credits`, { cookie: org.owner.cookie, body: { amount: 1 } }), 200);
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(billing).toMatchObject({ allocated_credits: 1000, available_credits: 0 });
    expect(billing.period.start).toMatch(/^\d{4}-\d{2}-01T00:00:00.000Z$/);
    expect(billing.tenants).toHaveLength(2);
  });

  it("never overdraws the organization under concurrent allocations", async () => {
    const org = await createOrg(); // 500 available
    const tenants = await Promise.all([createTenant(org), createTenant(org), createTenant(org)]);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(`/billing/tenants/${tenants[i % 3].id}/credits`, { cookie: org.owner.cookie, body: { amount: 40 } }),
      ),
    );
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(12); // 12 * 40 = 480 <= 500 < 13 * 40
    for (const r of results.filter((x) => x.status !== 200)) expectError(r, 400, "insufficient_organization_credits");
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(billing.available_credits).toBe(20);
    expect(billing.allocated_credits).toBe(980);
  });

  it("tenant credit reads: members and keys with tenants:read", async () => {
    const org = await createOrg();
    const viewer = await addMember(org, "viewer");
    const r = expectStatus(await call(`/billing/tenants/${org.tenantId}/credits`, { cookie: viewer.cookie }), 200);
    expect(r).toEqual({ tenant_id: org.tenantId, credits_pool: 500, credits_used: 0, credits_available: 500 });
    expectError(await call(`/billing/tenants/${org.tenantId}/credits`, { cookie: viewer.cookie, body: { amount: 1 } }), 403);
    const { key } = await createKey(org, { scopes: ["tenants:read"] });
    expectStatus(await call(`/billing/tenants/${org.tenantId}/credits`, { key }), 200);
    const { key: noScope } = await createKey(org, { scopes: ["documents:read"] });
    expectError(await call(`/billing/tenants/${org.tenantId}/credits`, { key: noScope }), 403);
    const other = await createOrg();
    expectError(await call(`/billing/tenants/${other.tenantId}/credits`, { cookie: viewer.cookie }), 404);
    expectError(await call(`/billing/organizations/${other.id}`, { cookie: viewer.cookie }), 404);
  });
});
