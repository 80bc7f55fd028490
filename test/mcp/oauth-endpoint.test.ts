import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { describe, expect, it } from "vitest";
import { kbWithDocument } from "../chats/chat-helpers";
import { BASE, call, expectError, expectStatus, fetchWorker } from "../helpers";
import { connectByOAuth, MCP_URL, oauthClient, rawToolsList, textOf, workerFetch } from "./oauth-helpers";

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
