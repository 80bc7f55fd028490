import { describe, expect, it } from "vitest";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, type Auth } from "../helpers";

const md = (extra: Record<string, unknown> = {}) => ({
  type: "markdown",
  title: "Quarterly Report: Q3 2026",
  summary: "Revenue and hiring for Q3",
  content: "# Q3\n\nRevenue grew 12%.\n\n- Hiring: 4 engineers\n",
  ...extra,
});

async function newArtifact(kbId: string, auth: Auth, body: Record<string, unknown> = {}) {
  return expectStatus(await call(`/knowledge-bases/${kbId}/artifacts`, { ...auth, body: md(body) }), 201);
}

const patch = (id: string, auth: Auth, body: unknown) => call(`/artifacts/${id}`, { ...auth, method: "PATCH", body });

describe("artifacts", () => {
  it("creates revision 1 and reads it by id or slug", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await newArtifact(kb.id, auth);
    expect(a).toMatchObject({
      knowledge_base_id: kb.id,
      tenant_id: org.tenantId,
      type: "markdown",
      title: "Quarterly Report: Q3 2026",
      summary: "Revenue and hiring for Q3",
      content: md().content,
      status: "active",
      revision: 1,
      published: null,
    });
    expect(a.id).toMatch(/^art_/);
    expect(a.slug).toMatch(/^quarterly-report-q3-2026-[a-z0-9]{6}$/);
    expect(expectStatus(await call(`/artifacts/${a.id}`, auth), 200)).toEqual(a);
    expect(expectStatus(await call(`/artifacts/${a.slug}`, auth), 200)).toEqual(a);
    const revs = expectStatus(await call(`/artifacts/${a.id}/revisions`, auth), 200);
    expect(revs.revisions).toEqual([{ revision: 1, title: a.title, summary: a.summary, content: a.content, created_at: a.created_at }]);
    expect(revs.total).toBe(1);

    const html = await newArtifact(kb.id, auth, { type: "html", title: "Ünïcode — ☃", content: "<h1>Hi</h1>" });
    expect(html.type).toBe("html");
    expect(html.slug).toMatch(/^unicode-[a-z0-9]{6}$/);
    const symbols = await newArtifact(kb.id, auth, { title: "☃☃" });
    expect(symbols.slug).toMatch(/^artifact-[a-z0-9]{6}$/);
    // An empty summary is allowed; the title is trimmed.
    expect((await newArtifact(kb.id, auth, { summary: "", title: "  Spaced  " })).title).toBe("Spaced");
  });

  it("validates creation", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const path = `/knowledge-bases/${kb.id}/artifacts`;
    for (const bad of [
      { type: "pdf" },
      { title: "t".repeat(501) },
      { title: " " },
      { summary: "s".repeat(2001) },
      { content: "" },
      { content: "  \n " },
      { content: 5 },
    ]) {
      expectError(await call(path, { ...auth, body: md(bad) }), 400, "invalid_request");
    }
    for (const field of ["type", "title", "summary", "content"]) {
      const body: Record<string, unknown> = md();
      delete body[field];
      const e = expectError(await call(path, { ...auth, body }), 400);
      expect(e.details?.map((d) => d.path)).toContain(`body.${field}`);
    }
    expectStatus(await call(path, { ...auth, body: md({ title: "t".repeat(500), summary: "s".repeat(2000) }) }), 201);
    expectError(await call(path, { ...auth, body: md({ content: "é".repeat(500_001) }) }), 413, "payload_too_large");
    expectError(await call(path, { ...auth, raw: "{", headers: { "Content-Type": "application/json" } }), 400);

    const other = await createTenant(org);
    expectError(await call(path, { ...auth, body: md({ tenant_id: other.id }) }), 400, "tenant_mismatch");
    expectStatus(await call(path, { ...auth, body: md({ tenant_id: org.tenantId }) }), 201);
    expectError(await call("/knowledge-bases/kb_missing/artifacts", { ...auth, body: md() }), 404);
    expectError(await call("/artifacts/art_missing", auth), 404);
  });

  it("lists by type, query and status", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const otherKb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await newArtifact(kb.id, auth, { title: "Onboarding guide", summary: "For new hires", content: "Welcome aboard" });
    const b = await newArtifact(kb.id, auth, { type: "html", title: "Pricing page", summary: "Plans", content: "<p>50% off</p>" });
    const c = await newArtifact(kb.id, auth, { title: "Retro notes", summary: "Sprint 12", content: "We discussed ONBOARDING flow. Café" });
    await newArtifact(otherKb.id, auth, { title: "Onboarding elsewhere" });
    const ids = async (qs: string) => {
      const r = expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts${qs}`, auth), 200);
      return (r.artifacts as any[]).map((x) => x.id).sort();
    };
    const all = expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts`, auth), 200);
    expect(all.total).toBe(3);
    expect(all.artifacts.map((x: any) => x.id)).toEqual([c.id, b.id, a.id]);
    expect(await ids("?type=html")).toEqual([b.id]);
    expect(await ids("?type=markdown")).toEqual([a.id, c.id].sort());
    // title, summary and content; case-insensitive.
    expect(await ids("?query=onboarding")).toEqual([a.id, c.id].sort());
    expect(await ids("?query=new%20hires")).toEqual([a.id]);
    expect(await ids("?query=sprint")).toEqual([c.id]);
    expect(await ids(`?query=${encodeURIComponent("Café")}`)).toEqual([c.id]);
    expect(await ids("?query=onboarding&type=html")).toEqual([]);
    // A literal match: no wildcards.
    expect(await ids("?query=%25")).toEqual([b.id]);
    expect(await ids("?query=_")).toEqual([]);
    expect(await ids("?query=welcome%20aboard")).toEqual([a.id]);
    expect(await ids("?query=welcome%25aboard")).toEqual([]);
    expect(await ids(`?query=${"x".repeat(200)}`)).toEqual([]);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts?query=${"x".repeat(201)}`, auth), 400);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts?type=pdf`, auth), 400);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts?include_status=deleted`, auth), 400);

    expectStatus(await call(`/artifacts/${b.id}/archive`, { ...auth, method: "POST" }), 200);
    expect(await ids("")).toEqual([a.id, c.id].sort());
    expect(await ids("?include_status=archived")).toEqual([b.id]);
    expect(await ids("?include_status=all")).toEqual([a.id, b.id, c.id].sort());
    const paged = expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts?include_status=all&limit=2&offset=2`, auth), 200);
    expect(paged).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(paged.artifacts).toHaveLength(1);
    const other = await createTenant(org);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts?tenant_id=${other.id}`, auth), 400, "tenant_mismatch");
  });

  it("PATCH: title/summary or edits, one revision each", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await newArtifact(kb.id, auth, { content: "alpha beta gamma beta" });

    const r2 = expectStatus(await patch(a.id, auth, { title: "New title" }), 200);
    expect(r2).toMatchObject({ title: "New title", summary: a.summary, content: a.content, revision: 2, slug: a.slug });
    const r3 = expectStatus(await patch(a.id, auth, { summary: "New summary" }), 200);
    expect(r3).toMatchObject({ title: "New title", summary: "New summary", revision: 3 });
    const r4 = expectStatus(
      await patch(a.id, auth, {
        edits: [
          { oldText: "alpha", newText: "ALPHA" },
          { oldText: "beta", newText: "b", replaceAll: true },
          { oldText: "ALPHA b", newText: "$& cost $1" },
        ],
      }),
      200,
    );
    expect(r4.content).toBe("$& cost $1 gamma b");
    expect(r4.revision).toBe(4);
    // Patch by slug works too.
    const r5 = expectStatus(await patch(a.slug, auth, { edits: [{ oldText: "gamma", newText: "" }] }), 200);
    expect(r5).toMatchObject({ content: "$& cost $1  b", revision: 5 });

    const revs = expectStatus(await call(`/artifacts/${a.id}/revisions`, auth), 200);
    expect(revs.revisions.map((r: any) => [r.revision, r.title, r.summary, r.content])).toEqual([
      [1, a.title, a.summary, "alpha beta gamma beta"],
      [2, "New title", a.summary, "alpha beta gamma beta"],
      [3, "New title", "New summary", "alpha beta gamma beta"],
      [4, "New title", "New summary", "$& cost $1 gamma b"],
      [5, "New title", "New summary", "$& cost $1  b"],
    ]);
    const page = expectStatus(await call(`/artifacts/${a.id}/revisions?limit=2&offset=3`, auth), 200);
    expect(page.revisions.map((r: any) => r.revision)).toEqual([4, 5]);
    expect(page.total).toBe(5);
  });

  it("edits that do not apply change nothing", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await newArtifact(kb.id, auth, { content: "one two two three" });

    let e = expectError(await patch(a.id, auth, { edits: [{ oldText: "one", newText: "1" }, { oldText: "four", newText: "4" }] }), 400);
    expect(e.details?.[0]?.path).toBe("body.edits.1.oldText");
    expect(e.message).toContain("edits[1]");
    e = expectError(await patch(a.id, auth, { edits: [{ oldText: "two", newText: "2" }] }), 400);
    expect(e.details?.[0]?.path).toBe("body.edits.0.oldText");
    expect(e.message).toContain("2 times");
    // An edit that only applies to text an earlier edit removed.
    e = expectError(await patch(a.id, auth, { edits: [{ oldText: "one", newText: "1" }, { oldText: "one", newText: "x" }] }), 400);
    expect(e.details?.[0]?.path).toBe("body.edits.1.oldText");
    expectError(await patch(a.id, auth, { edits: [{ oldText: "one two two three", newText: "  " }] }), 400);

    const now = expectStatus(await call(`/artifacts/${a.id}`, auth), 200);
    expect(now).toMatchObject({ content: "one two two three", revision: 1 });
    expect(expectStatus(await call(`/artifacts/${a.id}/revisions`, auth), 200).total).toBe(1);

    // Malformed PATCH bodies.
    const bad: unknown[] = [
      {},
      { title: "x", edits: [{ oldText: "one", newText: "1" }] },
      { summary: "x", edits: [{ oldText: "one", newText: "1" }] },
      { edits: [] },
      { edits: Array.from({ length: 51 }, () => ({ oldText: "one", newText: "1", replaceAll: true })) },
      { edits: [{ oldText: "", newText: "x" }] },
      { edits: [{ oldText: "one" }] },
      { edits: [{ oldText: "one", newText: "1", replaceAll: "yes" }] },
      { content: "replace everything" },
      { title: "t".repeat(501) },
      { summary: "s".repeat(2001) },
    ];
    for (const b of bad) expectError(await patch(a.id, auth, b), 400, "invalid_request");
    expect(expectStatus(await call(`/artifacts/${a.id}`, auth), 200).revision).toBe(1);

    // 50 edits are allowed; the whole content can be replaced by one edit.
    const fifty = Array.from({ length: 50 }, (_, i) => ({ oldText: i === 0 ? "one" : `<${i - 1}>`, newText: `<${i}>` }));
    expect(expectStatus(await patch(a.id, auth, { edits: fifty }), 200).content).toBe("<49> two two three");
    const whole = expectStatus(await patch(a.id, auth, { edits: [{ oldText: "<49> two two three", newText: "fresh" }] }), 200);
    expect(whole).toMatchObject({ content: "fresh", revision: 3 });
  });

  it("concurrent PATCHes never lose an update", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await newArtifact(kb.id, auth, { content: "items:\nEND" });
    const n = 6;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => patch(a.id, auth, { edits: [{ oldText: "END", newText: `item ${i}\nEND` }] })),
    );
    for (const r of results) expectStatus(r, 200);
    const final = expectStatus(await call(`/artifacts/${a.id}`, auth), 200);
    expect(final.revision).toBe(n + 1);
    for (let i = 0; i < n; i++) expect(final.content).toContain(`item ${i}\n`);
    const revs = expectStatus(await call(`/artifacts/${a.id}/revisions`, auth), 200);
    expect(revs.revisions.map((r: any) => r.revision)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1));
    expect(new Set(results.map((r) => r.body.revision)).size).toBe(n);
  });

  it("archive and restore keep the history", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const a = await newArtifact(kb.id, auth);
    expectStatus(await patch(a.id, auth, { title: "Second" }), 200);

    const archived = expectStatus(await call(`/artifacts/${a.id}/archive`, { ...auth, method: "POST" }), 200);
    expect(archived).toMatchObject({ id: a.id, status: "archived", revision: 2 });
    expect(expectStatus(await call(`/artifacts/${a.id}/archive`, { ...auth, method: "POST" }), 200).status).toBe("archived");
    expectError(await call(`/artifacts/${a.id}`, auth), 404);
    expectError(await call(`/artifacts/${a.slug}`, auth), 404);
    expectError(await call(`/artifacts/${a.id}/revisions`, auth), 404);
    expectError(await patch(a.id, auth, { title: "x" }), 409, "artifact_archived");

    const restored = expectStatus(await call(`/artifacts/${a.slug}/restore`, { ...auth, method: "POST" }), 200);
    expect(restored).toMatchObject({ status: "active", title: "Second", revision: 2 });
    expect(expectStatus(await call(`/artifacts/${a.id}/restore`, { ...auth, method: "POST" }), 200).status).toBe("active");
    expect(expectStatus(await call(`/artifacts/${a.id}/revisions`, auth), 200).total).toBe(2);
    expectError(await call("/artifacts/art_missing/archive", { ...auth, method: "POST" }), 404);

    // Deleting the knowledge base removes its artifacts.
    expect((await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/artifacts/${a.id}`, auth), 404);
  });

  it("roles, API key scopes and knowledge-base restrictions", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const kb2 = await createKb(org);
    const viewer = await addMember(org, "viewer");
    const dev = await addMember(org, "developer");
    const a = await newArtifact(kb.id, { cookie: dev.cookie });

    expectStatus(await call(`/artifacts/${a.id}`, { cookie: viewer.cookie }), 200);
    expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts`, { cookie: viewer.cookie }), 200);
    expectStatus(await call(`/artifacts/${a.id}/revisions`, { cookie: viewer.cookie }), 200);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts`, { cookie: viewer.cookie, body: md() }), 403);
    expectError(await patch(a.id, { cookie: viewer.cookie }, { title: "x" }), 403);
    expectError(await call(`/artifacts/${a.id}/archive`, { cookie: viewer.cookie, method: "POST" }), 403);
    expectError(await call(`/artifacts/${a.id}/restore`, { cookie: viewer.cookie, method: "POST" }), 403);

    const reader = (await createKey(org, { scopes: ["artifacts:read"] })).key;
    expectStatus(await call(`/artifacts/${a.id}`, { key: reader }), 200);
    expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts`, { key: reader }), 200);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts`, { key: reader, body: md() }), 403, "forbidden");
    expectError(await patch(a.id, { key: reader }, { title: "x" }), 403);

    const writer = (await createKey(org, { scopes: ["artifacts:write"] })).key;
    const byKey = expectStatus(await call(`/knowledge-bases/${kb.id}/artifacts`, { key: writer, body: md() }), 201);
    expectStatus(await patch(byKey.id, { key: writer }, { summary: "by key" }), 200);
    expectStatus(await call(`/artifacts/${byKey.id}/archive`, { key: writer, method: "POST" }), 200);
    expectError(await call(`/artifacts/${a.id}`, { key: writer }), 403);

    const docs = (await createKey(org, { scopes: ["documents:read", "documents:write"] })).key;
    expectError(await call(`/artifacts/${a.id}`, { key: docs }), 403);

    // A key restricted to another knowledge base does not see this one's artifacts.
    const restricted = (await createKey(org, { scopes: ["artifacts:read", "artifacts:write"], knowledge_base_id: kb2.id })).key;
    expectError(await call(`/artifacts/${a.id}`, { key: restricted }), 404);
    expectError(await call(`/artifacts/${a.slug}`, { key: restricted }), 404);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts`, { key: restricted }), 404);
    expectError(await patch(a.id, { key: restricted }, { title: "x" }), 404);
    expectStatus(await call(`/knowledge-bases/${kb2.id}/artifacts`, { key: restricted, body: md() }), 201);

    // A tenant allowlist that excludes the knowledge base's tenant.
    const otherTenant = await createTenant(org);
    const narrow = (await createKey(org, { scopes: ["artifacts:read"], tenant_ids: [otherTenant.id] })).key;
    expectError(await call(`/artifacts/${a.id}`, { key: narrow }), 404);

    const stranger = await createOrg();
    expectError(await call(`/artifacts/${a.id}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts`, { cookie: stranger.owner.cookie, body: md() }), 404);
    expectError(await call(`/artifacts/${a.id}`), 401);
    expectError(await call(`/knowledge-bases/${kb.id}/artifacts`), 401);
  });
});
