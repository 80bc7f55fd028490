import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { uploadFile, waitForDocument } from "../documents/doc-helpers";
import { addMember, API, call, createKey, createOrg, expectError, expectStatus, fetchWorker } from "../helpers";
import { memoryKb, setMemorySettings } from "../memory/memory-helpers";
import { kbWithCsv, SALES } from "../tables/table-helpers";
import { kbWithDocument, newChat, readSse, streamMessage, upstreamRequests } from "./chat-helpers";

/**
 * Issue 28 (README "Latency"): a turn reads the chat, its knowledge base, the credits and the transcript's end in
 * one batch, announces the user message before its write lands, and API keys are cached in the isolate. None of
 * it may cost correctness: these are the reads-after-writes the shortcuts could get wrong.
 */
const turn = (content: string) => ({ content, model: "local-extractive", agent_mode: "quick" });

describe("latency shortcuts keep every read after a write", () => {
  it("announced user messages are the stored ones, in order, turn after turn, and each turn sees the last", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const auth = { key };
    const { chat } = await newChat(auth, kb);
    const announced: Array<{ id: string; created_at: string; content: string }> = [];
    for (const q of ["How many days do customers have to request a refund?", "and gift cards?", "When is the support desk open?"]) {
      const events = await readSse(await streamMessage(chat.id, turn(q), auth));
      const user = events.find((e) => e.data.type === "user_message")!.data.message;
      expect(events.at(-1)!.data.type).toBe("done");
      announced.push({ id: user.id, created_at: user.created_at, content: user.content });
    }
    // A JSON turn right after the streams: its history holds them (a short follow-up is searched with the last question).
    const json = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("and express?") }), 200);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200).messages;
    expect(msgs.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
    // Each announced user message is the stored one, in its place (before its answer, after the previous turn).
    announced.forEach((a, i) => expect(msgs[2 * i]).toMatchObject(a));
    expect(msgs[6].id).toBe(json.user_message.id);
    expect(msgs.every((m: any) => m.metadata?.status !== "partial")).toBe(true);
  });

  it("a turn started right after a document is processed cites it; one started right after credits run out is refused", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("Where is the warehouse?") }), 200);
    const { id } = await uploadFile(auth, kb, { filename: "parking.md", mime: "text/markdown", body: "# Parking\n\nVisitors park in the blue garage on Harbour Street, level minus two.\n" });
    expect((await waitForDocument(auth, id)).status).toBe("processed");
    const r = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("Where do visitors park?") }), 200);
    expect(r.assistant_message.content).toMatch(/blue garage/);
    expect(r.assistant_message.metadata.sources.some((s: any) => s.document_id === id)).toBe(true);
    // The credits the turn's one batch of reads checks: used up, then topped up just before the next turn.
    await env.DB.prepare("UPDATE tenants SET credits_used = credits_pool WHERE id = ?").bind(kb.tenant_id).run();
    expectError(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("Where do visitors park?") }), 402, "insufficient_credits");
    expectStatus(await call(`/billing/organizations/${org.id}/credits`, { ...auth, body: { amount: 10 } }), 200);
    expectStatus(await call(`/billing/tenants/${kb.tenant_id}/credits`, { ...auth, body: { amount: 10 } }), 200);
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("Where do visitors park?") }), 200);
  });

  it("a turn started right after a memory setting changes follows it; what it remembers gets its message as source", async () => {
    const org = await createOrg();
    const kb = await memoryKb(org, "subject");
    const auth = { cookie: org.owner.cookie };
    const { chat } = await newChat(auth, kb);
    const remember = (fact: string) => turn(`Remember that ${fact}`);
    const memories = async () => expectStatus(await call(`/tenants/${org.tenantId}/memories`, auth), 200);
    // The tenant's memory is off (the default): nothing is kept.
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: remember("my locker is number 815.") }), 200);
    expect((await memories()).total).toBe(0);
    // Switched on just before the next turn, which reads the settings in its one batch.
    await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
    const r = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: remember("my project code is ZEBRA-42.") }), 200);
    const kept = (await memories()).memories;
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ source_chat_id: chat.id, source_message_id: r.user_message.id });
    // And off again: the next turn neither recalls nor keeps.
    await setMemorySettings(org, { mode: "disabled" });
    const off = expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("What is my project code?") }), 200);
    expect(off.assistant_message.metadata.sources.some((s: any) => s.filename === "Memory")).toBe(false);
  });

  it("POST /chats reads the chat id, the credits and the knowledge base together, and refuses in the same order", async () => {
    const { org, kb, auth } = await kbWithDocument();
    const other = await kbWithDocument();
    const create = (body: Record<string, unknown>, who: { cookie?: string; key?: string } = auth) =>
      call("/chats", { ...who, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: "How are refunds paid?", agent_mode: "quick", ...body } });
    await env.DB.prepare("UPDATE tenants SET credits_used = credits_pool WHERE id = ?").bind(kb.tenant_id).run();
    expectError(await create({}, { cookie: other.auth.cookie }), 404); // not the stranger's: no word about credits
    expectError(await create({ tenant_id: other.kb.tenant_id }), 400, "tenant_mismatch");
    expectError(await create({ skill_ids: ["skl_missing"] }), 400);
    expectError(await create({}), 402, "insufficient_credits");
    expectError(await create({ message: undefined, model: "no-such-model" }), 400);
    expectStatus(await create({ message: undefined }), 201); // an empty chat spends nothing
    // A chat id taken by another create is 409 before anything else is looked at.
    const taken = expectStatus(await create({ message: undefined }), 201).chat.id;
    expectError(await create({ id: taken }), 409);
    expectStatus(await call(`/billing/tenants/${kb.tenant_id}/credits`, { ...auth, body: { amount: 10 } }), 200);
    const r = expectStatus(await create({}), 201);
    expect(r.chat.message_count).toBe(2);
    expect(r.assistant_message.content).toMatch(/5 business days/);
    expect(org.id).toBeTruthy();
  });

  it("POST /chats with a message: its turn uses the create's reads, which see the writes just before it", async () => {
    const create = (kb: { id: string; tenant_id: string }, auth: { cookie?: string }, message: string) =>
      call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message, agent_mode: "quick" } });
    // A data file processed just before the create: the first answer comes from its table.
    const { org, kb, auth } = await kbWithCsv(SALES, "sales.csv");
    const rows = expectStatus(await create(kb, auth, "How many rows are in the sales table?"), 201);
    expect(rows.assistant_message.content).toMatch(/Number of rows in sales\.csv \(table sales\): 5/);
    // Memory switched on just before the create: what it is told is kept, with its message as the source.
    const mkb = await memoryKb(org, "subject");
    await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
    const told = expectStatus(await create(mkb, auth, "Remember that my locker is number 815."), 201);
    const kept = expectStatus(await call(`/tenants/${org.tenantId}/memories`, auth), 200).memories;
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ source_chat_id: told.chat.id, source_message_id: told.user_message.id });
    // And off again: the next create keeps nothing (the list answers nothing while memory is off: counted in the table).
    await setMemorySettings(org, { mode: "disabled" });
    expectStatus(await create(mkb, auth, "Remember that my bike is blue."), 201);
    const stored = await env.DB.prepare("SELECT content FROM memories WHERE tenant_id = ?").bind(org.tenantId).all();
    expect(stored.results.map((r) => r.content)).toEqual(["My locker is number 815."]);
  });

  it("a fork created with a message answers after the seeded messages, with them as its history", async () => {
    const { kb, auth } = await kbWithDocument();
    const src = await newChat(auth, kb, { message: "How are refunds paid?", agent_mode: "quick" });
    expectStatus(await call(`/chats/${src.chat.id}/access`, { ...auth, method: "PATCH", body: { access_level: "org" } }), 200);
    const f = await newChat(auth, kb, { shared_source_chat_id: src.chat.id, message: "and gift cards?", agent_mode: "quick" });
    expect(f.chat.message_count).toBe(4);
    // The counters come from the answer's final write (the chat is not read again after the turn).
    expect(f.chat.last_message_at).toBe(f.assistant_message.created_at);
    const listed = expectStatus(await call(`/chats?tenant_id=${kb.tenant_id}&limit=200`, auth), 200).chats.find((c: { id: string }) => c.id === f.chat.id);
    expect(listed).toEqual(f.chat);
    const msgs = expectStatus(await call(`/chats/${f.chat.id}/messages`, auth), 200).messages;
    expect(msgs.map((m: any) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(msgs[2].id).toBe(f.user_message.id);
    // A short follow-up is searched with the seeded question: the refunds section, where gift cards are mentioned.
    expect(f.assistant_message.content).toMatch(/[Gg]ift cards cannot be refunded/);
  });

  it("a cached API key that is revoked is refused by the very next request, streamed or not", async () => {
    const { org, kb } = await kbWithDocument();
    const k = await createKey(org, { scopes: ["query:rag"] });
    const auth = { key: k.key };
    const { chat } = await newChat(auth, kb); // the key is now cached in this isolate
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("When is the support desk open?") }), 200);
    expect((await call(`/api-keys/${k.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("When is the support desk open?") }), 401);
    const res = await streamMessage(chat.id, turn("When is the support desk open?"), auth);
    expect(res.status).toBe(401);
    await res.body?.cancel();
    expectError(await call(`/chats/${chat.id}`, auth), 401);
    // Nothing was written by the refused turns.
    const other = await createKey(org, { scopes: ["query:rag"] });
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, { key: other.key }), 200).messages;
    expect(msgs).toHaveLength(2);
  });

  it("answers carry a D1 bookmark; sent back, the next request reads its own writes; a malformed one is ignored", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const { chat } = await newChat({ key }, kb);
    const shape = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
    const send = (headers: Record<string, string>) =>
      fetchWorker(`${API}/chats/${chat.id}/messages`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", ...headers }, body: JSON.stringify(turn("When is the support desk open?")) });
    const first = await send({ "X-D1-Bookmark": "not-a-bookmark" });
    expect(first.status).toBe(200);
    const bookmark = first.headers.get("X-D1-Bookmark")!;
    expect(bookmark).toMatch(shape);
    const answer = ((await first.json()) as any).assistant_message;
    const read = await fetchWorker(`${API}/chats/${chat.id}/messages`, { headers: { Authorization: `Bearer ${key}`, "X-D1-Bookmark": bookmark } });
    expect(((await read.json()) as any).messages.map((m: any) => m.id)).toContain(answer.id);
    expect(read.headers.get("X-D1-Bookmark")).toMatch(shape);
    const events = await readSse(await streamMessage(chat.id, turn("and on weekends?"), { key }, { "X-D1-Bookmark": bookmark }));
    const done = events.at(-1)!.data;
    expect(done.type).toBe("done");
    expect(done.d1_bookmark).toMatch(shape);
    expect(done.d1_bookmark >= bookmark).toBe(true);
  });

  it("the transcript the chat's Durable Object holds is the one in the database: a deleted message leaves the next turn's history", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb, { model: "test-gpt" });
    const nonce = `alpha-${crypto.randomUUID()}`;
    const ask = (content: string) => call(`/chats/${chat.id}/messages`, { ...auth, body: { content, model: "test-gpt", agent_mode: "quick" } });
    const first = expectStatus(await ask(`Remember the code ${nonce}, then tell me about refunds`), 200);
    expectStatus(await ask("When is the support desk open?"), 200);
    expect(await upstreamRequests(nonce)).toBe(2); // its own turn, then the next turn's history
    expect((await call(`/chats/${chat.id}/messages/${first.user_message.id}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expectStatus(await ask("And the shipping costs?"), 200);
    expect(await upstreamRequests(nonce)).toBe(2);
    const msgs = expectStatus(await call(`/chats/${chat.id}/messages`, auth), 200).messages;
    expect(msgs.map((m: any) => m.role)).toEqual(["assistant", "user", "assistant", "user", "assistant"]);
  });

  it("a cached session: a removed member's next turn is refused, a signed-out cookie is 401 at once", async () => {
    const { org, kb } = await kbWithDocument();
    const dev = await addMember(org, "developer");
    const auth = { cookie: dev.cookie };
    const { chat } = await newChat(auth, kb);
    expectStatus(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("When is the support desk open?") }), 200);
    expect((await call(`/organizations/${org.id}/members/${dev.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expectError(await call(`/chats/${chat.id}/messages`, { ...auth, body: turn("When is the support desk open?") }), 404);
    const res = await streamMessage(chat.id, turn("When is the support desk open?"), auth);
    expect(res.status).toBe(404);
    await res.body?.cancel();
    expect((await call("/auth/logout", { ...auth, method: "POST" })).status).toBeLessThan(300);
    expectError(await call("/me", auth), 401);
  });
});
