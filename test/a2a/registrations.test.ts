import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, testServer } from "../helpers";
import { register } from "./a2a-helpers";

const HEADERS = JSON.stringify({ Authorization: "Bearer remote-secret-7f3a", "X-Team": "blue-falcon" });
const METADATA = JSON.stringify({ region: "eu-secret-region" });

describe("A2A registrations", () => {
  it("registers an agent: card fetched and validated, headers and metadata sealed at rest and returned decrypted", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const created = expectStatus(await register(auth, kb.id, { headers: HEADERS, metadata: METADATA, description: "Warranty desk" }), 201);
    expect(created.id).toMatch(/^a2a_/);
    expect(created).toMatchObject({
      knowledge_base_id: kb.id,
      name: "Warranty oracle",
      cardUrl: `${testServer("a2a")}/.well-known/agent-card.json`,
      description: "Warranty desk",
      headers: HEADERS,
      metadata: METADATA,
      status: "ready",
      last_error: null,
    });
    expect(created.card).toMatchObject({
      name: "Warranty oracle",
      description: "Knows everything about Zorblax warranties.",
      url: `${testServer("a2a")}/rpc`,
      version: "2.1.0",
      protocol_version: "1.0",
    });
    expect(created.card.skills[0]).toMatchObject({ id: "warranty", name: "Warranty answers" });

    // The stored row holds no plaintext: envelopes only, bound to the row.
    const row = (await env.DB.prepare("SELECT * FROM a2a_agents WHERE id = ?").bind(created.id).first<Record<string, string>>())!;
    const stored = JSON.stringify(row);
    for (const secret of ["remote-secret-7f3a", "blue-falcon", "eu-secret-region"]) expect(stored).not.toContain(secret);
    expect(row.headers_enc).toMatch(/^v1:/);
    expect(row.metadata_enc).toMatch(/^v1:/);

    // Authorized readers get the decrypted values: list and get.
    const list = expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents`, auth), 200);
    expect(list.a2a_agents).toHaveLength(1);
    expect(list.a2a_agents[0].headers).toBe(HEADERS);
    const viewer = await addMember(org, "viewer");
    const one = expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${created.id}`, { cookie: viewer.cookie }), 200);
    expect(one.metadata).toBe(METADATA);
    // Headers (third-party credentials) only for those who may change the registration; names stay readable.
    const redacted = JSON.stringify(Object.fromEntries(Object.keys(JSON.parse(HEADERS)).map((k) => [k, "[redacted]"])));
    expect(one.headers).toBe(redacted);
    const reader = await createKey(org, { scopes: ["documents:read"] });
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${created.id}`, { key: reader.key }), 200).headers).toBe(redacted);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents`, { key: reader.key }), 200).a2a_agents[0].headers).toBe(redacted);
    const writer = await createKey(org, { scopes: ["documents:read", "documents:write"] });
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents/${created.id}`, { key: writer.key }), 200).headers).toBe(HEADERS);
    const developer = await addMember(org, "developer");
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents`, { cookie: developer.cookie }), 200).a2a_agents[0].headers).toBe(HEADERS);

    // Headers given as an object are stored serialized.
    const obj = expectStatus(await register(auth, kb.id, { name: "Second", headers: { "X-Api-Key": "k-123" } }), 201);
    expect(JSON.parse(obj.headers)).toEqual({ "X-Api-Key": "k-123" });
    // A bare origin means its well-known card.
    const bare = expectStatus(await register(auth, kb.id, { name: "Third", cardUrl: testServer("a2a") }), 201);
    expect(bare.cardUrl).toBe(`${testServer("a2a")}/.well-known/agent-card.json`);
  });

  it("accepts a 0.3 card", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const r = expectStatus(await register({ cookie: org.owner.cookie }, kb.id, { cardUrl: `${testServer("a2a")}/v03/.well-known/agent-card.json` }), 201);
    expect(r.card).toMatchObject({ name: "Legacy oracle", url: `${testServer("a2a")}/rpc`, protocol_version: "0.3.0" });
  });

  it("refuses invalid cards and unreachable URLs (422), private URLs (400) and bad headers (400), storing nothing", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    expectError(await register(auth, kb.id, { cardUrl: `${testServer("a2a")}/invalid-card.json` }), 422, "invalid_agent_card");
    expectError(await register(auth, kb.id, { cardUrl: `${testServer("a2a")}/not-json` }), 422, "invalid_agent_card");
    expectError(await register(auth, kb.id, { cardUrl: `${testServer("a2a")}/missing.json` }), 422, "fetch_failed");
    // Another port of the same address is not on the allow list: refused by the guard.
    expectError(await register(auth, kb.id, { cardUrl: "http://127.0.0.1:1/.well-known/agent-card.json" }), 400, "url_not_allowed");
    // The guard is on: the same local server by another name, and private networks, are refused.
    const port = new URL(testServer("a2a")).port;
    expectError(await register(auth, kb.id, { cardUrl: `http://localhost:${port}/.well-known/agent-card.json` }), 400, "url_not_allowed");
    expectError(await register(auth, kb.id, { cardUrl: "http://10.0.0.7/.well-known/agent-card.json" }), 400, "url_not_allowed");
    expectError(await register(auth, kb.id, { cardUrl: "http://169.254.169.254/latest" }), 400, "url_not_allowed");
    const badUrl = expectError(await register(auth, kb.id, { cardUrl: "ftp://example.com/card" }), 400);
    expect(badUrl.details?.[0].path).toBe("body.cardUrl");
    for (const headers of ["not json", "[1,2]", JSON.stringify({ "X-A": 5 }), JSON.stringify({ "Bad Name": "x" }), JSON.stringify({ Host: "evil" })]) {
      const e = expectError(await register(auth, kb.id, { headers }), 400, "invalid_request");
      expect(e.details?.[0].path).toBe("body.headers");
    }
    expectError(await register(auth, kb.id, { name: "" }), 400);
    expectError(await call(`/knowledge-bases/${kb.id}/a2a-agents`, { ...auth, body: { name: "x" } }), 400);
    expect(expectStatus(await call(`/knowledge-bases/${kb.id}/a2a-agents`, auth), 200).a2a_agents).toEqual([]);
  });

  it("PATCH changes only what is sent; a new cardUrl re-fetches the card (a bad one changes nothing); DELETE 204", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const a = expectStatus(await register(auth, kb.id, { headers: HEADERS }), 201);
    const path = `/knowledge-bases/${kb.id}/a2a-agents/${a.id}`;
    const renamed = expectStatus(await call(path, { ...auth, method: "PATCH", body: { name: "Oracle 2", description: "New" } }), 200);
    expect(renamed).toMatchObject({ name: "Oracle 2", description: "New", headers: HEADERS, cardUrl: a.cardUrl });
    expectError(await call(path, { ...auth, method: "PATCH", body: { cardUrl: `${testServer("a2a")}/invalid-card.json` } }), 422, "invalid_agent_card");
    expect(expectStatus(await call(path, auth), 200).card.name).toBe("Warranty oracle");
    const moved = expectStatus(await call(path, { ...auth, method: "PATCH", body: { cardUrl: `${testServer("a2a")}/v03/.well-known/agent-card.json` } }), 200);
    expect(moved.card.name).toBe("Legacy oracle");
    const cleared = expectStatus(await call(path, { ...auth, method: "PATCH", body: { headers: null, metadata: "plain text note" } }), 200);
    expect(cleared).toMatchObject({ headers: null, metadata: "plain text note" });
    const newHeaders = JSON.stringify({ "X-Token": "t-999" });
    expect(expectStatus(await call(path, { ...auth, method: "PATCH", body: { headers: newHeaders } }), 200).headers).toBe(newHeaders);
    const row = (await env.DB.prepare("SELECT headers_enc, metadata_enc FROM a2a_agents WHERE id = ?").bind(a.id).first<Record<string, string>>())!;
    expect(JSON.stringify(row)).not.toContain("t-999");
    expect(JSON.stringify(row)).not.toContain("plain text note");
    expect((await call(path, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(path, auth), 404, "not_found");
    expectError(await call(path, { ...auth, method: "DELETE" }), 404);
  });

  it("tenancy: other organizations, other tenants' keys, other knowledge bases, missing scopes and viewers are refused", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const a = expectStatus(await register(auth, kb.id, { headers: HEADERS }), 201);
    const path = `/knowledge-bases/${kb.id}/a2a-agents/${a.id}`;

    // Another organization: 404 everywhere, nothing revealed.
    const other = await createOrg();
    expectError(await call(path, { cookie: other.owner.cookie }), 404);
    expectError(await call(`/knowledge-bases/${kb.id}/a2a-agents`, { cookie: other.owner.cookie }), 404);
    expectError(await call(path, { cookie: other.owner.cookie, method: "PATCH", body: { name: "x" } }), 404);
    expectError(await call(path, { cookie: other.owner.cookie, method: "DELETE" }), 404);
    const otherKey = await createKey(other, { scopes: ["documents:read", "documents:write", "documents:delete"] });
    expectError(await call(path, { key: otherKey.key }), 404);

    // Another knowledge base of the same organization: the registration is not found through it.
    const kb2 = await createKb(org);
    expectError(await call(`/knowledge-bases/${kb2.id}/a2a-agents/${a.id}`, auth), 404);
    expectError(await call(`/knowledge-bases/${kb2.id}/a2a-agents/${a.id}`, { ...auth, method: "DELETE" }), 404);

    // A key limited to another tenant, or to another knowledge base: 404.
    const t2 = await createTenant(org);
    const tenantKey = await createKey(org, { scopes: ["documents:read"], tenant_ids: [t2.id] });
    expectError(await call(path, { key: tenantKey.key }), 404);
    const kbKey = await createKey(org, { scopes: ["documents:read"], knowledge_base_id: kb2.id });
    expectError(await call(path, { key: kbKey.key }), 404);

    // Scopes: read needs documents:read, write documents:write, delete documents:delete.
    const noScope = await createKey(org, { scopes: ["query:rag"] });
    expectError(await call(path, { key: noScope.key }), 403);
    const readOnly = await createKey(org, { scopes: ["documents:read"] });
    expectError(await register({ key: readOnly.key }, kb.id), 403);
    expectError(await call(path, { key: readOnly.key, method: "PATCH", body: { name: "x" } }), 403);
    expectError(await call(path, { key: readOnly.key, method: "DELETE" }), 403);
    const writer = await createKey(org, { scopes: ["documents:write"] });
    expectError(await call(path, { key: writer.key, method: "DELETE" }), 403);
    expectStatus(await register({ key: writer.key }, kb.id, { name: "By key" }), 201);

    // Roles: viewers read but do not write.
    const viewer = await addMember(org, "viewer");
    expectError(await register({ cookie: viewer.cookie }, kb.id), 403);
    expectError(await call(path, { cookie: viewer.cookie, method: "DELETE" }), 403);
    const dev = await addMember(org, "developer");
    expectStatus(await call(path, { cookie: dev.cookie, method: "PATCH", body: { name: "By developer" } }), 200);

    // Anonymous: 401 with the bearer scheme named.
    const anon = await call(path);
    expectError(anon, 401);
    expect(anon.headers.get("WWW-Authenticate")).toMatch(/^Bearer/);

    // Deleting the knowledge base removes its registrations.
    expect((await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM a2a_agents WHERE knowledge_base_id = ?").bind(kb.id).first("n")).toBe(0);
  });
});
