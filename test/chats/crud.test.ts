import { describe, expect, it } from "vitest";
import { addMember, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus } from "../helpers";
import { newChat } from "./chat-helpers";

const base = (kb: { id: string; tenant_id: string }) => ({ tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" });

describe("chat resources", () => {
  it("creates an empty private chat; validates id, model, tenant and knowledge base", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const id = crypto.randomUUID();
    const r = expectStatus(await call("/chats", { ...auth, body: { id, ...base(kb), title: "x".repeat(300) } }), 201);
    expect(Object.keys(r)).toEqual(["chat"]);
    expect(r.chat).toMatchObject({ id, access_level: "private", message_count: 0, agent_mode: "deep", is_query: false });
    expect(r.chat.title).toHaveLength(255);
    expectError(await call("/chats", { ...auth, body: { id, ...base(kb) } }), 409);
    expectError(await call("/chats", { ...auth, body: { id: "not-a-uuid", ...base(kb) } }), 400);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), model: "gpt-99" } }), 400);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), agent_mode: "turbo" } }), 400);
    const other = await createTenant(org);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), tenant_id: other.id } }), 400, "tenant_mismatch");
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), knowledge_base_id: "kb_nope" } }), 404);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), message: "x".repeat(32_001) } }), 400);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), attached_artifact_ids: Array(21).fill("a") } }), 400);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), images: ["a", "b", "c"] } }), 400);
    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), ...base(kb), images: ["data:text/html;base64,PGI+"] } }), 400);
    // Connected apps, skills and delegates are checked before the chat is created, with or without a first
    // message, and a refused request leaves no chat behind.
    for (const message of [undefined, "hi"]) {
      const id = crypto.randomUUID();
      expectError(await call("/chats", { ...auth, body: { id, ...base(kb), connector_slugs: ["gmail"], message } }), 400, "connector_not_connected");
      expectError(await call("/chats", { ...auth, body: { id, ...base(kb), skill_ids: ["sk_nope"], message } }), 400);
      expectError(await call("/chats", { ...auth, body: { id, ...base(kb), delegate_agent_ids: ["agt_nope"], message } }), 400);
      expectError(await call(`/chats/${id}/messages`, auth), 404);
    }
  });

  it("refuses new chats on an inactive knowledge base (409)", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    expectStatus(await call(`/knowledge-bases/${kb.id}`, { cookie: org.owner.cookie, method: "PATCH", body: { status: "inactive" } }), 200);
    expectError(await call("/chats", { cookie: org.owner.cookie, body: { id: crypto.randomUUID(), ...base(kb) } }), 409, "knowledge_base_inactive");
  });

  it("renames (truncating to 255), sets access with a share URL, deletes messages and chats", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const r = await newChat(auth, kb, { message: "hello there, anything about refunds?", agent_mode: "quick" });
    const chatId = r.chat.id;
    const renamed = expectStatus(await call(`/chats/${chatId}`, { ...auth, method: "PATCH", body: { title: "y".repeat(400) } }), 200);
    expect(renamed.title).toHaveLength(255);
    const pub = expectStatus(await call(`/chats/${chatId}/access`, { ...auth, method: "PATCH", body: { access_level: "public" } }), 200);
    expect(pub).toEqual({ access_level: "public", share_url: `http://localhost:8787/share/${chatId}` });
    const priv = expectStatus(await call(`/chats/${chatId}/access`, { ...auth, method: "PATCH", body: { access_level: "private" } }), 200);
    expect(priv.share_url).toBeNull();
    expectError(await call(`/chats/${chatId}/access`, { ...auth, method: "PATCH", body: { access_level: "everyone" } }), 400);

    const other = await newChat(auth, kb, { message: "second chat", agent_mode: "quick" });
    expectError(await call(`/chats/${chatId}/messages/${other.user_message.id}`, { ...auth, method: "DELETE" }), 404);
    expect((await call(`/chats/${chatId}/messages/${r.user_message.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const left = expectStatus(await call(`/chats/${chatId}/messages`, auth), 200);
    expect(left.messages.map((m: any) => m.id)).toEqual([r.assistant_message.id]);
    expect((await call(`/chats/${chatId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/chats/${chatId}/messages`, auth), 404);
  });

  it("pages messages (1 to 200)", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const { chat } = await newChat(auth, kb);
    for (const q of ["first", "second", "third"]) {
      expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: q, model: "local-extractive", agent_mode: "quick" } }), 200);
    }
    const page = expectStatus(await call(`/chats/${chat.id}/messages?limit=2&offset=1`, auth), 200);
    expect(page).toMatchObject({ total: 6, limit: 2, offset: 1 });
    expect(page.messages.map((m: any) => m.role)).toEqual(["assistant", "user"]);
    for (const q of ["limit=0", "limit=201", "offset=-1", "limit=abc"]) expectError(await call(`/chats/${chat.id}/messages?${q}`, auth), 400);
    expectStatus(await call(`/chats/${chat.id}/messages?limit=200`, auth), 200);
  });

  it("terminates a session: messages stay, later turns get 409 chat_terminated", async () => {
    const org = await createOrg();
    const auth = { cookie: org.owner.cookie };
    const kb = await createKb(org);
    const r = await newChat(auth, kb, { message: "hello", agent_mode: "quick" });
    expectError(await call(`/chats/${r.chat.id}/terminate`, { ...auth, body: { termination_reason: "x".repeat(501) } }), 400);
    const t = expectStatus(await call(`/chats/${r.chat.id}/terminate`, { ...auth, body: { termination_reason: "done" } }), 200);
    expect(t.terminated_at).toBeTruthy();
    expect(t.termination_reason).toBe("done");
    expectError(await call(`/chats/${r.chat.id}/messages`, { ...auth, body: { content: "again", model: "local-extractive" } }), 409, "chat_terminated");
    expectError(await call(`/chats/${r.chat.id}/messages/stream`, { ...auth, body: { content: "again", model: "local-extractive" } }), 409, "chat_terminated");
    expect(expectStatus(await call(`/chats/${r.chat.id}/messages`, auth), 200).total).toBe(2);
    // Without a body too.
    const r2 = await newChat(auth, kb);
    expectStatus(await call(`/chats/${r2.chat.id}/terminate`, { ...auth, method: "POST" }), 200);
  });

  it("stop answers false when nothing runs; todo is null before deep mode runs", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const { chat } = await newChat({ cookie: org.owner.cookie }, kb);
    expect(expectStatus(await call(`/chats/${chat.id}/stop`, { cookie: org.owner.cookie, method: "POST" }), 200)).toEqual({ stopped: false });
    expect(expectStatus(await call(`/chats/${chat.id}/todo`, { cookie: org.owner.cookie }), 200)).toEqual({ todo: null });
  });

  it("lists the models with availability and prices", async () => {
    const org = await createOrg();
    const r = expectStatus(await call("/chats/models", { cookie: org.owner.cookie }), 200);
    const local = r.models.find((m: any) => m.id === "local-extractive");
    expect(local).toMatchObject({ provider: "local", available: true, pricing: { input_per_1k: 1, output_per_1k: 1 } });
    expect(r.models.find((m: any) => m.id === "test-gpt")).toMatchObject({ provider: "openai", available: true });
  });
});

describe("chat ownership and tenancy", () => {
  it("a user's chats are theirs alone; other members and keys get 404", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const viewer = await addMember(org, "viewer");
    const mine = await newChat({ cookie: org.owner.cookie }, kb, { message: "hello", agent_mode: "quick" });
    // Viewers may chat (asking is reading) ...
    const theirs = await newChat({ cookie: viewer.cookie }, kb);
    // ... but never see someone else's chat.
    expectError(await call(`/chats/${mine.chat.id}/messages`, { cookie: viewer.cookie }), 404);
    expectError(await call(`/chats/${mine.chat.id}`, { cookie: viewer.cookie, method: "PATCH", body: { title: "x" } }), 404);
    expectError(await call(`/chats/${mine.chat.id}`, { cookie: viewer.cookie, method: "DELETE" }), 404);
    const list = expectStatus(await call(`/chats?tenant_id=${org.tenantId}`, { cookie: viewer.cookie }), 200);
    expect(list.chats.map((c: any) => c.id)).toEqual([theirs.chat.id]);
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    expectError(await call(`/chats/${mine.chat.id}/messages`, { key }), 404);
    const keyList = expectStatus(await call(`/chats?tenant_id=${org.tenantId}`, { key }), 200);
    expect(keyList.chats).toEqual([]);
  });

  it("external_subject_id isolates end users of an API-key integration", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const alice = await newChat({ key }, kb, { external_subject_id: "alice" });
    const bob = await newChat({ key }, kb, { external_subject_id: "bob" });
    const app = await newChat({ key }, kb);
    expectStatus(await call(`/chats/${alice.chat.id}/messages?external_subject_id=alice`, { key }), 200);
    expectError(await call(`/chats/${alice.chat.id}/messages?external_subject_id=bob`, { key }), 404);
    expectError(await call(`/chats/${alice.chat.id}/messages`, { key }), 404);
    expectError(await call(`/chats/${alice.chat.id}/messages`, { key, body: { content: "hi", model: "local-extractive", external_subject_id: "bob" } }), 404);
    expectStatus(await call(`/chats/${app.chat.id}/messages`, { key }), 200);
    const aliceList = expectStatus(await call(`/chats?tenant_id=${org.tenantId}&external_subject_id=alice`, { key }), 200);
    expect(aliceList.chats.map((c: any) => c.id)).toEqual([alice.chat.id]);
    const all = expectStatus(await call(`/chats?tenant_id=${org.tenantId}`, { key }), 200);
    expect(all.total).toBe(3);
    expect(bob.chat.external_subject_id).toBe("bob");
    // A signed-in user never sends external_subject_id.
    expectError(await call(`/chats?tenant_id=${org.tenantId}&external_subject_id=alice`, { cookie: org.owner.cookie }), 400);
    expectError(await call("/chats", { cookie: org.owner.cookie, body: { id: crypto.randomUUID(), ...base(kb), external_subject_id: "x" } }), 400);
  });

  it("keys: query:rag scope, tenant allowlist and knowledge-base restriction", async () => {
    const org = await createOrg();
    const other = await createTenant(org);
    const kbA = await createKb(org);
    const kbB = await createKb(org);
    const kbOther = await createKb(org, { tenant_id: other.id });
    const noScope = (await createKey(org, { scopes: ["documents:read"] })).key;
    expectError(await call("/chats", { key: noScope, body: { id: crypto.randomUUID(), ...base(kbA) } }), 403);
    const onlyDefault = (await createKey(org, { scopes: ["query:rag"], tenant_ids: [org.tenantId] })).key;
    expectError(await call("/chats", { key: onlyDefault, body: { id: crypto.randomUUID(), ...base(kbOther) } }), 403);
    expectError(await call(`/chats?tenant_id=${other.id}`, { key: onlyDefault }), 403);
    const otherChat = await newChat({ key: (await createKey(org, { scopes: ["query:rag"] })).key }, kbOther);
    expectError(await call(`/chats/${otherChat.chat.id}/messages`, { key: onlyDefault }), 404);

    const restricted = (await createKey(org, { scopes: ["query:rag"], knowledge_base_id: kbA.id })).key;
    await newChat({ key: restricted }, kbA);
    expectError(await call("/chats", { key: restricted, body: { id: crypto.randomUUID(), ...base(kbB) } }), 403);
    expectError(await call(`/chats?tenant_id=${org.tenantId}`, { key: restricted }), 400);
    expectStatus(await call(`/chats?tenant_id=${org.tenantId}&knowledge_base_id=${kbA.id}`, { key: restricted }), 200);
    expectError(await call(`/chats?tenant_id=${org.tenantId}&knowledge_base_id=${kbB.id}`, { key: restricted }), 403);

    // Another organization's knowledge base is invisible.
    const stranger = await createOrg();
    const foreign = await createKb(stranger);
    expectError(await call("/chats", { cookie: org.owner.cookie, body: { id: crypto.randomUUID(), ...base(foreign) } }), 404);
  });
});
