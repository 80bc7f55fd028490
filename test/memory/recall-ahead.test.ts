import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CAPABILITIES } from "../../src/capabilities";
import type { Caller } from "../../src/contracts/caller";
import { jobContext, type ServiceContext } from "../../src/contracts/context";
import type { MemoryRow } from "../../src/contracts/memory";
import { openDb } from "../../src/db/client";
import { MAX_AHEAD_CHARS, recallAhead, turnRecalledAhead } from "../../src/services/chats/recall-ahead";
import { rememberedPlacement, rememberPlacement, type SearchAhead } from "../../src/services/chats/search-ahead";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { recallMemories, recallReads } from "../../src/services/memory/recall";
import { getMemorySettings, memorySpaceFor } from "../../src/services/memory/settings";
import { memoryContext } from "../../src/services/memory/turn";
import { call, createKey, createOrg, expectStatus } from "../helpers";
import { memoryKb, memoryTurn, scopeFor, setMemorySettings } from "./memory-helpers";

/**
 * Issue 28: with memory on, a turn's recall is read ahead, beside the turn's read (src/services/chats/recall-ahead.ts).
 * Only reads are made ahead, only where the caller reached the chat before, and the turn uses them only for its own
 * memory space and query: another subject's memories are never recalled, and what the memory holds at the turn is
 * what it recalls.
 */

const keyCaller = (id: string) => ({ type: "api_key", key: { id }, scopes: new Set(), isAdmin: false, organizationStatus: "active" }) as unknown as Caller;
function contextOf(caller: Caller): ServiceContext {
  const job = jobContext(env, { capabilities: CAPABILITIES, waitUntil: () => {} });
  return { db: job.db, env: job.env, config: job.config, capabilities: job.capabilities, waitUntil: job.waitUntil, requestId: null, caller };
}
const searching = {} as SearchAhead; // a search ahead started for the same turn (the recall shares its place)
const QUESTION = "What is my locker number?";

async function memoryOn(mode: "subject" | "kb_restricted" = "subject") {
  const org = await createOrg();
  const kb = await memoryKb(org, mode);
  await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
  const subject = `user:${org.owner.id}`;
  await memoryTurn({ cookie: org.owner.cookie }, kb, subject, "Remember that my locker is number 815.");
  const row = (await getKnowledgeBase(openDb(env), kb.id))!;
  return { org, kb, row, subject };
}

describe("a turn's memory recall read ahead", () => {
  it("reads, for a caller who reached the chat before, what the turn's own recall reads of its space", async () => {
    const { row, subject } = await memoryOn();
    const chatId = crypto.randomUUID();
    const a = contextOf(keyCaller(`key_${crypto.randomUUID()}`));
    expect(recallAhead(a, { chatId }, QUESTION, searching)).toBeNull(); // never reached
    rememberPlacement(a.caller, { chatId }, row);
    expect(recallAhead(a, { chatId }, QUESTION, searching)).toBeNull(); // no subject remembered
    rememberPlacement(a.caller, { chatId }, row, subject);
    expect(recallAhead(a, { chatId }, QUESTION, null)).toBeNull(); // no search ahead: no place in the isolate
    expect(recallAhead(a, { chatId }, "Remember that my bike is blue.", searching)).toBeNull();
    expect(recallAhead(a, { chatId }, "Forget my locker number", searching)).toBeNull();
    expect(recallAhead(contextOf(keyCaller(`key_${crypto.randomUUID()}`)), { chatId }, QUESTION, searching)).toBeNull(); // another caller
    const ahead = await turnRecalledAhead(recallAhead(a, { chatId }, QUESTION, searching));
    const space = (await memorySpaceFor(a.db, row, subject, await getMemorySettings(a.db, row.tenantId)))!;
    expect(ahead).toEqual({ scopeKey: space.scopeKey, query: QUESTION, reads: await recallReads(a.db, env, space, QUESTION) });
    expect(ahead!.reads.lexical.rows.map((r) => r.content)).toEqual(["My locker is number 815."]);
    // Reads too large to carry through the Worker (a big space's stored vectors) are left to the turn.
    const big = { ...ahead!.reads.lexical.rows[0], embedding: "0".repeat(MAX_AHEAD_CHARS) };
    const heavy = { scopeKey: Promise.resolve(space.scopeKey), query: QUESTION, reads: Promise.resolve({ ...ahead!.reads, vector: { model: "m", rows: [big] } }) };
    expect(await turnRecalledAhead(heavy)).toBeUndefined();
    // A knowledge base without memory reads nothing ahead.
    rememberPlacement(a.caller, { chatId }, { ...row, kbMemoryMode: "disabled" }, subject);
    expect(recallAhead(a, { chatId }, QUESTION, searching)).toBeNull();
  });

  it("is used by the turn only for its own space and query", async () => {
    const { kb, subject, org } = await memoryOn();
    const chatId = expectStatus(await call("/chats", { cookie: org.owner.cookie, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } }), 201).chat.id;
    const scope = await scopeFor(chatId, subject);
    const space = (await memorySpaceFor(scope.db, scope.kb, subject))!;
    const reads = await recallReads(scope.db, env, space, QUESTION);
    // Reads holding a memory the database does not have: recalled only if the turn took the reads.
    const planted: MemoryRow = { ...reads.lexical.rows[0], id: "mry_planted", seq: -1, content: "My locker is number 999." };
    const withPlanted = { lexical: { rows: [planted], total: reads.lexical.total }, vector: { model: reads.vector.model, rows: [] } };
    const gather = async (ahead: { scopeKey: string; query: string }) => {
      const r = await memoryContext.gather({ ...scope, recalledAhead: Promise.resolve({ ...ahead, reads: withPlanted }) }, QUESTION, new AbortController().signal);
      return r!.passages.map((p) => p.text);
    };
    expect(await gather({ scopeKey: space.scopeKey, query: QUESTION })).toEqual(["You told me: My locker is number 999."]);
    // Another space (another subject's, or another knowledge base's) or another query: the turn recalls for itself.
    const other = (await memorySpaceFor(scope.db, scope.kb, "user:someone-else"))!;
    expect(await gather({ scopeKey: other.scopeKey, query: QUESTION })).toEqual(["You told me: My locker is number 815."]);
    expect(await gather({ scopeKey: space.scopeKey, query: "What is my locker?" })).toEqual(["You told me: My locker is number 815."]);
    // A stopped turn does not wait for reads still on their way.
    const stop = new AbortController();
    const waiting = memoryContext.gather({ ...scope, recalledAhead: new Promise(() => {}) }, QUESTION, stop.signal);
    stop.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
  });

  it("through the API: a turn recalls what the memory holds when it starts, after a deletion and an addition", async () => {
    const org = await createOrg();
    const kb = await memoryKb(org, "subject");
    await setMemorySettings(org, { mode: "durable", retention: "explicit_only" });
    const auth = { cookie: org.owner.cookie };
    const chatId = expectStatus(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive" } }), 201).chat.id;
    const send = async (content: string) =>
      expectStatus(await call(`/chats/${chatId}/messages`, { ...auth, body: { content, model: "local-extractive", agent_mode: "quick" } }), 200).assistant_message;
    const recalled = (m: { metadata: { sources: Array<{ filename: string; text: string }> } }) => m.metadata.sources.filter((s) => s.filename === "Memory").map((s) => s.text);
    await send("Remember that my locker is number 815.");
    expect(recalled(await send(QUESTION))).toEqual(["You told me: My locker is number 815."]);
    // Deleted just before the next turn (which reads its recall ahead): not recalled.
    const [memory] = expectStatus(await call(`/tenants/${org.tenantId}/memories`, auth), 200).memories;
    expectStatus(await call(`/tenants/${org.tenantId}/memories/${memory.id}`, { ...auth, method: "DELETE" }), 204);
    expect(recalled(await send(QUESTION))).toEqual([]);
    // Added in another chat just before: recalled.
    const other = expectStatus(await call("/chats", { ...auth, body: { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", message: "Remember that my locker is number 42." } }), 201);
    expect(other.assistant_message.content).toMatch(/42/);
    expect(recalled(await send(QUESTION))).toEqual(["You told me: My locker is number 42."]);
  });

  it("a chat created with or without a first message is remembered with its subject: its next turn reads ahead", async () => {
    const { org, kb } = await memoryOn();
    const k = await createKey(org, { scopes: ["query:rag"] });
    const caller = keyCaller(k.id);
    for (const message of [undefined, "How are refunds paid?"]) {
      const body = { id: crypto.randomUUID(), tenant_id: kb.tenant_id, knowledge_base_id: kb.id, model: "local-extractive", agent_mode: "quick", external_subject_id: "cust-7", message };
      const chat = expectStatus(await call("/chats", { key: k.key, body }), 201).chat;
      expect(rememberedPlacement(caller, { chatId: chat.id })).toMatchObject({ kb: { id: kb.id }, subject: "ext:cust-7" });
    }
  });

  it("a misconfigured embedder leaves the recall full-text only, ahead or not", async () => {
    const { row, subject } = await memoryOn();
    const db = openDb(env);
    const broken = { ...env, EMBEDDING_PROVIDER: "no-such-provider" } as typeof env;
    const space = (await memorySpaceFor(db, row, subject, await getMemorySettings(db, row.tenantId)))!;
    const reads = await recallReads(db, broken, space, QUESTION);
    expect(reads.vector.rows).toEqual([]);
    expect(reads.lexical.rows.map((r) => r.content)).toEqual(["My locker is number 815."]);
    const recalled = await recallMemories({ env: broken, db, actor: {} }, space, QUESTION);
    expect(recalled.map((r) => r.memory.content)).toEqual(["My locker is number 815."]);
  });
});
