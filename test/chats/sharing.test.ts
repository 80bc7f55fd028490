import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { addMember, call, createKb, createKey, createOrg, expectError, expectStatus, fetchWorker, signup } from "../helpers";
import { kbWithDocument, newChat } from "./chat-helpers";

async function setAccess(auth: any, chatId: string, access_level: string) {
  return expectStatus(await call(`/chats/${chatId}/access`, { ...auth, method: "PATCH", body: { access_level } }), 200);
}

describe("shared chats", () => {
  it("private: 404 for everyone (even the owner); org: members only; public: anyone", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const member = await addMember(org, "viewer");
    const outsider = await signup();
    const r = await newChat(auth, kb, { message: "How are refunds paid?", agent_mode: "quick" });
    const id = r.chat.id;
    for (const who of [{}, auth, { cookie: member.cookie }]) expectError(await call(`/shared-chats/${id}`, who), 404);

    await setAccess(auth, id, "org");
    expectStatus(await call(`/shared-chats/${id}`, { cookie: member.cookie }), 200);
    expectError(await call(`/shared-chats/${id}`), 404);
    expectError(await call(`/shared-chats/${id}`, { cookie: outsider.cookie }), 404);
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    expectError(await call(`/shared-chats/${id}`, { key }), 404);

    await setAccess(auth, id, "public");
    const t = expectStatus(await call(`/shared-chats/${id}`), 200);
    expect(t.chat).toEqual({
      id,
      title: r.chat.title,
      knowledgeBaseId: kb.id,
      knowledgeBaseName: kb.name,
      accessLevel: "public",
      transcriptTruncated: false,
    });
    expect(t.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    // Sanitized: no usage, credits, tokens, model or status; only the allowed metadata keys.
    expect(t.messages[0].metadata).toBeUndefined();
    expect(Object.keys(t.messages[1].metadata).sort()).toEqual(["memoryUsed", "sources"]);
    expect(JSON.stringify(t)).not.toMatch(/credits|usage|tokens|"model"|"status"/);
    expectError(await call(`/shared-chats/00000000-0000-4000-8000-000000000000`), 404);
  });

  it("returns at most the 200 most recent messages and says when older ones are left out", async () => {
    const org = await createOrg();
    const kb = await createKb(org);
    const auth = { cookie: org.owner.cookie };
    const { chat } = await newChat(auth, kb);
    const stmts = [];
    for (let i = 1; i <= 205; i++) {
      stmts.push(
        env.DB.prepare("INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at) VALUES (?, ?, ?, ?, ?, 'complete', '{}', ?)").bind(
          `msg_seed${i}`,
          chat.id,
          i,
          i % 2 ? "user" : "assistant",
          `message ${i}`,
          new Date(Date.now() + i).toISOString(),
        ),
      );
    }
    await env.DB.batch(stmts);
    await setAccess(auth, chat.id, "public");
    const t = expectStatus(await call(`/shared-chats/${chat.id}`), 200);
    expect(t.messages).toHaveLength(200);
    expect(t.chat.transcriptTruncated).toBe(true);
    expect(t.messages[0].content).toBe("message 6");
    expect(t.messages[199].content).toBe("message 205");
  });

  it("forks a readable shared chat into a new private chat seeded with up to 120 messages", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const src = await newChat(auth, kb, { message: "How are refunds paid?", agent_mode: "quick" });
    const reader = await addMember(org, "developer");
    const fork = (who: any, extra: Record<string, unknown> = {}) =>
      call("/chats", {
        ...who,
        body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", shared_source_chat_id: src.chat.id, ...extra },
      });
    expectError(await fork({ cookie: reader.cookie }), 404); // private source
    await setAccess(auth, src.chat.id, "org");
    const f = expectStatus(await fork({ cookie: reader.cookie }), 201);
    expect(f.chat).toMatchObject({ access_level: "private", shared_source_chat_id: src.chat.id, message_count: 2 });
    const seeded = expectStatus(await call(`/chats/${f.chat.id}/messages`, { cookie: reader.cookie }), 200);
    expect(seeded.messages.map((m: any) => m.content)).toEqual([src.user_message.content, src.assistant_message.content]);
    expect(seeded.messages[1].metadata.usage).toBeNull();
    // The fork continues on its own; the source is unchanged.
    const cont = expectStatus(await call(`/chats/${f.chat.id}/messages`, { cookie: reader.cookie, body: { content: "And shipping?", model: "local-extractive", agent_mode: "quick" } }), 200);
    expect(cont.assistant_message.content.length).toBeGreaterThan(0);
    expect(expectStatus(await call(`/chats/${src.chat.id}/messages`, auth), 200).total).toBe(2);

    // At most 120 seeded messages.
    const many = await newChat(auth, kb);
    const stmts = [];
    for (let i = 1; i <= 130; i++) {
      stmts.push(
        env.DB.prepare("INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at) VALUES (?, ?, ?, ?, ?, 'complete', '{}', ?)").bind(
          `msg_many${i}`,
          many.chat.id,
          i,
          i % 2 ? "user" : "assistant",
          `m${i}`,
          new Date().toISOString(),
        ),
      );
    }
    await env.DB.batch(stmts);
    await setAccess(auth, many.chat.id, "public");
    const outsider = await signup();
    const outsiderOrg = expectStatus(await call("/organizations", { cookie: outsider.cookie, body: { name: "o", slug: `o-${Date.now()}` } }), 201);
    const okb = expectStatus(await call("/knowledge-bases", { cookie: outsider.cookie, body: { tenant_id: outsiderOrg.default_tenant_id, name: "mine" } }), 201);
    const f2 = expectStatus(
      await call("/chats", {
        cookie: outsider.cookie,
        body: { id: crypto.randomUUID(), tenant_id: okb.tenant_id, knowledge_base_id: okb.id, model: "local-extractive", shared_source_chat_id: many.chat.id },
      }),
      201,
    );
    expect(f2.chat.message_count).toBe(120);
  });

  it("serves the share URL as a read-only HTML page with escaped content", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "<script>alert(1)</script> How are refunds paid?", agent_mode: "quick" });
    const share = await setAccess(auth, r.chat.id, "public");
    const page = await fetchWorker(new URL(share.share_url).pathname);
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/text\/html/);
    expect(page.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;");
    expect(html).toContain("handbook.md");
    await setAccess(auth, r.chat.id, "private");
    expect((await fetchWorker(new URL(share.share_url).pathname)).status).toBe(404);
  });
});
