import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { API, call, createKb, createKey, createOrg, expectError, type Auth } from "../helpers";

/** The Worker with other configuration (the test runtime's own env has no EVAL_ENDPOINTS). */
async function callWith(vars: Record<string, string>, path: string, auth: Auth, body: unknown) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (auth.cookie) headers.Cookie = auth.cookie;
  if (auth.key) headers.Authorization = `Bearer ${auth.key}`;
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${API}${path}`, { method: "POST", headers, body: JSON.stringify(body) }), { ...env, ...vars } as any, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, body: (await res.json()) as any };
}

describe("POST /api/v1/eval/search (evaluation harness only)", () => {
  let auth: Auth;
  let kb: { id: string; tenant_id: string };
  let docId: string;
  let org: Awaited<ReturnType<typeof createOrg>>;

  beforeAll(async () => {
    org = await createOrg();
    auth = { cookie: org.owner.cookie };
    kb = await createKb(org);
    ({ id: docId } = await uploadFile(auth, kb, { filename: "owls.md", mime: "text/markdown", body: "# Owls\n\nOwls hunt mice at night." }));
    expect((await waitForDocument(auth, docId)).status).toBe("processed");
  });

  it("does not exist unless EVAL_ENDPOINTS=true, and never in production", async () => {
    expectError(await call("/eval/search", { ...auth, body: { knowledge_base_id: kb.id, query: "owls" } }), 404, "not_found");
    const prod = await callWith({ EVAL_ENDPOINTS: "true", ENVIRONMENT: "production" }, "/eval/search", auth, { knowledge_base_id: kb.id, query: "owls" });
    expect(prod.status).toBe(404);
    expect(JSON.stringify((await (await worker.fetch(new Request("http://x/openapi.json"), env as any, createExecutionContext())).json()))).not.toContain("/eval/search");
  });

  it("runs the search with legs and stages switchable, under the query endpoints' authorization", async () => {
    const on = { EVAL_ENDPOINTS: "true" };
    const r = await callWith(on, "/eval/search", auth, { knowledge_base_id: kb.id, query: "owls hunting", limit: 100 });
    expect(r.status).toBe(200);
    expect(r.body.passages[0]).toMatchObject({ document_id: docId });
    expect(r.body.passages[0].scores.fts).toBeGreaterThan(0);
    expect(typeof r.body.took_ms).toBe("number");
    expect(r.body.timings).toHaveProperty("d1");
    const lexical = await callWith(on, "/eval/search", auth, { knowledge_base_id: kb.id, query: "owls", vector: false, expansion: false, ngrams: false });
    expect(lexical.body.passages[0].scores.vector).toBeNull();
    const vector = await callWith(on, "/eval/search", auth, { knowledge_base_id: kb.id, query: "owls", lexical: false });
    expect(vector.body.passages[0].scores.fts).toBeNull();

    expect((await callWith(on, "/eval/search", auth, { knowledge_base_id: kb.id, query: "" })).status).toBe(400);
    expect((await callWith(on, "/eval/search", auth, { knowledge_base_id: kb.id, query: "owls", limit: 500 })).status).toBe(400);
    expect((await callWith(on, "/eval/search", {}, { knowledge_base_id: kb.id, query: "owls" })).status).toBe(401);
    const other = await createOrg();
    expect((await callWith(on, "/eval/search", { cookie: other.owner.cookie }, { knowledge_base_id: kb.id, query: "owls" })).status).toBe(404);
    const { key } = await createKey(org, { scopes: ["documents:read"] });
    expect((await callWith(on, "/eval/search", { key }, { knowledge_base_id: kb.id, query: "owls" })).status).toBe(403);
  });
});
