import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createKey, createTenant, expectError, expectStatus, unique } from "../helpers";
import { HANDBOOK, kbWithDocument, newChat, upstreamRequests } from "./chat-helpers";

describe("grounded answers", () => {
  it("creates a chat with a first message and answers it with local-extractive, citing the document", async () => {
    const { kb, auth, documentId } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "How many days do customers have to request a refund?", agent_mode: "quick" });
    expect(r.chat).toMatchObject({ knowledge_base_id: kb.id, model: "local-extractive", access_level: "private", message_count: 2 });
    expect(r.user_message).toMatchObject({ role: "user", content: "How many days do customers have to request a refund?" });
    const a = r.assistant_message;
    expect(a.role).toBe("assistant");
    expect(a.content).toMatch(/30 days of purchase \[\d+\]/);
    expect(a.metadata.status).toBe("complete");
    const cited = [...a.content.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    for (const n of cited) {
      const src = a.metadata.sources.find((s: any) => s.index === n);
      expect(src, `citation [${n}]`).toBeTruthy();
      expect(src.document_id).toBe(documentId);
      expect(src.filename).toBe("handbook.md");
    }
    expect(r.usage.credits).toBeGreaterThan(0);
    expect(r.usage.total_tokens).toBe(r.usage.input_tokens + r.usage.output_tokens);
    // Charged once, with a usage record that points at the turn.
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs.logs).toHaveLength(1);
    expect(logs.logs[0]).toMatchObject({ operation: "chat", chat_id: r.chat.id, message_id: a.id, model: "local-extractive", credits_used: r.usage.credits });
    const credits = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/credits`, auth), 200);
    expect(credits.credits_used).toBe(r.usage.credits);
  });

  it("answers follow-up messages as JSON and keeps the conversation", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const r = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: "When is the support desk open?", model: "local-extractive", agent_mode: "quick" } }), 200);
    expect(r.assistant_message.content).toMatch(/Monday to Friday/);
    expect(Object.keys(r).sort()).toEqual(["assistant_message", "usage", "user_message"]);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(msgs.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect(msgs.chat.id).toBe(chat.id);
  });

  it("says so when the knowledge base does not cover the question", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "What is the boiling point of tungsten?", agent_mode: "quick" });
    expect(r.assistant_message.content).toMatch(/could not find/i);
  });

  it("uses a provider model through the OpenAI-compatible API, with the sources in the prompt", async () => {
    const { kb, auth } = await kbWithDocument();
    const nonce = unique("nonce");
    const r = await newChat(auth, kb, { message: `What does the refund policy say? ${nonce}`, model: "test-gpt", agent_mode: "quick" });
    expect(r.assistant_message.content).toContain("[1]");
    expect(r.assistant_message.metadata.model).toBe("test-gpt");
    expect(r.assistant_message.metadata.sources.length).toBeGreaterThan(0);
    expect(await upstreamRequests(nonce)).toBe(1);
    // Prices come from the registry: 1 credit / 1k input, 2 / 1k output for test-gpt.
    const u = r.usage;
    expect(u.credits).toBeCloseTo(u.input_tokens / 1000 + (2 * u.output_tokens) / 1000, 5);
  });

  it("refuses a turn with 402 before any model call when the tenant has no credits", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const poor = await createTenant(org, { credits_pool: 0 });
    const poorKb = expectStatus(await call("/knowledge-bases", { ...auth, body: { tenant_id: poor.id, name: "poor" } }), 201);
    const nonce = unique("nonce");
    const r = await call("/chats", {
      ...auth,
      body: { id: crypto.randomUUID(), tenant_id: poor.id, knowledge_base_id: poorKb.id, model: "test-gpt", message: `hello ${nonce}` },
    });
    expectError(r, 402, "insufficient_credits");
    expect(await upstreamRequests(nonce)).toBe(0);
    // An empty chat needs no credits; its first turn does.
    const empty = expectStatus(
      await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: poor.id, knowledge_base_id: poorKb.id, model: "test-gpt" } }),
      201,
    );
    expectError(await call(`/chats/${empty.chat.id}/messages`, { ...auth, body: { content: `hi ${nonce}`, model: "test-gpt" } }), 402);
    expect(await upstreamRequests(nonce)).toBe(0);
    expect(kb.id).toBeTruthy();
  });

  it("deep mode plans, keeps a todo list and searches each part of the question", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "How long do refunds take? And when is the support desk open?", agent_mode: "deep" });
    const a = r.assistant_message.content;
    expect(a).toMatch(/5 business days/);
    expect(a).toMatch(/Monday to Friday/);
    const { todo } = expectStatus(await call(`/chats/${r.chat.id}/todo`, auth), 200);
    expect(todo.items.map((i: any) => i.content)).toEqual([
      "Search the knowledge base: How long do refunds take",
      "Search the knowledge base: When is the support desk open",
      "Write the answer with citations",
    ]);
    expect(todo.items.every((i: any) => i.status === "completed")).toBe(true);
  });

  it("charges API-key turns to the key", async () => {
    const { org, kb } = await kbWithDocument();
    const { key, id } = await createKey(org, { scopes: ["query:rag", "tenants:read"] });
    const r = await newChat({ key }, kb, { message: "How much is express shipping?", agent_mode: "quick", external_subject_id: "end-user-1" });
    expect(r.assistant_message.content).toMatch(/15 euros/);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs?is_api_key=true`, { key }), 200);
    expect(logs.logs[0]).toMatchObject({ api_key_id: id, is_api_key: true, chat_id: r.chat.id });
    expect(HANDBOOK).toBeTruthy();
    expect(env.DB).toBeTruthy();
  });
});
