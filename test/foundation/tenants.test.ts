import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";

describe("tenants", () => {
  it("creates with quotas and credits; reads return counts and balances", async () => {
    const org = await createOrg();
    const t = expectStatus(
      await call("/tenants", {
        cookie: org.owner.cookie,
        body: {
          environment_id: org.envId,
          name: "Customer A",
          external_id: "cust-a",
          external_name: "Customer A Inc",
          credits_pool: 100.5,
          max_knowledge_bases: 3,
          max_documents: 50,
          max_storage_gb: 0.5,
          metadata: { plan: "pro", seats: 4 },
        },
      }),
      201,
    );
    expect(t).toMatchObject({
      name: "Customer A",
      external_id: "cust-a",
      external_name: "Customer A Inc",
      credits_pool: 100.5,
      credits_used: 0,
      credits_available: 100.5,
      max_knowledge_bases: 3,
      max_documents: 50,
      max_storage_gb: 0.5,
      metadata: { plan: "pro", seats: 4 },
      knowledge_base_count: 0,
      document_count: 0,
      storage_used_bytes: 0,
      environment_id: org.envId,
      organization_id: org.id,
    });
    const d = expectStatus(await call("/tenants", { cookie: org.owner.cookie, body: { environment_id: org.envId, name: "Defaults" } }), 201);
    expect(d).toMatchObject({ max_knowledge_bases: 100, max_documents: 10000, max_storage_gb: 10, credits_pool: 0, metadata: {} });
    const got = expectStatus(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie }), 200);
    expect(got).toEqual(t);
    const list = expectStatus(await call(`/tenants?env_id=${org.envId}&limit=2&offset=1`, { cookie: org.owner.cookie }), 200);
    expect(list).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(list.tenants.map((x: any) => x.id)).toEqual([t.id, d.id]);
  });

  it("refuses bad input", async () => {
    const org = await createOrg();
    const base = { environment_id: org.envId, name: "x" };
    for (const bad of [
      { name: "x" },
      { environment_id: org.envId },
      { ...base, credits_pool: -1 },
      { ...base, max_documents: 1.5 },
      { ...base, max_storage_gb: -0.1 },
      { ...base, metadata: "string" },
      { ...base, metadata: { big: "x".repeat(17_000) } },
      { ...base, name: "" },
    ]) {
      expectError(await call("/tenants", { cookie: org.owner.cookie, body: bad }), 400, "invalid_request");
    }
    expectError(await call("/tenants", { cookie: org.owner.cookie, body: { ...base, environment_id: "env_missing" } }), 404);
    expectError(await call("/tenants", { cookie: org.owner.cookie }), 400);
    expectError(await call("/tenants", { cookie: org.owner.cookie, method: "GET" }), 400);
  });

  it("refuses a duplicate external_id within the environment (409)", async () => {
    const org = await createOrg();
    await createTenant(org, { external_id: "dup" });
    expectError(await call("/tenants", { cookie: org.owner.cookie, body: { environment_id: org.envId, name: "y", external_id: "dup" } }), 409);
  });

  it("bounds credit allocation by the organization's available credits", async () => {
    const org = await createOrg(); // 1000 total, 500 allocated to default
    expectError(
      await call("/tenants", { cookie: org.owner.cookie, body: { environment_id: org.envId, name: "greedy", credits_pool: 500.000001 } }),
      400,
      "insufficient_organization_credits",
    );
    const t = await createTenant(org, { credits_pool: 300 });
    expectError(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { credits_pool: 501 } }), 400, "insufficient_organization_credits");
    const raised = expectStatus(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { credits_pool: 500 } }), 200);
    expect(raised.credits_pool).toBe(500);
    // Lowering below what is used is refused; lowering returns credits.
    await env.DB.prepare("UPDATE tenants SET credits_used = ? WHERE id = ?").bind(120_000_000, t.id).run();
    expectError(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { credits_pool: 100 } }), 400, "invalid_request");
    expectStatus(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { credits_pool: 120 } }), 200);
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(billing).toMatchObject({ total_credits: 1000, allocated_credits: 620, used_credits: 120, available_credits: 380 });
  });

  it("delete returns unused credits to the organization and keeps used ones counted", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { credits_pool: 200 });
    await env.DB.prepare("UPDATE tenants SET credits_used = ? WHERE id = ?").bind(50_000_000, t.id).run();
    expect((await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie }), 404);
    const billing = expectStatus(await call(`/billing/organizations/${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(billing).toMatchObject({ total_credits: 1000, allocated_credits: 550, used_credits: 50, available_credits: 450 });
    expect(billing.tenants.map((x: any) => x.tenant_id)).toEqual([org.tenantId]);
  });

  it("role rules: owner and billing_admin write; developer and viewer read only", async () => {
    const org = await createOrg();
    const billing = await addMember(org, "billing_admin");
    const dev = await addMember(org, "developer");
    const viewer = await addMember(org, "viewer");
    const t = expectStatus(await call("/tenants", { cookie: billing.cookie, body: { environment_id: org.envId, name: "b" } }), 201);
    for (const u of [dev, viewer]) {
      expectError(await call("/tenants", { cookie: u.cookie, body: { environment_id: org.envId, name: "n" } }), 403, "forbidden");
      expectError(await call(`/tenants/${t.id}`, { cookie: u.cookie, method: "PATCH", body: { name: "n" } }), 403);
      expectError(await call(`/tenants/${t.id}`, { cookie: u.cookie, method: "DELETE" }), 403);
      expectStatus(await call(`/tenants/${t.id}`, { cookie: u.cookie }), 200);
      expectStatus(await call(`/tenants?env_id=${org.envId}`, { cookie: u.cookie }), 200);
    }
    expectStatus(await call(`/tenants/${t.id}`, { cookie: billing.cookie, method: "PATCH", body: { name: "renamed" } }), 200);
    expect((await call(`/tenants/${t.id}`, { cookie: billing.cookie, method: "DELETE" })).status).toBe(204);
  });

  it("requires env_id for user sessions and hides other organizations", async () => {
    const org = await createOrg();
    const other = await createOrg();
    expectError(await call("/tenants", { cookie: org.owner.cookie }), 400);
    expectError(await call(`/tenants?env_id=${other.envId}`, { cookie: org.owner.cookie }), 404);
    expectError(await call(`/tenants/${other.tenantId}`, { cookie: org.owner.cookie }), 404);
    expectError(await call(`/tenants/${other.tenantId}`, { cookie: org.owner.cookie, method: "PATCH", body: { name: "pwn" } }), 404);
    expectError(await call(`/tenants/${other.tenantId}`, { cookie: org.owner.cookie, method: "DELETE" }), 404);
    expectError(await call("/tenants", { cookie: org.owner.cookie, body: { environment_id: other.envId, name: "x" } }), 404);
  });
});

describe("tenants with API keys", () => {
  it("scopes: tenants:read reads, tenants:write writes, tenants:delete deletes", async () => {
    const org = await createOrg();
    const t = await createTenant(org);
    const read = (await createKey(org, { scopes: ["tenants:read"] })).key;
    const write = (await createKey(org, { scopes: ["tenants:write"] })).key;
    const del = (await createKey(org, { scopes: ["tenants:delete"] })).key;
    const docs = (await createKey(org, { scopes: ["documents:read"] })).key;

    expectStatus(await call(`/tenants/${t.id}`, { key: read }), 200);
    expectError(await call(`/tenants/${t.id}`, { key: docs }), 403, "forbidden");
    expectError(await call(`/tenants/${t.id}`, { key: read, method: "PATCH", body: { name: "x" } }), 403);
    expectStatus(await call(`/tenants/${t.id}`, { key: write, method: "PATCH", body: { name: "x" } }), 200);
    expectError(await call(`/tenants/${t.id}`, { key: write, method: "DELETE" }), 403);
    const created = expectStatus(await call("/tenants", { key: write, body: { environment_id: org.envId, name: "by-key" } }), 201);
    expect((await call(`/tenants/${created.id}`, { key: del, method: "DELETE" })).status).toBe(204);
  });

  it("the allowlist limits reads and writes; empty means every tenant; admin:full lists all", async () => {
    const org = await createOrg();
    const a = await createTenant(org);
    const b = await createTenant(org);
    const onlyA = (await createKey(org, { scopes: ["tenants:read", "tenants:write"], tenant_ids: [a.id] })).key;
    const all = (await createKey(org, { scopes: ["tenants:read"] })).key;
    const admin = (await createKey(org, { scopes: ["admin:full"], tenant_ids: [a.id] })).key;

    expectStatus(await call(`/tenants/${a.id}`, { key: onlyA }), 200);
    expectError(await call(`/tenants/${b.id}`, { key: onlyA }), 404);
    expectError(await call(`/tenants/${b.id}`, { key: onlyA, method: "PATCH", body: { name: "x" } }), 404);
    expectError(await call(`/billing/tenants/${b.id}/credits`, { key: onlyA }), 404);
    const listA = expectStatus(await call("/tenants", { key: onlyA }), 200);
    expect(listA.tenants.map((t: any) => t.id)).toEqual([a.id]);
    expect(listA.total).toBe(1);

    const listAll = expectStatus(await call(`/tenants?env_id=${org.envId}`, { key: all }), 200);
    expect(listAll.tenants.map((t: any) => t.id).sort()).toEqual([org.tenantId, a.id, b.id].sort());

    const listAdmin = expectStatus(await call("/tenants", { key: admin }), 200);
    expect(listAdmin.total).toBe(3);

    // A key limited to specific tenants cannot create tenants.
    expectError(await call("/tenants", { key: onlyA, body: { environment_id: org.envId, name: "n" } }), 403, "forbidden");
  });

  it("a key cannot allocate organization credits (user-only)", async () => {
    const org = await createOrg();
    const { key } = await createKey(org, { scopes: ["admin:full"] });
    expectError(await call(`/billing/tenants/${org.tenantId}/credits`, { key, body: { amount: 1 } }), 403);
    expectError(await call(`/billing/organizations/${org.id}/credits`, { key, body: { amount: 1 } }), 403);
    expectError(await call(`/billing/organizations/${org.id}`, { key }), 403);
  });
});
