import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { kbWithDocument, newChat, readSse } from "../chats/chat-helpers";
import {
  addMember, API, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker, type ApiResponse, type TestOrg,
} from "../helpers";
import { asPage, mint, SITE, streamAsPage } from "./embed-helpers";

async function sha256Hex(s: string) {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s));
  return [...new Uint8Array(d)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

const QUESTION = { content: "How many days do customers have to request a refund?", model: "local-extractive", agent_mode: "quick" };

describe("minting embed tokens: POST /embed/tokens", () => {
  let org: TestOrg;
  let kb: { id: string; tenant_id: string };

  beforeAll(async () => {
    org = await createOrg();
    kb = await createKb(org);
  });

  it("a key with query:rag mints a kbe_ token bound to the knowledge base, 15 minutes by default", async () => {
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const before = Date.now();
    const t = await mint({ key }, kb, { external_subject_id: "visitor-1", allowed_origins: ["HTTPS://Shop.Example.COM:443", "http://localhost:3000"] });
    expect(t.token).toMatch(/^kbe_[A-Za-z0-9_-]{40,}$/);
    const ttl = Date.parse(t.expires_at) - before;
    expect(ttl).toBeGreaterThan(895_000);
    expect(ttl).toBeLessThan(905_000);
    expect(t).toMatchObject({ tenant_id: kb.tenant_id, knowledge_base_id: kb.id, external_subject_id: "visitor-1" });
    // Origins are stored as browsers send them.
    expect(t.allowed_origins).toEqual(["https://shop.example.com", "http://localhost:3000"]);
  });

  it("is stored only as a hash: no column holds the token, and lists never show it", async () => {
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const t = await mint({ key }, kb);
    const row = await env.DB.prepare("SELECT * FROM embed_tokens WHERE id = ?").bind(t.id).first<Record<string, unknown>>();
    expect(row).toBeTruthy();
    expect(row!.token_hash).toBe(await sha256Hex(t.token));
    expect(JSON.stringify(row)).not.toContain(t.token.slice(4));
    expect(row!.prefix).toBe(t.token.slice(0, 12));
  });

  it("refuses a key without query:rag (403), and a key of another tenant or knowledge base (403), or organization (404)", async () => {
    const noScope = await createKey(org, { scopes: ["documents:read", "documents:write", "tenants:read"] });
    expectError(await call("/embed/tokens", { key: noScope.key, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] } }), 403, "forbidden");

    const otherTenant = await createTenant(org);
    const tenantKey = await createKey(org, { scopes: ["query:rag"], tenant_ids: [otherTenant.id] });
    expectError(await call("/embed/tokens", { key: tenantKey.key, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] } }), 403);

    const otherKb = await createKb(org);
    const kbKey = await createKey(org, { scopes: ["query:rag"], knowledge_base_id: otherKb.id });
    expectError(await call("/embed/tokens", { key: kbKey.key, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] } }), 403);
    // ...while its own knowledge base is fine.
    await mint({ key: kbKey.key }, otherKb);

    const stranger = await createOrg();
    const strangerKey = await createKey(stranger, { scopes: ["query:rag", "admin:full"] });
    for (const auth of [{ key: strangerKey.key }, { cookie: stranger.owner.cookie }]) {
      const r = await call("/embed/tokens", { ...auth, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] } });
      expectError(r, 404, "not_found");
      expect(JSON.stringify(r.body)).not.toContain(kb.id);
    }
    expectError(await call("/embed/tokens", { key: strangerKey.key, body: { tenant_id: kb.tenant_id, knowledge_base_id: "kb_missing", allowed_origins: [SITE] } }), 404);
  });

  it("user sessions: owners, billing admins and developers mint; viewers cannot (403)", async () => {
    await mint({ cookie: org.owner.cookie }, kb);
    for (const role of ["billing_admin", "developer"] as const) {
      const u = await addMember(org, role);
      const t = await mint({ cookie: u.cookie }, kb);
      expect(t.token).toMatch(/^kbe_/);
    }
    const viewer = await addMember(org, "viewer");
    expectError(await call("/embed/tokens", { cookie: viewer.cookie, body: { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] } }), 403);
  });

  it("validates tenant_id, ttl_seconds (60-3600), origins and the subject", async () => {
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const body = { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] };
    const otherTenant = await createTenant(org);
    expectError(await call("/embed/tokens", { key, body: { ...body, tenant_id: otherTenant.id } }), 400, "tenant_mismatch");

    for (const ttl of [59, 3601, 0, -5, 90.5, "900"]) {
      const e = expectError(await call("/embed/tokens", { key, body: { ...body, ttl_seconds: ttl } }), 400, "invalid_request");
      expect(e.details?.[0].path).toBe("body.ttl_seconds");
    }
    for (const ttl of [60, 3600]) {
      const t = await mint({ key }, kb, { ttl_seconds: ttl });
      expect(Math.abs(Date.parse(t.expires_at) - Date.now() - ttl * 1000)).toBeLessThan(5000);
    }

    const bad = [
      "https://shop.example.com/", "https://shop.example.com/path", "*", "https://*.example.com", "*.example.com", "shop.example.com",
      "ftp://shop.example.com", "https://user:pw@shop.example.com", "null", "", "https://shop.example.com?x=1", "https://shop.example.com#a",
      "javascript:alert(1)", "https://", "https://a b.com",
    ];
    for (const origin of bad) {
      const e = expectError(await call("/embed/tokens", { key, body: { ...body, allowed_origins: [SITE, origin] } }), 400, "invalid_request");
      expect(e.details?.map((d) => d.path), origin).toEqual(["body.allowed_origins.1"]);
    }
    expectError(await call("/embed/tokens", { key, body: { ...body, allowed_origins: [] } }), 400);
    expectError(await call("/embed/tokens", { key, body: { ...body, allowed_origins: Array.from({ length: 21 }, (_, i) => `https://s${i}.example.com`) } }), 400);
    const { allowed_origins: _o, ...noOrigins } = body;
    expectError(await call("/embed/tokens", { key, body: noOrigins }), 400);
    expectError(await call("/embed/tokens", { key, body: { ...body, external_subject_id: "embed:emb_x" } }), 400);
    expectError(await call("/embed/tokens", { key, body: { ...body, external_subject_id: "" } }), 400);
  });
});

describe("using an embed token", () => {
  let org: TestOrg;
  let kb: { id: string; tenant_id: string };
  let key: string;
  let keyId: string;

  beforeAll(async () => {
    ({ org, kb } = await kbWithDocument());
    ({ key, id: keyId } = await createKey(org, { scopes: ["query:rag"] }));
  });

  it("works on every chat route a widget needs, from an allowed origin, as its end user", async () => {
    const t = await mint({ key }, kb, { external_subject_id: "alice", allowed_origins: [SITE, "http://localhost:3000"] });
    const id = crypto.randomUUID();
    const created = expectStatus(
      await call("/chats", { ...asPage(t.token), body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } }),
      201,
    );
    expect(created.chat.external_subject_id).toBe("alice");

    const res = await streamAsPage(t.token, id, QUESTION, "http://localhost:3000");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeTruthy();
    const events = await readSse(res);
    const types = events.map((e) => e.data.type);
    expect(types).toContain("sources");
    expect(events.find((e) => e.data.type === "final_response" && e.data.isComplete)?.data.content).toMatch(/30 days/);
    expect(types.at(-1)).toBe("done");

    const sent = expectStatus(await call(`/chats/${id}/messages`, { ...asPage(t.token), body: { content: "And shipping?", model: "local-extractive" } }), 200);
    expect(sent.assistant_message.role).toBe("assistant");
    const listed = expectStatus(await call(`/chats/${id}/messages`, asPage(t.token)), 200);
    expect(listed.messages).toHaveLength(4);
    expect(listed.chat.external_subject_id).toBe("alice");
    expect(expectStatus(await call(`/chats/${id}/stop`, { ...asPage(t.token), method: "POST" }), 200)).toEqual({ stopped: false });
    const fu = expectStatus(await call("/chats/follow-up-questions", { ...asPage(t.token), body: { knowledge_base_id: kb.id, chat_id: id } }), 200);
    expect(fu.questions).toHaveLength(3);

    // A first message in the create call works too.
    const withMessage = expectStatus(
      await call("/chats", { ...asPage(t.token), body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: "Refunds?", agent_mode: "quick" } }),
      201,
    );
    expect(withMessage.assistant_message.content).toMatch(/refund/i);

    // Usage is logged against the token (api_key_id = its id).
    const usage = await env.DB.prepare("SELECT api_key_id, is_api_key FROM usage_logs WHERE chat_id = ?").bind(id).all<{ api_key_id: string; is_api_key: number }>();
    expect(usage.results.length).toBeGreaterThan(0);
    for (const u of usage.results) expect(u).toEqual({ api_key_id: t.id, is_api_key: 1 });

    // The application (the minting backend's key) sees the chat under that subject.
    expectStatus(await call(`/chats/${id}/messages?external_subject_id=alice`, { key }), 200);
    expectError(await call(`/chats/${id}/messages`, { key }), 404);
  });

  it("is refused (403) without an Origin, from an origin not on its list, and from an opaque origin", async () => {
    const t = await mint({ key }, kb);
    const id = crypto.randomUUID();
    const body = { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" };
    for (const origin of [null, "https://evil.example.com", "http://shop.example.com", "https://shop.example.com:8443", "null"]) {
      const e = expectError(await call("/chats", { ...asPage(t.token, origin), body }), 403, "forbidden");
      expect(e.message).toMatch(/origin/);
      expect((await streamAsPage(t.token, id, QUESTION, origin)).status).toBe(403);
    }
    // Nothing was created by the refused calls.
    expectStatus(await call("/chats", { ...asPage(t.token), body }), 201);
    expectError(await call(`/chats/${id}/messages`, asPage(t.token, "https://evil.example.com")), 403);
    // A same-origin GET carries no Origin; Sec-Fetch-Site stands for the service's own origin, which is not listed.
    expectError(await call(`/chats/${id}/messages`, asPage(t.token, null, { "Sec-Fetch-Site": "same-origin" })), 403);
    const own = await mint({ key }, kb, { allowed_origins: ["http://localhost:8787"] });
    const ownChat = crypto.randomUUID();
    expectStatus(await call("/chats", { ...asPage(own.token, "http://localhost:8787"), body: { ...body, id: ownChat } }), 201);
    expectError(await call(`/chats/${ownChat}/messages`, asPage(own.token, null)), 403);
    expectError(await call(`/chats/${ownChat}/messages`, asPage(own.token, null, { "Sec-Fetch-Site": "cross-site" })), 403);
    expectStatus(await call(`/chats/${ownChat}/messages`, asPage(own.token, null, { "Sec-Fetch-Site": "same-origin" })), 200);
  });

  it("is refused (403) on every other route, even from an allowed origin", async () => {
    const t = await mint({ key }, kb, { external_subject_id: "alice" });
    const chat = (await newChat({ key }, kb, { external_subject_id: "alice" })).chat;
    const probes: [string, string, unknown?][] = [
      ["GET", `/documents?kb_id=${kb.id}&tenant_id=${kb.tenant_id}`],
      ["GET", `/tenants/${kb.tenant_id}`],
      ["GET", `/tenants?environment_id=${org.envId}`],
      ["GET", `/knowledge-bases/${kb.id}`],
      ["GET", `/knowledge-bases?tenant_id=${kb.tenant_id}`],
      ["GET", "/me"],
      ["GET", "/chats/models"],
      ["GET", `/chats?tenant_id=${kb.tenant_id}&knowledge_base_id=${kb.id}`],
      ["PATCH", `/chats/${chat.id}`, { title: "x" }],
      ["PATCH", `/chats/${chat.id}/access`, { access_level: "public" }],
      ["DELETE", `/chats/${chat.id}`],
      ["POST", `/chats/${chat.id}/terminate`, {}],
      ["GET", `/chats/${chat.id}/todo`],
      ["DELETE", `/chats/${chat.id}/messages/x`],
      ["POST", "/chats/fast-query", { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, query: "refund", model: "local-extractive" }],
      ["POST", "/chats/fast-raw-query", { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, query: "refund" }],
      ["POST", "/chats/improve-prompt", { prompt: "refund" }],
      ["POST", "/embed/tokens", { tenant_id: kb.tenant_id, knowledge_base_id: kb.id, allowed_origins: [SITE] }],
      ["POST", "/documents/presign", { kb_id: kb.id, tenant_id: kb.tenant_id, filename: "a.md", mime_type: "text/markdown", size_bytes: 3 }],
      ["GET", `/billing/tenants/${kb.tenant_id}/credits`],
      ["GET", "/no-such-route"],
    ];
    for (const [method, path, body] of probes) {
      const r = await call(path, { ...asPage(t.token), method, body });
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(403);
      expect(JSON.stringify(r.body)).not.toContain("handbook.md");
    }
    // The chat is untouched.
    expect(expectStatus(await call(`/chats/${chat.id}/messages?external_subject_id=alice`, { key }), 200).chat.title).not.toBe("x");
  });

  it("reaches only its own knowledge base", async () => {
    const other = await createKb(org);
    const foreignChat = (await newChat({ key }, other, { external_subject_id: "alice" })).chat;
    const t = await mint({ key }, kb, { external_subject_id: "alice" });
    expectError(
      await call("/chats", { ...asPage(t.token), body: { id: crypto.randomUUID(), tenant_id: other.tenant_id, knowledge_base_id: other.id, model: "local-extractive" } }),
      403,
    );
    expectError(await call(`/chats/${foreignChat.id}/messages`, asPage(t.token)), 404);
    expect((await streamAsPage(t.token, foreignChat.id, QUESTION)).status).toBe(404);
  });

  it("forces its subject: tokens of different end users never see each other's chats", async () => {
    const alice = await mint({ key }, kb, { external_subject_id: "alice" });
    const bob = await mint({ key }, kb, { external_subject_id: "bob" });
    const anonA = await mint({ key }, kb);
    const anonB = await mint({ key }, kb);
    const create = async (token: string, extra: Record<string, unknown> = {}) => {
      const id = crypto.randomUUID();
      const r = await call("/chats", { ...asPage(token), body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", ...extra } });
      return { id, r };
    };
    const a = await create(alice.token);
    expectStatus(a.r, 201);
    // Bob cannot read, send to, stream into or stop Alice's chat, nor ask follow-ups about it: 404, as if it did not exist.
    expectError(await call(`/chats/${a.id}/messages`, asPage(bob.token)), 404);
    expectError(await call(`/chats/${a.id}/messages`, { ...asPage(bob.token), body: { content: "hi", model: "local-extractive" } }), 404);
    expect((await streamAsPage(bob.token, a.id, QUESTION)).status).toBe(404);
    expectError(await call(`/chats/${a.id}/stop`, { ...asPage(bob.token), method: "POST" }), 404);
    expectError(await call("/chats/follow-up-questions", { ...asPage(bob.token), body: { knowledge_base_id: kb.id, chat_id: a.id } }), 404);
    // Naming Alice does not help Bob: the subject is the token's (403).
    expectError(await call(`/chats/${a.id}/messages?external_subject_id=alice`, asPage(bob.token)), 403);
    expectError((await create(bob.token, { external_subject_id: "alice" })).r, 403);
    // Repeating its own subject is fine.
    expectStatus(await call(`/chats/${a.id}/messages?external_subject_id=alice`, asPage(alice.token)), 200);
    // A refreshed token for the same end user continues the conversation (the widget relies on it).
    const alice2 = await mint({ key }, kb, { external_subject_id: "alice" });
    expectStatus(await call(`/chats/${a.id}/messages`, asPage(alice2.token)), 200);

    // Tokens minted without a subject each have their own.
    const x = await create(anonA.token);
    expect(expectStatus(x.r, 201).chat.external_subject_id).toBe(`embed:${anonA.id}`);
    expectError(await call(`/chats/${x.id}/messages`, asPage(anonB.token)), 404);
    expectStatus(await call(`/chats/${x.id}/messages`, asPage(anonA.token)), 200);
    // ...and none of them sees a chat the backend made without a subject.
    const plain = (await newChat({ key }, kb)).chat;
    for (const t of [alice, bob, anonA, anonB]) expectError(await call(`/chats/${plain.id}/messages`, asPage(t.token)), 404);
  });

  it("stops working when it expires, when its key is revoked, or when its user leaves or is demoted", async () => {
    const chat = (await newChat({ key }, kb, { external_subject_id: "alice" })).chat;
    const read = (token: string) => call(`/chats/${chat.id}/messages`, asPage(token));

    const expiring = await mint({ key }, kb, { external_subject_id: "alice" });
    expectStatus(await read(expiring.token), 200);
    await env.DB.prepare("UPDATE embed_tokens SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), expiring.id).run();
    expect(expectError(await read(expiring.token), 401, "unauthorized").message).toMatch(/expired/);
    // The scheduled housekeeping drops tokens long expired, and only those.
    await env.DB.prepare("UPDATE embed_tokens SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 3 * 86_400_000).toISOString(), expiring.id).run();
    const ctx = createExecutionContext();
    await worker.scheduled({ cron: "*/5 * * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController, env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await env.DB.prepare("SELECT id FROM embed_tokens WHERE id = ?").bind(expiring.id).first()).toBeNull();

    const k2 = await createKey(org, { scopes: ["query:rag"] });
    const byKey = await mint({ key: k2.key }, kb, { external_subject_id: "alice" });
    expectStatus(await read(byKey.token), 200);
    expect((await call(`/api-keys/${k2.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await read(byKey.token), 401, "unauthorized");

    const dev = await addMember(org, "developer");
    const byDev = await mint({ cookie: dev.cookie }, kb, { external_subject_id: "alice" });
    expectStatus(await read(byDev.token), 200);
    expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: dev.id, role: "viewer" } }), 200);
    expectError(await read(byDev.token), 401);
    expectStatus(await call(`/organizations/${org.id}/members/role`, { cookie: org.owner.cookie, body: { user_id: dev.id, role: "developer" } }), 200);
    expectStatus(await read(byDev.token), 200);
    const members = expectStatus(await call(`/organizations/${org.id}/members`, { cookie: org.owner.cookie }), 200).members;
    const memberId = members.find((m: { user_id: string }) => m.user_id === dev.id).member_id;
    expect((await call(`/organizations/${org.id}/members/${memberId}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await read(byDev.token), 401);

    // Garbage and look-alikes are 401 too.
    for (const bad of ["kbe_", "kbe_nope", `kbe_${"a".repeat(300)}`, byKey.token.slice(0, -1)]) expectError(await read(bad), 401);
    expect(keyId).toBeTruthy();
  });

  it("answers CORS preflights for the widget's headers, and its responses carry CORS headers", async () => {
    const pre = await fetchWorker(`${API}/chats/x/messages/stream`, {
      method: "OPTIONS",
      headers: { Origin: SITE, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization,content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const allowed = (pre.headers.get("Access-Control-Allow-Headers") ?? "").toLowerCase();
    expect(allowed).toContain("authorization");
    expect(allowed).toContain("content-type");
    expect(pre.headers.get("Access-Control-Allow-Methods")).toContain("POST");
    const t = await mint({ key }, kb);
    const r = await call("/chats/none/messages", asPage(t.token));
    expect(r.headers.get("Access-Control-Allow-Origin")).toBe("*");
    // A refusal is readable by the page too (so the widget can say why).
    const refused = await call("/documents", asPage(t.token));
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });
});

describe("rate limits apply per embed token", () => {
  async function limitedCall(path: string, headers: Record<string, string>): Promise<ApiResponse> {
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request(`${API}${path}`, { headers }), { ...env, RATE_LIMITER: env.TEST_RATE_LIMITER } as any, ctx);
    await waitOnExecutionContext(ctx);
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null, res };
  }

  it("a token over its budget gets 429; another token of the same key, and the key itself, keep theirs", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const chat = (await newChat({ key }, kb, { external_subject_id: "alice" })).chat;
    const a = await mint({ key }, kb, { external_subject_id: "alice" });
    const b = await mint({ key }, kb, { external_subject_id: "alice" });
    const page = (token: string) => ({ Authorization: `Bearer ${token}`, Origin: SITE });
    for (let i = 0; i < 3; i++) expect((await limitedCall(`/chats/${chat.id}/messages`, page(a.token))).status).toBe(200);
    const refused = await limitedCall(`/chats/${chat.id}/messages`, page(a.token));
    expect(expectError(refused, 429, "rate_limited").message).toMatch(/embed token/);
    expect(refused.headers.get("Retry-After")).toBe("10");
    expect((await limitedCall(`/chats/${chat.id}/messages`, page(b.token))).status).toBe(200);
    expect((await limitedCall(`/chats/${chat.id}/messages?external_subject_id=alice`, { Authorization: `Bearer ${key}` })).status).toBe(200);
  });
});
