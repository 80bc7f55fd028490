import { describe, expect, it } from "vitest";
import { addMember, BASE, call, createKb, createKey, createOrg, expectError, expectStatus, fetchWorker, signup, type TestOrg } from "../helpers";

const HOSTILE_MARKDOWN = `# Findings

Intro paragraph with **bold** and a [safe link](https://example.com/docs?a=1&b=2).

<script>alert("pwned")</script>

<img src="x" onerror="alert('img')">

[bad link](javascript:alert(1)) and <a href="jav&#x61;script:alert(2)">entity trick</a> and <a href="https://ok.example" onclick="steal()">ok</a>

<iframe src="https://evil.example"></iframe>

<div style="background:url(javascript:alert(3))">styled text</div>

<form action="https://evil.example"><input type="text" name="q"><button>Go</button></form>

| Metric | Value |
|--------|-------|
| Revenue | 12% |

\`\`\`ts
const x = "<b>not bold</b>";
\`\`\`

- [x] done task
- [ ] open task

![chart](https://img.example/chart.png) ![inline](data:image/png;base64,iVBORw0KGgo=) ![svg](javascript:alert(4))
`;

async function setup() {
  const org = await createOrg();
  const kb = await createKb(org);
  return { org, kb, auth: { cookie: org.owner.cookie } };
}

async function newArtifact(org: TestOrg, kbId: string, body: Record<string, unknown>) {
  return expectStatus(
    await call(`/knowledge-bases/${kbId}/artifacts`, {
      cookie: org.owner.cookie,
      body: { type: "markdown", title: "Findings report", summary: "What we found", content: "# Hello", ...body },
    }),
    201,
  );
}

const publish = (id: string, cookie: string, visibility: string) =>
  call(`/artifacts/${id}/publish`, { cookie, body: { visibility } });

async function page(path: string, cookie?: string) {
  const res = await fetchWorker(`${BASE}${path}`, { headers: cookie ? { Cookie: cookie } : {} });
  return { res, status: res.status, html: await res.text(), headers: res.headers };
}

describe("published artifacts", () => {
  it("renders Markdown to sanitized HTML under a strict CSP", async () => {
    const { org, kb, auth } = await setup();
    const a = await newArtifact(org, kb.id, { content: HOSTILE_MARKDOWN, summary: "Q3 <findings> & notes" });
    const pub = expectStatus(await publish(a.id, auth.cookie, "public"), 200);
    expect(pub.published).toMatchObject({ visibility: "public", url: `http://localhost:8787/p/${a.slug}` });
    expect(typeof pub.published.published_at).toBe("string");
    expect(pub).toMatchObject({ id: a.id, revision: 1, status: "active", content: HOSTILE_MARKDOWN });
    expect(expectStatus(await call(`/artifacts/${a.id}`, auth), 200).published).toEqual(pub.published);

    const p = await page(`/p/${a.slug}`);
    expect(p.status).toBe(200);
    expect(p.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(p.headers.get("Content-Security-Policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(p.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(p.headers.get("Referrer-Policy")).toBe("no-referrer");

    // Layout: title, escaped summary, updated date.
    expect(p.html).toContain("<title>Findings report</title>");
    expect(p.html).toContain("<h1>Findings report</h1>");
    expect(p.html).toContain("Q3 &lt;findings&gt; &amp; notes");
    expect(p.html).toMatch(/Updated <time datetime="[^"]+">[A-Z][a-z]+ \d{1,2}, \d{4}<\/time>/);
    expect(p.html).toContain("max-width:720px");
    // Structure survives.
    expect(p.html).toContain("<strong>bold</strong>");
    expect(p.html).toContain("<table>");
    expect(p.html).toMatch(/<th[^>]*>Metric<\/th>/);
    expect(p.html).toContain('<code class="language-ts">');
    expect(p.html).toContain("&lt;b&gt;not bold&lt;/b&gt;");
    expect(p.html).toContain('<a rel="nofollow noopener noreferrer" href="https://example.com/docs?a=1&amp;b=2">safe link</a>');
    expect(p.html).toContain('href="https://ok.example"');
    expect(p.html).toContain('src="https://img.example/chart.png"');
    expect(p.html).toContain('src="data:image/png;base64,iVBORw0KGgo="');
    expect(p.html).toMatch(/<input[^>]*type="checkbox"/);
    expect(p.html).toContain("styled text");
    // Nothing executable survives.
    const article = p.html.slice(p.html.indexOf("<article>"));
    expect(article).not.toMatch(/<script/i);
    expect(article).not.toContain("pwned");
    expect(article).not.toMatch(/onerror/i);
    expect(article).not.toMatch(/onclick/i);
    expect(article).not.toMatch(/javascript:/i);
    expect(article).not.toMatch(/<iframe/i);
    expect(article).not.toMatch(/<form/i);
    expect(article).not.toMatch(/<button/i);
    expect(article).not.toMatch(/type="text"/);
    expect(article).not.toContain("<input>");
    expect(article).not.toMatch(/style=/i);
    expect(article).not.toContain("alert(");

    // Edits show on the page at once.
    expectStatus(await call(`/artifacts/${a.id}`, { ...auth, method: "PATCH", body: { edits: [{ oldText: "Intro paragraph", newText: "Revised intro" }] } }), 200);
    expect((await page(`/p/${a.slug}`)).html).toContain("Revised intro");
    // HEAD works too, and a Markdown artifact has no raw frame.
    expect((await fetchWorker(`${BASE}/p/${a.slug}`, { method: "HEAD" })).status).toBe(200);
    expect((await page(`/p/${a.slug}/raw`)).status).toBe(404);
  });

  it("serves an HTML artifact only inside a sandboxed frame", async () => {
    const { org, kb, auth } = await setup();
    const content = `<!doctype html><html><body><h1 id="x">Dashboard</h1><script>document.getElementById("x").textContent = document.cookie;</script></body></html>`;
    const a = await newArtifact(org, kb.id, { type: "html", title: "Sales <dashboard>", content });
    expectStatus(await publish(a.id, auth.cookie, "public"), 200);

    const wrapper = await page(`/p/${a.slug}`);
    expect(wrapper.status).toBe(200);
    const csp = wrapper.headers.get("Content-Security-Policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("script-src");
    expect(wrapper.html).toContain(`<iframe src="/p/${a.slug}/raw" sandbox="allow-scripts" title="Sales &lt;dashboard&gt;"`);
    expect(wrapper.html).not.toContain("allow-same-origin");
    // The artifact's markup is not in the wrapper at all.
    expect(wrapper.html).not.toContain("Dashboard");
    expect(wrapper.html).not.toMatch(/<script/i);
    const body = wrapper.html.slice(wrapper.html.indexOf("<body>"));
    expect(body.replace(/<iframe[^>]*><\/iframe>/, "").replace(/<\/?body>|<\/html>/g, "").trim()).toBe("");

    const raw = await page(`/p/${a.slug}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.html).toBe(content);
    const rawCsp = raw.headers.get("Content-Security-Policy")!;
    expect(rawCsp.startsWith("sandbox allow-scripts;")).toBe(true);
    expect(rawCsp).not.toContain("allow-same-origin");
    expect(rawCsp).toContain("default-src 'none'");
    expect(rawCsp).toContain("script-src 'unsafe-inline'");
    expect(rawCsp).toContain("frame-ancestors 'self'");
    expect(raw.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it("private pages need a signed-in member; public pages are open", async () => {
    const { org, kb, auth } = await setup();
    const viewer = await addMember(org, "viewer");
    const outsider = await signup();
    const a = await newArtifact(org, kb.id, { content: "Secret **plan**" });
    const h = await newArtifact(org, kb.id, { type: "html", content: "<p>secret html</p>" });
    expectStatus(await publish(a.id, auth.cookie, "private"), 200);
    const pub = expectStatus(await publish(h.id, auth.cookie, "private"), 200);
    expect(pub.published.visibility).toBe("private");

    for (const cookie of [undefined, outsider.cookie, "kb_session=not-a-real-session-token-xxxxxxxx"]) {
      for (const path of [`/p/${a.slug}`, `/p/${h.slug}`, `/p/${h.slug}/raw`]) {
        const p = await page(path, cookie);
        expect(p.status).toBe(404);
        expect(p.html).toContain("Page not found");
        expect(p.html).not.toContain("secret");
        expect(p.html).not.toContain("Secret");
      }
    }
    const asViewer = await page(`/p/${a.slug}`, viewer.cookie);
    expect(asViewer.status).toBe(200);
    expect(asViewer.html).toContain("Secret <strong>plan</strong>");
    expect(asViewer.headers.get("Cache-Control")).toContain("no-store");
    expect(asViewer.headers.get("X-Robots-Tag")).toContain("noindex");
    expect((await page(`/p/${h.slug}/raw`, org.owner.cookie)).html).toBe("<p>secret html</p>");

    // A member of another organization is still an outsider.
    const stranger = await createOrg();
    expect((await page(`/p/${a.slug}`, stranger.owner.cookie)).status).toBe(404);

    // Publishing again changes the visibility and keeps published_at.
    const again = expectStatus(await publish(a.id, auth.cookie, "public"), 200);
    expect(again.published.visibility).toBe("public");
    const first = expectStatus(await call(`/artifacts/${h.id}`, auth), 200).published.published_at;
    expect(expectStatus(await publish(h.id, auth.cookie, "public"), 200).published.published_at).toBe(first);
    const open = await page(`/p/${a.slug}`);
    expect(open.status).toBe(200);
    expect(open.headers.get("X-Robots-Tag")).toBeNull();
  });

  it("unpublish removes the page and keeps the artifact and its revisions", async () => {
    const { org, kb, auth } = await setup();
    const a = await newArtifact(org, kb.id, { content: "v1" });
    expectStatus(await call(`/artifacts/${a.id}`, { ...auth, method: "PATCH", body: { edits: [{ oldText: "v1", newText: "v2" }] } }), 200);
    expectStatus(await publish(a.id, auth.cookie, "public"), 200);
    expect((await page(`/p/${a.slug}`)).status).toBe(200);

    expect((await call(`/artifacts/${a.id}/publish`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect((await page(`/p/${a.slug}`)).status).toBe(404);
    const after = expectStatus(await call(`/artifacts/${a.id}`, auth), 200);
    expect(after).toMatchObject({ published: null, content: "v2", revision: 2, status: "active" });
    expect(expectStatus(await call(`/artifacts/${a.id}/revisions`, auth), 200).total).toBe(2);
    expect((await call(`/artifacts/${a.id}/publish`, { ...auth, method: "DELETE" })).status).toBe(204);

    // Archiving hides the page; restoring brings it back; an archived artifact cannot be published.
    expectStatus(await publish(a.id, auth.cookie, "public"), 200);
    expectStatus(await call(`/artifacts/${a.id}/archive`, { ...auth, method: "POST" }), 200);
    expect((await page(`/p/${a.slug}`)).status).toBe(404);
    expectError(await publish(a.id, auth.cookie, "public"), 409, "artifact_archived");
    expectStatus(await call(`/artifacts/${a.id}/restore`, { ...auth, method: "POST" }), 200);
    expect((await page(`/p/${a.slug}`)).status).toBe(200);

    expect((await page("/p/no-such-page-abc123")).status).toBe(404);
    expect((await page("/p/Bad%20Slug!")).status).toBe(404);
  });

  it("publishing is for signed-in writers only: API keys get 403", async () => {
    const { org, kb, auth } = await setup();
    const viewer = await addMember(org, "viewer");
    const dev = await addMember(org, "developer");
    const a = await newArtifact(org, kb.id, {});

    for (const scopes of [["artifacts:write", "artifacts:read"], ["admin:full"]]) {
      const key = (await createKey(org, { scopes })).key;
      expectError(await call(`/artifacts/${a.id}/publish`, { key, body: { visibility: "public" } }), 403, "forbidden");
      expectError(await call(`/artifacts/${a.id}/publish`, { key, method: "DELETE" }), 403, "forbidden");
    }
    expectError(await publish(a.id, viewer.cookie, "public"), 403, "forbidden");
    expectError(await call(`/artifacts/${a.id}/publish`, { cookie: viewer.cookie, method: "DELETE" }), 403);
    expectStatus(await publish(a.id, dev.cookie, "private"), 200);

    expectError(await publish(a.id, auth.cookie, "everyone"), 400, "invalid_request");
    expectError(await call(`/artifacts/${a.id}/publish`, { ...auth, body: {} }), 400);
    expectError(await publish("art_missing", auth.cookie, "public"), 404);
    const stranger = await createOrg();
    expectError(await publish(a.id, stranger.owner.cookie, "public"), 404);
    expectError(await call(`/artifacts/${a.id}/publish`, { body: { visibility: "public" } }), 401);
  });
});
