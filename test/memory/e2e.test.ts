import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { parseSse, streamMessage } from "../chats/chat-helpers";
import { call, createKey, createOrg, expectStatus, type Auth } from "../helpers";
import { db, memoryKb, setMemorySettings } from "./memory-helpers";

/** Memory through the chat API and the toolbox loop (POST /chats, streams, shared transcripts). */

async function ask(auth: Auth, kb: { id: string; tenant_id: string }, message: string, extra: Record<string, unknown> = {}) {
  const r = await call("/chats", {
    ...auth,
    body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", agent_mode: "quick", message, ...extra },
  });
  return expectStatus(r, 201);
}

describe("memory end to end", () => {
  it("remembered in one chat, answered in a new one for the same end user only (offline)", async () => {
    const org = await createOrg();
    await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
    const kb = await memoryKb(org, "subject");
    const { key } = await createKey(org, { scopes: ["query:rag", "documents:read"] });

    const first = await ask({ key }, kb, "Remember that my project code is ZEBRA-42", { external_subject_id: "alice" });
    expect(first.assistant_message.content).toContain("ZEBRA-42");
    const [stored] = await db().all<{ id: string; subject_id: string; source_chat_id: string; source_message_id: string }>(
      sql`SELECT id, subject_id, source_chat_id, source_message_id FROM memories WHERE tenant_id = ${org.tenantId}`,
    );
    expect(stored).toMatchObject({ subject_id: "ext:alice", source_chat_id: first.chat.id, source_message_id: first.user_message.id });

    const again = await ask({ key }, kb, "What is my project code?", { external_subject_id: "alice" });
    expect(again.assistant_message.content).toContain("ZEBRA-42");
    expect(again.assistant_message.metadata.memoryUsed).toBe(true);
    expect(again.assistant_message.metadata.memory_ids).toEqual([stored.id]);
    const source = again.assistant_message.metadata.sources.find((s: any) => s.memory_id === stored.id);
    expect(source).toMatchObject({ document_id: null, filename: "Memory", chunk_id: null });

    const bob = await ask({ key }, kb, "What is my project code?", { external_subject_id: "bob" });
    expect(bob.assistant_message.content).not.toContain("ZEBRA-42");
    expect(bob.assistant_message.metadata.memoryUsed).toBe(false);
    expect(bob.assistant_message.metadata.memory_ids).toBeUndefined();
    expect(JSON.stringify(bob)).not.toContain("ZEBRA-42");
    // A key call without a subject is yet another subject.
    const anonymous = await ask({ key }, kb, "What is my project code?");
    expect(anonymous.assistant_message.metadata.memoryUsed).toBe(false);

    // Listed under the tenant for the admin, by subject.
    const list = expectStatus(await call(`/tenants/${org.tenantId}/memories?external_subject_id=alice`, { cookie: org.owner.cookie }), 200);
    expect(list.memories.map((m: any) => m.content)).toEqual(["My project code is ZEBRA-42."]);
  });

  it("streams announce writes as agent_thought; signed-in users are their own subject; shared transcripts keep only memoryUsed", async () => {
    const org = await createOrg();
    await setMemorySettings(org, { mode: "durable", retention: "automatic" });
    const kb = await memoryKb(org, "subject");
    const auth = { cookie: org.owner.cookie };
    const chat = await ask(auth, kb, "Hello");
    const res = await streamMessage(chat.chat.id, { content: "I work at Acme Corp. Remember that my badge is 77.", model: "local-extractive", agent_mode: "quick" }, auth);
    const events = parseSse(await res.text());
    const thoughts = events.filter((e) => e.data.type === "agent_thought").map((e) => e.data.content);
    expect(thoughts).toContain("Remembered: My badge is 77.");
    expect(thoughts).toContain("Remembered: I work at Acme Corp.");
    const rows = await db().all<{ subject_id: string; content: string }>(sql`SELECT subject_id, content FROM memories WHERE tenant_id = ${org.tenantId} ORDER BY seq`);
    expect(rows).toEqual([
      { subject_id: `user:${org.owner.id}`, content: "My badge is 77." },
      { subject_id: `user:${org.owner.id}`, content: "I work at Acme Corp." },
    ]);

    const q = await ask(auth, kb, "Where do I work?");
    expect(q.assistant_message.content).toContain("Acme Corp");
    expect(q.assistant_message.metadata.memory_ids.length).toBeGreaterThan(0);
    expectStatus(await call(`/chats/${q.chat.id}/access`, { ...auth, method: "PATCH", body: { access_level: "public" } }), 200);
    const shared = expectStatus(await call(`/shared-chats/${q.chat.id}`, {}), 200);
    const md = shared.messages.find((m: any) => m.role === "assistant").metadata;
    expect(md.memoryUsed).toBe(true);
    expect(md.memory_ids).toBeUndefined();
  });

  it("automatic retention with a provider model: one extraction call per turn through the loop, metered as memory", async () => {
    const org = await createOrg();
    await setMemorySettings(org, { mode: "durable", retention: "automatic" });
    const kb = await memoryKb(org, "subject");
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const r = await ask({ key }, kb, "My favourite framework is Hono. I prefer terse answers.", { model: "test-gpt", external_subject_id: "carol" });
    const logs = await db().all<{ operation: string; model: string; chat_id: string; message_id: string; api_key_id: string | null }>(
      sql`SELECT operation, model, chat_id, message_id, api_key_id FROM usage_logs WHERE tenant_id = ${org.tenantId} AND operation = 'memory'`,
    );
    expect(logs).toEqual([{ operation: "memory", model: "test-gpt", chat_id: r.chat.id, message_id: r.assistant_message.id, api_key_id: expect.any(String) }]);
    const rows = await db().all<{ subject_id: string; content: string; kind: string }>(sql`SELECT subject_id, content, kind FROM memories WHERE tenant_id = ${org.tenantId} ORDER BY seq`);
    expect(rows).toEqual([
      { subject_id: "ext:carol", content: "My favourite framework is Hono.", kind: "fact" },
      { subject_id: "ext:carol", content: "I prefer terse answers.", kind: "preference" },
    ]);
    // The usage summary counts the memory call with the turn's.
    const usage = expectStatus(await call(`/billing/tenants/${org.tenantId}/usage/logs?limit=50`, { cookie: org.owner.cookie }), 200);
    expect(usage.logs.map((l: any) => l.operation).sort()).toEqual(["chat", "memory"]);
  });
});
