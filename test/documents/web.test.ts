import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { blockedHost, parseIPv4, parseIPv6 } from "../../src/lib/blocked-hosts";
import { guardedFetch, normalizeUserUrl } from "../../src/lib/url-guard";
import { ingestUrl } from "../../src/services/web/ingest-url";
import { discoverSite, parseRobots, robotsAllows } from "../../src/services/web/site";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, testServer } from "../helpers";
import { db, tenantUsage, waitForDocument } from "./doc-helpers";

const web = () => testServer("web");
const byName = () => web().replace("127.0.0.1", "localhost");

async function setup() {
  const org = await createOrg();
  const kb = await createKb(org);
  const auth = { cookie: org.owner.cookie };
  const ingest = (url: string, a = auth) => call("/documents/upload-url", { ...a, body: { kb_id: kb.id, tenant_id: kb.tenant_id, url } });
  const site = (url: string, include_subdomains?: boolean) =>
    call("/documents/upload-url-site", { ...auth, body: { kb_id: kb.id, tenant_id: kb.tenant_id, url, include_subdomains } });
  return { org, kb, auth, ingest, site };
}

describe("URL guard", () => {
  it("classifies every spelling of private, loopback, link-local and metadata addresses", () => {
    for (const host of [
      "127.0.0.1", "127.1", "2130706433", "0x7f000001", "017700000001", "0x7f.0.0.1", "0177.0.0.1", "0.0.0.0", "0",
      "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "224.0.0.1", "255.255.255.255",
      "[::1]", "[::]", "[fc00::1]", "[fd00:ec2::254]", "[fe80::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:a9fe:a9fe]",
      "[64:ff9b::a00:1]", "[2002:a00:1::]", "[ff02::1]",
      "localhost", "LOCALHOST.", "api.localhost", "printer.local", "metadata.google.internal", "metadata", "intranet",
    ]) {
      expect(blockedHost(host), host).not.toBeNull();
    }
    for (const host of ["93.184.216.34", "8.8.8.8", "172.32.0.1", "[2606:4700:4700::1111]", "example.com", "[::ffff:8.8.8.8]"]) {
      expect(blockedHost(host), host).toBeNull();
    }
    expect(parseIPv4("1.2.3.256")).toBeNull();
    expect(parseIPv4("1.2.65535")).toBe(0x0102ffff);
    expect(parseIPv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6("1::2::3")).toBeNull();
  });

  it("adds https:// when the scheme is omitted; refuses other schemes and credentials", async () => {
    expect(normalizeUserUrl("example.com/docs#top").toString()).toBe("https://example.com/docs");
    expect(normalizeUserUrl("http://example.com").protocol).toBe("http:");
    for (const bad of ["ftp://example.com/x", "file:///etc/passwd", "https://user:pw@example.com/"]) {
      await expect(guardedFetch(env, bad)).rejects.toMatchObject({ code: "url_not_allowed", status: 400 });
    }
    await expect(guardedFetch(env, "http://169.254.169.254/latest/meta-data/")).rejects.toMatchObject({ code: "url_not_allowed" });
    await expect(guardedFetch(env, "http://0x7f000001:1/")).rejects.toMatchObject({ code: "url_not_allowed" });
  });

  it("follows redirects by hand and re-checks every hop", async () => {
    const ok = await guardedFetch(env, `${web()}/redirect-relative`);
    expect(ok.url.pathname).toBe("/article");
    for (const path of ["/redirect-private", "/redirect-metadata", "/redirect-loopback"]) {
      await expect(guardedFetch(env, `${web()}${path}`), path).rejects.toMatchObject({ code: "url_not_allowed" });
    }
    expect((await guardedFetch(env, `${web()}/chain/5`)).url.pathname).toBe("/chain/0");
    await expect(guardedFetch(env, `${web()}/chain/6`)).rejects.toMatchObject({ code: "fetch_failed", message: expect.stringMatching(/Too many redirects/) });
  });

  it("limits time and size", async () => {
    await expect(guardedFetch(env, `${web()}/slow`, { timeoutMs: 300 })).rejects.toMatchObject({ code: "fetch_failed", message: expect.stringMatching(/did not answer/) });
    await expect(guardedFetch(env, `${web()}/big`)).rejects.toMatchObject({ code: "payload_too_large", status: 413 });
    await expect(guardedFetch(env, `${web()}/missing`)).rejects.toMatchObject({ code: "fetch_failed", message: expect.stringMatching(/HTTP 404/) });
    await expect(guardedFetch(env, "http://127.0.0.1:1/")).rejects.toMatchObject({ code: "url_not_allowed" });
  });

  it("ALLOW_PRIVATE_URLS: unset refuses the local server; true allows everything", async () => {
    await expect(guardedFetch({ ...env, ALLOW_PRIVATE_URLS: "" }, `${web()}/article`)).rejects.toMatchObject({ code: "url_not_allowed" });
    await expect(guardedFetch({ ...env, ALLOW_PRIVATE_URLS: "false" }, `${web()}/article`)).rejects.toMatchObject({ code: "url_not_allowed" });
    const r = await guardedFetch({ ...env, ALLOW_PRIVATE_URLS: "true" }, `${web()}/redirect-relative`);
    expect(r.status).toBe(200);
  });

  it("with a DNS-over-HTTPS endpoint, refuses names that resolve to private or metadata addresses", async () => {
    const dohEnv = { ...env, URL_GUARD_DOH_URL: `${web()}/dns-query` };
    await expect(guardedFetch(dohEnv, "http://private.test/")).rejects.toMatchObject({ code: "url_not_allowed", message: expect.stringMatching(/10\.0\.0\.5/) });
    await expect(guardedFetch(dohEnv, "http://metadata.test/")).rejects.toMatchObject({ code: "url_not_allowed", message: expect.stringMatching(/fd00:ec2::254/) });
    await expect(guardedFetch(dohEnv, "http://nowhere.test/")).rejects.toMatchObject({ code: "fetch_failed", message: expect.stringMatching(/does not resolve/) });
  });
});

describe("POST /documents/upload-url", () => {
  it("fetches a page, stores its readable content as Markdown titled by the page, and queues it", async () => {
    const { org, kb, auth, ingest } = await setup();
    const doc = expectStatus(await ingest(`${web()}/redirect-relative`), 201);
    expect(doc).toMatchObject({
      knowledge_base_id: kb.id,
      filename: "Caring for Bonsai Trees.md",
      mime_type: "text/markdown",
      source_url: `${web()}/article`,
      status: "queued",
      is_processing: true,
    });
    const stored = await (await env.BUCKET.get(doc.s3_key))!.text();
    expect(stored).toMatch(/^# Caring for Bonsai Trees\n/);
    expect(stored).toMatch(/## Pruning/);
    expect(stored).not.toMatch(/bonsai deals|Cookie settings/);
    expect(doc.size_bytes).toBe(new TextEncoder().encode(stored).byteLength);
    const done = await waitForDocument(auth, doc.id);
    expect(done.status).toBe("processed");
    const hits = await searchKnowledgeBase(env, db(), { knowledgeBaseId: kb.id, query: "when to prune shoots" });
    expect(hits[0]).toMatchObject({ document_id: doc.id, url: `${web()}/article`, heading: "Caring for Bonsai Trees > Pruning" });
    expect(await tenantUsage(auth, org.tenantId)).toEqual({ document_count: 1, storage_used_bytes: doc.size_bytes });
  });

  it("stores other accepted types as they are; refuses unsupported types (415) and pages without content (422)", async () => {
    const { ingest } = await setup();
    const txt = expectStatus(await ingest(`${web()}/notes.txt`), 201);
    expect(txt).toMatchObject({ filename: "notes.txt", mime_type: "text/plain" });
    expectError(await ingest(`${web()}/image.png`), 415, "unsupported_media_type");
    expectError(await ingest(`${web()}/empty`), 422, "fetch_failed");
  });

  it("refuses private addresses, also after redirects, and reports unreachable pages", async () => {
    const { ingest } = await setup();
    expectError(await ingest(`${web()}/redirect-private`), 400, "url_not_allowed");
    expectError(await ingest(`${web()}/redirect-metadata`), 400, "url_not_allowed");
    expectError(await ingest("http://169.254.169.254/latest/meta-data/"), 400, "url_not_allowed");
    expectError(await ingest("localhost:8787/"), 400, "url_not_allowed");
    expectError(await ingest(`${web()}/missing`), 422, "fetch_failed");
    expectError(await ingest(`${web()}/big`), 413, "payload_too_large");
    expectError(await ingest("http://exa mple.com"), 400, "invalid_request");
  });

  it("adds https:// when the scheme is omitted (and reports an unreachable host as 422)", async () => {
    const { kb } = await setup();
    // A closed port allowed for this call only: the error names the URL actually tried.
    const closed = { ...env, ALLOW_PRIVATE_URLS: "127.0.0.1:1" };
    const kbRow = (await (await import("../../src/services/knowledge-bases")).getKnowledgeBase(db(), kb.id))!;
    await expect(ingestUrl(closed, db(), kbRow, "127.0.0.1:1/article", null)).rejects.toMatchObject({
      code: "fetch_failed",
      status: 422,
      message: expect.stringContaining("https://127.0.0.1:1"),
    });
  });

  it("checks quotas first, tenant match and access", async () => {
    const { org, kb, auth } = await setup();
    const full = await createTenant(org, { max_documents: 0 });
    const fullKb = await createKb(org, { tenant_id: full.id });
    expectError(await call("/documents/upload-url", { ...auth, body: { kb_id: fullKb.id, tenant_id: full.id, url: `${web()}/redirect-private` } }), 403, "quota_exceeded");
    expectError(await call("/documents/upload-url", { ...auth, body: { kb_id: kb.id, tenant_id: full.id, url: `${web()}/article` } }), 400, "tenant_mismatch");
    const reader = await createKey(org, { scopes: ["documents:read"] });
    expectError(await call("/documents/upload-url", { key: reader.key, body: { kb_id: kb.id, tenant_id: kb.tenant_id, url: `${web()}/article` } }), 403);
    expectError(await call("/documents/upload-url", { ...auth, body: { kb_id: kb.id, tenant_id: kb.tenant_id } }), 400);
    expectError(await call("/documents/upload-url", { body: { kb_id: kb.id, tenant_id: kb.tenant_id, url: "x" } }), 401);
  });
});

describe("POST /documents/upload-url-site", () => {
  it("lists same-host pages from robots.txt sitemaps (index and gzip), then root links; robots rules honoured", async () => {
    const { site } = await setup();
    const r = expectStatus(await site(byName()), 200);
    const base = byName();
    expect(r.urls).toEqual([`${base}/article`, `${base}/private/open`, `${base}/about?x=1&y=2`, `${base}/`, `${base}/about`]);
  });

  it("include_subdomains adds subdomain pages; at most 25 URLs", async () => {
    const { site } = await setup();
    const r = expectStatus(await site(byName(), true), 200);
    expect(r.urls).toContain(`${byName().replace("localhost", "docs.localhost")}/guide`);
    expect(r.urls.every((u: string) => !u.includes("elsewhere.example"))).toBe(true);
    expect(r.urls.length).toBeLessThanOrEqual(25);
  });

  it("validates the body, the tenant and access", async () => {
    const { org, kb, auth, site } = await setup();
    expectError(await call("/documents/upload-url-site", { ...auth, body: { kb_id: kb.id, tenant_id: kb.tenant_id } }), 400, "invalid_request");
    expectError(await call("/documents/upload-url-site", { ...auth, body: { kb_id: kb.id, tenant_id: kb.tenant_id, url: web(), include_subdomains: "yes" } }), 400);
    const other = await createTenant(org);
    expectError(await call("/documents/upload-url-site", { ...auth, body: { kb_id: kb.id, tenant_id: other.id, url: web() } }), 400, "tenant_mismatch");
    const reader = await createKey(org, { scopes: ["documents:read"] });
    expectError(await call("/documents/upload-url-site", { key: reader.key, body: { kb_id: kb.id, tenant_id: kb.tenant_id, url: web() } }), 403);
    const stranger = await createOrg();
    expectError(await call("/documents/upload-url-site", { cookie: stranger.owner.cookie, body: { kb_id: kb.id, tenant_id: kb.tenant_id, url: web() } }), 404);
    expectStatus(await site(`${web()}/`), 200);
  });

  it("refuses private roots and reports unreachable sites", async () => {
    const { site } = await setup();
    expectError(await site("http://10.0.0.1/"), 400, "url_not_allowed");
    expectError(await site("http://127.0.0.1:1/"), 400, "url_not_allowed");
    await expect(discoverSite({ ...env, ALLOW_PRIVATE_URLS: "127.0.0.1:1" }, "http://127.0.0.1:1/", false)).rejects.toMatchObject({
      code: "fetch_failed",
      status: 422,
      message: expect.stringMatching(/Could not reach/),
    });
  });

  it("parses robots.txt groups and longest-match rules", () => {
    const rules = parseRobots("User-agent: googlebot\nDisallow: /\n\nUser-agent: *\nDisallow: /admin\nDisallow: /*.pdf$\nAllow: /admin/public\nSitemap: https://x/s.xml");
    expect(rules.sitemaps).toEqual(["https://x/s.xml"]);
    const allows = (p: string) => robotsAllows(rules, new URL(`https://x${p}`));
    expect(allows("/")).toBe(true);
    expect(allows("/admin/users")).toBe(false);
    expect(allows("/admin/public/page")).toBe(true);
    expect(allows("/files/a.pdf")).toBe(false);
    expect(allows("/files/a.pdf?x")).toBe(true);
  });
});
