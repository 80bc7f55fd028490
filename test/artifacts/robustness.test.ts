import { describe, expect, it } from "vitest";
import { BASE, call, createKb, createOrg, createTenant, expectError, expectStatus, fetchWorker } from "../helpers";

describe("skills and artifacts: robustness and cleanup", () => {
  it("never answers 5xx to hostile input", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = expectStatus(
      await call(`/knowledge-bases/${kb.id}/artifacts`, { ...auth, body: { type: "markdown", title: "T", summary: "", content: "c" } }),
      201,
    );
    const long = "x".repeat(5000);
    const weird = ["%00", "'; DROP TABLE artifacts;--", long, "..%2F..%2Fetc", "%F0%9F%92%A9", "a%20b"];
    const requests: Array<[string, { method?: string; body?: unknown }]> = [];
    for (const w of weird) {
      requests.push([`/artifacts/${w}`, {}]);
      requests.push([`/artifacts/${w}`, { method: "PATCH", body: { title: "x" } }]);
      requests.push([`/artifacts/${w}/revisions`, {}]);
      requests.push([`/artifacts/${w}/publish`, { body: { visibility: "public" } }]);
      requests.push([`/knowledge-bases/${kb.id}/artifacts?query=${w.slice(0, 190)}`, {}]);
      requests.push([`/skills/${w}?tenant_id=${org.tenantId}`, {}]);
      requests.push([`/skills?tenant_id=${w}`, {}]);
      requests.push([`/skills/catalog/${w}/install`, { body: { tenant_id: org.tenantId } }]);
    }
    for (const body of [null, [], "str", 7, { edits: "x" }, { edits: [null] }, { edits: [{ oldText: {}, newText: [] }] }, { title: null }]) {
      requests.push([`/artifacts/${a.id}`, { method: "PATCH", body }]);
    }
    for (const body of [null, [], { type: null }, { tenant_id: [], name: {}, description: 1, body: false }]) {
      requests.push([`/knowledge-bases/${kb.id}/artifacts`, { body }]);
      requests.push(["/skills", { body }]);
    }
    requests.push([`/knowledge-bases/${kb.id}/artifacts?limit=abc&offset=-1`, {}]);
    requests.push([`/artifacts/${a.id}/revisions?limit=100000`, {}]);
    for (const [path, opts] of requests) {
      const r = await call(path, { ...auth, ...opts });
      expect(r.status, `${opts.method ?? (opts.body !== undefined ? "POST" : "GET")} ${path.slice(0, 80)}: ${JSON.stringify(r.body).slice(0, 200)}`).toBeLessThan(500);
    }
    for (const w of weird) {
      const res = await fetchWorker(`${BASE}/p/${w}`);
      expect(res.status).toBe(404);
      const raw = await fetchWorker(`${BASE}/p/${w}/raw`);
      expect(raw.status).toBe(404);
    }
  });

  it("deleting a tenant or an organization removes skills, favorites, artifacts and revisions", async () => {
    const org = await createOrg();
    const tenant = await createTenant(org);
    const kb = await createKb(org, { tenant_id: tenant.id });
    const auth = { cookie: org.owner.cookie };
    const skill = expectStatus(await call("/skills", { ...auth, body: { tenant_id: tenant.id, name: "n", description: "d", body: "b" } }), 201);
    expectStatus(await call("/skills/catalog/tpl_faq/install", { ...auth, body: { tenant_id: tenant.id } }), 201);
    expectStatus(await call("/skills/catalog/tpl_faq/favorite", { ...auth, body: { tenant_id: tenant.id } }), 200);
    const a = expectStatus(
      await call(`/knowledge-bases/${kb.id}/artifacts`, { ...auth, body: { type: "markdown", title: "T", summary: "", content: "one" } }),
      201,
    );
    expectStatus(await call(`/artifacts/${a.id}`, { ...auth, method: "PATCH", body: { edits: [{ oldText: "one", newText: "two" }] } }), 200);
    expectStatus(await call(`/artifacts/${a.id}/publish`, { ...auth, body: { visibility: "public" } }), 200);

    expect((await call(`/tenants/${tenant.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/artifacts/${a.id}`, auth), 404);
    expect((await fetchWorker(`${BASE}/p/${a.slug}`)).status).toBe(404);
    expectError(await call(`/skills/${skill.id}?tenant_id=${tenant.id}`, auth), 404);

    // The organization's default tenant, then the organization itself.
    const kb2 = await createKb(org);
    const b = expectStatus(
      await call(`/knowledge-bases/${kb2.id}/artifacts`, { ...auth, body: { type: "html", title: "H", summary: "", content: "<p>x</p>" } }),
      201,
    );
    expectStatus(await call("/skills/catalog/tpl_summarize/install", { ...auth, body: { tenant_id: org.tenantId } }), 201);
    expect((await call(`/organizations/${org.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/artifacts/${b.id}`, auth), 404);
    // Templates are global and survive.
    const other = await createOrg();
    const cat = expectStatus(await call(`/skills/catalog?tenant_id=${other.tenantId}`, { cookie: other.owner.cookie }), 200);
    expect(cat.templates).toHaveLength(5);
  });

  it("a suspended organization refuses skill and artifact writes but keeps reads and public pages", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = expectStatus(
      await call(`/knowledge-bases/${kb.id}/artifacts`, { ...auth, body: { type: "markdown", title: "T", summary: "", content: "c" } }),
      201,
    );
    expectStatus(await call(`/artifacts/${a.id}/publish`, { ...auth, body: { visibility: "public" } }), 200);
    expectStatus(await call(`/organizations/${org.id}`, { ...auth, method: "PATCH", body: { status: "suspended" } }), 200);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts`, { ...auth, body: { type: "markdown", title: "T", summary: "", content: "c" } }), 403);
    expectError(await call(`/artifacts/${a.id}`, { ...auth, method: "PATCH", body: { title: "x" } }), 403);
    expectError(await call(`/artifacts/${a.id}/publish`, { ...auth, body: { visibility: "private" } }), 403);
    expectError(await call("/skills", { ...auth, body: { tenant_id: org.tenantId, name: "n", description: "d", body: "b" } }), 403);
    expectError(await call("/skills/catalog/tpl_faq/install", { ...auth, body: { tenant_id: org.tenantId } }), 403);
    expectStatus(await call(`/artifacts/${a.id}`, auth), 200);
    expectStatus(await call(`/skills/catalog?tenant_id=${org.tenantId}`, auth), 200);
    expect((await fetchWorker(`${BASE}/p/${a.slug}`)).status).toBe(200);
  });
});
