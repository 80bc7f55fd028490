import { describe, expect, it } from "vitest";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";

describe("knowledge bases", () => {
  it("creates with defaults and prompt fields, reads, lists and reads the prompt", async () => {
    const org = await createOrg();
    const kb = expectStatus(
      await call("/knowledge-bases", {
        cookie: org.owner.cookie,
        body: { tenant_id: org.tenantId, name: "Handbook", description: "HR handbook", persona: "You are helpful.", sqlCustomPrompt: null },
      }),
      201,
    );
    expect(kb).toMatchObject({
      tenant_id: org.tenantId,
      name: "Handbook",
      description: "HR handbook",
      status: "active",
      kbMemoryMode: "disabled",
      agent_sharing: { inbound_delegation_enabled: false },
      persona: "You are helpful.",
      instructions: null,
      customPrompt: null,
      mainCustomPrompt: null,
      sqlCustomPrompt: null,
      sqlAgentInstructions: null,
      sqlAnsweringInstructions: null,
      chartInstructions: null,
    });
    expect(kb.id).toMatch(/^kb_/);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie }), 200)).toEqual(kb);
    const prompt = expectStatus(await call(`/knowledge-bases/${kb.id}/prompt`, { cookie: org.owner.cookie }), 200);
    expect(Object.keys(prompt).sort()).toEqual(
      ["chartInstructions", "customPrompt", "instructions", "mainCustomPrompt", "persona", "sqlAgentInstructions", "sqlAnsweringInstructions", "sqlCustomPrompt"],
    );
    expect(prompt.persona).toBe("You are helpful.");
    const list = expectStatus(await call(`/knowledge-bases?tenant_id=${org.tenantId}`, { cookie: org.owner.cookie }), 200);
    expect(list.knowledge_bases.map((k: any) => k.id)).toEqual([kb.id]);
    expect(list.total).toBe(1);
    const tenant = expectStatus(await call(`/tenants/${org.tenantId}`, { cookie: org.owner.cookie }), 200);
    expect(tenant.knowledge_base_count).toBe(1);
  });

  it("PATCH changes only what is sent; null clears nullable fields", async () => {
    const org = await createOrg();
    const kb = await createKb(org, { persona: "P", instructions: "I", chartInstructions: "C" });
    const r = expectStatus(
      await call(`/knowledge-bases/${kb.id}`, {
        cookie: org.owner.cookie,
        method: "PATCH",
        body: { instructions: null, status: "inactive", kbMemoryMode: "kb_restricted", agent_sharing: { inbound_delegation_enabled: true } },
      }),
      200,
    );
    expect(r).toMatchObject({
      persona: "P",
      instructions: null,
      chartInstructions: "C",
      status: "inactive",
      kbMemoryMode: "kb_restricted",
      agent_sharing: { inbound_delegation_enabled: true },
      name: kb.name,
    });
    for (const bad of [{ status: "archived" }, { kbMemoryMode: "all" }, { agent_sharing: { other: 1 } }, { name: null }, { persona: "x".repeat(20_001) }]) {
      expectError(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie, method: "PATCH", body: bad }), 400);
    }
  });

  it("enforces the tenant's knowledge base quota (403 quota_exceeded)", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { max_knowledge_bases: 2 });
    for (let i = 0; i < 2; i++) {
      expectStatus(await call("/knowledge-bases", { cookie: org.owner.cookie, body: { tenant_id: t.id, name: `kb${i}` } }), 201);
    }
    expectError(await call("/knowledge-bases", { cookie: org.owner.cookie, body: { tenant_id: t.id, name: "third" } }), 403, "quota_exceeded");
  });

  it("holds the quota under concurrent creations", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { max_knowledge_bases: 3 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call("/knowledge-bases", { cookie: org.owner.cookie, body: { tenant_id: t.id, name: `kb${i}` } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    const tenant = expectStatus(await call(`/tenants/${t.id}`, { cookie: org.owner.cookie }), 200);
    expect(tenant.knowledge_base_count).toBe(3);
  });

  it("DELETE removes it and updates the tenant's count", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    expect((await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie }), 404);
    const tenant = expectStatus(await call(`/tenants/${org.tenantId}`, { cookie: org.owner.cookie }), 200);
    expect(tenant.knowledge_base_count).toBe(0);
  });

  it("role rules: viewers read only", async () => {
    const org = await createOrg();
    const viewer = await addMember(org, "viewer");
    const dev = await addMember(org, "developer");
    const kb = await createKb(org, {}, { cookie: dev.cookie });
    expectStatus(await call(`/knowledge-bases/${kb.id}`, { cookie: viewer.cookie }), 200);
    expectError(await call("/knowledge-bases", { cookie: viewer.cookie, body: { tenant_id: org.tenantId, name: "x" } }), 403);
    expectError(await call(`/knowledge-bases/${kb.id}`, { cookie: viewer.cookie, method: "PATCH", body: { name: "x" } }), 403);
    expectError(await call(`/knowledge-bases/${kb.id}`, { cookie: viewer.cookie, method: "DELETE" }), 403);
  });

  it("API keys: scopes, tenant allowlist and knowledge-base restriction", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const kbA = await createKb(org);
    const kbB = await createKb(org);
    const kbOther = await createKb(org, { tenant_id: other.id });

    const reader = (await createKey(org, { scopes: ["documents:read"], tenant_ids: [org.tenantId] })).key;
    expectStatus(await call(`/knowledge-bases/${kbA.id}`, { key: reader }), 200);
    expectError(await call(`/knowledge-bases/${kbOther.id}`, { key: reader }), 404);
    expectError(await call(`/knowledge-bases?tenant_id=${other.id}`, { key: reader }), 403);
    expectError(await call("/knowledge-bases", { key: reader, body: { tenant_id: org.tenantId, name: "x" } }), 403);
    expectError(await call(`/knowledge-bases/${kbA.id}`, { key: reader, method: "DELETE" }), 403);

    const writer = (await createKey(org, { scopes: ["documents:write", "documents:delete", "documents:read"] })).key;
    expectStatus(await call("/knowledge-bases", { key: writer, body: { tenant_id: other.id, name: "by-key" } }), 201);
    expectStatus(await call(`/knowledge-bases/${kbOther.id}`, { key: writer, method: "PATCH", body: { name: "renamed" } }), 200);

    const restricted = (await createKey(org, { scopes: ["documents:read", "documents:write"], knowledge_base_id: kbA.id })).key;
    const me = expectStatus(await call("/me", { key: restricted }), 200);
    expect(me.api_key).toMatchObject({ knowledge_base_id: kbA.id, tenant_ids: [org.tenantId] });
    expectStatus(await call(`/knowledge-bases/${kbA.id}`, { key: restricted }), 200);
    expectError(await call(`/knowledge-bases/${kbB.id}`, { key: restricted }), 404);
    expectError(await call(`/knowledge-bases/${kbB.id}`, { key: restricted, method: "PATCH", body: { name: "x" } }), 404);
    const listed = expectStatus(await call(`/knowledge-bases?tenant_id=${org.tenantId}`, { key: restricted }), 200);
    expect(listed.knowledge_bases.map((k: any) => k.id)).toEqual([kbA.id]);
    expectError(await call("/knowledge-bases", { key: restricted, body: { tenant_id: org.tenantId, name: "x" } }), 403);

    // Another organization's knowledge base cannot be named as a restriction.
    const stranger = await createOrg();
    const foreignKb = await createKb(stranger);
    expectError(
      await call(`/environments/${org.envId}/api-keys`, { cookie: org.owner.cookie, body: { name: "k", scopes: ["documents:read"], knowledge_base_id: foreignKb.id } }),
      400,
    );
    expectError(await call(`/knowledge-bases/${foreignKb.id}`, { key: writer }), 404);
  });
});
