import OpenAI from "openai";
import { beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../agents/agent-helpers";
import { kbWithDocument, upstreamRequests } from "../chats/chat-helpers";
import { mint, asPage } from "../embed/embed-helpers";
import { API, call, createKb, createKey, createOrg, createTenant, expectError, expectStatus, fetchWorker, type TestOrg } from "../helpers";

/**
 * The OpenAI-compatible endpoints (API-DECISIONS wave 3, "Protocols at the edge"), driven by the
 * real `openai` package (7.57.0): models, a cited answer with sources, the SSE chunk stream with a
 * usage chunk, history from earlier messages, agents, metering, and refusals.
 */

/** The `openai` client pointed at our Worker (its fetch goes through exports.default.fetch). */
const openai = (apiKey: string) =>
  new OpenAI({ apiKey, baseURL: `${API}/openai`, maxRetries: 0, fetch: (input, init) => fetchWorker(new Request(input as RequestInfo, init)) });

const Q = "How long do refunds take?";

describe("OpenAI-compatible chat completions with the openai package", () => {
  let org: TestOrg;
  let kb: { id: string; tenant_id: string };
  let documentId: string;
  let key: string;
  let agentId: string;
  /** The knowledge base with the offline model (its answers quote the handbook). */
  const local = () => `kb:${kb.id}:local-extractive`;

  beforeAll(async () => {
    const made = await kbWithDocument();
    ({ org, kb, documentId } = made);
    key = (await createKey(org, { scopes: ["query:rag", "tenants:read", "agents:read"] })).key;
    agentId = (await createAgent(made.auth, kb)).id;
  }, 60_000);

  it("GET /openai/models lists the knowledge bases and agents the key reaches, and nothing else", async () => {
    const second = await createKb(org, { name: "Second" });
    const outsider = await kbWithDocument();
    const list = await openai(key).models.list();
    const ids = list.data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining([`kb:${kb.id}`, `kb:${second.id}`, `agent:${agentId}`]));
    expect(ids.some((id) => id.includes(outsider.kb.id))).toBe(false);
    const first = list.data.find((m) => m.id === `kb:${kb.id}`)!;
    expect(first).toMatchObject({ object: "model", owned_by: kb.tenant_id });
    expect(first.created).toBeGreaterThan(1_600_000_000);
    // A key limited to one knowledge base sees it alone (and no agent of another one).
    const limited = await createKey(org, { scopes: ["query:rag"], knowledge_base_id: second.id });
    expect((await openai(limited.key).models.list()).data.map((m) => m.id)).toEqual([`kb:${second.id}`]);
    // A key of another tenant sees none of these.
    const t2 = await createTenant(org);
    const elsewhere = await createKey(org, { scopes: ["query:rag"], tenant_ids: [t2.id] });
    expect((await openai(elsewhere.key).models.list()).data).toEqual([]);
  });

  it("answers a cited completion with sources, metered as one chat turn in a query chat", async () => {
    const res = await openai(key).chat.completions.create({ model: local(), messages: [{ role: "user", content: Q }] });
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res).toMatchObject({ object: "chat.completion", model: local() });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.role).toBe("assistant");
    expect(choice.message.content).toMatch(/5 business days/);
    expect(choice.message.content).toMatch(/\[1\]/);
    const sources = (choice.message as any).sources;
    expect(sources[0]).toMatchObject({ index: 1, document_id: documentId, filename: "handbook.md" });
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);
    expect(res.usage!.completion_tokens).toBeGreaterThan(0);

    // One turn: one usage record (operation chat) for the query chat that holds it.
    const chatId = (res as any).chat_id;
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs?limit=200`, { cookie: org.owner.cookie }), 200);
    const mine = logs.logs.filter((l: any) => l.chat_id === chatId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ operation: "chat", model: "local-extractive", is_api_key: true });
    const msgs = expectStatus(await call(`/chats/${chatId}/messages`, { key }), 200);
    expect(msgs.messages.map((m: any) => m.role)).toEqual(["user", "assistant"]);
    const chats = expectStatus(await call(`/chats?tenant_id=${kb.tenant_id}&is_query=true`, { key }), 200);
    expect(chats.chats.map((c: any) => c.id)).toContain(chatId);

    // kb:<id> alone answers with the default model: the first available provider model (test-gpt here).
    const byDefault = await openai(key).chat.completions.create({ model: `kb:${kb.id}`, messages: [{ role: "user", content: Q }] });
    expect(byDefault.model).toBe(`kb:${kb.id}`);
    const answer = expectStatus(await call(`/chats/${(byDefault as any).chat_id}/messages`, { key }), 200).messages[1];
    expect(answer.metadata.model).toBe("test-gpt");
    expect(byDefault.choices[0]!.message.content).toBe(answer.content);
  });

  it("streams OpenAI chunks: id/object/created/model on every chunk, sources on the last, a usage chunk, [DONE]", async () => {
    const stream = await openai(key).chat.completions.create({
      model: local(),
      messages: [{ role: "user", content: Q }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    const id = chunks[0].id;
    for (const ch of chunks) expect(ch).toMatchObject({ id, object: "chat.completion.chunk", model: local(), created: chunks[0].created });
    expect(chunks[0].choices[0].delta.role).toBe("assistant");
    const text = chunks.flatMap((ch) => ch.choices.map((c: any) => c.delta?.content ?? "")).join("");
    expect(text).toMatch(/5 business days/);
    const last = chunks.findLast((ch) => ch.choices.length)!;
    expect(last.choices[0].finish_reason).toBe("stop");
    expect(last.sources[0]).toMatchObject({ index: 1, document_id: documentId });
    const usage = chunks.at(-1);
    expect(usage.choices).toEqual([]);
    expect(usage.usage.total_tokens).toBeGreaterThan(0);
    // The raw wire ends with [DONE]; without include_usage there is no usage chunk.
    const raw = await fetchWorker(`${API}/openai/chat/completions`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model: local(), messages: [{ role: "user", content: Q }], stream: true }),
    });
    expect(raw.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    const events = (await raw.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(events.some((e) => e.includes('"usage"'))).toBe(false);
  });

  it("the stream helper's final completion keeps the text, id and usage", async () => {
    const runner = openai(key).chat.completions.stream({ model: local(), messages: [{ role: "user", content: Q }], stream_options: { include_usage: true } });
    const final = await runner.finalChatCompletion();
    expect(final.id).toMatch(/^chatcmpl-/);
    expect(final.choices[0]!.message.content).toMatch(/5 business days/);
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  it("earlier messages are the history the model sees; kb:<id>:<model> picks the model", async () => {
    const marker = `zebra-${crypto.randomUUID().slice(0, 8)}`;
    const res = await openai(key).chat.completions.create({
      model: `kb:${kb.id}:test-gpt`,
      messages: [
        { role: "system", content: "Ignored: the knowledge base's own instructions apply." },
        { role: "user", content: `My codename is ${marker}.` },
        { role: "assistant", content: `Noted, ${marker}.` },
        { role: "user", content: [{ type: "text", text: "And how long do refunds take?" }] },
      ],
    });
    expect(res.choices[0]!.message.content).toMatch(/\[1\]/);
    // The provider model got the earlier turns as its conversation.
    expect(await upstreamRequests(`My codename is ${marker}.`)).toBe(1);
    expect(await upstreamRequests(`Noted, ${marker}.`)).toBe(1);
    expect(await upstreamRequests("Ignored: the knowledge base")).toBe(0);
    const msgs = expectStatus(await call(`/chats/${(res as any).chat_id}/messages`, { key }), 200);
    expect(msgs.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(msgs.messages[3].metadata.model).toBe("test-gpt");
  });

  it("agent:<id> runs the agent (a run, metered as agent_run), streaming and not", async () => {
    const res = await openai(key).chat.completions.create({ model: `agent:${agentId}`, messages: [{ role: "user", content: Q }] });
    expect(res.choices[0]!.message.content).toMatch(/5 business days/);
    const runId = res.id.replace(/^chatcmpl-/, "");
    expect(runId).toMatch(/^run_/);
    const run = expectStatus(await call(`/agents/${agentId}/runs/${runId}`, { key }), 200);
    expect(run).toMatchObject({ status: "completed", chat_id: (res as any).chat_id });
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs?limit=200`, { cookie: org.owner.cookie }), 200);
    expect(logs.logs.filter((l: any) => l.chat_id === run.chat_id).map((l: any) => l.operation)).toEqual(["agent_run"]);

    const stream = await openai(key).chat.completions.create({
      model: `agent:${agentId}`,
      messages: [
        { role: "user", content: "Hello" },
        { role: "assistant", content: "Hi, how can I help?" },
        { role: "user", content: "What are the support hours?" },
      ],
      stream: true,
    });
    let text = "";
    let streamedId = "";
    for await (const ch of stream) {
      streamedId = ch.id;
      text += ch.choices[0]?.delta?.content ?? "";
    }
    expect(text).toMatch(/9:00/);
    const streamedRun = expectStatus(await call(`/agents/${agentId}/runs/${streamedId.replace(/^chatcmpl-/, "")}`, { key }), 200);
    expect(streamedRun.status).toBe("completed");
    const msgs = expectStatus(await call(`/chats/${streamedRun.chat_id}/messages`, { key }), 200);
    expect(msgs.messages.map((m: any) => m.content).slice(0, 2)).toEqual(["Hello", "Hi, how can I help?"]);
  });

  it("a failing model: 502 when not streaming, an error event the client throws when streaming", async () => {
    const failed = await openai(key)
      .chat.completions.create({ model: `kb:${kb.id}:test-gpt-error`, messages: [{ role: "user", content: Q }] })
      .catch((e) => e);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect(failed.status).toBe(502);
    const stream = await openai(key).chat.completions.create({
      model: `kb:${kb.id}:test-gpt-fail-mid-stream`,
      messages: [{ role: "user", content: Q }],
      stream: true,
    });
    let text = "";
    const thrown = await (async () => {
      for await (const ch of stream) text += ch.choices[0]?.delta?.content ?? "";
    })().catch((e) => e);
    expect(thrown).toBeInstanceOf(OpenAI.APIError);
    expect(thrown.code).toBe("model_error");
    expect(text.length).toBeGreaterThan(0);
  });

  it("refuses what it cannot answer with OpenAI-readable 4xx errors", async () => {
    const client = openai(key);
    const create = (body: Record<string, unknown>) => client.chat.completions.create(body as never);
    const bad = (e: any, status: number) => {
      expect(e).toBeInstanceOf(OpenAI.APIError);
      expect(e.status).toBe(status);
      expect(typeof e.message).toBe("string");
      return e;
    };
    const fail = async (body: Record<string, unknown>, status: number) => bad(await create(body).catch((e) => e), status);
    const userQ = [{ role: "user", content: Q }];
    expect((await fail({ model: "gpt-4o", messages: userQ }, 400)).message).toMatch(/kb:<knowledge_base_id>/);
    await fail({ model: `agent:${agentId}:test-gpt`, messages: userQ }, 400);
    await fail({ model: `kb:${kb.id}:no-such-model`, messages: userQ }, 400);
    await fail({ model: `kb:${kb.id}`, messages: [{ role: "assistant", content: "Hi" }] }, 400);
    await fail({ model: `kb:${kb.id}`, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] }, 400);
    await fail({ model: `kb:${kb.id}`, messages: [] }, 400);
    await fail({ model: "kb:kb_doesnotexist", messages: userQ }, 404);
    await fail({ model: "agent:agt_doesnotexist", messages: userQ }, 404);
    // Another organization's knowledge base is not found.
    const other = await createOrg();
    const otherKey = (await createKey(other, { scopes: ["query:rag"] })).key;
    await bad(await openai(otherKey).chat.completions.create({ model: `kb:${kb.id}`, messages: userQ as never }).catch((e) => e), 404);
    // Keys without query:rag, signed-in sessions and embed tokens are refused.
    const reader = (await createKey(org, { scopes: ["documents:read"] })).key;
    await bad(await openai(reader).models.list().catch((e) => e), 403);
    expectError(await call("/openai/models", { cookie: org.owner.cookie }), 403);
    const token = (await mint({ key }, kb)).token;
    expectError(await call("/openai/chat/completions", { ...asPage(token), body: { model: `kb:${kb.id}`, messages: userQ } }), 403);
    expectError(await call("/openai/models"), 401);
  });
});
