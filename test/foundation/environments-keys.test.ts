import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createEnvironment, createKey, createOrg, createTenant, expectError, expectStatus, unique } from "../helpers";

describe("environments", () => {
  it("CRUD with role rules: writers create and rename, only the owner deletes", async () => {
    const org = await createOrg();
    const dev = await addMember(org, "developer");
    const viewer = await addMember(org, "viewer");
    const billing = await addMember(org, "billing_admin");

    const e = expectStatus(await call(`/organizations/${org.id}/environments`, { cookie: dev.cookie, body: { name: "staging" } }), 201);
    expect(e).toMatchObject({ name: "staging", organization_id: org.id, is_default: false });
    expectStatus(await call(`/organizations/${org.id}/environments`, { cookie: billing.cookie, body: { name: "qa" } }), 201);
    expectError(await call(`/organizations/${org.id}/environments`, { cookie: viewer.cookie, body: { name: "nope" } }), 403);
    expectError(await call(`/organizations/${org.id}/environments`, { cookie: dev.cookie, body: { name: "staging" } }), 409);

    expectStatus(await call(`/environments/${e.id}`, { cookie: viewer.cookie }), 200);
    const renamed = expectStatus(await call(`/environments/${e.id}`, { cookie: dev.cookie, method: "PATCH", body: { name: "stage" } }), 200);
    expect(renamed.name).toBe("stage");
    expectError(await call(`/environments/${e.id}`, { cookie: viewer.cookie, method: "PATCH", body: { name: "x" } }), 403);

    expectError(await call(`/environments/${e.id}`, { cookie: dev.cookie, method: "DELETE" }), 403);
    expect((await call(`/environments/${e.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/environments/${e.id}`, { cookie: org.owner.cookie }), 404);
  });

  it("refuses to delete an environment that still has tenants (409)", async () => {
    const org = await createOrg();
    expectError(await call(`/environments/${org.envId}`, { cookie: org.owner.cookie, method: "DELETE" }), 409, "environment_not_empty");
  });

  it("hides other organizations' environments (404)", async () => {
    const a = await createOrg();
    const b = await createOrg();
    expectError(await call(`/environments/${b.envId}`, { cookie: a.owner.cookie }), 404);
    expectError(await call(`/organizations/${b.id}/environments`, { cookie: a.owner.cookie }), 404);
    expectError(await call(`/environments/${b.envId}/api-keys`, { cookie: a.owner.cookie, body: { name: "k", scopes: ["tenants:read"] } }), 404);
  });
});

describe("API keys", () => {
  it("shows the secret once, stores only a hash, and lists keys without secrets", async () => {
    const org = await createOrg();
    const r = expectStatus(
      await call(`/environments/${org.envId}/api-keys`, { cookie: org.owner.cookie, body: { name: "backend", scopes: ["documents:read", "query:rag"] } }),
      201,
    );
    expect(r.key).toMatch(/^kbk_[A-Za-z0-9_-]{40,}$/);
    expect(r.prefix).toBe(r.key.slice(0, 12));
    expect(r).toMatchObject({ name: "backend", scopes: ["documents:read", "query:rag"], tenant_ids: [], environment_id: org.envId, last_used_at: null });
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(r.id).first<any>();
    expect(JSON.stringify(row)).not.toContain(r.key);
    const list = expectStatus(await call(`/environments/${org.envId}/api-keys`, { cookie: org.owner.cookie }), 200);
    expect(list.api_keys).toHaveLength(1);
    expect(list.api_keys[0].key).toBeUndefined();
    expect(list.api_keys[0].prefix).toBe(r.prefix);
  });

  it("validates scopes, tenants and expiry", async () => {
    const org = await createOrg();
    const other = await createOrg();
    const url = `/environments/${org.envId}/api-keys`;
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k", scopes: ["documents:fly"] } }), 400);
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k", scopes: [] } }), 400);
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k" } }), 400);
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k", scopes: ["tenants:read"], tenant_ids: [other.tenantId] } }), 400);
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k", scopes: ["tenants:read"], expires_at: "2001-01-01T00:00:00Z" } }), 400);
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k", scopes: ["tenants:read"], expires_at: "tomorrow" } }), 400);
    expectError(await call(url, { cookie: org.owner.cookie, body: { name: "k", scopes: ["tenants:read"], knowledge_base_id: "kb_nope" } }), 400);
  });

  it("role rules: owner, billing_admin and developer manage keys; viewers cannot", async () => {
    const org = await createOrg();
    const viewer = await addMember(org, "viewer");
    const dev = await addMember(org, "developer");
    const body = { name: "k", scopes: ["tenants:read"] };
    expectError(await call(`/environments/${org.envId}/api-keys`, { cookie: viewer.cookie, body }), 403);
    expectError(await call(`/environments/${org.envId}/api-keys`, { cookie: viewer.cookie }), 403);
    const k = expectStatus(await call(`/environments/${org.envId}/api-keys`, { cookie: dev.cookie, body }), 201);
    expectError(await call(`/api-keys/${k.id}`, { cookie: viewer.cookie, method: "DELETE" }), 403);
    expect((await call(`/api-keys/${k.id}`, { cookie: dev.cookie, method: "DELETE" })).status).toBe(204);
  });

  it("revocation takes effect on the next request", async () => {
    const org = await createOrg();
    const { key, id } = await createKey(org, { scopes: ["tenants:read"] });
    expectStatus(await call(`/tenants/${org.tenantId}`, { key }), 200);
    expect((await call(`/api-keys/${id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    const e = expectError(await call(`/tenants/${org.tenantId}`, { key }), 401, "unauthorized");
    expect(e.message).toMatch(/revoked/);
    const list = expectStatus(await call(`/environments/${org.envId}/api-keys`, { cookie: org.owner.cookie }), 200);
    expect(list.api_keys).toEqual([]);
    expectError(await call(`/api-keys/${id}`, { cookie: org.owner.cookie, method: "DELETE" }), 404);
  });

  it("an expired key answers 401", async () => {
    const org = await createOrg();
    const { key, id } = await createKey(org, { scopes: ["tenants:read"], expires_at: new Date(Date.now() + 60_000).toISOString() });
    expectStatus(await call(`/tenants/${org.tenantId}`, { key }), 200);
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1).toISOString(), id).run();
    const e = expectError(await call(`/tenants/${org.tenantId}`, { key }), 401);
    expect(e.message).toMatch(/expired/);
  });

  it("records last_used_at", async () => {
    const org = await createOrg();
    const { key, id } = await createKey(org, { scopes: ["tenants:read"] });
    await call("/me", { key });
    const list = expectStatus(await call(`/environments/${org.envId}/api-keys`, { cookie: org.owner.cookie }), 200);
    const k = list.api_keys.find((x: any) => x.id === id);
    expect(Date.now() - Date.parse(k.last_used_at)).toBeLessThan(60_000);
  });

  it("a key reaches only its environment (403 when naming another; 404 by id)", async () => {
    const org = await createOrg();
    const staging = await createEnvironment(org, "staging");
    const stagingTenant = await createTenant(org, {}, staging.id);
    const { key } = await createKey(org, { scopes: ["tenants:read", "tenants:write", "tenants:delete"] });
    expectError(await call(`/tenants?env_id=${staging.id}`, { key }), 403, "forbidden");
    expectError(await call(`/tenants/${stagingTenant.id}`, { key }), 404);
    expectError(await call(`/tenants/${stagingTenant.id}`, { key, method: "PATCH", body: { name: "x" } }), 404);
    expectError(await call(`/tenants/${stagingTenant.id}`, { key, method: "DELETE" }), 404);
    expectError(await call("/tenants", { key, body: { environment_id: staging.id, name: "x" } }), 403);
    expectError(await call(`/billing/tenants/${stagingTenant.id}/credits`, { key }), 404);
    const list = expectStatus(await call("/tenants", { key }), 200);
    expect(list.tenants.map((t: any) => t.id)).toEqual([org.tenantId]);
    // And never another organization's.
    const other = await createOrg();
    expectError(await call(`/tenants?env_id=${other.envId}`, { key }), 404);
    expectError(await call(`/tenants/${other.tenantId}`, { key }), 404);
    expect(unique()).toBeTruthy();
  });
});
