import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { r2PresignedUrl, usesR2Presigning } from "../../src/services/documents/signed-urls";
import { presignUpload } from "../../src/services/documents/uploads";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { signingSecret } from "../../src/lib/config";
import { createKb, createOrg } from "../helpers";
import { db } from "./doc-helpers";

const r2Env = {
  ...env,
  R2_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
  R2_ACCESS_KEY_ID: "AKIDEXAMPLE",
  R2_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  R2_BUCKET_NAME: "kb-documents",
};

describe("R2 presigned S3 URLs (when R2 S3 credentials are configured)", () => {
  it("presign answers a SigV4 query-signed PUT URL for the document's key, valid 15 minutes, with Content-Type signed", async () => {
    expect(usesR2Presigning(env)).toBe(false);
    expect(usesR2Presigning(r2Env)).toBe(true);
    const org = await createOrg();
    const kb = (await getKnowledgeBase(db(), (await createKb(org)).id))!;
    const before = Date.now();
    const p = await presignUpload(r2Env, db(), kb, { filename: "Report Q3.pdf", mime_type: "application/pdf", size_bytes: 1234 }, null);
    const url = new URL(p.upload_url);
    expect(url.origin).toBe("https://0123456789abcdef0123456789abcdef.r2.cloudflarestorage.com");
    expect(decodeURIComponent(url.pathname)).toBe(`/kb-documents/${p.s3_key}`);
    expect(p.s3_key).toMatch(new RegExp(`^o/${org.id}/t/${org.tenantId}/kb/${kb.id}/d/${p.document_id}/Report_Q3\\.pdf$`));
    expect(url.searchParams.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
    expect(url.searchParams.get("X-Amz-Credential")).toMatch(/^AKIDEXAMPLE\/\d{8}\/auto\/s3\/aws4_request$/);
    expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("content-type;host");
    expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
    expect(Date.parse(p.expires_at) - before).toBeGreaterThan(14 * 60 * 1000);
    expect(p).toMatchObject({ method: "PUT", headers: { "Content-Type": "application/pdf" } });
  });

  it("signs deterministically for a given time and changes with the type or the key", async () => {
    const at = Date.parse("2026-11-21T10:00:00Z");
    const a = await r2PresignedUrl(r2Env, "PUT", "o/x/file.pdf", { contentType: "application/pdf" }, at);
    const b = await r2PresignedUrl(r2Env, "PUT", "o/x/file.pdf", { contentType: "application/pdf" }, at);
    const c = await r2PresignedUrl(r2Env, "PUT", "o/x/file.pdf", { contentType: "text/plain" }, at);
    const d = await r2PresignedUrl(r2Env, "GET", "o/x/file.pdf", { downloadFilename: "file.pdf" }, at);
    expect(a.url).toBe(b.url);
    expect(new URL(a.url).searchParams.get("X-Amz-Date")).toBe("20261121T100000Z");
    expect(new URL(a.url).searchParams.get("X-Amz-Signature")).not.toBe(new URL(c.url).searchParams.get("X-Amz-Signature"));
    expect(new URL(d.url).searchParams.get("response-content-disposition")).toMatch(/^attachment; filename="file.pdf"/);
    expect(a.expiresAt).toBe("2026-11-21T10:15:00.000Z");
  });

  it("the development signing secret is refused in production", () => {
    expect(() => signingSecret({ ...env, ENVIRONMENT: "production", SIGNING_SECRET: "" })).toThrow(/SIGNING_SECRET/);
    expect(signingSecret({ ...env, ENVIRONMENT: "production", SIGNING_SECRET: "s3cret" })).toBe("s3cret");
  });
});
