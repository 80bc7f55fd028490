import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, expectError, expectStatus, fetchWorker, unique } from "../helpers";
import { kbWithDocument, newChat, upstreamRequests } from "./chat-helpers";

const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

async function seedMessages(chatId: string, n: number, chars: number) {
  const stmts = [];
  for (let i = 1; i <= n; i++) {
    const text = `Turn ${i}. ` + "The quarterly report discusses revenue, costs and hiring plans in detail. ".repeat(Math.ceil(chars / 75));
    stmts.push(
      env.DB.prepare("INSERT INTO messages (id, chat_id, seq, role, content, status, metadata, created_at) VALUES (?, ?, ?, ?, ?, 'complete', '{}', ?)").bind(
        `msg_${chatId.slice(0, 8)}_${i}`,
        chatId,
        i,
        i % 2 ? "user" : "assistant",
        text.slice(0, chars),
        new Date().toISOString(),
      ),
    );
  }
  await env.DB.batch(stmts);
}

describe("answer pipeline", () => {
  it("folds long history into a rolling summary (metered as summary) and keeps recent turns verbatim", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    await seedMessages(chat.id, 20, 1000); // ~5,000 tokens of history: over local-extractive's 2,048-token budget
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: "How are refunds paid?", model: "local-extractive", agent_mode: "quick" } }), 200);
    const row = await env.DB.prepare("SELECT summary, summary_through_seq FROM chats WHERE id = ?").bind(chat.id).first<any>();
    expect(row.summary).toContain("User asked: Turn 1.");
    expect(row.summary_through_seq).toBe(14); // all but the 6 most recent messages
    const logs = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs.logs.map((l: any) => l.operation).sort()).toEqual(["chat", "summary"]);
    // The next turn fits again: no new summary.
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: "And shipping?", model: "local-extractive", agent_mode: "quick" } }), 200);
    const logs2 = expectStatus(await call(`/billing/tenants/${kb.tenant_id}/usage/logs`, auth), 200);
    expect(logs2.logs.filter((l: any) => l.operation === "summary")).toHaveLength(1);
  });

  it("summarizes with the provider model when one is used, and sends the summary with the prompt", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    await seedMessages(chat.id, 30, 2000);
    const nonce = unique("nonce");
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: { content: `Refunds? ${nonce}`, model: "test-gpt", agent_mode: "quick" } }), 200);
    const row = await env.DB.prepare("SELECT summary FROM chats WHERE id = ?").bind(chat.id).first<any>();
    expect(row.summary.length).toBeGreaterThan(10);
    expect(await upstreamRequests(nonce)).toBe(1); // the answer; the summary call came before the question was sent
  });

  it("deep mode with a provider model calls the knowledge-base search tool before answering", async () => {
    const { kb, auth } = await kbWithDocument();
    const nonce = unique("nonce");
    const r = await newChat(auth, kb, { message: `Explain the refund rules ${nonce}`, model: "test-gpt", agent_mode: "deep" });
    expect(r.assistant_message.metadata.status).toBe("complete");
    // the tool loop: a step that calls kb__search, then the streamed answer
    expect(await upstreamRequests(nonce)).toBe(2);
    expect(await upstreamRequests('"kb__search"')).toBeGreaterThan(0);
    expect(r.assistant_message.metadata.tool_calls).toEqual([expect.objectContaining({ tool: "kb__search", is_error: false })]);
  });

  it("applies skills and attached artifacts to the turn", async () => {
    const { kb, auth } = await kbWithDocument();
    const skill = expectStatus(
      await call("/skills", { ...auth, body: { tenant_id: kb.tenant_id, name: "Pirate voice", description: "Answer like a pirate", body: `Always answer like a pirate. ${unique("skillmark")}` } }),
      201,
    );
    const marker = unique("artifactmark");
    const artifact = expectStatus(
      await call(`/knowledge-bases/${kb.id}/artifacts`, {
        ...auth,
        body: { type: "markdown", title: "Launch plan", summary: "Plan", content: `The launch of product Zephyr happens on 12 March. Reference ${marker}.` },
      }),
      201,
    );
    const nonce = unique("nonce");
    const r = await newChat(auth, kb, {
      message: `When does Zephyr launch? ${nonce}`,
      model: "test-gpt",
      agent_mode: "quick",
      skill_ids: [skill.id],
      attached_artifact_ids: [artifact.id],
    });
    expect(r.user_message.metadata.attachedArtifactIds).toEqual([artifact.id]);
    expect(await upstreamRequests(marker)).toBe(1);
    expect(await upstreamRequests(skill.body.split(" ").at(-1))).toBe(1);

    // local-extractive reads attached artifacts as citable passages.
    const local = await newChat(auth, kb, { message: "When does the launch of product Zephyr happen?", agent_mode: "quick", attached_artifact_ids: [artifact.id] });
    expect(local.assistant_message.content).toMatch(/12 March \[1\]/);
    expect(local.assistant_message.metadata.sources[0].filename).toBe("Artifact: Launch plan");

    expectError(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: "x", attached_artifact_ids: ["art_nope"] } }), 400);
  });

  it("stores images of the first message, serves them at their URL and sends them to vision models", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { message: "What is in this picture?", model: "test-gpt", agent_mode: "quick", images: [`data:image/png;base64,${PNG_1PX}`] });
    const urls = r.user_message.metadata.imageUrls;
    expect(urls).toHaveLength(1);
    expect(urls[0]).toMatch(new RegExp(`^http://localhost:8787/chat-images/${r.chat.id}/[A-Za-z0-9_-]+\\.png$`));
    const img = await fetchWorker(new URL(urls[0]).pathname);
    expect(img.status).toBe(200);
    expect(img.headers.get("Content-Type")).toBe("image/png");
    expect(await upstreamRequests(PNG_1PX.slice(0, 40))).toBe(1);
    expect((await fetchWorker(`/chat-images/${r.chat.id}/AAAAAAAAAAAAAAAAAAAAAAAA.png`)).status).toBe(404);
    // A declared PNG that is not one is refused.
    expectError(
      await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "test-gpt", images: ["data:image/png;base64,aGVsbG8gd29ybGQ="] } }),
      400,
    );
  });
});

describe("chat files", () => {
  it("deleting the chat (or its knowledge base) removes its stored images", async () => {
    const { kb, auth } = await kbWithDocument();
    const r = await newChat(auth, kb, { images: [`data:image/png;base64,${PNG_1PX}`] });
    const r2 = await newChat(auth, kb, { images: [`data:image/png;base64,${PNG_1PX}`] });
    const keys = (await env.DB.prepare("SELECT key, chat_id FROM chat_files WHERE chat_id IN (?, ?)").bind(r.chat.id, r2.chat.id).all<any>()).results;
    expect(keys).toHaveLength(2);
    for (const k of keys) expect(await env.BUCKET.head(k.key)).not.toBeNull();
    expect((await call(`/chats/${r.chat.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const { drainGarbage } = await import("../../src/services/documents/cleanup");
    const { createDb } = await import("../../src/db/client");
    await drainGarbage(env, createDb(env.DB));
    expect(await env.BUCKET.head(keys.find((k: any) => k.chat_id === r.chat.id).key)).toBeNull();
    expect(await env.BUCKET.head(keys.find((k: any) => k.chat_id === r2.chat.id).key)).not.toBeNull();
    expect((await call(`/knowledge-bases/${kb.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    await drainGarbage(env, createDb(env.DB));
    expect(await env.BUCKET.head(keys.find((k: any) => k.chat_id === r2.chat.id).key)).toBeNull();
  });
});
