import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { kbWithDocument } from "../chats/chat-helpers";
import { BASE, call, createKb, createOrg, createTenant, expectStatus, fetchWorker, signup } from "../helpers";
import { cookiesOf, MCP_URL, MemoryOAuthProvider, openConsent, postConsent, REDIRECT_URI, workerFetch } from "./oauth-helpers";

/**
 * Discovery (RFC 9728 and RFC 8414 metadata, the 401 challenge) and the consent page: sign-in, the
 * member's pick, Allow and Deny, and every way a consent is refused.
 */

/** A client registered through the SDK's discovery, with its authorization URL ready to open. */
async function startedClient(name?: string) {
  const p = new MemoryOAuthProvider(name);
  expect(await auth(p, { serverUrl: MCP_URL, fetchFn: workerFetch })).toBe("REDIRECT");
  return p;
}

const grantsOf = async (org: { id: string; owner: { cookie: string } }) =>
  expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).total as number;

describe("discovery", () => {
  it("a 401 on /api/v1/mcp points at the protected-resource metadata, which points at the authorization server", async () => {
    const anon = await fetchWorker(MCP_URL, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anon.status).toBe(401);
    const challenge = anon.headers.get("WWW-Authenticate")!;
    expect(challenge).toMatch(/^Bearer /);
    expect(challenge).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/api/v1/mcp"`);
    expect(challenge).toContain('scope="kb:read"');
    // A token the provider never issued: its 401, in the service's error shape, with the same pointer.
    const unknown = await fetchWorker(MCP_URL, { method: "POST", headers: { Authorization: "Bearer usr_x:abc:def" }, body: "{}" });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
    expect(((await unknown.json()) as any).error.code).toBe("unauthorized");

    const resource = (await (await fetchWorker("/.well-known/oauth-protected-resource/api/v1/mcp")).json()) as any;
    expect(resource).toMatchObject({ resource: MCP_URL, authorization_servers: [BASE], scopes_supported: ["kb:read"] });
    const server = (await (await fetchWorker("/.well-known/oauth-authorization-server")).json()) as any;
    expect(server).toMatchObject({
      issuer: BASE,
      authorization_endpoint: `${BASE}/oauth/authorize`,
      token_endpoint: `${BASE}/oauth/token`,
      registration_endpoint: `${BASE}/oauth/register`,
      revocation_endpoint: `${BASE}/oauth/token`,
      code_challenge_methods_supported: ["S256"],
      response_types_supported: ["code"],
    });
    expect(server.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
  });

  it("dynamic registration and PKCE: a request without S256 goes back to the client with invalid_request", async () => {
    const { org } = await kbWithDocument();
    const p = await startedClient();
    expect(p.info).toMatchObject({ client_id: expect.any(String), redirect_uris: [REDIRECT_URI] });
    expect(p.authorizationUrl!.searchParams.get("code_challenge_method")).toBe("S256");
    for (const strip of [["code_challenge", "code_challenge_method"], ["code_challenge_method"]]) {
      const url = new URL(p.authorizationUrl!);
      for (const k of strip) url.searchParams.delete(k);
      if (strip.length === 1) url.searchParams.set("code_challenge_method", "plain");
      const r = await fetchWorker(url.toString(), { headers: { Cookie: org.owner.cookie }, redirect: "manual" });
      expect(r.status).toBe(302);
      const back = new URL(r.headers.get("Location")!);
      expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
      expect(back.searchParams.get("error")).toBe("invalid_request");
      expect(back.searchParams.get("state")).toBe(p.authorizationUrl!.searchParams.get("state"));
    }
    // An unknown client or a redirect URI it did not register is shown an error page, never redirected to.
    const forged = new URL(p.authorizationUrl!);
    forged.searchParams.set("redirect_uri", "https://evil.example/steal");
    const r = await fetchWorker(forged.toString(), { headers: { Cookie: org.owner.cookie }, redirect: "manual" });
    expect(r.status).toBe(400);
    expect(r.headers.get("Location")).toBeNull();
  });
});

describe("the consent page", () => {
  it("without a session: a sign-in form that comes back to the consent page; a consent post without a session is refused", async () => {
    const { org, kb } = await kbWithDocument();
    const p = await startedClient();
    const anon = await openConsent(p, null);
    expect(anon.res.status).toBe(200);
    expect(anon.html).toContain('name="password"');
    expect(anon.handle).toBeNull();

    // A consent handle from the owner's page, posted without the session: refused, no code for the client.
    const owner = await openConsent(p, org.owner.cookie);
    const refused = await postConsent(p, owner.consentCookie, { handle: owner.handle, decision: "approve", knowledgeBaseIds: [kb.id] });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("Location")).toBeNull();
    expect(await grantsOf(org)).toBe(0);

    // Wrong password, then the right one: back to the same authorization URL, signed in.
    const user = await signup();
    const signIn = (password: string) =>
      fetchWorker(p.authorizationUrl!.toString(), {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: BASE },
        body: new URLSearchParams({ intent: "sign_in", email: user.email, password }),
        redirect: "manual",
      });
    const wrong = await signIn("not-the-password");
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toMatch(/role="alert"/);
    const right = await signIn("correct-horse-battery");
    expect(right.status).toBe(303);
    expect(right.headers.get("Location")).toBe(p.authorizationUrl!.toString());
    const session = cookiesOf(right);
    expect(session).toMatch(/^kb_session=/);
    const page = await openConsent(p, session);
    expect(page.handle).toBeTruthy();
    expect(page.html).toContain("no knowledge bases to share");
    expect(page.html).not.toContain(kb.id);
  });

  it("escapes what clients and members named, and is a labelled page with lang, title and a main landmark", async () => {
    const org = await createOrg();
    await createKb(org, { name: '<img src=x onerror="alert(2)">' });
    const p = await startedClient('<script>alert(1)</script>"Evil"');
    const { html, res } = await openConsent(p, org.owner.cookie);
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;&quot;Evil&quot;");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;");
    expect(html).toMatch(/<html lang="en">/);
    expect(html).toMatch(/<title>Authorize &lt;script&gt;/);
    expect(html).toMatch(/<main>[\s\S]*<h1>Allow &lt;script&gt;/);
    expect(html).toMatch(/<label><input type="checkbox" name="knowledge_base_id" value="[^"]+"> &lt;img/);
    expect(html).toMatch(/<fieldset>\s*<legend>/);
    expect(html).toContain("This app registered itself; its name is not verified.");
    expect(html).toContain("an app on your computer");
    expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("X-Frame-Options")).toBe("DENY");
    // Same-origin form posts must carry a real Origin (no-referrer would make it "null"; test/e2e/mcp-oauth.test.ts).
    expect(res.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(res.headers.getSetCookie().some((c) => c.startsWith("__Host-oauth-consent-") && /HttpOnly/i.test(c))).toBe(true);
  });

  it("Deny goes back to the client with access_denied; a replayed or cross-site form is refused", async () => {
    const { org, kb } = await kbWithDocument();
    const p = await startedClient();
    const page = await openConsent(p, org.owner.cookie);
    const cookies = `${org.owner.cookie}; ${page.consentCookie}`;
    const denied = await postConsent(p, cookies, { handle: page.handle, decision: "deny" });
    expect(denied.status).toBe(302);
    const back = new URL(denied.headers.get("Location")!);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe(p.authorizationUrl!.searchParams.get("state"));
    // The same handle again: used up.
    const replay = await postConsent(p, cookies, { handle: page.handle, decision: "approve", knowledgeBaseIds: [kb.id] });
    expect(replay.status).toBe(400);
    expect(replay.headers.get("Location")).toBeNull();
    // A fresh page, posted from another site's page or from another browser (without its consent cookie).
    const fresh = await openConsent(p, org.owner.cookie);
    const crossSite = await fetchWorker(p.authorizationUrl!.toString(), {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Cookie: `${org.owner.cookie}; ${fresh.consentCookie}`, Origin: "https://evil.example" },
      body: new URLSearchParams({ handle: fresh.handle!, decision: "approve", knowledge_base_id: kb.id }),
      redirect: "manual",
    });
    expect(crossSite.status).toBe(403);
    const otherBrowser = await postConsent(p, org.owner.cookie, { handle: fresh.handle, decision: "approve", knowledgeBaseIds: [kb.id] });
    expect(otherBrowser.status).toBe(400);
    const huge = await postConsent(p, `${org.owner.cookie}; ${fresh.consentCookie}`, { handle: fresh.handle, decision: "approve", knowledgeBaseIds: Array(8000).fill(kb.id) });
    expect(huge.status).toBe(400);
    expect(await huge.text()).toContain("too large");
    expect(await grantsOf(org)).toBe(0);
  });

  it("the pick: at least one knowledge base, all of one tenant, each one the member may ask; a bad pick shows the page again", async () => {
    const { org, kb } = await kbWithDocument();
    const tenant = await createTenant(org);
    const elsewhere = await createKb(org, { tenant_id: tenant.id });
    const foreign = await createKb(await createOrg());
    const p = await startedClient();
    const page = await openConsent(p, org.owner.cookie);
    expect(page.html).toContain(kb.id);
    expect(page.html).toContain(elsewhere.id);
    expect(page.html).not.toContain(foreign.id);
    const cookies = `${org.owner.cookie}; ${page.consentCookie}`;
    for (const [ids, message] of [
      [[], "Pick at least one knowledge base"],
      [[kb.id, elsewhere.id], "Pick knowledge bases of one tenant"],
      [[kb.id, foreign.id], "Knowledge base not found"],
    ] as const) {
      const r = await postConsent(p, cookies, { handle: page.handle, decision: "approve", knowledgeBaseIds: [...ids] });
      expect(r.status).toBe(400);
      const html = await r.text();
      expect(html).toContain(message);
      // The same form again, with the same (unused) handle.
      expect(html).toContain(`name="handle" value="${page.handle}"`);
    }
    expect(await grantsOf(org)).toBe(0);
    const ok = await postConsent(p, cookies, { handle: page.handle, decision: "approve", knowledgeBaseIds: [elsewhere.id] });
    expect(ok.status).toBe(302);
    const grants = expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).grants;
    expect(grants).toEqual([expect.objectContaining({ tenant_id: tenant.id, knowledge_base_ids: [elsewhere.id] })]);
  });

  it("the grants routes are documented in /openapi.json", async () => {
    const spec = (await (await fetchWorker(`${BASE}/openapi.json`)).json()) as any;
    expect(spec.paths["/api/v1/mcp/oauth/grants"].get).toMatchObject({ operationId: "listMcpOAuthGrants", "x-permission": "mcp_oauth:read" });
    expect(spec.paths["/api/v1/mcp/oauth/grants/{id}"].delete).toMatchObject({ operationId: "revokeMcpOAuthGrant", "x-permission": "mcp_oauth:revoke" });
  });
});
