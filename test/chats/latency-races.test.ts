import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CAPABILITIES } from "../../src/capabilities";
import type { Caller } from "../../src/contracts/caller";
import { jobContext, type ServiceContext } from "../../src/contracts/context";
import { openDb } from "../../src/db/client";
import { beginTurn, endTurnStatement, insertUserStatement, upsertAnswerStatement } from "../../src/services/chats/answer-record";
import { rememberPlacement, searchAhead, searchAheadResult } from "../../src/services/chats/search-ahead";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { turnPassage } from "../../src/services/retrieval/retriever";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { createKb, createKey, expectStatus, call } from "../helpers";
import { kbWithDocument, newChat } from "./chat-helpers";

/**
 * Issue 28: a quick answer in two D1 round trips. Its knowledge-base search starts alongside the turn's read
 * (search-ahead.ts) and its final write does not wait for the user message's (answer-record.ts). Both are races
 * won by being careful; these tests run the losing orders.
 */

const keyCaller = (id: string) => ({ type: "api_key", key: { id }, scopes: new Set(), isAdmin: false, organizationStatus: "active" }) as unknown as Caller;
function contextOf(caller: Caller): ServiceContext {
  const job = jobContext(env, { capabilities: CAPABILITIES, waitUntil: () => {} });
  return { db: job.db, env: job.env, config: job.config, capabilities: job.capabilities, waitUntil: job.waitUntil, requestId: null, caller };
}
const QUESTION = "How many days do customers have to request a refund?";

describe("a quick turn's search ahead of its read", () => {
  it("runs only for a caller who reached the chat before, in quick mode, and finds what the pipeline's search finds", async () => {
    const { kb } = await kbWithDocument();
    const db = openDb(env);
    const row = (await getKnowledgeBase(db, kb.id))!;
    const chatId = crypto.randomUUID();
    const a = contextOf(keyCaller(`key_${crypto.randomUUID()}`));
    const b = contextOf(keyCaller(`key_${crypto.randomUUID()}`));
    expect(searchAhead(a, chatId, { content: QUESTION, agent_mode: "quick" })).toBeNull();
    rememberPlacement(a.caller, chatId, row);
    expect(searchAhead(a, chatId, { content: QUESTION, agent_mode: "deep" })).toBeNull();
    expect(searchAhead(b, chatId, { content: QUESTION, agent_mode: "quick" })).toBeNull();
    const ahead = searchAhead(a, chatId.toUpperCase(), { content: QUESTION, agent_mode: "quick" })!;
    const direct = (await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, query: QUESTION, limit: ahead.limit })).map(turnPassage);
    expect(direct.length).toBeGreaterThan(0);
    expect(await ahead.passages).toEqual(direct);
    expect(await searchAheadResult(a, ahead, row, { count: 4 })).toEqual({ query: QUESTION, limit: ahead.limit, passages: direct });
  });

  it("is dropped when the read shows another knowledge base, or a short follow-up that the pipeline searches with history", async () => {
    const { org, kb } = await kbWithDocument();
    const db = openDb(env);
    const row = (await getKnowledgeBase(db, kb.id))!;
    const other = (await getKnowledgeBase(db, (await createKb(org)).id))!;
    const chatId = crypto.randomUUID();
    const a = contextOf(keyCaller(`key_${crypto.randomUUID()}`));
    rememberPlacement(a.caller, chatId, row);
    expect(await searchAheadResult(a, searchAhead(a, chatId, { content: QUESTION, agent_mode: "quick" }), other, { count: 0 })).toBeUndefined();
    expect(await searchAheadResult(a, searchAhead(a, chatId, { content: QUESTION, agent_mode: "quick" }), { ...row, embeddingModel: "other-model" }, { count: 0 })).toBeUndefined();
    const followUp = searchAhead(a, chatId, { content: "and gift cards?", agent_mode: "quick" });
    expect(await searchAheadResult(a, followUp, row, { count: 2 })).toBeUndefined();
    // The first message of a chat has no history: its short question is searched alone, ahead or not.
    expect((await searchAheadResult(a, searchAhead(a, chatId, { content: "and gift cards?", agent_mode: "quick" }), row, { count: 0 }))?.query).toBe("and gift cards?");
  });

  it("a follow-up turn searched ahead answers from the same passages as one that was not", async () => {
    const { org, kb } = await kbWithDocument();
    const { key } = await createKey(org, { scopes: ["query:rag"] });
    const send = async (auth: { key?: string; cookie?: string }, chatId: string, content: string) =>
      expectStatus(await call(`/chats/${chatId}/messages`, { ...auth, body: { content, model: "local-extractive", agent_mode: "quick" } }), 200);
    // The same two turns in two chats: by a caller the isolate knows (searched ahead), and by one it may not.
    const sources: string[][] = [];
    for (const auth of [{ key }, { cookie: org.owner.cookie }]) {
      const { chat } = await newChat(auth, kb);
      await send(auth, chat.id, "When is the support desk open?");
      const r = await send(auth, chat.id, "Can I get my money back on a purchase from last week?");
      sources.push(r.assistant_message.metadata.sources.map((s: any) => s.chunk_id));
    }
    expect(sources[0].length).toBeGreaterThan(0);
    expect(sources[0]).toEqual(sources[1]);
  });
});

describe("the final write does not wait for the user message's", () => {
  const draft = () => ({ id: `msg_${crypto.randomUUID().replace(/-/g, "")}`, content: "Where is the warehouse?", metadata: {}, createdAt: new Date().toISOString() });

  async function transcript(chatId: string) {
    const msgs = await env.DB.prepare("SELECT id, seq, role FROM messages WHERE chat_id = ? ORDER BY seq").bind(chatId).all<{ id: string; seq: number; role: string }>();
    const chat = await env.DB.prepare("SELECT turn_message_id, turn_lease_expires_at FROM chats WHERE id = ?").bind(chatId).first();
    return { msgs: msgs.results, chat };
  }

  const finalWrite = (chatId: string, user: ReturnType<typeof draft>, answerId: string) =>
    env.DB.batch([
      insertUserStatement(env.DB, chatId, user, true),
      upsertAnswerStatement(env.DB, chatId, { id: answerId, content: "In Leeds.", status: "complete", metadata: {}, createdAt: new Date().toISOString() }),
      endTurnStatement(env.DB, chatId, answerId),
    ]);

  it("landing first, it appends the user message before the answer; the late start adds nothing and leaves no turn open", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const user = draft();
    const answerId = `msg_${crypto.randomUUID().replace(/-/g, "")}`;
    await finalWrite(chat.id, user, answerId);
    const started = await beginTurn(openDb(env), chat.id, user, { messageId: answerId, leaseUntil: new Date(Date.now() + 60_000).toISOString() }, true);
    expect(started).toMatchObject({ id: user.id, role: "user", seq: 1 });
    expect(await transcript(chat.id)).toEqual({
      msgs: [
        { id: user.id, seq: 1, role: "user" },
        { id: answerId, seq: 2, role: "assistant" },
      ],
      chat: { turn_message_id: null, turn_lease_expires_at: null },
    });
    // Without `announced`, a start whose message is already there is refused (a retried create relies on it).
    await expect(beginTurn(openDb(env), chat.id, user, { messageId: answerId, leaseUntil: new Date().toISOString() })).rejects.toThrow(/UNIQUE/);
  });

  it("landing second, it finds the user message and closes the turn", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const user = draft();
    const answerId = `msg_${crypto.randomUUID().replace(/-/g, "")}`;
    await beginTurn(openDb(env), chat.id, user, { messageId: answerId, leaseUntil: new Date(Date.now() + 60_000).toISOString() }, true);
    expect((await transcript(chat.id)).chat).toMatchObject({ turn_message_id: answerId });
    await finalWrite(chat.id, user, answerId);
    expect(await transcript(chat.id)).toEqual({
      msgs: [
        { id: user.id, seq: 1, role: "user" },
        { id: answerId, seq: 2, role: "assistant" },
      ],
      chat: { turn_message_id: null, turn_lease_expires_at: null },
    });
  });
});
