import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { workerSignedUrl } from "../../src/services/documents/signed-urls";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker } from "../helpers";
import { tenantUsage, uploadFile, waitForDocument } from "./doc-helpers";

const MD = "text/markdown";

function presignBody(kb: { id: string; tenant_id: string }, over: Record<string, unknown> = {}) {
  return { kb_id: kb.id, tenant_id: kb.tenant_id, filename: "notes.md", mime_type: MD, size_bytes: 12, ...over };
}

describe("POST /documents/presign", () => {
  it("creates a pending_upload document with a 15-minute Worker-signed PUT URL and reserves the quota", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const before = Date.now();
    const p = expectStatus(await call("/documents/presign", { ...auth, body: presignBody(kb, { filename: "Q3 plan (final).md", size_bytes: 321 }) }), 201);
    expect(p.document_id).toMatch(/^doc_/);
    expect(p.method).toBe("PUT");
    expect(p.headers).toEqual({ "Content-Type": MD });
    expect(p.s3_key).toBe(`o/${org.id}/t/${org.tenantId}/kb/${kb.id}/d/${p.document_id}/Q3_plan_final_.md`);
    const url = new URL(p.upload_url);
    expect(url.pathname).toBe(`/uploads/${p.document_id}`);
    expect(url.searchParams.get("sig")).toBeTruthy();
    const expires = Date.parse(p.expires_at);
    expect(expires - before).toBeGreaterThan(14 * 60 * 1000);
    expect(expires - before).toBeLessThanOrEqual(15 * 60 * 1000 + 5000);
    expect(Number(url.searchParams.get("expires")) * 1000).toBe(expires);

    const doc = expectStatus(await call(`/documents/${p.document_id}`, auth), 200);
    expect(doc).toMatchObject({
      id: p.document_id,
      document_id: p.document_id,
      knowledge_base_id: kb.id,
      tenant_id: org.tenantId,
      filename: "Q3 plan (final).md",
      mime_type: MD,
      size_bytes: 321,
      status: "pending_upload",
      is_processing: false,
      error: null,
      chunk_count: 0,
      page_count: null,
      source_url: null,
      parent_document_id: null,
      s3_key: p.s3_key,
      processed_at: null,
    });
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 1, storage_used_bytes: 321 });
  });

  it("refuses a tenant_id that is not the knowledge base's (400 tenant_mismatch)", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const kb = await createKb(org);
    const e = expectError(await call("/documents/presign", { cookie: org.owner.cookie, body: presignBody(kb, { tenant_id: other.id }) }), 400, "tenant_mismatch");
    expect(e.details?.[0].path).toBe("body.tenant_id");
  });

  it("refuses unsupported types (415) and oversized files (413); accepts by extension when the type is generic", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, { filename: "a.png", mime_type: "image/png" }) }), 415, "unsupported_media_type");
    expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, { filename: "a.bin", mime_type: "application/octet-stream" }) }), 415);
    expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, { size_bytes: 50 * 1024 * 1024 + 1 }) }), 413, "payload_too_large");
    for (const [filename, mime_type] of [
      ["r.pdf", "application/octet-stream"],
      ["r.pdf", "application/pdf"],
      ["r.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"],
      ["r.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"],
      ["r.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"],
      ["r.html", "text/html; charset=utf-8"],
      ["r.txt", "text/plain"],
      ["r.csv", "text/csv"],
      ["r.json", "application/json"],
    ]) {
      expectStatus(await call("/documents/presign", { ...auth, body: presignBody(kb, { filename, mime_type }) }), 201);
    }
  });

  it("validates the body (400 naming each bad field)", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    for (const [over, field] of [
      [{ size_bytes: 0 }, "body.size_bytes"],
      [{ size_bytes: -5 }, "body.size_bytes"],
      [{ size_bytes: 1.5 }, "body.size_bytes"],
      [{ size_bytes: "12" }, "body.size_bytes"],
      [{ filename: "" }, "body.filename"],
      [{ filename: "x".repeat(256) }, "body.filename"],
      [{ mime_type: undefined }, "body.mime_type"],
      [{ kb_id: undefined }, "body.kb_id"],
    ] as const) {
      const e = expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, over) }), 400, "invalid_request");
      expect(e.details?.map((d) => d.path)).toContain(field);
    }
    expectError(await call("/documents/presign", { ...auth, raw: "{not json", headers: { "Content-Type": "application/json" } }), 400);
  });

  it("checks the document quota first, also before type and size", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { max_documents: 1 });
    const kb = await createKb(org, { tenant_id: t.id });
    const auth = { cookie: org.owner.cookie };
    expectStatus(await call("/documents/presign", { ...auth, body: presignBody(kb) }), 201);
    expectError(await call("/documents/presign", { ...auth, body: presignBody(kb) }), 403, "quota_exceeded");
    expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, { mime_type: "image/png", filename: "x.png" }) }), 403, "quota_exceeded");
    expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, { size_bytes: 10 ** 12 }) }), 403, "quota_exceeded");
  });

  it("checks the storage quota", async () => {
    const org = await createOrg();
    const t = await createTenant(org, { max_storage_gb: 0.000001 }); // 1,000 bytes
    const kb = await createKb(org, { tenant_id: t.id });
    const auth = { cookie: org.owner.cookie };
    expectStatus(await call("/documents/presign", { ...auth, body: presignBody(kb, { size_bytes: 600 }) }), 201);
    const e = expectError(await call("/documents/presign", { ...auth, body: presignBody(kb, { size_bytes: 401 }) }), 403, "quota_exceeded");
    expect(e.message).toMatch(/storage/);
    expectStatus(await call("/documents/presign", { ...auth, body: presignBody(kb, { size_bytes: 400 }) }), 201);
  });

  it("holds the document and storage quotas under concurrent presigns", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const byCount = await createTenant(org, { max_documents: 3 });
    const kbA = await createKb(org, { tenant_id: byCount.id });
    const a = await Promise.all(Array.from({ length: 8 }, () => call("/documents/presign", { ...auth, body: presignBody(kbA) })));
    expect(a.filter((r) => r.status === 201)).toHaveLength(3);
    expect(a.filter((r) => r.status === 403).every((r) => r.body.error.code === "quota_exceeded")).toBe(true);
    expect((await tenantUsage(auth, byCount.id)).document_count).toBe(3);

    const bySize = await createTenant(org, { max_storage_gb: 0.000001 });
    const kbB = await createKb(org, { tenant_id: bySize.id });
    const b = await Promise.all(Array.from({ length: 8 }, () => call("/documents/presign", { ...auth, body: presignBody(kbB, { size_bytes: 300 }) })));
    expect(b.filter((r) => r.status === 201)).toHaveLength(3);
    expect(await tenantUsage(auth, bySize.id)).toEqual({ document_count: 3, storage_used_bytes: 900 });
  });

  it("authorizes: 401 anonymous, 404 foreign knowledge base, 403 viewer / missing scope / other knowledge base of a restricted key", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const kb2 = await createKb(org);
    const stranger = await createOrg();
    const viewer = await addMember(org, "viewer");
    const developer = await addMember(org, "developer");
    expectError(await call("/documents/presign", { body: presignBody(kb) }), 401);
    expectError(await call("/documents/presign", { cookie: stranger.owner.cookie, body: presignBody(kb) }), 404);
    expectError(await call("/documents/presign", { cookie: viewer.cookie, body: presignBody(kb) }), 403);
    expectStatus(await call("/documents/presign", { cookie: developer.cookie, body: presignBody(kb) }), 201);
    expectError(await call("/documents/presign", { cookie: org.owner.cookie, body: presignBody({ id: "kb_nope", tenant_id: org.tenantId }) }), 404);

    const reader = await createKey(org, { scopes: ["documents:read"] });
    expectError(await call("/documents/presign", { key: reader.key, body: presignBody(kb) }), 403);
    const restricted = await createKey(org, { scopes: ["documents:write"], knowledge_base_id: kb.id });
    expectStatus(await call("/documents/presign", { key: restricted.key, body: presignBody(kb) }), 201);
    expectError(await call("/documents/presign", { key: restricted.key, body: presignBody(kb2) }), 403, "forbidden");
    const other = await createTenant(org);
    const kbOther = await createKb(org, { tenant_id: other.id });
    const allowlisted = await createKey(org, { scopes: ["documents:write"], tenant_ids: [org.tenantId] });
    expectError(await call("/documents/presign", { key: allowlisted.key, body: presignBody(kbOther) }), 403);
  });

  it("accepts documents into an inactive knowledge base (only chats and queries are refused there)", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    expectStatus(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { status: "inactive" } }), 200);
    expectStatus(await call("/documents/presign", { cookie: org.owner.cookie, body: presignBody(kb) }), 201);
  });
});

describe("PUT to the upload URL", () => {
  async function presigned(size = 12, mime = MD) {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const p = expectStatus(await call("/documents/presign", { ...auth, body: presignBody(kb, { size_bytes: size, mime_type: mime }) }), 201);
    return { org, kb, auth, p };
  }
  const put = (url: string, body: BodyInit, contentType = MD) => fetchWorker(url, { method: "PUT", headers: { "Content-Type": contentType }, body });
  const errorOf = async (r: Response) => ((await r.json()) as any).error;

  it("stores the bytes without credentials, queues processing, and the document becomes processed without further calls", async () => {
    const text = "# Hello\n\nThe first upload.";
    const { auth, p } = await presigned(new TextEncoder().encode(text).byteLength);
    const r = await put(p.upload_url, text);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ document_id: p.document_id, status: "queued" });
    const obj = await env.BUCKET.get(p.s3_key);
    expect(await obj!.text()).toBe(text);
    const doc = await waitForDocument(auth, p.document_id);
    expect(doc).toMatchObject({ status: "processed", is_processing: false, error: null, chunk_count: 1 });
    expect(doc.processed_at).toBeTruthy();
  });

  it("refuses a second upload (409), a wrong size or type (400), and bad signatures (403)", async () => {
    const { p } = await presigned(12);
    const url = new URL(p.upload_url);

    const tampered = new URL(url);
    tampered.searchParams.set("sig", url.searchParams.get("sig")!.replace(/^./, (c) => (c === "A" ? "B" : "A")));
    expect((await errorOf(await put(tampered.toString(), "twelve bytes"))).code).toBe("forbidden");
    const later = new URL(url);
    later.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600));
    expect((await put(later.toString(), "twelve bytes")).status).toBe(403);
    const unsigned = `${url.origin}${url.pathname}`;
    expect((await put(unsigned, "twelve bytes")).status).toBe(403);
    const otherDoc = new URL(url);
    otherDoc.pathname = "/uploads/doc_someoneelse";
    expect((await put(otherDoc.toString(), "twelve bytes")).status).toBe(403);

    const short = await put(p.upload_url, "eleven byte");
    expect(short.status).toBe(400);
    expect((await errorOf(short)).code).toBe("size_mismatch");
    const wrongType = await put(p.upload_url, "twelve bytes", "text/plain");
    expect(wrongType.status).toBe(400);
    expect((await errorOf(wrongType)).code).toBe("content_type_mismatch");

    expect((await put(p.upload_url, "twelve bytes", "text/markdown; charset=utf-8")).status).toBe(200);
    const again = await put(p.upload_url, "twelve bytes");
    expect(again.status).toBe(409);
    expect((await errorOf(again)).code).toBe("already_uploaded");
  });

  it("refuses an expired URL (403)", async () => {
    const { p } = await presigned(12);
    const old = await workerSignedUrl(env, "upload", p.document_id, Date.now() - 16 * 60 * 1000);
    const r = await put(old.url, "twelve bytes");
    expect(r.status).toBe(403);
    expect((await errorOf(r)).message).toMatch(/expired/);
  });

  it("refuses an upload for a deleted document (409)", async () => {
    const { auth, p } = await presigned(12);
    expect((await call(`/documents/${p.document_id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const r = await put(p.upload_url, "twelve bytes");
    expect(r.status).toBe(409);
    expect((await errorOf(r)).code).toBe("document_deleted");
  });

  it("two concurrent uploads: exactly one wins", async () => {
    const { p } = await presigned(12);
    const results = await Promise.all([put(p.upload_url, "twelve bytes"), put(p.upload_url, "twelve bytes"), put(p.upload_url, "twelve bytes")]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
  });

  it("a user can upload through the helper and read it back through the download URL", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const bytes = new Uint8Array([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0x10]);
    const { id } = await uploadFile(auth, kb, { filename: "raw.pdf", mime: "application/pdf", body: bytes });
    const d = expectStatus(await call(`/documents/${id}/download`, auth), 200);
    const res = await fetchWorker(d.download_url);
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(bytes);
  });
});
