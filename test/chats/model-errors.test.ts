import { describe, expect, it } from "vitest";
import { API, call, createKey, expectError, expectStatus, fetchWorker } from "../helpers";
import { kbWithDocument, newChat, readSse, streamMessage } from "./chat-helpers";

/**
 * A model call that fails makes the turn fail visibly, never an empty success (issue 27): JSON sends answer
 * 502 `upstream_error` with the reason, streams end with an `error` event, and the chat keeps the question
 * and the failed answer. Against the local OpenAI-compatible server: `test-gpt-error` answers HTTP 500,
 * `test-gpt-fail-mid-stream` breaks the connection after a few tokens.
 */
const QUESTION = "How many days do customers have to request a refund?";

describe("a failing model", () => {
  it("POST /chats with a first message: 502 naming the provider's status; the chat keeps the failed turn", async () => {
    const { kb, auth } = await kbWithDocument();
    const id = crypto.randomUUID();
    const r = await call("/chats", { ...auth, body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "test-gpt-error", message: QUESTION, agent_mode: "quick" } });
    const err = expectError(r, 502, "upstream_error");
    expect(err.message).toMatch(/^Model call failed: the model provider answered HTTP 500\. The question is kept in chat /);
    expect(err.message).toContain(id);
    expect(err.details).toEqual([{ path: "chat_id", message: id }, { path: "message_id", message: expect.stringMatching(/^msg_/) }]);

    const { messages } = expectStatus(await call(`/chats/${id}/messages`, auth), 200);
    expect(messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect(messages[1].id).toBe(err.details![1].message);
    expect(messages[1].metadata).toMatchObject({ status: "error", error: { code: "model_error", message: "Model call failed: the model provider answered HTTP 500" } });

    // The same create sent again (a client that lost the answer) answers what the first did: the 502, not a 201.
    const again = expectError(await call("/chats", { ...auth, body: { id, tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "test-gpt-error", message: QUESTION, agent_mode: "quick" } }), 502, "upstream_error");
    expect(again.message).toMatch(/^Model call failed: the model provider answered HTTP 500\. The question is kept in chat /);
    expect(again.details).toEqual(err.details);
    expect(expectStatus(await call(`/chats/${id}/messages`, auth), 200).messages).toHaveLength(2);
  });

  it("POST /chats/:id/messages and fast-query: 502 too; a working model on the same chat then answers", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    expectError(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: QUESTION, model: "test-gpt-error", agent_mode: "quick" } }), 502, "upstream_error");
    const q = expectError(await call("/chats/fast-query", { ...auth, body: { knowledge_base_id: kb.id, content: QUESTION, model: "test-gpt-error" } }), 502, "upstream_error");
    expect(q.message).toMatch(/answered HTTP 500/);

    const ok = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: QUESTION, model: "test-gpt", agent_mode: "quick" } }), 200);
    expect(ok.assistant_message.content).toContain("[1]");
  });

  it("a provider that reports an error inside its stream: 502 with its words, the partial answer kept", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const err = expectError(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: QUESTION, model: "test-gpt-error-mid-stream", agent_mode: "quick" } }), 502, "upstream_error");
    expect(err.message).toMatch(/^Model call failed: the model provider reported an error: The server had an error while processing your request\./);
    const { messages } = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(messages.at(-1).metadata.status).toBe("error");
    expect(messages.at(-1).content.length).toBeGreaterThan(0);
    // Streamed: the stream ends with the error event, not a done.
    const events = await readSse(await streamMessage(chat.id, { content: QUESTION, model: "test-gpt-error-mid-stream", agent_mode: "quick" }, auth));
    expect(events.at(-1)!.data).toMatchObject({ type: "error", code: "model_error", message: expect.stringContaining("reported an error") });
  });

  it("a provider that breaks off mid-answer: 502, and the partial answer is kept", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    expectError(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: QUESTION, model: "test-gpt-fail-mid-stream", agent_mode: "quick" } }), 502, "upstream_error");
    const { messages } = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200);
    expect(messages[1].metadata.status).toBe("error");
    expect(messages[1].content.length).toBeGreaterThan(0);
  });

  it("a stream ends with an error event that gives the reason", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const events = (await readSse(await streamMessage(chat.id, { content: QUESTION, model: "test-gpt-error", agent_mode: "quick" }, auth))).map((e) => e.data);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "model_error", message: "Model call failed: the model provider answered HTTP 500", retryable: true });
    expect(events.some((e) => e.type === "done")).toBe(false);
  });

  it("the knowledge base's MCP ask tool: an error result with the reason, not an empty answer", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const res = await fetchWorker(`${API}/mcp`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: { question: QUESTION, knowledge_base_id: kb.id, model: "test-gpt-error" } } }),
    });
    const { result } = (await res.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/^upstream_error: Model call failed: the model provider answered HTTP 500/);
  });
});
