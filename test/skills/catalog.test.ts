import { describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";

const TEMPLATE_IDS = ["tpl_summarize", "tpl_compare_sources", "tpl_faq", "tpl_action_items", "tpl_fact_check"];

describe("skill catalog", () => {
  it("lists the shipped templates with version, favorite state and installed copy", async () => {
    const org = await createOrg();
    const r = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, { cookie: org.owner.cookie }), 200);
    expect(r.templates.map((t: any) => t.id)).toEqual(TEMPLATE_IDS);
    for (const t of r.templates) {
      expect(Object.keys(t).sort()).toEqual(
        ["body", "category", "description", "id", "installed_skill_id", "is_favorite", "name", "version"],
      );
      expect(t).toMatchObject({ version: 1, is_favorite: false, installed_skill_id: null });
      expect(t.name.length).toBeGreaterThan(0);
      expect(t.description.length).toBeLessThanOrEqual(280);
      // Real procedures: steps, an output format and citation rules.
      expect(t.body).toMatch(/^# /);
      expect(t.body).toContain("## Steps");
      expect(t.body).toContain("## Output format");
      expect(t.body).toContain("## Citation rules");
    }
    expect(r.templates.find((t: any) => t.id === "tpl_fact_check").category).toBe("quality");
    expectError(await call("/skills/catalog", { cookie: org.owner.cookie }), 400);
  });

  it("favorites are per tenant and idempotent", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const auth = { cookie: org.owner.cookie };
    const fav = expectStatus(await call("/skills/catalog/tpl_faq/favorite", { ...auth, body: { tenant_id: org.tenantId } }), 200);
    expect(fav).toMatchObject({ id: "tpl_faq", is_favorite: true });
    expectStatus(await call("/skills/catalog/tpl_faq/favorite", { ...auth, body: { tenant_id: org.tenantId } }), 200);

    const mine = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    expect(mine.templates.filter((t: any) => t.is_favorite).map((t: any) => t.id)).toEqual(["tpl_faq"]);
    const theirs = expectStatus(await call(`/skills/catalog?tenant_id=${other.id}`, auth), 200);
    expect(theirs.templates.some((t: any) => t.is_favorite)).toBe(false);

    expect((await call(`/skills/catalog/tpl_faq/favorite?tenant_id=${org.tenantId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect((await call(`/skills/catalog/tpl_faq/favorite?tenant_id=${org.tenantId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const after = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    expect(after.templates.some((t: any) => t.is_favorite)).toBe(false);

    expectError(await call("/skills/catalog/tpl_nope/favorite", { ...auth, body: { tenant_id: org.tenantId } }), 404);
    expectError(await call("/skills/catalog/tpl_faq/favorite", { ...auth, body: {} }), 400);
    expectError(await call("/skills/catalog/tpl_faq/favorite", { ...auth, method: "DELETE" }), 400);
  });

  it("install creates an editable copy; installing again returns it; an archived copy is reactivated", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const catalog = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    const tpl = catalog.templates.find((t: any) => t.id === "tpl_action_items");

    const installed = expectStatus(await call("/skills/catalog/tpl_action_items/install", { ...auth, body: { tenant_id: org.tenantId } }), 201);
    expect(installed).toMatchObject({
      tenant_id: org.tenantId,
      name: tpl.name,
      description: tpl.description,
      body: tpl.body,
      status: "active",
      template_id: "tpl_action_items",
      template_version: 1,
    });
    let listed = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    expect(listed.templates.find((t: any) => t.id === "tpl_action_items").installed_skill_id).toBe(installed.id);
    expect(expectStatus(await call(`/skills?tenant_id=${org.tenantId}`, auth), 200).skills.map((s: any) => s.id)).toEqual([installed.id]);

    // The copy is editable and independent of the template.
    const q = `/skills/${installed.id}?tenant_id=${org.tenantId}`;
    expectStatus(await call(q, { ...auth, method: "PATCH", body: { body: "My own procedure." } }), 200);
    const again = expectStatus(await call("/skills/catalog/tpl_action_items/install", { ...auth, body: { tenant_id: org.tenantId } }), 200);
    expect(again).toMatchObject({ id: installed.id, body: "My own procedure.", status: "active" });
    listed = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    expect(listed.templates.find((t: any) => t.id === "tpl_action_items").body).toBe(tpl.body);

    // Archive: no longer installed; installing reactivates the same copy with its edits.
    expect((await call(q, { ...auth, method: "DELETE" })).status).toBe(204);
    listed = expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    expect(listed.templates.find((t: any) => t.id === "tpl_action_items").installed_skill_id).toBeNull();
    const reactivated = expectStatus(await call("/skills/catalog/tpl_action_items/install", { ...auth, body: { tenant_id: org.tenantId } }), 200);
    expect(reactivated).toMatchObject({ id: installed.id, status: "active", body: "My own procedure." });
    expect(expectStatus(await call(`/skills?tenant_id=${org.tenantId}`, auth), 200).skills).toHaveLength(1);

    // Another tenant gets its own copy.
    const other = await createTenant(org);
    const theirs = expectStatus(await call("/skills/catalog/tpl_action_items/install", { ...auth, body: { tenant_id: other.id } }), 201);
    expect(theirs.id).not.toBe(installed.id);

    expectError(await call("/skills/catalog/tpl_nope/install", { ...auth, body: { tenant_id: org.tenantId } }), 404);
    expectError(await call("/skills/catalog/tpl_faq/install", { ...auth, body: { tenant_id: 7 } }), 400);
  });

  it("concurrent installs make exactly one copy", async () => {
    const org = await createOrg();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        call("/skills/catalog/tpl_summarize/install", { cookie: org.owner.cookie, body: { tenant_id: org.tenantId } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
  });

  it("role and key rules", async () => {
    const org = await createOrg();
    const viewer = await addMember(org, "viewer");
    expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, { cookie: viewer.cookie }), 200);
    expectError(await call("/skills/catalog/tpl_faq/install", { cookie: viewer.cookie, body: { tenant_id: org.tenantId } }), 403);
    expectError(await call("/skills/catalog/tpl_faq/favorite", { cookie: viewer.cookie, body: { tenant_id: org.tenantId } }), 403);

    const reader = (await createKey(org, { scopes: ["skills:read"] })).key;
    expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, { key: reader }), 200);
    expectError(await call("/skills/catalog/tpl_faq/install", { key: reader, body: { tenant_id: org.tenantId } }), 403);
    const writer = (await createKey(org, { scopes: ["skills:write"] })).key;
    expectStatus(await call("/skills/catalog/tpl_faq/install", { key: writer, body: { tenant_id: org.tenantId } }), 201);
    expectStatus(await call("/skills/catalog/tpl_faq/favorite", { key: writer, body: { tenant_id: org.tenantId } }), 200);

    expectError(await call(`/skills/catalog?tenant_id=${org.tenantId}`), 401);
    const stranger = await createOrg();
    expectError(await call(`/skills/catalog?tenant_id=${org.tenantId}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call("/skills/catalog/tpl_faq/install", { cookie: stranger.owner.cookie, body: { tenant_id: org.tenantId } }), 404);
  });
});
