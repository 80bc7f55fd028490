import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { kbWithDocument, newChat } from "../chats/chat-helpers";
import { mint, SITE } from "../embed/embed-helpers";
import { API, call, createKey, createOrg, expectError, expectStatus, fetchWorker, type Auth } from "../helpers";
import { mcpUrl, registerReady } from "../mcp/mcp-helpers";

/**
 * POST /chats/:id/ui-stream driven by the AI SDK's own client pieces (`ai` 7): `DefaultChatTransport`
 * (what `useChat` uses) and `readUIMessageStream` (what builds its messages). API-DECISIONS wave 3,
 * "AI SDK UI".
 */

type KbMessage = UIMessage<Record<string, any>>;

const Q = "How long do refunds take?";

const userMessage = (text: string): KbMessage => ({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] });

/** A transport like useChat's, pointed at the chat's ui-stream, calling the Worker. */
function transportFor(chatId: string, headers: Record<string, string>, body: Record<string, unknown> = {}) {
  return new DefaultChatTransport<KbMessage>({
    api: `${API}/chats/${chatId}/ui-stream`,
    headers,
    body,
    fetch: (input, init) => fetchWorker(new Request(input as RequestInfo, init)),
  });
}

/** Sends `text` as useChat would and reads the stream to the final assistant message. */
async function ask(chatId: string, headers: Record<string, string>, text = Q, body: Record<string, unknown> = {}, abortSignal?: AbortSignal) {
  const chunks = await transportFor(chatId, headers, body).sendMessages({ trigger: "submit-message", chatId, messageId: undefined, messages: [userMessage(text)], abortSignal });
  const errors: unknown[] = [];
  let last: KbMessage | undefined;
  for await (const msg of readUIMessageStream<KbMessage>({ stream: chunks, onError: (e) => errors.push(e) })) last = msg;
  return { message: last!, errors };
}

const textOf = (m: KbMessage) => m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");

async function savedAnswer(chatId: string, auth: Auth) {
  for (let i = 0; i < 100; i++) {
    const msgs = expectStatus(await call(`/chats/${chatId}/messages`, auth), 200).messages;
    const answer = msgs.findLast((m: any) => m.role === "assistant");
    if (answer) return { answer, msgs };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("no answer saved");
}

describe("the AI SDK UI message stream for useChat", () => {
  it("answers with text, source parts and message metadata; saved and metered like any turn", async () => {
    const { org, kb, documentId } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag", "tenants:read"] });
    const { chat } = await newChat({ key }, kb);
    const { message, errors } = await ask(chat.id, { Authorization: `Bearer ${key}` });
    expect(errors).toEqual([]);
    expect(message.role).toBe("assistant");
    const text = textOf(message);
    expect(text).toMatch(/5 business days/);
    expect(text).toMatch(/\[1\]/);
    const docs = message.parts.filter((p) => p.type === "source-document") as any[];
    expect(docs[0]).toMatchObject({ sourceId: "1", title: "handbook.md", filename: "handbook.md", mediaType: "text/markdown" });
    expect(docs[0].providerMetadata.kb).toMatchObject({ index: 1, document_id: documentId });
    expect(message.parts.find((p) => p.type === "text")).toMatchObject({ state: "done" });

    const { answer, msgs } = await savedAnswer(chat.id, { key });
    expect(msgs.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    expect(answer.content).toBe(text);
    expect(message.metadata).toMatchObject({ chat_id: chat.id, message_id: answer.id, user_message_id: msgs[0].id, status: "complete" });
    expect(message.metadata!.usage.credits).toBeGreaterThan(0);
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, { key }), 200);
    expect(logs.logs.filter((l: any) => l.message_id === answer.id).map((l: any) => l.operation)).toEqual(["chat"]);

    // The wire: the protocol's header and SSE ending in [DONE].
    const raw = await fetchWorker(`${API}/chats/${chat.id}/ui-stream`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ id: chat.id, messages: [userMessage("What are the support hours?")], trigger: "submit-message" }),
    });
    expect(raw.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(raw.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    const wire = await raw.text();
    expect(wire.trim().endsWith("data: [DONE]")).toBe(true);
    const types = wire
      .split("\n\n")
      .filter((b) => b.startsWith("data: {"))
      .map((b) => JSON.parse(b.slice(6)).type);
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("finish");
    expect(types).toEqual(expect.arrayContaining(["text-start", "text-delta", "text-end", "source-document"]));
  });

  it("tool activity comes as data parts: data-thought, one data-todo, one data-tool per call (its result replacing it)", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const server = await registerReady(org, { name: "Open Tools", url: mcpUrl("/open/mcp") });
    const { chat } = await newChat(auth, kb, { model: "test-gpt", agent_mode: "deep" });
    expectStatus(await call(`/chats/${chat.id}/mcp-servers`, { ...auth, method: "PATCH", body: { enabled_mcp_server_ids: [server.id] } }), 200);
    const { message } = await ask(chat.id, { Cookie: auth.cookie! }, 'What does the tool say? @call mcp__open_tools__echo {"text":"hello from the tool"}');
    const tools = message.parts.filter((p) => p.type === "data-tool") as any[];
    expect(tools).toHaveLength(1);
    expect(tools[0].data).toMatchObject({ tool: "echo", server_id: server.id, state: "result", is_error: false, arguments: { text: "hello from the tool" } });
    expect(tools[0].data.result).toContain("echo: hello from the tool");
    expect(textOf(message)).toMatch(/\[\d\]/);

    // Local-extractive's deep plan: thoughts and a todo list (one part, the latest list).
    const local = (await newChat(auth, kb, { agent_mode: "deep" })).chat;
    const planned = (await ask(local.id, { Cookie: auth.cookie! })).message;
    expect(planned.parts.filter((p) => p.type === "data-thought").length).toBeGreaterThan(1);
    const todos = planned.parts.filter((p) => p.type === "data-todo") as any[];
    expect(todos).toHaveLength(1);
    // The part holds the latest list (searches done, the answer being written).
    expect(todos[0].data.items.at(0).status).toBe("completed");
    expect(todos[0].data.items.at(-1)).toMatchObject({ content: "Write the answer with citations", status: "in_progress" });
  });

  it("an embed token works from its origin (and only there), as on the widget's other chat routes", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag", "tenants:read"] });
    const { token } = await mint({ key }, kb);
    const page = { Authorization: `Bearer ${token}`, Origin: SITE };
    const created = expectStatus(
      await call("/chats", { key: token, headers: { Origin: SITE }, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } }),
      201,
    );
    const { message } = await ask(created.chat.id, page);
    expect(textOf(message)).toMatch(/5 business days/);
    await expect(ask(created.chat.id, { Authorization: `Bearer ${token}`, Origin: "https://elsewhere.example" })).rejects.toThrow(/403|origin/i);
    // The key's own chats are not the token's end user's.
    const keyChat = (await newChat({ key }, kb)).chat;
    await expect(ask(keyChat.id, page)).rejects.toThrow(/404|not found/i);
  });

  it("useChat's stop (the request aborted) stops the turn and keeps its partial answer", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const { chat } = await newChat({ key }, kb, { model: "test-gpt-slow" });
    const controller = new AbortController();
    const chunks = await transportFor(chat.id, { Authorization: `Bearer ${key}` }).sendMessages({
      trigger: "submit-message",
      chatId: chat.id,
      messageId: undefined,
      messages: [userMessage(Q)],
      abortSignal: controller.signal,
    });
    const reader = chunks.getReader();
    for (;;) {
      const { value } = await reader.read();
      if (value?.type === "text-delta") break;
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    const { answer } = await savedAnswer(chat.id, { key });
    expect(answer.metadata.status).toBe("partial");
    expect(answer.content.length).toBeGreaterThan(0);
    expect(expectStatus(await call(`/chats/${chat.id}/stop`, { key, method: "POST" }), 200)).toEqual({ stopped: false });
  });

  it("POST /stop and a second stream end the running one as interrupted (one active stream per chat)", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const headers = { Authorization: `Bearer ${key}` };
    const { chat } = await newChat({ key }, kb, { model: "test-gpt-slow" });
    const started = (async () => {
      const chunks = await transportFor(chat.id, headers).sendMessages({ trigger: "submit-message", chatId: chat.id, messageId: undefined, messages: [userMessage(Q)], abortSignal: undefined });
      const seen: any[] = [];
      for await (const chunk of chunks as unknown as AsyncIterable<any>) seen.push(chunk);
      return seen;
    })();
    // Stop once the answer is under way.
    for (let i = 0; i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      if (expectStatus(await call(`/chats/${chat.id}/stop`, { key, method: "POST" }), 200).stopped) break;
    }
    const stopped = await started;
    expect(stopped.at(-1)).toMatchObject({ type: "finish", finishReason: "interrupted", messageMetadata: { status: "partial", stop_reason: "stopped" } });

    let underWay!: () => void;
    const answering = new Promise<void>((resolve) => (underWay = resolve));
    const first = (async () => {
      const chunks = await transportFor(chat.id, headers).sendMessages({ trigger: "submit-message", chatId: chat.id, messageId: undefined, messages: [userMessage(Q)], abortSignal: undefined });
      const seen: any[] = [];
      for await (const chunk of chunks as unknown as AsyncIterable<any>) {
        seen.push(chunk);
        if (chunk.type === "text-delta") underWay();
      }
      return seen;
    })();
    await answering;
    const replacing = await ask(chat.id, headers, "What are the support hours?", { model: "local-extractive" });
    expect(replacing.message.metadata).toMatchObject({ status: "complete" });
    expect((await first).at(-1)).toMatchObject({ type: "finish", finishReason: "interrupted", messageMetadata: { stop_reason: "replaced" } });
  });

  it("refusals are HTTP errors before any stream; a failing model ends in an error chunk", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const { chat } = await newChat({ key }, kb);
    const post = (body: unknown, k = key) => call(`/chats/${chat.id}/ui-stream`, { key: k, body });
    expectError(await post({ messages: [] }), 400);
    expectError(await post({ messages: [{ id: "a", role: "assistant", parts: [{ type: "text", text: "Hi" }] }] }), 400);
    expectError(await post({ messages: [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png", url: "data:image/png;base64,AA==" }] }] }), 400);
    expectError(await post({ messages: [userMessage(Q)], model: "no-such-model" }), 400);
    const other = await createOrg();
    expectError(await post({ messages: [userMessage(Q)] }, (await createKey(other, { scopes: ["query:rag"] })).key), 404);
    expectError(await post({ messages: [userMessage(Q)] }, (await createKey(org, { scopes: ["documents:read"] })).key), 403);
    expectError(await call(`/chats/${chat.id}/ui-stream`, { body: { messages: [userMessage(Q)] } }), 401);
    // A session's chat is not the key's.
    const sessionChat = (await newChat(auth, kb)).chat;
    await expect(ask(sessionChat.id, { Authorization: `Bearer ${key}` })).rejects.toThrow(/404|not found/i);

    const failing = (await newChat({ key }, kb, { model: "test-gpt-error" })).chat;
    const { errors } = await ask(failing.id, { Authorization: `Bearer ${key}` });
    expect(String((errors[0] as Error)?.message ?? errors[0])).toMatch(/model_error/);
  });
});
