import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { beforeAll, describe, expect, it } from "vitest";
import { kbWithDocument } from "../chats/chat-helpers";
import { API, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker, type TestOrg } from "../helpers";

/** The SDK's MCP client, connected to our Worker's /api/v1/mcp with an API key. */
async function mcpClient(key: string | null) {
  const client = new Client({ name: "test-client", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const transport = new StreamableHTTPClientTransport(new URL(`${API}/mcp`), {
    requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
    fetch: (input, init) => fetchWorker(new Request(input as RequestInfo, init)),
  });
  await client.connect(transport);
  return client;
}

const textOf = (r: any) => (r.content as Array<{ type: string; text: string }>).map((c) => c.text).join("\n");

describe("each knowledge base as an MCP server: POST /api/v1/mcp", () => {
  let org: TestOrg;
  let kb: { id: string; tenant_id: string };
  let documentId: string;
  let key: string;

  beforeAll(async () => {
    const made = await kbWithDocument();
    org = made.org;
    kb = made.kb;
    documentId = made.documentId;
    key = (await createKey(org, { scopes: ["query:rag", "documents:read"] })).key;
  }, 60_000);

  it("lists its tools to the SDK client", async () => {
    const client = await mcpClient(key);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["ask", "list_knowledge_bases", "search"]);
    const search = tools.find((t) => t.name === "search")!;
    expect(search.inputSchema).toMatchObject({ type: "object", properties: { query: { type: "string" } }, required: ["query"] });
    await client.close();
  });

  it("list_knowledge_bases, search (cited passages) and ask (a cited, metered answer)", async () => {
    const other = await createKb(org, { name: "Second" });
    const client = await mcpClient(key);

    const listed = await client.callTool({ name: "list_knowledge_bases", arguments: {} });
    const ids = (listed.structuredContent as any).knowledge_bases.map((k: { id: string }) => k.id);
    expect(ids).toEqual([kb.id, other.id]);
    expect(textOf(listed)).toContain(kb.id);

    const found = await client.callTool({ name: "search", arguments: { query: "How long do customers have to request a refund?", knowledge_base_id: kb.id } });
    expect(found.isError).toBeFalsy();
    const results = (found.structuredContent as any).results;
    expect(results.length).toBeGreaterThan(0);
    expect(results[0]).toMatchObject({ index: 1, document_id: documentId, filename: "handbook.md" });
    expect(results[0].text).toMatch(/30 days/);
    expect(textOf(found)).toMatch(/^\[1\] handbook\.md/);

    // Two knowledge bases reachable: the id is required.
    const ambiguous = await client.callTool({ name: "search", arguments: { query: "refund" } });
    expect(ambiguous.isError).toBe(true);
    expect(textOf(ambiguous)).toMatch(/knowledge_base_id is required/);

    const before = expectStatus(await call(`/billing/tenants/${org.tenantId}/credits`, { cookie: org.owner.cookie }), 200);
    const asked = await client.callTool({ name: "ask", arguments: { question: "What is the refund policy?", knowledge_base_id: kb.id } });
    expect(asked.isError).toBeFalsy();
    const s = asked.structuredContent as any;
    expect(s.answer).toMatch(/30 days/);
    expect(s.answer).toMatch(/\[1\]/);
    expect(s.sources[0]).toMatchObject({ index: 1, document_id: documentId });
    expect(s.usage.credits).toBeGreaterThan(0);
    expect(textOf(asked)).toMatch(/Sources:\n\[1\] handbook\.md/);
    // Metered like fast-query: a usage record and the tenant's credits moved.
    const after = expectStatus(await call(`/billing/tenants/${org.tenantId}/credits`, { cookie: org.owner.cookie }), 200);
    expect(after.credits_used).toBeGreaterThan(before.credits_used);
    const logs = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?limit=5`, { cookie: org.owner.cookie }), 200);
    expect(logs.logs.some((l: any) => l.operation === "fast_query" && l.chat_id === s.chat_id && l.is_api_key)).toBe(true);
    await client.close();
  });

  it("a key restricted to one knowledge base sees only that one and needs no id", async () => {
    const restricted = (await createKey(org, { scopes: ["query:rag"], knowledge_base_id: kb.id })).key;
    const other = await createKb(org, { name: "Hidden" });
    const client = await mcpClient(restricted);
    const listed = await client.callTool({ name: "list_knowledge_bases", arguments: {} });
    expect((listed.structuredContent as any).knowledge_bases.map((k: { id: string }) => k.id)).toEqual([kb.id]);
    const found = await client.callTool({ name: "search", arguments: { query: "refund" } });
    expect(found.isError).toBeFalsy();
    expect((found.structuredContent as any).knowledge_base_id).toBe(kb.id);
    const refused = await client.callTool({ name: "search", arguments: { query: "refund", knowledge_base_id: other.id } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/not_found/);
    await client.close();
  });

  it("keys of another tenant, another environment or another organization are refused", async () => {
    const otherTenant = await createTenant(org);
    const tenantKey = (await createKey(org, { scopes: ["query:rag", "documents:read"], tenant_ids: [otherTenant.id] })).key;
    const stranger = await createOrg();
    const strangerKey = (await createKey(stranger, { scopes: ["query:rag", "admin:full"] })).key;
    for (const k of [tenantKey, strangerKey]) {
      const client = await mcpClient(k);
      const listed = await client.callTool({ name: "list_knowledge_bases", arguments: {} });
      expect(JSON.stringify(listed)).not.toContain(kb.id);
      for (const [name, args] of [
        ["search", { query: "refund", knowledge_base_id: kb.id }],
        ["ask", { question: "What is the refund policy?", knowledge_base_id: kb.id }],
      ] as const) {
        const r = await client.callTool({ name, arguments: args });
        expect(r.isError).toBe(true);
        expect(textOf(r)).toMatch(/^not_found/);
        expect(textOf(r)).not.toMatch(/30 days/);
      }
      await client.close();
    }
  });

  it("authentication: 401 with a Bearer challenge, sessions and keys without query:rag 403, GET 405", async () => {
    const anon = await fetchWorker(`${API}/mcp`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anon.status).toBe(401);
    expect(anon.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    const badKey = await call("/mcp", { key: "kbk_not_a_real_key", body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    expectError(badKey, 401);
    expect(badKey.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);
    await expect(mcpClient(null)).rejects.toThrow();

    expectError(await call("/mcp", { cookie: org.owner.cookie, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }), 403);
    const noScope = (await createKey(org, { scopes: ["documents:read"] })).key;
    expectError(await call("/mcp", { key: noScope, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } }), 403);

    expect((await call("/mcp", { key })).status).toBe(405);
    expect((await call("/mcp", { key, method: "DELETE" })).status).toBe(405);
  });

  it("malformed JSON-RPC is a 4xx, never a 5xx", async () => {
    const headers = { Accept: "application/json, text/event-stream" };
    for (const raw of ["", "not json", "[]", "{}", '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}']) {
      const r = await call("/mcp", { key, raw, method: "POST", headers: { ...headers, "Content-Type": "application/json" } });
      expect(r.status, `${raw} -> ${JSON.stringify(r.body)}`).toBeLessThan(500);
    }
    // Without the Accept header the transport refuses (406), as the specification requires.
    const r = await call("/mcp", { key, body: { jsonrpc: "2.0", id: 1, method: "tools/list" } });
    expect(r.status).toBeLessThan(500);
  });
});
