import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { workerSignedUrl } from "../../src/services/documents/signed-urls";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker } from "../helpers";
import { chunkCount, db, eventually, tenantUsage, uploadFile, vectorCount, waitForDocument } from "./doc-helpers";

const ARTICLE = [
  "# Field guide",
  "",
  "## Okapi",
  "",
  "The okapi is a giraffid native to the Democratic Republic of the Congo. It has striped legs like a zebra.",
  "",
  "## Pangolin",
  "",
  "Pangolins are covered in keratin scales and roll into a ball when threatened.",
].join("\n");

async function processedDoc(text = ARTICLE, filename = "guide.md") {
  const org = await createOrg();
  const kb = await createKb(org);
  const auth = { cookie: org.owner.cookie };
  const { id } = await uploadFile(auth, kb, { filename, mime: "text/markdown", body: text });
  const doc = await waitForDocument(auth, id);
  expect(doc.status, doc.error).toBe("processed");
  return { org, kb, auth, id, doc };
}

const search = (kbId: string, query: string) => searchKnowledgeBase(env, db(), { knowledgeBaseId: kbId, query });

describe("OpenAPI", () => {
  it("documents every documents route and the signed upload/download URLs", async () => {
    const doc: any = await (await fetchWorker("/openapi.json")).json();
    for (const [path, method] of [
      ["/api/v1/documents/presign", "post"],
      ["/api/v1/documents/status", "get"],
      ["/api/v1/documents", "get"],
      ["/api/v1/documents/upload-url", "post"],
      ["/api/v1/documents/upload-url-site", "post"],
      ["/api/v1/documents/{id}", "get"],
      ["/api/v1/documents/{id}", "delete"],
      ["/api/v1/documents/{id}/download", "get"],
      ["/api/v1/documents/{id}/reprocess", "post"],
      ["/uploads/{id}", "put"],
      ["/downloads/{id}", "get"],
    ]) {
      expect(doc.paths[path]?.[method]?.operationId, `${method} ${path}`).toBeTruthy();
    }
    expect(doc.components.schemas.Document.properties.status.enum).toContain("pending_upload");
  });
});

describe("reading documents", () => {
  it("status, get and list show the processed document; list pages newest first and filters by status", async () => {
    const { org, kb, auth, id, doc } = await processedDoc();
    // Two sibling sections (Okapi, Pangolin) make two chunks.
    expect(doc).toMatchObject({ id, status: "processed", is_processing: false, chunk_count: 2, filename: "guide.md" });
    expect(expectStatus(await call(`/documents/${id}`, auth), 200)).toEqual(doc);

    const second = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "b.txt", mime_type: "text/plain", size_bytes: 5 } }),
      201,
    );
    const list = expectStatus(await call(`/documents?kb_id=${kb.id}`, auth), 200);
    expect(list).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(list.documents.map((d: any) => d.id)).toEqual([second.document_id, id]);
    const paged = expectStatus(await call(`/documents?kb_id=${kb.id}&limit=1&offset=1`, auth), 200);
    expect(paged.documents.map((d: any) => d.id)).toEqual([id]);
    const pending = expectStatus(await call(`/documents?kb_id=${kb.id}&status=pending_upload`, auth), 200);
    expect(pending.documents.map((d: any) => d.id)).toEqual([second.document_id]);
    expectError(await call(`/documents?kb_id=${kb.id}&status=deleted`, auth), 400);
    expectError(await call(`/documents?kb_id=${kb.id}&limit=0`, auth), 400);
    expectError(await call(`/documents`, auth), 400);
    expectError(await call(`/documents/status`, auth), 400);
  });

  it("reach: other organizations get 404, restricted keys see only their knowledge base, viewers read", async () => {
    const { org, kb, auth, id } = await processedDoc();
    const stranger = await createOrg();
    expectError(await call(`/documents/${id}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/documents/status?document_id=${id}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/documents?kb_id=${kb.id}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/documents/${id}/download`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/documents/${id}`, { cookie: stranger.owner.cookie, method: "DELETE" }), 404);
    expectError(await call(`/documents/${id}/reprocess`, { cookie: stranger.owner.cookie, method: "POST" }), 404);
    expectError(await call(`/documents/doc_missing`, auth), 404);

    const viewer = await addMember(org, "viewer");
    expectStatus(await call(`/documents/${id}`, { cookie: viewer.cookie }), 200);
    expectStatus(await call(`/documents?kb_id=${kb.id}`, { cookie: viewer.cookie }), 200);
    expectError(await call(`/documents/${id}`, { cookie: viewer.cookie, method: "DELETE" }), 403);
    expectError(await call(`/documents/${id}/reprocess`, { cookie: viewer.cookie, method: "POST" }), 403);

    const otherKb = await createKb(org);
    const restricted = await createKey(org, { scopes: ["documents:read", "documents:write", "documents:delete"], knowledge_base_id: otherKb.id });
    expectError(await call(`/documents/${id}`, { key: restricted.key }), 404);
    expectError(await call(`/documents?kb_id=${kb.id}`, { key: restricted.key }), 403);
    expectError(await call(`/documents/${id}`, { key: restricted.key, method: "DELETE" }), 404);
    const own = await createKey(org, { scopes: ["documents:read"], knowledge_base_id: kb.id });
    expectStatus(await call(`/documents/${id}`, { key: own.key }), 200);
    expectError(await call(`/documents/${id}`, { key: own.key, method: "DELETE" }), 403);
    const otherTenant = await createTenant(org);
    const allowlisted = await createKey(org, { scopes: ["documents:read"], tenant_ids: [otherTenant.id] });
    expectError(await call(`/documents/${id}`, { key: allowlisted.key }), 404);
    expectError(await call(`/documents/${id}`), 401);
  });

  it("download: a signed URL that needs no credentials, returns the same bytes as an attachment, and expires", async () => {
    const { auth, id } = await processedDoc();
    const d = expectStatus(await call(`/documents/${id}/download`, auth), 200);
    expect(d.filename).toBe("guide.md");
    expect(Date.parse(d.expires_at) - Date.now()).toBeGreaterThan(14 * 60 * 1000);
    const res = await fetchWorker(d.download_url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(ARTICLE);
    expect(res.headers.get("Content-Type")).toBe("text/markdown");
    expect(res.headers.get("Content-Disposition")).toMatch(/^attachment; filename="guide.md"/);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");

    // A different first character of the signature (replacing it with a fixed one left it unchanged 1 time in 64).
    const tampered = d.download_url.replace(/sig=(.)/, (_: string, c: string) => `sig=${c === "Z" ? "Y" : "Z"}`);
    expect((await fetchWorker(tampered)).status).toBe(403);
    const upload = await workerSignedUrl(env, "upload", id);
    expect((await fetchWorker(upload.url.replace("/uploads/", "/downloads/"))).status).toBe(403);
    const expired = await workerSignedUrl(env, "download", id, Date.now() - 16 * 60 * 1000);
    expect((await fetchWorker(expired.url)).status).toBe(403);
  });

  it("download is refused before the upload and after deletion (409)", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const p = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "a.txt", mime_type: "text/plain", size_bytes: 3 } }),
      201,
    );
    expectError(await call(`/documents/${p.document_id}/download`, auth), 409, "document_not_uploaded");
    expect((await call(`/documents/${p.document_id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/documents/${p.document_id}/download`, auth), 409, "document_deleted");
  });
});

describe("deleting documents", () => {
  it("removes the document from search at once and cleans up its file, chunks and vectors; counters follow", async () => {
    const { org, kb, auth, id } = await processedDoc();
    expect((await search(kb.id, "okapi giraffid"))[0]?.document_id).toBe(id);
    expect(await vectorCount(kb.id)).toBe(2);
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 1, storage_used_bytes: new TextEncoder().encode(ARTICLE).byteLength });

    expect((await call(`/documents/${id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect(await search(kb.id, "okapi giraffid")).toEqual([]);
    const doc = expectStatus(await call(`/documents/status?document_id=${id}`, auth), 200);
    expect(doc).toMatchObject({ status: "deleted", is_processing: false });
    expect(expectStatus(await call(`/documents?kb_id=${kb.id}`, auth), 200).documents).toEqual([]);
    // The document no longer counts at once; its storage, until its file is removed.
    expect((await tenantUsage(auth, org.tenantId)).document_count).toBe(0);
    await eventually(async () => (await tenantUsage(auth, org.tenantId)).storage_used_bytes === 0, "storage released");

    await eventually(async () => (await chunkCount(id)) === 0, "chunks removed");
    await eventually(async () => (await vectorCount(kb.id)) === 0, "vectors removed");
    await eventually(async () => (await env.BUCKET.get(doc.s3_key)) === null, "stored file removed");
    // Idempotent.
    expect((await call(`/documents/${id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/documents/${id}/reprocess`, { ...auth, method: "POST" }), 409, "document_deleted");
  });

  it("deleting a knowledge base removes its documents, stored files, chunks and vectors", async () => {
    const { org, kb, auth, id, doc } = await processedDoc();
    expect(await vectorCount(kb.id)).toBe(2);
    expect((await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/documents/${id}`, auth), 404);
    expect(await chunkCount(id)).toBe(0);
    // The document no longer counts at once; its storage, until its file is removed.
    expect((await tenantUsage(auth, org.tenantId)).document_count).toBe(0);
    await eventually(async () => (await tenantUsage(auth, org.tenantId)).storage_used_bytes === 0, "storage released");
    await eventually(async () => (await env.BUCKET.get(doc.s3_key)) === null, "stored file removed");
    await eventually(async () => (await vectorCount(kb.id)) === 0, "vectors removed");
    const garbage = await env.DB.prepare("SELECT COUNT(*) AS n FROM ingest_garbage WHERE knowledge_base_id = ?").bind(kb.id).first<{ n: number }>();
    await eventually(async () => {
      const g = await env.DB.prepare("SELECT COUNT(*) AS n FROM ingest_garbage WHERE knowledge_base_id = ?").bind(kb.id).first<{ n: number }>();
      return g!.n === 0;
    }, `garbage list drained (was ${garbage?.n})`);
  });

  it("deleting a tenant removes its documents' files too", async () => {
    const org = await createOrg();
    const t = await createTenant(org);
    const kb = await createKb(org, { tenant_id: t.id });
    const auth = { cookie: org.owner.cookie };
    const { id } = await uploadFile(auth, kb, { filename: "a.md", mime: "text/markdown", body: "# A\n\nalpha beta" });
    const doc = await waitForDocument(auth, id);
    expect((await call(`/tenants/${t.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    await eventually(async () => (await env.BUCKET.get(doc.s3_key)) === null, "stored file removed");
    await eventually(async () => (await vectorCount(kb.id)) === 0, "vectors removed");
  });
});

describe("reprocessing", () => {
  it("queues a processed document again; the index is replaced without duplicates", async () => {
    const { kb, auth, id, doc } = await processedDoc();
    const r = expectStatus(await call(`/documents/${id}/reprocess`, { ...auth, method: "POST" }), 202);
    expect(r).toMatchObject({ id, status: "queued", is_processing: true, error: null });
    // The previous index answers while the document is queued again.
    expect((await search(kb.id, "pangolin scales"))[0]?.document_id).toBe(id);
    const again = await waitForDocument(auth, id);
    expect(again).toMatchObject({ status: "processed", chunk_count: doc.chunk_count });
    await eventually(async () => (await chunkCount(id)) === doc.chunk_count, "old generation removed");
    expect(await vectorCount(kb.id)).toBe(doc.chunk_count);
    const hits = await search(kb.id, "pangolin scales");
    expect(hits[0].text).toMatch(/keratin scales/);
    expect(new Set(hits.map((h) => h.chunk_id)).size).toBe(hits.length);
    expect(hits.every((h) => h.chunk_id.startsWith(`${id}:2:`))).toBe(true);
  });

  it("refuses busy, not-uploaded and derived documents (409)", async () => {
    const { org, kb, auth, id } = await processedDoc();
    await env.DB.prepare("UPDATE documents SET status = 'processing', updated_at = ? WHERE id = ?").bind(new Date().toISOString(), id).run();
    expectError(await call(`/documents/${id}/reprocess`, { ...auth, method: "POST" }), 409, "document_busy");
    // A document stuck for longer than 30 minutes may be queued again.
    await env.DB.prepare("UPDATE documents SET updated_at = ? WHERE id = ?").bind(new Date(Date.now() - 31 * 60 * 1000).toISOString(), id).run();
    expectStatus(await call(`/documents/${id}/reprocess`, { ...auth, method: "POST" }), 202);
    await waitForDocument(auth, id);

    const p = expectStatus(
      await call("/documents/presign", { ...auth, body: { kb_id: kb.id, tenant_id: org.tenantId, filename: "a.txt", mime_type: "text/plain", size_bytes: 3 } }),
      201,
    );
    expectError(await call(`/documents/${p.document_id}/reprocess`, { ...auth, method: "POST" }), 409, "document_not_uploaded");
  });
});
