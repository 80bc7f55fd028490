import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { addMember, call, createKey, createOrg, expectError, expectStatus } from "../helpers";
import { captureLogs, mcpUrl, register, registerReady, seen, settled, track } from "./mcp-helpers";

const CRED = "cred-OK-123";

describe("MCP server registration and discovery", () => {
  const logs = captureLogs();
  afterAll(() => {
    // No response and no log line of this file ever carried a credential.
    for (const text of seen) expect(text).not.toContain(CRED);
    expect(logs.length).toBeGreaterThan(0); // the capture works (invitation emails are logged)
    for (const line of logs) expect(line).not.toContain(CRED);
  });

  it("registers an open server: 201 pending, then ready with the discovered manifest", async () => {
    const org = await createOrg();
    const created = expectStatus(await register(org, { name: "Open Tools", url: mcpUrl("/open/mcp") }), 201);
    expect(created).toMatchObject({ name: "Open Tools", url: mcpUrl("/open/mcp"), auth: "none", tool_count: 0, last_error: null });
    expect(["pending", "ready"]).toContain(created.status);
    expect(created.id).toMatch(/^mcp_/);
    const s = await settled(org, created.id);
    expect(s).toMatchObject({ status: "ready", tool_count: 4, last_error: null });
    expect(s.manifest_refreshed_at).toBeTruthy();

    const tools = expectStatus(await track(call(`/mcp/servers/${created.id}/tools?org_id=${org.id}`, { cookie: org.owner.cookie })), 200);
    expect(tools.server_id).toBe(created.id);
    expect(tools.server_name).toBe("Open Tools");
    expect(tools.manifest_refreshed_at).toBe(s.manifest_refreshed_at);
    expect(tools.tools.map((t: { name: string }) => t.name).sort()).toEqual(["add", "echo", "fail", "whoami"]);
    const echo = tools.tools.find((t: { name: string }) => t.name === "echo");
    expect(echo.description).toBe("Echo the text back");
    expect(echo.input_schema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
  });

  it("falls back to the SSE transport when Streamable HTTP answers 405", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Legacy", url: mcpUrl("/legacy/sse") });
    expect(s.tool_count).toBe(4);
    const row = await env.DB.prepare("SELECT transport FROM mcp_servers WHERE id = ?").bind(s.id).first<{ transport: string }>();
    expect(row?.transport).toBe("sse");
  });

  it("credentials: sent as a bearer token, stored sealed, never returned", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Cred", url: mcpUrl("/cred/mcp"), credentials: CRED });
    expect(s.auth).toBe("credentials");
    const row = await env.DB.prepare("SELECT * FROM mcp_servers WHERE id = ?").bind(s.id).first<Record<string, unknown>>();
    expect(JSON.stringify(row)).not.toContain(CRED);
    expect(String(row?.credentials_enc)).toMatch(/^v1:[^:]+:[^:]+:[^:]+$/);
    for (const r of [
      await track(call(`/mcp/servers?org_id=${org.id}`, { cookie: org.owner.cookie })),
      await track(call(`/mcp/servers/${s.id}/tools?org_id=${org.id}`, { cookie: org.owner.cookie })),
    ]) {
      expect(JSON.stringify(r.body)).not.toContain(CRED);
      expect(JSON.stringify(r.body)).not.toContain("credentials_enc");
    }

    // Wrong credentials: the server answers 401 → needs_auth, with the reason.
    const bad = expectStatus(await register(org, { name: "Cred bad", url: mcpUrl("/cred/mcp"), credentials: "wrong-secret" }), 201);
    const settledBad = await settled(org, bad.id);
    expect(settledBad.status).toBe("needs_auth");
    expect(settledBad.last_error).toMatch(/401/);
    // No credentials at all against a server that needs them: needs_auth too.
    const none = expectStatus(await register(org, { name: "Cred none", url: mcpUrl("/cred/mcp") }), 201);
    expect((await settled(org, none.id)).status).toBe("needs_auth");
  });

  it("an unreachable server ends in error with last_error", async () => {
    const org = await createOrg();
    const created = expectStatus(await register(org, { name: "Missing", url: mcpUrl("/nothing-here/mcp") }), 201);
    const s = await settled(org, created.id);
    expect(s.status).toBe("error");
    expect(s.last_error).toBeTruthy();
  });

  it("URL rules: private, loopback, metadata and odd schemes refused with 400 (guard on)", async () => {
    const org = await createOrg();
    for (const url of [
      "http://10.0.0.1/mcp",
      "http://127.0.0.1:1/mcp", // loopback, port not on the test allowlist
      "http://localhost:8080/mcp",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/mcp",
      "http://0x7f000001/mcp",
      "ftp://example.com/mcp",
      "http://user:pw@example.com/mcp",
      "not a url",
    ]) {
      const r = await register(org, { name: "Bad", url });
      const e = expectError(r, 400);
      expect(e.details?.[0]?.path, url).toBe("body.url");
    }
    expect(expectStatus(await track(call(`/mcp/servers?org_id=${org.id}`, { cookie: org.owner.cookie })), 200).servers).toEqual([]);
  });

  it("production: only https and public addresses (also the test allowlist no longer applies)", async () => {
    const { parseMcpUrl, mcpFetch } = await import("../../src/services/mcp/guard");
    const prod = { ...env, ENVIRONMENT: "production", ALLOW_PRIVATE_URLS: "false", URL_GUARD_DOH_URL: "off" };
    await expect(parseMcpUrl(prod, "http://mcp.example.com/mcp")).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/https/) });
    await expect(parseMcpUrl(prod, "https://10.1.2.3/mcp")).rejects.toMatchObject({ status: 400 });
    await expect(parseMcpUrl(prod, "https://[fd00:ec2::254]/mcp")).rejects.toMatchObject({ status: 400 });
    expect((await parseMcpUrl(prod, "https://mcp.example.com/mcp")).toString()).toBe("https://mcp.example.com/mcp");
    // The fetch the SDK transports use refuses before any request leaves.
    await expect(mcpFetch(prod)("http://mcp.example.com/mcp", { method: "POST" })).rejects.toMatchObject({ status: 400 });
    await expect(mcpFetch(prod)(mcpUrl("/open/mcp"), { method: "POST" })).rejects.toMatchObject({ status: 400 });
  });

  it("a redirect to a private address at connection time is refused (the guard runs at every request)", async () => {
    const org = await createOrg();
    const created = expectStatus(await register(org, { name: "Redirector", url: mcpUrl("/redirect-private/mcp") }), 201);
    const s = await settled(org, created.id);
    expect(s.status).toBe("error");
  });

  it("the guard runs again at connection: a registration whose URL became private is refused", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Rebind", url: mcpUrl("/open/mcp") });
    // Simulate a name that now resolves elsewhere: the stored URL points at a private address.
    await env.DB.prepare("UPDATE mcp_servers SET url = 'http://10.0.0.1/mcp', manifest_refreshed_at = '2000-01-01T00:00:00.000Z' WHERE id = ?").bind(s.id).run();
    const { discoverTools } = await import("../../src/services/mcp/client");
    const { createDb } = await import("../../src/db/client");
    await discoverTools(env, createDb(env.DB), s.id);
    const row = await env.DB.prepare("SELECT status, last_error FROM mcp_servers WHERE id = ?").bind(s.id).first<{ status: string; last_error: string }>();
    expect(row?.status).toBe("error");
    expect(row?.last_error).toMatch(/10\.0\.0\.1|private/);
  });

  it("validation: name and url required, name at most 255 characters, org_id required", async () => {
    const org = await createOrg();
    expectError(await register(org, { url: mcpUrl("/open/mcp") }), 400);
    expectError(await register(org, { name: "x" }), 400);
    expectError(await register(org, { name: "x".repeat(256), url: mcpUrl("/open/mcp") }), 400);
    expectError(await track(call(`/mcp/servers`, { cookie: org.owner.cookie, body: { name: "x", url: mcpUrl("/open/mcp") } })), 400);
  });

  it("roles: members read; only owner and billing_admin write; API keys are refused (U only)", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Roles", url: mcpUrl("/open/mcp") });
    const viewer = await addMember(org, "viewer");
    const developer = await addMember(org, "developer");
    const billing = await addMember(org, "billing_admin");
    const { key } = await createKey(org, { scopes: ["documents:read", "documents:write", "query:rag", "tenants:read", "admin:full"] });

    for (const who of [viewer, developer]) {
      expectStatus(await track(call(`/mcp/servers?org_id=${org.id}`, { cookie: who.cookie })), 200);
      expectStatus(await track(call(`/mcp/servers/${s.id}/tools?org_id=${org.id}`, { cookie: who.cookie })), 200);
      expectError(await register(org, { name: "No", url: mcpUrl("/open/mcp") }, { cookie: who.cookie }), 403, "forbidden");
      expectError(await track(call(`/mcp/servers/${s.id}?org_id=${org.id}`, { cookie: who.cookie, method: "DELETE" })), 403);
      expectError(await track(call(`/mcp/servers/${s.id}/oauth/start?org_id=${org.id}`, { cookie: who.cookie, method: "POST", body: {} })), 403);
    }
    expectStatus(await register(org, { name: "Billing may", url: mcpUrl("/open/mcp") }, { cookie: billing.cookie }), 201);

    expectError(await track(call(`/mcp/servers?org_id=${org.id}`, { key })), 403);
    expectError(await register(org, { name: "Key", url: mcpUrl("/open/mcp") }, { key }), 403);
    expectError(await track(call(`/mcp/servers/${s.id}/tools?org_id=${org.id}`, { key })), 403);
    expectError(await track(call(`/mcp/servers/${s.id}?org_id=${org.id}`, { key, method: "DELETE" })), 403);
    expectError(await track(call(`/mcp/servers/${s.id}/oauth/start?org_id=${org.id}`, { key, method: "POST", body: {} })), 403);
    // Anonymous: 401 with a bearer challenge.
    const anon = await track(call(`/mcp/servers?org_id=${org.id}`));
    expectError(anon, 401);
    expect(anon.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
  });

  it("other organizations: 404 for every route, and org_id must match the registration", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Mine", url: mcpUrl("/open/mcp") });
    const stranger = await createOrg();
    const auth = { cookie: stranger.owner.cookie };
    expectError(await track(call(`/mcp/servers?org_id=${org.id}`, auth)), 404);
    expectError(await register(org, { name: "Intruder", url: mcpUrl("/open/mcp") }, auth), 404);
    expectError(await track(call(`/mcp/servers/${s.id}/tools?org_id=${org.id}`, auth)), 404);
    expectError(await track(call(`/mcp/servers/${s.id}/tools?org_id=${stranger.id}`, auth)), 404);
    expectError(await track(call(`/mcp/servers/${s.id}?org_id=${stranger.id}`, { ...auth, method: "DELETE" })), 404);
    expectError(await track(call(`/mcp/servers/${s.id}/oauth/start?org_id=${stranger.id}`, { ...auth, method: "POST", body: {} })), 404);
    // The owner naming another organization's id with their own server: 404 as well.
    expectError(await track(call(`/mcp/servers/${s.id}/tools?org_id=${stranger.id}`, { cookie: org.owner.cookie })), 404);
    // Still there.
    expectStatus(await track(call(`/mcp/servers/${s.id}/tools?org_id=${org.id}`, { cookie: org.owner.cookie })), 200);
    // The stranger's own list does not show it.
    expect(expectStatus(await track(call(`/mcp/servers?org_id=${stranger.id}`, auth)), 200).servers).toEqual([]);
  });

  it("DELETE removes the registration: 204, then 404", async () => {
    const org = await createOrg();
    const s = await registerReady(org, { name: "Gone", url: mcpUrl("/open/mcp") });
    expect((await track(call(`/mcp/servers/${s.id}?org_id=${org.id}`, { cookie: org.owner.cookie, method: "DELETE" }))).status).toBe(204);
    expectError(await track(call(`/mcp/servers/${s.id}/tools?org_id=${org.id}`, { cookie: org.owner.cookie })), 404);
    expectError(await track(call(`/mcp/servers/${s.id}?org_id=${org.id}`, { cookie: org.owner.cookie, method: "DELETE" })), 404);
  });
});
