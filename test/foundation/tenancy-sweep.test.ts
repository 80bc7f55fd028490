import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { writeMemory } from "../../src/services/memory/memories";
import { scopeKeyOf } from "../../src/services/memory/settings";
import { newChat } from "../chats/chat-helpers";
import { mcpUrl } from "../mcp/mcp-helpers";
import {
  addMember, BASE, call, createEnvironment, createKb, createKey, createOrg, createTenant, expectStatus, fetchWorker, testServer, type ApiResponse, type Auth,
} from "../helpers";

/**
 * Authorization, route by route: every operation in /openapi.json is called
 * with the ids of one tenant's resources (in the path, the query and the body)
 * by callers who must not touch them. A route added later without going
 * through the authorization layer fails here.
 */
const ALL_SCOPES = [
  "documents:read", "documents:write", "documents:delete", "query:rag", "tenants:read", "tenants:write", "tenants:delete",
  "skills:read", "skills:write", "artifacts:read", "artifacts:write", "agents:read", "agents:write",
  "connectors:read", "connectors:write", "connectors:delete",
];

/** Operations that do not address any one tenant's data: anyone signed in may call them. */
const UNADDRESSED = new Set([
  "GET /api/v1/me",
  "GET /api/v1/organizations",
  "POST /api/v1/organizations",
  "GET /api/v1/invitations",
  "GET /api/v1/chats/models",
  "POST /api/v1/auth/signup",
  "POST /api/v1/auth/login",
  "POST /api/v1/auth/logout",
  // The public OAuth callback of MCP registrations: its signed state is the authorization (test/mcp/oauth.test.ts).
  "GET /api/v1/mcp/servers/oauth/callback",
  // The knowledge-base MCP endpoint names no resource in the request; it serves the key's own knowledge bases
  // (other tenants' are refused inside its tools: test/mcp/kb-endpoint.test.ts).
  "POST /api/v1/mcp",
  // Likewise the OpenAI-compatible model list: the key's own knowledge bases and agents (test/protocols/openai.test.ts).
  "GET /api/v1/openai/models",
  // Public by decision: an agent's A2A card is a discovery document (src/auth/public-paths.ts).
  "GET /api/v1/agents/{id}/a2a/.well-known/agent-card.json",
  // The connector catalog is the same for everyone; the OAuth callback is public and trusts only its signed state.
  "GET /api/v1/connectors/catalog",
  "POST /api/v1/connectors/catalog/by-slugs",
  "GET /api/v1/connectors/auth/callback",
  // A connect flow opened in a browser: its unguessable, single-use id is the capability (test/foundation/access-doors.test.ts).
  "GET /api/v1/oauth-flows/{id}",
]);

interface Operation {
  path: string;
  method: string;
}

/** One organization whose default tenant has one of everything, and a probe for every documented operation. */
async function victimWithEverything() {
  const victim = await createOrg();
  const owner: Auth = { cookie: victim.owner.cookie };
  const kb = await createKb(victim);
  const created = await newChat(owner, kb, { message: "What is the refund policy?" });
  const chat = created.chat ?? created;
  const messageId: string = created.assistant_message?.id ?? "x";
  const skill = expectStatus(await call("/skills", { ...owner, body: { tenant_id: victim.tenantId, name: "S", description: "d", body: "b" } }), 201);
  const artifact = expectStatus(
    await call(`/knowledge-bases/${kb.id}/artifacts`, { ...owner, body: { type: "markdown", title: "T", summary: "s", content: "# T" } }),
    201,
  );
  const doc = expectStatus(
    await call("/documents/presign", { ...owner, body: { kb_id: kb.id, tenant_id: victim.tenantId, filename: "a.md", mime_type: "text/markdown", size_bytes: 10 } }),
    201,
  );
  const agent = expectStatus(
    await call("/agents", { ...owner, body: { tenant_id: victim.tenantId, knowledge_base_id: kb.id, name: "A", goal: "g", model: "local-extractive" } }),
    201,
  );
  const run = expectStatus(await call(`/agents/${agent.id}/messages`, { ...owner, body: { content: "What is the refund policy?" } }), 200).run;
  const victimKey = await createKey(victim, { scopes: ["tenants:read"] });
  const a2a = expectStatus(
    await call(`/knowledge-bases/${kb.id}/a2a-agents`, {
      ...owner,
      body: { name: "Remote", cardUrl: `${testServer("a2a")}/.well-known/agent-card.json`, headers: JSON.stringify({ "X-Secret": "victim-header-secret" }) },
    }),
    201,
  );
  const invite = expectStatus(await call(`/organizations/${victim.id}/members`, { ...owner, body: { email: "someone@example.com", role: "viewer" } }), 201);
  const mcpServer = expectStatus(await call(`/mcp/servers?org_id=${victim.id}`, { ...owner, body: { name: "Victim tools", url: mcpUrl("/open/mcp") } }), 201);
  expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...owner, method: "PATCH", body: { enabled_mcp_server_ids: [mcpServer.id] } }), 200);
  // A durable memory of one of the tenant's end users, and the knowledge base's own (kb_restricted) memory.
  expectStatus(await call(`/tenants/${victim.tenantId}/memory-settings`, { ...owner, method: "PATCH", body: { mode: "durable" } }), 200);
  const memoryKb = await createKb(victim);
  expectStatus(await call(`/knowledge-bases/${memoryKb.id}`, { ...owner, method: "PATCH", body: { kbMemoryMode: "kb_restricted" } }), 200);
  const remember = async (kbId: string | null, content: string) =>
    (
      await writeMemory(
        { env: env as any, db: createDb(env.DB) },
        { organizationId: victim.id, tenantId: victim.tenantId, knowledgeBaseId: kbId, subjectId: "ext:victim", scopeKey: await scopeKeyOf(victim.tenantId, kbId, "ext:victim"), retention: "explicit_only" },
        { content, kind: "fact", sourceChatId: null, sourceMessageId: null },
      )
    ).memory;
  const memory = await remember(null, "My project code is ZEBRA-42.");
  const kbMemory = await remember(memoryKb.id, "My locker is 815.");

  const byGroup: Record<string, string> = {
    organizations: victim.id,
    environments: victim.envId,
    tenants: victim.tenantId,
    "knowledge-bases": kb.id,
    skills: skill.id,
    artifacts: artifact.id,
    documents: doc.document_id,
    chats: chat.id,
    "shared-chats": chat.id,
    "api-keys": victimKey.id,
    invitations: invite.id,
    agents: agent.id,
    mcp: mcpServer.id,
  };
  const idFor = (path: string, param: string) => {
    if (param === "tenantId") return victim.tenantId;
    if (param === "orgId") return victim.id;
    if (param === "messageId") return messageId;
    if (param === "invite_id") return invite.id;
    if (param === "runId") return run.id;
    if (param === "agentId") return a2a.id;
    if (param === "member_id") return victim.owner.id;
    if (param === "memoryId") return path.startsWith("/api/v1/knowledge-bases/") ? kbMemory.id : memory.id;
    if (param === "id" && path.includes("/memories")) return path.startsWith("/api/v1/knowledge-bases/") ? memoryKb.id : victim.tenantId;
    return byGroup[path.replace(/^(\/api\/v1)?\//, "").match(/^([^/]+)/)?.[1] ?? ""] ?? "x";
  };
  const query = `?tenant_id=${victim.tenantId}&kb_id=${kb.id}&knowledge_base_id=${kb.id}&document_id=${doc.document_id}&env_id=${victim.envId}&environment_id=${victim.envId}&org_id=${victim.id}`;
  // A body valid for every route, naming the victim's resources wherever a route takes an id.
  const body = {
    tenant_id: victim.tenantId, kb_id: kb.id, knowledge_base_id: kb.id, environment_id: victim.envId, env_id: victim.envId,
    chat_id: chat.id, shared_source_chat_id: chat.id, user_id: victim.owner.id,
    id: crypto.randomUUID(), name: "Probe", description: "probe", body: "probe", title: "Probe", summary: "probe", type: "markdown",
    content: "What is the refund policy?", query: "refund", message: "What is the refund policy?", model: "local-extractive",
    amount: 1, role: "viewer", email: "probe@example.com", filename: "probe.md", mime_type: "text/markdown", size_bytes: 10,
    url: "https://example.com", scopes: ["documents:read"], access_level: "public", visibility: "public", status: "inactive",
    edits: [{ oldText: "T", newText: "X" }], enabled_mcp_server_ids: [mcpServer.id], goal: "probe", enabled: false, mode: "durable", retention: "automatic",
    allowed_origins: ["https://example.com"],
    cardUrl: "https://example.com/.well-known/agent-card.json",
    slug: "github", slugs: ["github"], redirect_url: "https://app.example.com/connected",
  };
  // The protocol doors take their protocol's body: an OpenAI request naming the knowledge base, useChat's messages.
  const protocolBodies: Record<string, unknown> = {
    "POST /api/v1/openai/chat/completions": { model: `kb:${kb.id}`, messages: [{ role: "user", content: body.content }] },
    "POST /api/v1/chats/{id}/ui-stream": { messages: [{ id: "m1", role: "user", parts: [{ type: "text", text: body.content }] }] },
  };
  const bodyFor = (o: Operation) =>
    o.method === "GET" || o.method === "DELETE"
      ? undefined
      : o.method === "PATCH" && o.path === "/api/v1/artifacts/{id}"
        ? { edits: body.edits } // artifact updates take edits or title/summary, not both
        : (protocolBodies[`${o.method} ${o.path}`] ?? body);

  const spec = (await (await fetchWorker("/openapi.json")).json()) as { paths: Record<string, Record<string, unknown>> };
  const operations: Operation[] = Object.entries(spec.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
      .map((m) => ({ path, method: m.toUpperCase() }))
      .filter((o) => !UNADDRESSED.has(`${o.method} ${o.path}`)),
  );
  // Deletes last, the organization itself at the very end, so every other route meets the resources alive.
  const rank = (o: Operation) => (o.method !== "DELETE" ? 0 : o.path === "/api/v1/organizations/{id}" ? 2 : 1);
  operations.sort((a, b) => rank(a) - rank(b));
  expect(operations.length).toBeGreaterThan(80);

  const probe = (o: Operation, auth: Auth): Promise<ApiResponse> => {
    const filled = o.path.replace(/\{([^}]+)\}/g, (_, p: string) => idFor(o.path, p)) + query;
    const url = filled.startsWith("/api/v1/") ? filled.slice("/api/v1".length) : BASE + filled;
    return call(url, { ...auth, method: o.method, body: bodyFor(o) });
  };
  const requestText = (o: Operation) => o.path.replace(/\{([^}]+)\}/g, (_, p: string) => idFor(o.path, p)) + query + JSON.stringify(bodyFor(o) ?? "");

  const ids = [
    victim.id, victim.envId, victim.tenantId, kb.id, skill.id, artifact.id, doc.document_id, chat.id, victimKey.id, invite.id, messageId,
    memoryKb.id, memory.id, kbMemory.id, mcpServer.id, agent.id, run.id, run.chat_id, a2a.id, "victim-header-secret",
  ];
  const assertIntact = async () => {
    expectStatus(await call(`/knowledge-bases/${kb.id}`, owner), 200);
    expect(expectStatus(await call(`/organizations/${victim.id}`, owner), 200).status).toBe("active");
    expect(expectStatus(await call(`/artifacts/${artifact.id}`, owner), 200).title).toBe("T");
    expect(expectStatus(await call(`/skills/${skill.id}?tenant_id=${victim.tenantId}`, owner), 200).name).toBe("S");
    expect(expectStatus(await call(`/chats/${chat.id}/messages`, owner), 200).messages).toHaveLength(2);
    expect(expectStatus(await call(`/documents/status?document_id=${doc.document_id}`, owner), 200).status).toBe("pending_upload");
    expect(expectStatus(await call(`/billing/tenants/${victim.tenantId}/credits`, owner), 200).credits_pool).toBe(500);
    expect(expectStatus(await call(`/tenants/${victim.tenantId}/memories`, owner), 200).memories.map((m: { id: string }) => m.id)).toEqual([memory.id]);
    expect(expectStatus(await call(`/knowledge-bases/${memoryKb.id}/memories`, owner), 200).memories.map((m: { id: string }) => m.id)).toEqual([kbMemory.id]);
    expect(expectStatus(await call(`/tenants/${victim.tenantId}/memory-settings`, owner), 200)).toMatchObject({ mode: "durable", retention: "explicit_only" });
    expect(expectStatus(await call(`/environments/${victim.envId}/api-keys`, owner), 200).api_keys.map((k: { id: string }) => k.id)).toContain(victimKey.id);
    expect(expectStatus(await call(`/agents/${agent.id}`, owner), 200)).toMatchObject({ status: "active", agentVersion: 1, goal: "g" });
    expect(expectStatus(await call(`/agents/${agent.id}/runs`, owner), 200).total).toBe(1);
    expect(expectStatus(await call(`/mcp/servers?org_id=${victim.id}`, owner), 200).servers.map((m: { id: string }) => m.id)).toEqual([mcpServer.id]);
    expect(expectStatus(await call(`/chats/${chat.id}/mcp-servers`, owner), 200).servers).toEqual([expect.objectContaining({ id: mcpServer.id, enabled: true })]);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${a2a.id}`, owner), 200)).toMatchObject({ name: "Remote", cardUrl: a2a.cardUrl });
  };
  return { victim, operations, probe, requestText, ids, assertIntact };
}

describe("tenancy: no route lets an outsider read or change a tenant's resources", () => {
  it("another organization, another environment, another tenant: every documented operation refuses", async () => {
    const { victim, operations, probe, requestText, ids, assertIntact } = await victimWithEverything();
    const stranger = await createOrg();
    const strangerKey = await createKey(stranger, { scopes: ALL_SCOPES });
    const otherEnv = await createEnvironment(victim);
    const otherEnvKey = await createKey(victim, { scopes: ALL_SCOPES, envId: otherEnv.id });
    const otherTenant = await createTenant(victim);
    const otherTenantKey = await createKey(victim, { scopes: ALL_SCOPES, tenant_ids: [otherTenant.id] });
    // Each with the victim ids it is entitled to know (its own organization and environment).
    const outsiders: [string, Auth, string[]][] = [
      ["another organization's owner", { cookie: stranger.owner.cookie }, []],
      ["another organization's key", { key: strangerKey.key }, []],
      ["a key of another environment", { key: otherEnvKey.key }, [victim.id]],
      ["a key limited to another tenant", { key: otherTenantKey.key }, [victim.id, victim.envId]],
    ];

    const breaches: string[] = [];
    const statuses: Record<number, number> = {};
    let listings = 0;
    for (const o of operations) {
      for (const [who, auth, entitled] of outsiders) {
        const r = await probe(o, auth);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        const text = typeof r.body === "string" ? r.body : JSON.stringify(r.body ?? "");
        // A listing may answer with the caller's own rows (a key limited to one tenant lists that tenant), never
        // with a victim id; any other success is a breach, and so is a refusal that shows a victim id the
        // request did not itself carry.
        const listing = o.method === "GET" && !o.path.includes("{");
        const shown = ids.filter((id) => !entitled.includes(id) && text.includes(id) && (listing || !requestText(o).includes(id)));
        if ((r.status < 300 && !listing) || shown.length) breaches.push(`${who}: ${o.method} ${o.path} -> ${r.status} ${text.slice(0, 160)}`);
        if (listing && r.status < 300) listings++;
      }
    }
    expect(breaches).toEqual([]);
    expect(listings).toBeLessThan(4); // the tenant-limited key listing its own tenant
    // The refusals are authorization refusals (403) or "not found" (404), not validation errors that would
    // hide what the route does: the probe body is valid for every route.
    expect(Object.keys(statuses).sort()).toEqual(["200", "403", "404"]);
    await assertIntact();
  }, 180_000);

  it("a viewer of the organization can read but every write refuses (except asking questions)", async () => {
    const { victim, operations, probe, assertIntact } = await victimWithEverything();
    const viewer = await addMember(victim, "viewer");
    // Viewers may ask questions (query:rag is reading the knowledge base; src/auth/permissions.ts).
    // The signed upload URL authorizes by its signature, not by the caller.
    // Running and stopping an agent is asking questions too (agents:run), also over A2A.
    // Connected apps are personal: any member (viewers too) connects their own accounts (src/auth/permissions.ts).
    // Reads sent as POST (a body too large for a query string) are not writes: read-only SQL (documents:read).
    // Any member revokes the OAuth clients they connected themselves (src/auth/permissions.ts mcp_oauth:revoke);
    // another member's grant is 404 to them (test/mcp/oauth-endpoint.test.ts).
    const readPosts = new Set(["POST /api/v1/knowledge-bases/{id}/sql"]);
    const writes = operations.filter(
      (o) =>
        o.method !== "GET" &&
        !o.path.startsWith("/api/v1/chats") &&
        !o.path.startsWith("/uploads/") &&
        !o.path.startsWith("/api/v1/connectors") &&
        !o.path.startsWith("/api/v1/mcp/oauth/grants") &&
        !readPosts.has(`${o.method} ${o.path}`) &&
        !/^\/api\/v1\/agents\/\{id\}\/(messages|runs\/|a2a$)/.test(o.path),
    );
    expect(writes.length).toBeGreaterThan(30);
    const breaches: string[] = [];
    for (const o of writes) {
      const r = await probe(o, { cookie: viewer.cookie });
      if (r.status !== 403) breaches.push(`${o.method} ${o.path} -> ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
    }
    expect(breaches).toEqual([]);
    await assertIntact();
  }, 180_000);
});
