import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CAPABILITIES } from "../../src/capabilities";
import type { Caller } from "../../src/contracts/caller";
import { jobContext, type ServiceContext } from "../../src/contracts/context";
import { openDb } from "../../src/db/client";
import { TodoWriter } from "../../src/services/answer/todo-writer";
import { readTurnBody } from "../../src/durable/turn-body";
import { decompose } from "../../src/services/answer/plan";
import { DEEP_PASSAGES_PER_PART, QUICK_PASSAGES } from "../../src/services/answer/stages/plan";
import { lateArgument } from "../../src/services/chats/session";
import type { TurnCommand } from "../../src/contracts/chat-session";
import { beginTurn, endTurnStatement, insertUserStatement, upsertAnswerStatement } from "../../src/services/chats/answer-record";
import { MAX_AHEAD_IN_FLIGHT, refusalForgets, rememberPlacement, turnSearchAhead as searchAhead, turnSearchedAhead as searchAheadResult } from "../../src/services/chats/search-ahead";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { turnPassage } from "../../src/services/retrieval/retriever";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { createKb, createKey, createOrg, expectStatus, call } from "../helpers";
import { memoryKb, scopeFor, setMemorySettings } from "../memory/memory-helpers";
import { appendMessage } from "../../src/services/chats/chats";
import { memoryContext } from "../../src/services/memory/turn";
import { kbWithDocument, newChat, readSse, streamMessage } from "./chat-helpers";

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
    expect(searchAhead(a, { chatId: chatId }, { content: QUESTION, agent_mode: "quick" })).toBeNull();
    rememberPlacement(a.caller, { chatId }, row);
    // Deep mode: searched ahead when the plan searches the whole question once (with its own number of passages).
    const twoParts = "When is the support desk open? How much does express shipping cost?";
    expect(decompose(twoParts)).toHaveLength(2);
    expect(searchAhead(a, { chatId: chatId }, { content: twoParts, agent_mode: "deep" })).toBeNull();
    const deep = searchAhead(a, { chatId: chatId }, { content: QUESTION, agent_mode: "deep" })!;
    expect(deep.limit).toBe(DEEP_PASSAGES_PER_PART);
    await deep.passages;
    expect(searchAhead(b, { chatId: chatId }, { content: QUESTION, agent_mode: "quick" })).toBeNull();
    const ahead = searchAhead(a, { chatId: chatId.toUpperCase() }, { content: QUESTION, agent_mode: "quick" })!;
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
    rememberPlacement(a.caller, { chatId }, row);
    expect(await searchAheadResult(a, searchAhead(a, { chatId: chatId }, { content: QUESTION, agent_mode: "quick" }), other, { count: 0 })).toBeUndefined();
    expect(await searchAheadResult(a, searchAhead(a, { chatId: chatId }, { content: QUESTION, agent_mode: "quick" }), { ...row, embeddingModel: "other-model" }, { count: 0 })).toBeUndefined();
    // A document entered or left search since the caller was placed: the search may have used an older copy of the vectors.
    expect(await searchAheadResult(a, searchAhead(a, { chatId: chatId }, { content: QUESTION, agent_mode: "quick" }), { ...row, indexVersion: row.indexVersion + 1 }, { count: 0 })).toBeUndefined();
    const followUp = searchAhead(a, { chatId: chatId }, { content: "and gift cards?", agent_mode: "quick" });
    expect(await searchAheadResult(a, followUp, row, { count: 2 })).toBeUndefined();
    // In a burst, at most MAX_AHEAD_IN_FLIGHT searches run ahead in the isolate; the others wait for their read.
    const burst = Array.from({ length: MAX_AHEAD_IN_FLIGHT }, () => searchAhead(a, { chatId }, { content: QUESTION, agent_mode: "quick" })!);
    expect(searchAhead(a, { chatId }, { content: QUESTION, agent_mode: "quick" })).toBeNull();
    await Promise.all(burst.map((x) => x.passages));
    await searchAhead(a, { chatId }, { content: QUESTION, agent_mode: "quick" })!.passages;
    // A refused request forgets: the same caller starts no further search there.
    await expect(refusalForgets(a.caller, { chatId }, Promise.reject(new Error("401")))).rejects.toThrow("401");
    expect(searchAhead(a, { chatId }, { content: QUESTION, agent_mode: "quick" })).toBeNull();
    rememberPlacement(a.caller, { chatId }, row);
    // The first message of a chat has no history: its short question is searched alone, ahead or not.
    expect((await searchAheadResult(a, searchAhead(a, { chatId: chatId }, { content: "and gift cards?", agent_mode: "quick" }), row, { count: 0 }))?.query).toBe("and gift cards?");
  });

  it("a search ahead whose request was refused still frees its place in the isolate", async () => {
    const { org, kb } = await kbWithDocument();
    // More refused requests than places, each with its search ahead started (a cached key, a remembered chat).
    for (let i = 0; i <= MAX_AHEAD_IN_FLIGHT; i++) {
      const k = await createKey(org, { scopes: ["query:rag"] });
      const { chat } = await newChat({ key: k.key }, kb);
      expect((await call(`/api-keys/${k.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
      const refused = await call(`/chats/${chat.id}/messages`, { key: k.key, body: { content: QUESTION, model: "local-extractive", agent_mode: "quick" } });
      expect(refused.status).toBe(401);
    }
    await new Promise((r) => setTimeout(r, 200)); // their searches end, or would have
    const row = (await getKnowledgeBase(openDb(env), kb.id))!;
    const chatId = crypto.randomUUID();
    const a = contextOf(keyCaller(`key_${crypto.randomUUID()}`));
    rememberPlacement(a.caller, { chatId }, row);
    const ahead = searchAhead(a, { chatId }, { content: QUESTION, agent_mode: "quick" });
    expect(ahead).not.toBeNull();
    await ahead!.passages;
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

describe("a turn's request to its Durable Object", () => {
  const bodyOf = (...parts: string[]) => {
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(encoder.encode(parts[0]));
        await gate;
        for (const p of parts.slice(1)) c.enqueue(encoder.encode(p));
        c.close();
      },
    });
    return { request: new Request("https://chat-session/turn", { method: "POST", body }), release };
  };

  it("starts the turn from the first line before the search ahead follows on the second", async () => {
    const { request, release } = bodyOf('{"chatId":"c1","content":"Hi"}\n', '{"searchedAhead":{"query":"Hi","limit":6,"passages":[]}}\n');
    const { cmd, late } = await readTurnBody(request); // resolves while the second line is held back
    expect(cmd).toMatchObject({ chatId: "c1", content: "Hi" });
    release();
    expect(await late).toEqual({ searchedAhead: { query: "Hi", limit: 6, passages: [] } });
  });

  it("a turn stopped while its search ahead is still on its way does not wait for it", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const kbRow = (await getKnowledgeBase(openDb(env), kb.id))!;
    const cmd = { chatId: chat.id, kb: kbRow, content: QUESTION, modelId: "local-extractive", mode: "quick", websearch: false, actor: {}, operation: "chat", stream: false };
    // A JSON turn's late parts follow on a stream of their own (src/services/chats/session.ts), held back here.
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const held = new ReadableStream<Uint8Array>({
      async start(c) {
        await gate;
        c.enqueue(new TextEncoder().encode("{}"));
        c.close();
      },
    });
    const stub = env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chat.id));
    const answered = stub.turnJson(JSON.stringify(cmd), held);
    await new Promise((r) => setTimeout(r, 200)); // the turn is waiting for its late parts
    const stopped = await Promise.race([
      stub.fetch("https://chat-session/stop", { method: "POST" }).then((r) => r.json()),
      new Promise((r) => setTimeout(() => r("still waiting"), 3_000)),
    ]);
    expect(stopped).toEqual({ stopped: true });
    const outcome = ((await answered) as any).outcome;
    expect(outcome.status).toBe("partial");
    expect(outcome.assistant_message.metadata).toMatchObject({ status: "partial" });
    release();
  });

  it("a JSON turn's late parts go inline when they are done by the time it is sent, on a stream when they are not", async () => {
    const found = { query: "Hi", limit: 6, passages: [] };
    const done = await lateArgument({ searchedAhead: Promise.resolve(found) } as unknown as TurnCommand);
    expect(done).toBe(JSON.stringify({ searchedAhead: found }));
    expect(await lateArgument({} as TurnCommand)).toBe("{}");
    let finish = (_: typeof found) => {};
    const pending = await lateArgument({ searchedAhead: new Promise((r) => (finish = r)) } as unknown as TurnCommand);
    expect(pending).toBeInstanceOf(ReadableStream);
    finish(found);
    expect(await new Response(pending as ReadableStream).json()).toEqual({ searchedAhead: found });
  });

  it("the chat's object answers from late parts passed inline", async () => {
    const { kb, auth, documentId } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const kbRow = (await getKnowledgeBase(openDb(env), kb.id))!;
    const cmd = { chatId: chat.id, kb: kbRow, content: QUESTION, modelId: "local-extractive", mode: "quick", websearch: false, actor: {}, operation: "chat", stream: false };
    // A passage no search finds: the answer cites it only if the object took the search from the inline parts.
    const passage = { document_id: documentId, filename: "handbook.md", chunk_id: "chk_inline_marker", text: "Customers can request a refund within 30 days of purchase.", score: 1, page: null };
    const late = JSON.stringify({ searchedAhead: { query: QUESTION, limit: QUICK_PASSAGES, passages: [passage] } });
    const stub = env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chat.id));
    const outcome = ((await stub.turnJson(JSON.stringify(cmd), late)) as any).outcome;
    expect(outcome.status).toBe("complete");
    expect(outcome.sources.map((s: any) => s.chunk_id)).toEqual(["chk_inline_marker"]);
  });

  it("a body without a second line, or a malformed one, has no late parts", async () => {
    const plain = bodyOf('{"chatId":"c2"}');
    plain.release();
    const a = await readTurnBody(plain.request);
    expect(a.cmd.chatId).toBe("c2");
    expect(await a.late).toEqual({});
    const broken = bodyOf('{"chatId":"c3"}\n', "{not json");
    broken.release();
    expect(await (await readTurnBody(broken.request)).late).toEqual({});
  });

  it("decodes characters whose bytes arrive in separate chunks", async () => {
    const bytes = new TextEncoder().encode('{"chatId":"c4","content":"café ☕"}\n{"searchedAhead":{"query":"naïve","limit":1,"passages":[]}}\n');
    const chunks = Array.from(bytes, (b) => new Uint8Array([b])); // one byte at a time: every character split
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const chunk of chunks) c.enqueue(chunk);
        c.close();
      },
    });
    const { cmd, late } = await readTurnBody(new Request("https://chat-session/turn", { method: "POST", body }));
    expect(cmd).toMatchObject({ chatId: "c4", content: "café ☕" });
    expect(await late).toEqual({ searchedAhead: { query: "naïve", limit: 1, passages: [] } });
  });
});

describe("a search by knowledge base id, ahead of its authorization", () => {
  it("fast-raw-query searched ahead reads live data and is refused as soon as the key is", async () => {
    const { org, kb, auth, documentId } = await kbWithDocument();
    const k = await createKey(org, { scopes: ["query:rag", "documents:write"] });
    const query = (key: string) => call("/chats/fast-raw-query", { key, body: { knowledge_base_id: kb.id, content: "express shipping costs", chunk_count: 5 } });
    const first = expectStatus(await query(k.key), 200);
    expect(first.results.map((r: any) => r.document_id)).toEqual([documentId]);
    expect(expectStatus(await query(k.key), 200)).toEqual(first); // searched ahead this time
    // Deleted just before: the search ahead does not find it.
    expect((await call(`/documents/${documentId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    expect(expectStatus(await query(k.key), 200).results).toEqual([]);
    // Another key of another organization never rides on it.
    const stranger = await createKey((await kbWithDocument()).org, { scopes: ["query:rag"] });
    expect((await query(stranger.key)).status).toBe(404);
    expect((await call(`/api-keys/${k.id}`, { cookie: org.owner.cookie, method: "DELETE" })).status).toBe(204);
    expect((await query(k.key)).status).toBe(401);
  });
});

describe("a deep turn's todo list, saved off its path", () => {
  it("streams each change at once; the last one is saved before done, also when a save fails", async () => {
    const { kb, auth } = await kbWithDocument();
    const { chat } = await newChat(auth, kb);
    const writer = new TodoWriter(openDb(env), chat.id);
    const todo = { items: [{ id: "t1", content: "Search", status: "pending" as const }], updated_at: new Date().toISOString() };
    for (const status of ["pending", "in_progress", "completed"] as const) writer.save({ ...todo, items: [{ ...todo.items[0], status }] });
    await writer.settled();
    expect(expectStatus(await call(`/chats/${chat.id}/todo`, auth), 200).todo.items[0].status).toBe("completed");
    // Against a slow database: one write at a time, changes made meanwhile saved together, settled() waits.
    const written: string[] = [];
    let release = () => {};
    const slow = { update: () => ({ set: (v: any) => ({ where: () => new Promise<void>((r) => (release = () => (written.push(v.todo.items[0].status), r()))) }) }) };
    const w = new TodoWriter(slow as never, chat.id);
    for (const status of ["pending", "in_progress", "completed"] as const) w.save({ ...todo, items: [{ ...todo.items[0], status }] });
    let done = false;
    const settled = w.settled().then(() => (done = true));
    await new Promise((r) => setTimeout(r, 5));
    expect(done).toBe(false);
    release();
    await new Promise((r) => setTimeout(r, 5));
    expect(done).toBe(false);
    release();
    await settled;
    expect(written).toEqual(["pending", "completed"]);
    // A save that fails is logged; the next one catches up.
    const broken = new TodoWriter({ update: () => { throw new Error("D1 is down"); } } as never, chat.id);
    broken.save(todo);
    await broken.settled();
    // A deep turn's `done` comes after its list is saved.
    const events = await readSse(await streamMessage(chat.id, { content: QUESTION, model: "local-extractive", agent_mode: "deep" }, auth));
    expect(events.at(-1)!.data.type).toBe("done");
    const saved = expectStatus(await call(`/chats/${chat.id}/todo`, auth), 200).todo;
    const updates = events.filter((e) => e.data.type === "todo_update");
    expect(updates.length).toBeGreaterThan(1);
    expect(saved.items.map((i: any) => i.content)).toEqual(updates.at(-1)!.data.todo.items.map((i: any) => i.content));
    expect(saved.items.every((i: any) => i.status === "completed")).toBe(true);
  });
});

describe("memory while the user message is on its way", () => {
  it("\"remember that\" stored before the message landed is not credited to the previous message", async () => {
    const org = await createOrg();
    const kb = await memoryKb(org, "subject");
    await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
    const { chat } = await newChat({ cookie: org.owner.cookie }, kb);
    const earlier = await appendMessage(openDb(env), chat.id, { role: "user", content: "Hello" });
    const scope = { ...(await scopeFor(chat.id, "ext:alice")), questionMessageId: "msg_not_written_yet" };
    await memoryContext.gather(scope, "Remember that my locker is number 815.", new AbortController().signal);
    const row = await env.DB.prepare("SELECT source_message_id FROM memories WHERE source_chat_id = ?").bind(chat.id).first<{ source_message_id: string | null }>();
    expect(row).toEqual({ source_message_id: null });
    expect(earlier.id).toBeTruthy();
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
    const written = await finalWrite(chat.id, user, answerId);
    // The user message's row and the chat's counters come back from the write itself (no turn was recorded).
    expect(written[0].results[0]).toMatchObject({ id: user.id, role: "user", seq: 1 });
    expect(written[2].results[0]).toMatchObject({ message_count: 2 });
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
    const written = await finalWrite(chat.id, user, answerId);
    // The message already there comes back as the chat has it; the counters count both messages.
    expect(written[0].results[0]).toMatchObject({ id: user.id, role: "user", seq: 1 });
    expect(written[2].results[0]).toMatchObject({ message_count: 2 });
    expect(await transcript(chat.id)).toEqual({
      msgs: [
        { id: user.id, seq: 1, role: "user" },
        { id: answerId, seq: 2, role: "assistant" },
      ],
      chat: { turn_message_id: null, turn_lease_expires_at: null },
    });
  });
});
