import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { oauthHelpers } from "../../src/services/mcp-oauth/provider";
import { kbWithDocument } from "../chats/chat-helpers";
import { addMember, BASE, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker } from "../helpers";
import { connectByOAuth, MCP_URL, oauthClient, rawToolsList, textOf, workerFetch, type MemoryOAuthProvider } from "./oauth-helpers";

/**
 * The knowledge-base MCP endpoint as an OAuth 2.1 protected resource (README "Connecting Claude or any
 * MCP client by OAuth"), driven by the MCP SDK's own OAuth client end to end: discovery, dynamic
 * registration, consent as a signed-in member, token, tools/call, refresh, revocation.
 */

const QUESTION = "How long do customers have to request a refund?";

describe("MCP endpoint over OAuth: the SDK client end to end", () => {
  it("registration → consent → token → tools/call → refresh → revoke → 401", async () => {
    const { org, kb, documentId } = await kbWithDocument();
    const p = await connectByOAuth(org.owner.cookie, [kb.id]);
    const first = p.saved!;
    expect(first).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "kb:read" });
    expect(first.refresh_token).toBeTruthy();

    const client = await oauthClient(p);
    const listed = await client.callTool({ name: "list_knowledge_bases", arguments: {} });
    expect((listed.structuredContent as any).knowledge_bases.map((k: { id: string }) => k.id)).toEqual([kb.id]);
    const found = await client.callTool({ name: "search", arguments: { query: QUESTION } });
    expect(found.isError, textOf(found)).toBeFalsy();
    expect((found.structuredContent as any).results[0]).toMatchObject({ document_id: documentId, filename: "handbook.md" });
    expect(textOf(found)).toMatch(/30 days/);
    await client.close();

    // Refresh: auth() with a refresh token and no code trades it for a new pair.
    expect(await auth(p, { serverUrl: MCP_URL, fetchFn: workerFetch })).toBe("AUTHORIZED");
    const second = p.saved!;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await rawToolsList(second.access_token)).status).toBe(200);

    // The member lists the connected client and revokes it.
    const grants = expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200);
    expect(grants.total).toBe(1);
    expect(grants.grants[0]).toMatchObject({
      tenant_id: org.tenantId, knowledge_base_ids: [kb.id], user_id: org.owner.id, client_name: "Test MCP client",
      redirect_host: "localhost", scopes: ["kb:read"], client_id: (p.info as { client_id: string }).client_id,
    });
    expect(Date.parse(grants.grants[0].expires_at)).toBeGreaterThan(Date.now() + 29 * 24 * 3600_000);
    expect(JSON.stringify(grants)).not.toContain(second.access_token);
    expect((await call(`/mcp/oauth/grants/${grants.grants[0].id}?org_id=${org.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);

    // Every token of the grant answers 401 with the challenge, and the refresh token is dead.
    for (const token of [first.access_token, second.access_token]) {
      const r = await rawToolsList(token);
      expect(r.status).toBe(401);
      expect(r.headers.get("WWW-Authenticate")).toContain(`resource_metadata="${BASE}/.well-known/oauth-protected-resource/api/v1/mcp"`);
      const body = (await r.json()) as any;
      expect(body.error).toMatchObject({ code: "unauthorized" });
      expect(body.error.request_id).toBe(r.headers.get("X-Request-Id"));
    }
    const refresh = await fetchWorker(`${BASE}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: second.refresh_token!, client_id: (p.info as any).client_id }),
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as any).error).toBe("invalid_grant");
    expect(expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).total).toBe(0);
  });
});

/** A refresh at the token endpoint, as the SDK sends it: the status and the OAuth error. */
async function refreshWith(p: MemoryOAuthProvider) {
  const r = await fetchWorker(`${BASE}/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: p.saved!.refresh_token!, client_id: (p.info as { client_id: string }).client_id }),
  });
  return { status: r.status, body: (await r.json()) as { error?: string; access_token?: string } };
}

async function housekeeping() {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "*/5 * * * *", scheduledTime: Date.now() }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("what an OAuth token reaches: exactly a key limited to the grant", () => {
  it("a token for knowledge base A cannot search or ask B of the same tenant; one for A and B reaches both, not C", async () => {
    const { org, kb: a } = await kbWithDocument();
    const { kb: b } = await kbWithDocument(org);
    const c = await createKb(org, { name: "Not granted" });

    const onlyA = await oauthClient(await connectByOAuth(org.owner.cookie, [a.id]));
    const listed = await onlyA.callTool({ name: "list_knowledge_bases", arguments: {} });
    expect((listed.structuredContent as any).knowledge_bases.map((k: { id: string }) => k.id)).toEqual([a.id]);
    for (const [name, args] of [
      ["search", { query: QUESTION, knowledge_base_id: b.id }],
      ["ask", { question: QUESTION, knowledge_base_id: b.id }],
    ] as const) {
      const r = await onlyA.callTool({ name, arguments: args });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^not_found/);
      expect(textOf(r)).not.toMatch(/30 days/);
    }
    // The one it may: a cited, metered answer, like a key's.
    const asked = await onlyA.callTool({ name: "ask", arguments: { question: "What is the refund policy?" } });
    expect(asked.isError, textOf(asked)).toBeFalsy();
    expect((asked.structuredContent as any).answer).toMatch(/30 days/);
    await onlyA.close();
    // Metered to the tenant like a key's turn, the grant standing for the key.
    const [grant] = expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).grants;
    const logs = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?limit=5`, { cookie: org.owner.cookie }), 200).logs;
    expect(logs).toContainEqual(expect.objectContaining({
      operation: "fast_query", chat_id: (asked.structuredContent as any).chat_id, is_api_key: true, api_key_id: grant.id,
    }));

    const both = await oauthClient(await connectByOAuth(org.owner.cookie, [a.id, b.id], "Second client"));
    const two = await both.callTool({ name: "list_knowledge_bases", arguments: {} });
    expect((two.structuredContent as any).knowledge_bases.map((k: { id: string }) => k.id).sort()).toEqual([a.id, b.id].sort());
    for (const id of [a.id, b.id]) {
      const r = await both.callTool({ name: "search", arguments: { query: QUESTION, knowledge_base_id: id } });
      expect(r.isError, textOf(r)).toBeFalsy();
    }
    const notC = await both.callTool({ name: "search", arguments: { query: QUESTION, knowledge_base_id: c.id } });
    expect(textOf(notC)).toMatch(/^not_found/);
    await both.close();
  });

  it("a token of organization 1 sees nothing of organization 2, and is no credential anywhere but the MCP endpoint", async () => {
    const one = await kbWithDocument();
    const two = await kbWithDocument();
    const p = await connectByOAuth(one.org.owner.cookie, [one.kb.id]);
    const client = await oauthClient(p);
    const listed = await client.callTool({ name: "list_knowledge_bases", arguments: {} });
    expect(JSON.stringify(listed)).not.toContain(two.kb.id);
    for (const [name, args] of [
      ["search", { query: QUESTION, knowledge_base_id: two.kb.id }],
      ["ask", { question: QUESTION, knowledge_base_id: two.kb.id }],
    ] as const) {
      const r = await client.callTool({ name, arguments: args });
      expect(textOf(r)).toMatch(/^not_found/);
    }
    await client.close();
    // Bound to PUBLIC_BASE_URL's origin: the same token on another host name is refused.
    const elsewhere = await fetchWorker(MCP_URL.replace("localhost", "127.0.0.1"), {
      method: "POST",
      headers: { Authorization: `Bearer ${p.saved!.access_token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(elsewhere.status).toBe(401);
    // Its own knowledge base through REST: the token is not an API key.
    expectError(await call(`/knowledge-bases/${one.kb.id}`, { key: p.saved!.access_token }), 401);
    expectError(await call(`/mcp/oauth/grants?org_id=${one.org.id}`, { key: p.saved!.access_token }), 401);
  });

  it("API keys keep working on /api/v1/mcp beside OAuth (same tools, same 401 for a bad key, now with resource_metadata)", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"], knowledge_base_id: kb.id });
    const ok = await rawToolsList(key);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as any).result.tools.map((t: { name: string }) => t.name).sort()).toEqual(["ask", "list_knowledge_bases", "search"]);
    const bad = await rawToolsList("kbk_not_a_real_key");
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as any).error.message).toBe("Invalid API key");
    expect(bad.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
  });
});

describe("grants: listing, revoking, members who leave, the scheduled purge", () => {
  it("a member lists and revokes their own grants; an owner sees and revokes everyone's; outsiders and keys are refused", async () => {
    const { org, kb } = await kbWithDocument();
    const dev = await addMember(org, "developer");
    const viewer = await addMember(org, "viewer");
    await connectByOAuth(org.owner.cookie, [kb.id], "Owner's client");
    await connectByOAuth(dev.cookie, [kb.id], "Developer's client");
    const viewers = await connectByOAuth(viewer.cookie, [kb.id], "Viewer's client");
    expect((await rawToolsList(viewers.saved!.access_token)).status).toBe(200);

    const list = async (cookie: string) => expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie }), 200);
    expect((await list(org.owner.cookie)).grants.map((g: any) => g.client_name).sort()).toEqual(["Developer's client", "Owner's client", "Viewer's client"]);
    const devGrants = (await list(dev.cookie)).grants;
    expect(devGrants.map((g: any) => g.client_name)).toEqual(["Developer's client"]);
    const viewerGrant = (await list(viewer.cookie)).grants[0];

    // Another member's grant is not the developer's to see or revoke.
    expectError(await call(`/mcp/oauth/grants/${viewerGrant.id}?org_id=${org.id}`, { cookie: dev.cookie, method: "DELETE" }), 404);
    const stranger = await createOrg();
    expectError(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: stranger.owner.cookie }), 404);
    expectError(await call(`/mcp/oauth/grants/${viewerGrant.id}?org_id=${org.id}`, { cookie: stranger.owner.cookie, method: "DELETE" }), 404);
    expectError(await call(`/mcp/oauth/grants/${viewerGrant.id}?org_id=${stranger.id}`, { cookie: stranger.owner.cookie, method: "DELETE" }), 404);
    const { key } = await createKey(org, { scopes: ["query:rag", "documents:read"] });
    expectError(await call(`/mcp/oauth/grants?org_id=${org.id}`, { key }), 403);
    expect((await rawToolsList(viewers.saved!.access_token)).status).toBe(200);

    // The owner revokes the viewer's.
    expect((await call(`/mcp/oauth/grants/${viewerGrant.id}?org_id=${org.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expect((await rawToolsList(viewers.saved!.access_token)).status).toBe(401);
    expect((await list(org.owner.cookie)).total).toBe(2);
    // The developer revokes their own.
    expect((await call(`/mcp/oauth/grants/${devGrants[0].id}?org_id=${org.id}`, { cookie: dev.cookie, method: "DELETE" })).status).toBe(204);
    expect((await list(dev.cookie)).total).toBe(0);
  });

  it("a member removed from the organization: the token answers 401 at once, the refresh fails, the cron revokes the grant", async () => {
    const { org, kb } = await kbWithDocument();
    const dev = await addMember(org, "developer");
    const p = await connectByOAuth(dev.cookie, [kb.id]);
    const kept = await connectByOAuth(org.owner.cookie, [kb.id], "Owner's client");
    expect((await rawToolsList(p.saved!.access_token)).status).toBe(200);

    expect((await call(`/organizations/${org.id}/members/${dev.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    const r = await rawToolsList(p.saved!.access_token);
    expect(r.status).toBe(401);
    expect(((await r.json()) as any).error.message).toMatch(/no longer belongs to the organization/);
    expect((await oauthHelpers(env).listUserGrants(dev.id)).items).toHaveLength(1);

    await housekeeping();
    expect((await oauthHelpers(env).listUserGrants(dev.id)).items).toHaveLength(0);
    expect(await refreshWith(p)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // The owner's grant is untouched.
    expect((await rawToolsList(kept.saved!.access_token)).status).toBe(200);
    expect(expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).grants.map((g: any) => g.user_id)).toEqual([org.owner.id]);
  });

  it("a removed member's refresh is refused even before the cron ran; a re-consent replaces the client's earlier grant", async () => {
    const { org, kb } = await kbWithDocument();
    const dev = await addMember(org, "developer");
    const p = await connectByOAuth(dev.cookie, [kb.id]);
    expect((await call(`/organizations/${org.id}/members/${dev.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expect(await refreshWith(p)).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
    // invalid_grant from our check makes the provider drop the grant itself.
    expect((await oauthHelpers(env).listUserGrants(dev.id)).items).toHaveLength(0);

    const again = await connectByOAuth(org.owner.cookie, [kb.id]);
    const first = again.saved!.access_token;
    const tenant = await createTenant(org);
    const other = await createKb(org, { tenant_id: tenant.id });
    // The same client (same registration) authorized again, for another tenant: one grant, the new one.
    const clientId = (again.info as { client_id: string }).client_id;
    await connectByOAuth(org.owner.cookie, [other.id], again);
    expect((again.info as { client_id: string }).client_id).toBe(clientId);
    const grants = expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).grants;
    expect(grants.map((g: any) => g.knowledge_base_ids)).toEqual([[other.id]]);
    expect((await rawToolsList(first)).status).toBe(401);
  });

  it("the scheduled purge drops lapsed grants and runs the provider's purge", async () => {
    const { org, kb } = await kbWithDocument();
    const p = await connectByOAuth(org.owner.cookie, [kb.id]);
    const [grant] = expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).grants;
    await env.DB.prepare("UPDATE mcp_oauth_grants SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), grant.id).run();
    // A lapsed grant is not listed even before the purge.
    expect(expectStatus(await call(`/mcp/oauth/grants?org_id=${org.id}`, { cookie: org.owner.cookie }), 200).total).toBe(0);
    await housekeeping();
    expect(await env.DB.prepare("SELECT id FROM mcp_oauth_grants WHERE id = ?").bind(grant.id).first()).toBeNull();
    expect((await rawToolsList(p.saved!.access_token)).status).toBe(401);
    expect(await env.OAUTH_KV.get("kb-chat:purge-cursor")).toBeNull();
  });
});
