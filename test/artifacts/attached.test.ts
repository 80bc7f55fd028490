import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { ApiError } from "../../src/lib/errors";
import { formatAttachedArtifacts, loadAttachedArtifacts } from "../../src/services/artifacts/attached";
import { getSkillsForRun } from "../../src/services/skills/skills";
import { call, createKb, createOrg, createTenant, expectStatus } from "../helpers";

async function rejects(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error("expected a rejection");
}

describe("attached artifacts for chat turns", () => {
  it("loads active artifacts of the same knowledge base, in request order", async () => {
    const db = createDb(env.DB);
    const org = await createOrg();
    const kb = await createKb(org);
    const otherKb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const mk = async (kbId: string, title: string, type = "markdown") =>
      expectStatus(await call(`/knowledge-bases/${kbId}/artifacts`, { ...auth, body: { type, title, summary: "", content: `${title} body` } }), 201);
    const a = await mk(kb.id, "Plan");
    const b = await mk(kb.id, "Chart", "html");
    const archived = await mk(kb.id, "Old");
    expectStatus(await call(`/artifacts/${archived.id}/archive`, { ...auth, method: "POST" }), 200);
    const foreign = await mk(otherKb.id, "Elsewhere");
    const scope = { knowledgeBaseId: kb.id, tenantId: org.tenantId };

    const got = await loadAttachedArtifacts(db, scope, [b.id, a.id, b.id]);
    expect(got).toEqual([
      { id: b.id, title: "Chart", type: "html", content: "Chart body" },
      { id: a.id, title: "Plan", type: "markdown", content: "Plan body" },
    ]);
    expect(await loadAttachedArtifacts(db, scope, [])).toEqual([]);

    const e = await rejects(loadAttachedArtifacts(db, scope, [a.id, foreign.id, archived.id, "art_missing"]));
    expect(e.status).toBe(400);
    expect(e.code).toBe("invalid_request");
    expect(e.details?.map((d) => d.path)).toEqual([
      "body.attached_artifact_ids.1",
      "body.attached_artifact_ids.2",
      "body.attached_artifact_ids.3",
    ]);
    // The right knowledge base but the wrong tenant finds nothing either.
    const other = await createTenant(org);
    expect((await rejects(loadAttachedArtifacts(db, { knowledgeBaseId: kb.id, tenantId: other.id }, [a.id]))).status).toBe(400);
    const tooMany = Array.from({ length: 21 }, (_, i) => `art_${i}`);
    expect((await rejects(loadAttachedArtifacts(db, scope, tooMany))).message).toContain("At most 20");
  });

  it("formats them for the prompt within a budget", () => {
    const text = formatAttachedArtifacts(
      [
        { id: "art_1", title: 'Say "hi"\nnow', type: "markdown", content: "short" },
        { id: "art_2", title: "Long", type: "html", content: "x".repeat(500) },
      ],
      200,
    );
    expect(text).toContain(`<artifact id="art_1" type="markdown" title="Say 'hi' now">\nshort\n</artifact>`);
    expect(text).toContain('<artifact id="art_2" type="html" title="Long">');
    // art_1 used 5 of its 100; art_2 gets the remaining 195.
    expect(text).toContain(`${"x".repeat(195)}\n[... truncated: 305 more characters]`);
    expect(formatAttachedArtifacts([])).toBe("");
  });
});

describe("skills for agent runs", () => {
  it("returns the current content of active skills of the tenant, in order", async () => {
    const db = createDb(env.DB);
    const org = await createOrg();
    const other = await createTenant(org);
    const auth = { cookie: org.owner.cookie };
    const mk = async (tenantId: string, name: string) =>
      expectStatus(await call("/skills", { ...auth, body: { tenant_id: tenantId, name, description: "d", body: `${name} body` } }), 201);
    const s1 = await mk(org.tenantId, "One");
    const s2 = await mk(org.tenantId, "Two");
    const foreign = await mk(other.id, "Foreign");
    expectStatus(await call(`/skills/${s1.id}?tenant_id=${org.tenantId}`, { ...auth, method: "PATCH", body: { body: "edited" } }), 200);

    const got = await getSkillsForRun(db, org.tenantId, [s2.id, s1.id]);
    expect(got.map((s) => [s.id, s.body])).toEqual([[s2.id, "Two body"], [s1.id, "edited"]]);
    expect(await getSkillsForRun(db, org.tenantId, [])).toEqual([]);
    expect((await rejects(getSkillsForRun(db, org.tenantId, [s1.id, foreign.id]))).status).toBe(400);
    expect((await call(`/skills/${s2.id}?tenant_id=${org.tenantId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect((await rejects(getSkillsForRun(db, org.tenantId, [s2.id]))).message).toContain(s2.id);
  });
});
