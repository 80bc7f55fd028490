import { describe, expect, it } from "vitest";
import { call, createEnvironment, createKey, createOrg, createTenant, expectError, expectStatus, signup } from "../helpers";
import { connect, runTool, startAdd, statuses, turnTools } from "./helpers";

const ALL = ["connectors:read", "connectors:write", "connectors:delete"];

describe("connections belong to one owner", () => {
  it("between signed-in users: each sees and uses only their own", async () => {
    const alice = await signup();
    const bob = await signup();
    await connect({ cookie: alice.cookie }, "github");
    await connect({ cookie: bob.cookie }, "github", {}, { test_account: "bob" });
    expect((await statuses({ cookie: alice.cookie }, ["github"]))[0].account).toBe("alice-gh");
    expect((await statuses({ cookie: bob.cookie }, ["github"]))[0].account).toBe("bob-gh");

    // In turns, each subject's tools reach their own account's data only.
    const a = await turnTools(`user:${alice.id}`, "ten_any", ["github"]);
    const b = await turnTools(`user:${bob.id}`, "ten_any", ["github"]);
    const aFalcon = await runTool(a.tools, a.scope, "app__github__search", { query: "falcon project" });
    expect(aFalcon.passages).toEqual([]);
    const bFalcon = await runTool(b.tools, b.scope, "app__github__search", { query: "falcon project" });
    expect(bFalcon.passages!.map((p) => p.text).join()).toContain("falcon");

    // Disconnecting one leaves the other.
    expect((await call("/connectors/github", { cookie: alice.cookie, method: "DELETE" })).status).toBe(204);
    expect((await statuses({ cookie: alice.cookie }, ["github"]))[0].connected).toBe(false);
    expect((await statuses({ cookie: bob.cookie }, ["github"]))[0].connected).toBe(true);
    expectError(await call("/connectors/github", { cookie: alice.cookie, method: "DELETE" }), 404);
  });

  it("between external subjects of one tenant, and between tenants", async () => {
    const org = await createOrg();
    const key = await createKey(org, { scopes: ALL });
    const tenant2 = await createTenant(org);
    const one = { tenant_id: org.tenantId, external_subject_id: "customer-1" };
    const two = { tenant_id: org.tenantId, external_subject_id: "customer-2" };
    const oneElsewhere = { tenant_id: tenant2.id, external_subject_id: "customer-1" };
    await connect({ key: key.key }, "notion", one);
    expect((await statuses({ key: key.key }, ["notion"], one))[0].connected).toBe(true);
    expect((await statuses({ key: key.key }, ["notion"], two))[0].connected).toBe(false);
    expect((await statuses({ key: key.key }, ["notion"], oneElsewhere))[0].connected).toBe(false);
    expectError(await call(`/connectors/notion?tenant_id=${org.tenantId}&external_subject_id=customer-2`, { key: key.key, method: "DELETE" }), 404);
    expectError(await call(`/connectors/notion?tenant_id=${tenant2.id}&external_subject_id=customer-1`, { key: key.key, method: "DELETE" }), 404);

    // Turns: the subject of the chat, within the chat's tenant.
    expect((await turnTools("ext:customer-1", org.tenantId, ["notion"])).tools.length).toBe(2);
    const other = await turnTools("ext:customer-2", org.tenantId, ["notion"]);
    expect(other.tools.length).toBe(2); // offered, but they find no connection
    const r = await runTool(other.tools, other.scope, "app__notion__search", { query: "refund" });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("not connected");
    const elsewhere = await turnTools("ext:customer-1", tenant2.id, ["notion"]);
    expect((await runTool(elsewhere.tools, elsewhere.scope, "app__notion__search", { query: "refund" })).isError).toBe(true);
    // The owner's own turn finds their data.
    const own = await turnTools("ext:customer-1", org.tenantId, ["notion"]);
    expect((await runTool(own.tools, own.scope, "app__notion__search", { query: "refund" })).passages!.length).toBeGreaterThan(0);

    // The key's disconnect with the right owner works.
    expect((await call(`/connectors/notion?tenant_id=${org.tenantId}&external_subject_id=customer-1`, { key: key.key, method: "DELETE" })).status).toBe(204);
    expect((await statuses({ key: key.key }, ["notion"], one))[0].connected).toBe(false);
  });

  it("a user's connection is not a key's, and a key's end user is not a user", async () => {
    const org = await createOrg();
    const key = await createKey(org, { scopes: ALL });
    await connect({ cookie: org.owner.cookie }, "slack");
    expect((await statuses({ key: key.key }, ["slack"], { tenant_id: org.tenantId, external_subject_id: org.owner.id }))[0].connected).toBe(false);
    expect((await statuses({ key: key.key }, ["slack"], { tenant_id: org.tenantId, external_subject_id: `user:${org.owner.id}` }))[0].connected).toBe(false);
  });

  it("owner fields: users may not send them (400), keys must send both (400)", async () => {
    const org = await createOrg();
    const key = await createKey(org, { scopes: ALL });
    const user = { cookie: org.owner.cookie };
    for (const extra of [{ tenant_id: org.tenantId }, { external_subject_id: "x" }, { tenant_id: org.tenantId, external_subject_id: "x" }]) {
      expectError(await call("/connectors/status", { ...user, body: { slugs: ["github"], ...extra } }), 400);
      expectError(await call("/connectors/add", { ...user, body: { slug: "github", redirect_url: "https://a.example/", ...extra } }), 400);
    }
    expectError(await call(`/connectors/github?external_subject_id=x`, { ...user, method: "DELETE" }), 400);
    for (const extra of [{}, { tenant_id: org.tenantId }, { external_subject_id: "x" }]) {
      const e = expectError(await call("/connectors/status", { key: key.key, body: { slugs: ["github"], ...extra } }), 400);
      expect(e.details!.length).toBeGreaterThan(0);
    }
    expectError(await call(`/connectors/github?tenant_id=${org.tenantId}`, { key: key.key, method: "DELETE" }), 400);
  });

  it("keys reach only their organization, environment and tenants, with the right scope", async () => {
    const org = await createOrg();
    const stranger = await createOrg();
    const strangerKey = await createKey(stranger, { scopes: ALL });
    const env2 = await createEnvironment(org);
    const env2Key = await createKey(org, { scopes: ALL, envId: env2.id });
    const other = await createTenant(org);
    const limitedKey = await createKey(org, { scopes: ALL, tenant_ids: [other.id] });
    const noScope = await createKey(org, { scopes: ["documents:read"] });
    const owner = { tenant_id: org.tenantId, external_subject_id: "c1" };
    const goodKey = await createKey(org, { scopes: ALL });
    await connect({ key: goodKey.key }, "github", owner);

    expectError(await call("/connectors/status", { key: strangerKey.key, body: { slugs: ["github"], ...owner } }), 404);
    expectError(await call("/connectors/status", { key: env2Key.key, body: { slugs: ["github"], ...owner } }), 403);
    expectError(await call("/connectors/status", { key: limitedKey.key, body: { slugs: ["github"], ...owner } }), 403);
    expectError(await call("/connectors/status", { key: noScope.key, body: { slugs: ["github"], ...owner } }), 403);
    expectError(await call("/connectors/add", { key: strangerKey.key, body: { slug: "github", redirect_url: "https://a.example/", ...owner } }), 404);
    const q = `tenant_id=${org.tenantId}&external_subject_id=c1`;
    expectError(await call(`/connectors/github?${q}`, { key: strangerKey.key, method: "DELETE" }), 404);
    expectError(await call(`/connectors/github?${q}`, { key: limitedKey.key, method: "DELETE" }), 403);
    const readOnly = await createKey(org, { scopes: ["connectors:read"] });
    expectError(await call(`/connectors/github?${q}`, { key: readOnly.key, method: "DELETE" }), 403);
    // Another organization's member naming this tenant: 404.
    expectError(await call("/connectors/status", { cookie: stranger.owner.cookie, body: { slugs: ["github"], tenant_id: org.tenantId } }), 404);
    // Still connected after all that.
    expect((await statuses({ key: goodKey.key }, ["github"], owner))[0].connected).toBe(true);
  });

  it("an authorization started for one owner connects that owner, whoever's browser finishes it", async () => {
    const org = await createOrg();
    const key = await createKey(org, { scopes: ALL });
    const add = await startAdd({ key: key.key }, "linear", { tenant_id: org.tenantId, external_subject_id: "c9" });
    const { approve, callback } = await import("./helpers");
    await callback(await approve(add.redirect_url));
    expect((await statuses({ key: key.key }, ["linear"], { tenant_id: org.tenantId, external_subject_id: "c9" }))[0].connected).toBe(true);
    expect((await statuses({ cookie: org.owner.cookie }, ["linear"]))[0].connected).toBe(false);
  });

  it("deleting the tenant deletes its end users' connections", async () => {
    const org = await createOrg();
    const key = await createKey(org, { scopes: [...ALL, "tenants:delete"] });
    const t = await createTenant(org);
    await connect({ key: key.key }, "jira", { tenant_id: t.id, external_subject_id: "c1" });
    const { env } = await import("cloudflare:workers");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM connector_connections WHERE tenant_id = ?").bind(t.id).first<{ n: number }>())!.n).toBe(1);
    expectStatus(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie, method: "DELETE" }), 204);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM connector_connections WHERE tenant_id = ?").bind(t.id).first<{ n: number }>())!.n).toBe(0);
  });
});
