import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus, signup, unique } from "../helpers";

describe("organizations", () => {
  it("creation provisions the default environment, tenant and starting credits", async () => {
    const u = await signup();
    const slug = unique("acme-");
    const r = expectStatus(await call("/organizations", { cookie: u.cookie, body: { name: "Acme", slug } }), 201);
    expect(r).toMatchObject({ name: "Acme", slug, type: "business", status: "active", role: "owner" });

    const envs = expectStatus(await call(`/organizations/${r.id}/environments`, { cookie: u.cookie }), 200);
    expect(envs.environments).toEqual([expect.objectContaining({ id: r.default_environment_id, name: "default", is_default: true })]);

    const tenants = expectStatus(await call(`/tenants?env_id=${r.default_environment_id}`, { cookie: u.cookie }), 200);
    expect(tenants.tenants).toHaveLength(1);
    expect(tenants.tenants[0]).toMatchObject({ id: r.default_tenant_id, name: "default", credits_pool: 500, credits_used: 0, credits_available: 500 });

    const billing = expectStatus(await call(`/billing/organizations/${r.id}`, { cookie: u.cookie }), 200);
    expect(billing).toMatchObject({ total_credits: 1000, allocated_credits: 500, used_credits: 0, available_credits: 500, status: "active" });

    const members = expectStatus(await call(`/organizations/${r.id}/members`, { cookie: u.cookie }), 200);
    expect(members.members).toEqual([expect.objectContaining({ user_id: u.id, role: "owner", email: u.email })]);
  });

  it("accepts personal organizations and enforces slug rules", async () => {
    const u = await signup();
    const p = expectStatus(await call("/organizations", { cookie: u.cookie, body: { name: "Me", slug: unique("me-"), type: "personal" } }), 201);
    expect(p.type).toBe("personal");
    for (const slug of ["Upper", "under_score", "-lead", "trail-", "dou--ble", "sp ace", ""]) {
      expectError(await call("/organizations", { cookie: u.cookie, body: { name: "x", slug } }), 400, "invalid_request");
    }
    const slug = unique("dup-");
    expectStatus(await call("/organizations", { cookie: u.cookie, body: { name: "a", slug } }), 201);
    const other = await signup();
    expectError(await call("/organizations", { cookie: other.cookie, body: { name: "b", slug } }), 409, "slug_taken");
  });

  it("lists only the caller's organizations with their role, and hides others (404)", async () => {
    const a = await createOrg();
    const b = await createOrg();
    const viewer = await addMember(a, "viewer");
    const list = expectStatus(await call("/organizations", { cookie: viewer.cookie }), 200);
    expect(list.organizations.map((o: any) => [o.id, o.role])).toEqual([[a.id, "viewer"]]);
    expectStatus(await call(`/organizations/${a.id}`, { cookie: viewer.cookie }), 200);
    expectError(await call(`/organizations/${b.id}`, { cookie: viewer.cookie }), 404, "not_found");
    expectError(await call(`/organizations/org_doesnotexist`, { cookie: viewer.cookie }), 404, "not_found");
  });

  it("PATCH: owner and billing_admin only; developer and viewer get 403", async () => {
    const org = await createOrg();
    const billing = await addMember(org, "billing_admin");
    const dev = await addMember(org, "developer");
    const viewer = await addMember(org, "viewer");
    expectStatus(await call(`/organizations/${org.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { name: "Renamed" } }), 200);
    const r = expectStatus(await call(`/organizations/${org.id}`, { cookie: billing.cookie, method: "PATCH", body: { name: "Again" } }), 200);
    expect(r.name).toBe("Again");
    expectError(await call(`/organizations/${org.id}`, { cookie: dev.cookie, method: "PATCH", body: { name: "no" } }), 403, "forbidden");
    expectError(await call(`/organizations/${org.id}`, { cookie: viewer.cookie, method: "PATCH", body: { name: "no" } }), 403, "forbidden");
    expectError(await call(`/organizations/${org.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { status: "deleted" } }), 400);
  });

  it("an inactive or suspended organization refuses writes until reactivated", async () => {
    const org = await createOrg();
    const { key } = await createKey(org, { scopes: ["tenants:write", "tenants:read"] });
    for (const status of ["inactive", "suspended"] as const) {
      expectStatus(await call(`/organizations/${org.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { status } }), 200);
      expectError(await call("/tenants", { cookie: org.owner.cookie, body: { environment_id: org.envId, name: "t" } }), 403, "forbidden");
      expectError(await call("/tenants", { key, body: { environment_id: org.envId, name: "t" } }), 403, "forbidden");
      expectError(await call(`/organizations/${org.id}/environments`, { cookie: org.owner.cookie, body: { name: unique() } }), 403);
      // Reads keep working.
      expectStatus(await call(`/tenants/${org.tenantId}`, { key }), 200);
    }
    expectStatus(await call(`/organizations/${org.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { status: "active" } }), 200);
    expectStatus(await call("/tenants", { key, body: { environment_id: org.envId, name: "t" } }), 201);
  });

  it("DELETE: owner only; removes everything beneath, and its keys stop working", async () => {
    const org = await createOrg();
    const billing = await addMember(org, "billing_admin");
    const tenant = await createTenant(org);
    const { key } = await createKey(org, { scopes: ["tenants:read"] });
    expectStatus(await call(`/tenants/${tenant.id}`, { key }), 200);
    expectError(await call(`/organizations/${org.id}`, { cookie: billing.cookie, method: "DELETE" }), 403, "forbidden");
    const del = await call(`/organizations/${org.id}`, { cookie: org.owner.cookie, method: "DELETE" });
    expect(del.status).toBe(204);
    expectError(await call(`/organizations/${org.id}`, { cookie: org.owner.cookie }), 404);
    expectError(await call(`/tenants/${tenant.id}`, { key }), 401);
    for (const table of ["environments", "tenants", "api_keys", "organization_members", "invitations"]) {
      const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE organization_id = ?`).bind(org.id).first<{ n: number }>();
      expect(row!.n, table).toBe(0);
    }
    // The users themselves remain.
    expectStatus(await call("/me", { cookie: billing.cookie }), 200);
  });
});
