import { describe, expect, it } from "vitest";
import { call, createKey, expectError, expectStatus, unique } from "../helpers";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { kbWithDocument, newChat, upstreamRequests } from "./chat-helpers";

describe("fast queries and assistance", () => {
  it("fast-query answers in one pass and keeps the turn in a query chat", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = expectStatus(
      await call("/chats/fast-query", { ...auth, body: { knowledge_base_id: kb.id, content: "How much does express shipping cost?", model: "local-extractive", chunk_count: 3 } }),
      200,
    );
    expect(r.answer).toMatch(/15 euros/);
    expect(r.sources.length).toBeGreaterThan(0);
    expect(r.sources.length).toBeLessThanOrEqual(3);
    expect(r.usage.credits).toBeGreaterThan(0);
    const chats = expectStatus(await call(`/chats?tenant_id=${kb.tenant_id}&is_query=true`, auth), 200);
    expect(chats.chats.map((c: any) => c.id)).toEqual([r.chat_id]);
    expect(expectStatus(await call(`/chats?tenant_id=${kb.tenant_id}&is_query=false`, auth), 200).total).toBe(0);
    const again = expectStatus(
      await call("/chats/fast-query", { ...auth, body: { knowledge_base_id: kb.id, content: "When is support open?", model: "local-extractive", chat_id: r.chat_id } }),
      200,
    );
    expect(again.chat_id).toBe(r.chat_id);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs.logs.map((l: any) => l.operation)).toEqual(["fast_query", "fast_query"]);
    for (const chunk_count of [0, 51, 2.5]) {
      expectError(await call("/chats/fast-query", { ...auth, body: { knowledge_base_id: kb.id, content: "x", model: "local-extractive", chunk_count } }), 400);
    }
  });

  it("fast-raw-query and raw-query return chunks grouped by document, best first, without generating", async () => {
    const { kb, auth } = await kbWithDocument();
    const { id } = await uploadFile(auth, kb, {
      filename: "shipping-faq.md",
      mime: "text/markdown",
      body: "# Shipping FAQ\n\nExpress shipping is available to every country in the EU.\n\n## Returns\n\nReturned parcels are inspected within 3 days.",
    });
    await waitForDocument(auth, id);
    const r = expectStatus(await call("/chats/fast-raw-query", { ...auth, body: { knowledge_base_id: kb.id, content: "express shipping", chunk_count: 10 } }), 200);
    expect(r.query).toBe("express shipping");
    expect(r.results.length).toBe(2);
    const docIds = r.results.map((g: any) => g.document_id);
    expect(new Set(docIds).size).toBe(docIds.length);
    for (const g of r.results) {
      expect(g.filename).toBeTruthy();
      expect(g.chunks.length).toBeGreaterThan(0);
      for (const ch of g.chunks) expect(Object.keys(ch).sort()).toEqual(["chunk_id", "page", "score", "text"]);
    }
    const best = (g: any) => Math.max(...g.chunks.map((c: any) => c.score));
    expect(best(r.results[0])).toBeGreaterThanOrEqual(best(r.results[1]));
    const alias = expectStatus(await call("/chats/raw-query", { ...auth, body: { knowledge_base_id: kb.id, query: "express shipping" } }), 200);
    expect(alias.results.map((g: any) => g.document_id)).toEqual(docIds);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs.total).toBe(0);
    expectError(await call("/chats/fast-raw-query", { ...auth, body: { knowledge_base_id: kb.id } }), 400);
  });

  it("suggests three follow-up questions for a chat of that knowledge base", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "How are refunds paid?", agent_mode: "quick" });
    const f = expectStatus(await call("/chats/follow-up-questions", { ...auth, body: { knowledge_base_id: kb.id, chat_id: r.chat.id } }), 200);
    expect(f.questions).toHaveLength(3);
    for (const q of f.questions) expect(q).toMatch(/\?$/);
    const other = await kbWithDocument(org);
    expectError(await call("/chats/follow-up-questions", { ...auth, body: { knowledge_base_id: other.kb.id, chat_id: r.chat.id } }), 400);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs.logs.map((l: any) => l.operation)).toContain("follow_up");
  });

  it("improves a prompt per category, metered as improve_prompt", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = expectStatus(
      await call("/chats/improve-prompt", { ...auth, body: { knowledge_base_id: kb.id, query: "refunds?", category: "summary", model: "local-extractive" } }),
      200,
    );
    expect(r.improved_prompt).toContain(kb.name);
    expect(r.improved_prompt.length).toBeGreaterThan("refunds?".length);
    expect(r.techniques_applied.length).toBeGreaterThan(0);
    expect(typeof r.analysis).toBe("string");
    expect(r.usage.credits).toBeGreaterThan(0);
    const nonce = unique("nonce");
    const viaModel = expectStatus(await call("/chats/improve-prompt", { ...auth, body: { knowledge_base_id: kb.id, query: `refunds ${nonce}` } }), 200);
    expect(viaModel.improved_prompt.length).toBeGreaterThan(0);
    expect(await upstreamRequests(nonce)).toBe(1);
    expectError(await call("/chats/improve-prompt", { ...auth, body: { knowledge_base_id: kb.id, query: "x", category: "poetry" } }), 400);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs.logs.filter((l: any) => l.operation === "improve_prompt")).toHaveLength(2);
  });

  it("web search adds web sources when configured", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "What do people say about refunds?", agent_mode: "quick", websearch_enable: true });
    const web = r.assistant_message.metadata.sources.filter((s: any) => s.url);
    expect(web[0]).toMatchObject({ url: "https://example.org/web-result", document_id: null });
  });

  it("keys reach fast queries only within their knowledge base restriction", async () => {
    const { org, kb } = await kbWithDocument();
    const other = await kbWithDocument(org);
    const { key } = await createKey(org, { scopes: ["query:rag"], knowledge_base_id: kb.id });
    expectStatus(await call("/chats/fast-raw-query", { key, body: { knowledge_base_id: kb.id, content: "refund" } }), 200);
    expectError(await call("/chats/fast-raw-query", { key, body: { knowledge_base_id: other.kb.id, content: "refund" } }), 403);
    expectError(await call("/chats/fast-query", { key, body: { knowledge_base_id: other.kb.id, content: "refund", model: "local-extractive" } }), 403);
  });
});
