import { describe, expect, it } from "vitest";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent } from "../agents/agent-helpers";
import { call, createKey, expectStatus, type ApiResponse } from "../helpers";

/**
 * API keys are cached in the isolate and re-read alongside a request's first query (README "Latency",
 * src/auth/caller-cache.ts). The REST routes wait for that re-read in `authorize`; the doors that do not go
 * through `authorize` (A2A JSON-RPC, the MCP endpoint, the OpenAI-compatible completions, the UI stream) must
 * not act for a key that was revoked a moment ago either: each answers 401 and starts nothing.
 */
const ALL = ["query:rag", "documents:read", "agents:read", "agents:write"];
const QUESTION = "What is the refund policy?";

async function world() {
  const { org, kb } = await kbWithDocument();
  const agent = await createAgent({ cookie: org.owner.cookie }, kb, { name: "Refund desk" });
  const owner = { cookie: org.owner.cookie };
  const observer = (await createKey(org, { scopes: ["query:rag"] })).key;
  const runCount = async () => expectStatus(await call(`/agents/${agent.id}/runs?limit=100`, owner), 200).runs.length as number;
  const chatCount = async () => expectStatus(await call(`/chats?tenant_id=${kb.tenant_id}&limit=200`, { key: observer }), 200).chats.length as number;
  return { org, kb, agent, runCount, chatCount };
}
type World = Awaited<ReturnType<typeof world>>;

const DOORS: Record<string, (w: World, key: string) => Promise<ApiResponse>> = {
  "A2A SendMessage": (w, key) =>
    call(`/agents/${w.agent.id}/a2a`, {
      key,
      headers: { "A2A-Version": "1.0" },
      body: { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: QUESTION }] } } },
    }),
  "MCP search": (w, key) =>
    call("/mcp", {
      key,
      headers: { Accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "search", arguments: { query: QUESTION, knowledge_base_id: w.kb.id } } },
    }),
  "OpenAI completions": (w, key) => call("/openai/chat/completions", { key, body: { model: `kb:${w.kb.id}`, messages: [{ role: "user", content: QUESTION }] } }),
};

describe("a cached API key revoked a moment ago opens no door", () => {
  for (const [door, open] of Object.entries(DOORS)) {
    it(`${door}: 401, and no run or chat is started`, async () => {
      const w = await world();
      const k = await createKey(w.org, { scopes: ALL });
      const first = await open(w, k.key); // the key is now cached in this isolate
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      expect(first.body?.error, JSON.stringify(first.body)).toBeUndefined();
      const runs = await w.runCount();
      const chats = await w.chatCount();
      expect((await call(`/api-keys/${k.id}`, { cookie: w.org.owner.cookie, method: "DELETE" })).status).toBe(204);
      const again = await open(w, k.key);
      expect(again.status, JSON.stringify(again.body)).toBe(401);
      expect(await w.runCount()).toBe(runs);
      expect(await w.chatCount()).toBe(chats);
    });
  }
});
