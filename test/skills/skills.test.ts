import { describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";

const skillBody = (tenantId: string, extra: Record<string, unknown> = {}) => ({
  tenant_id: tenantId,
  name: "Release notes",
  description: "Write release notes from merged changes",
  body: "# Release notes\n\n1. Group changes by area.\n2. Cite each change.",
  ...extra,
});

describe("skills", () => {
  it("creates, reads, lists, updates and archives", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const s = expectStatus(await call("/skills", { ...auth, body: skillBody(org.tenantId) }), 201);
    expect(s).toMatchObject({
      tenant_id: org.tenantId,
      name: "Release notes",
      description: "Write release notes from merged changes",
      status: "active",
      template_id: null,
      template_version: null,
    });
    expect(s.id).toMatch(/^skl_/);
    expect(s.body).toContain("Group changes");
    expect(expectStatus(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, auth), 200)).toEqual(s);

    const second = expectStatus(await call("/skills", { ...auth, body: skillBody(org.tenantId, { name: "Second" }) }), 201);
    const list = expectStatus(await call(`/skills?tenant_id=${org.tenantId}`, auth), 200);
    expect(list.skills.map((x: any) => x.id)).toEqual([s.id, second.id]);
    expect(list.total).toBe(2);

    const updated = expectStatus(
      await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "PATCH", body: { description: "New description" } }),
      200,
    );
    expect(updated).toMatchObject({ name: "Release notes", description: "New description", body: s.body });
    expect(updated.updated_at >= s.updated_at).toBe(true);
    const renamed = expectStatus(
      await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "PATCH", body: { name: "Notes", body: "Do it." } }),
      200,
    );
    expect(renamed).toMatchObject({ name: "Notes", description: "New description", body: "Do it." });

    // DELETE archives: gone from the list, still readable with its status, read-only, idempotent.
    expect((await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const after = expectStatus(await call(`/skills?tenant_id=${org.tenantId}`, auth), 200);
    expect(after.skills.map((x: any) => x.id)).toEqual([second.id]);
    expect(expectStatus(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, auth), 200).status).toBe("archived");
    expectError(
      await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "PATCH", body: { name: "x" } }),
      409,
      "skill_archived",
    );
    expect((await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "DELETE" })).status).toBe(204);
  });

  it("validates input and requires tenant_id", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const s = expectStatus(await call("/skills", { ...auth, body: skillBody(org.tenantId) }), 201);
    expectError(await call("/skills", auth), 400, "invalid_request");
    expectError(await call(`/skills/${s.id}`, auth), 400, "invalid_request");
    expectError(await call(`/skills/${s.id}`, { ...auth, method: "PATCH", body: { name: "x" } }), 400);
    expectError(await call(`/skills/${s.id}`, { ...auth, method: "DELETE" }), 400);

    const bad: Record<string, unknown>[] = [
      { name: "x".repeat(256) },
      { name: "  " },
      { description: "x".repeat(281) },
      { description: "" },
      { body: "" },
      { body: "   \n" },
      { name: 42 },
    ];
    for (const b of bad) {
      const e = expectError(await call("/skills", { ...auth, body: skillBody(org.tenantId, b) }), 400, "invalid_request");
      expect(e.details?.[0]?.path).toMatch(/^body\./);
    }
    for (const field of ["tenant_id", "name", "description", "body"]) {
      const b: Record<string, unknown> = skillBody(org.tenantId);
      delete b[field];
      const e = expectError(await call("/skills", { ...auth, body: b }), 400);
      expect(e.details?.map((d) => d.path)).toContain(`body.${field}`);
    }
    // Limits are inclusive.
    expectStatus(
      await call("/skills", { ...auth, body: skillBody(org.tenantId, { name: "n".repeat(255), description: "d".repeat(280) }) }),
      201,
    );
    expectError(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "PATCH", body: {} }), 400);
    expectError(
      await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { ...auth, method: "PATCH", body: { description: "x".repeat(281) } }),
      400,
    );
    expectError(await call("/skills", { ...auth, raw: "{not json", headers: { "Content-Type": "application/json" } }), 400);
    expectError(await call(`/skills/skl_missing?tenant_id=${org.tenantId}`, auth), 404);
    expectError(await call(`/skills?tenant_id=ten_missing`, auth), 404);
  });

  it("a skill is found only through its own tenant", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const auth = { cookie: org.owner.cookie };
    const s = expectStatus(await call("/skills", { ...auth, body: skillBody(org.tenantId) }), 201);
    expectError(await call(`/skills/${s.id}?tenant_id=${other.id}`, auth), 404);
    expectError(await call(`/skills/${s.id}?tenant_id=${other.id}`, { ...auth, method: "PATCH", body: { name: "x" } }), 404);
    expectError(await call(`/skills/${s.id}?tenant_id=${other.id}`, { ...auth, method: "DELETE" }), 404);
    expect(expectStatus(await call(`/skills?tenant_id=${other.id}`, auth), 200).skills).toEqual([]);
    expect(expectStatus(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, auth), 200).status).toBe("active");
  });

  it("role rules: owner, billing_admin and developer write; viewers read", async () => {
    const org = await createOrg();
    const viewer = await addMember(org, "viewer");
    const dev = await addMember(org, "developer");
    const billing = await addMember(org, "billing_admin");
    const s = expectStatus(await call("/skills", { cookie: dev.cookie, body: skillBody(org.tenantId) }), 201);
    expectStatus(await call("/skills", { cookie: billing.cookie, body: skillBody(org.tenantId) }), 201);
    expectStatus(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { cookie: viewer.cookie }), 200);
    expect(expectStatus(await call(`/skills?tenant_id=${org.tenantId}`, { cookie: viewer.cookie }), 200).skills).toHaveLength(2);
    expectError(await call("/skills", { cookie: viewer.cookie, body: skillBody(org.tenantId) }), 403, "forbidden");
    expectError(
      await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { cookie: viewer.cookie, method: "PATCH", body: { name: "x" } }),
      403,
    );
    expectError(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { cookie: viewer.cookie, method: "DELETE" }), 403);

    // Anonymous callers and outsiders.
    expectError(await call(`/skills?tenant_id=${org.tenantId}`), 401, "unauthorized");
    expectError(await call("/skills", { body: skillBody(org.tenantId) }), 401);
    const stranger = await createOrg();
    expectError(await call(`/skills?tenant_id=${org.tenantId}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call("/skills", { cookie: stranger.owner.cookie, body: skillBody(org.tenantId) }), 404);
  });

  it("API keys: skills:read reads, skills:write writes; tenant allowlist and organization enforced", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const s = expectStatus(await call("/skills", { cookie: org.owner.cookie, body: skillBody(org.tenantId) }), 201);

    const reader = (await createKey(org, { scopes: ["skills:read"] })).key;
    expectStatus(await call(`/skills?tenant_id=${org.tenantId}`, { key: reader }), 200);
    expectStatus(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { key: reader }), 200);
    expectError(await call("/skills", { key: reader, body: skillBody(org.tenantId) }), 403, "forbidden");
    expectError(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { key: reader, method: "DELETE" }), 403);

    const writer = (await createKey(org, { scopes: ["skills:write"], tenant_ids: [org.tenantId] })).key;
    const byKey = expectStatus(await call("/skills", { key: writer, body: skillBody(org.tenantId, { name: "By key" }) }), 201);
    expectStatus(await call(`/skills/${byKey.id}?tenant_id=${org.tenantId}`, { key: writer, method: "PATCH", body: { name: "Renamed" } }), 200);
    // skills:write alone does not read.
    expectError(await call(`/skills?tenant_id=${org.tenantId}`, { key: writer }), 403);
    // A tenant outside the key's allowlist, named in a parameter: 403.
    expectError(await call("/skills", { key: writer, body: skillBody(other.id) }), 403);

    const docsOnly = (await createKey(org, { scopes: ["documents:read"] })).key;
    expectError(await call(`/skills?tenant_id=${org.tenantId}`, { key: docsOnly }), 403);

    const stranger = await createOrg();
    const foreign = (await createKey(stranger, { scopes: ["skills:read", "skills:write"] })).key;
    expectError(await call(`/skills?tenant_id=${org.tenantId}`, { key: foreign }), 404);
    expectError(await call(`/skills/${s.id}?tenant_id=${org.tenantId}`, { key: foreign }), 404);
  });
});
