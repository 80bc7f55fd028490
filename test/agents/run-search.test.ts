import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CAPABILITIES } from "../../src/capabilities";
import type { Caller } from "../../src/contracts/caller";
import { jobContext, type ServiceContext } from "../../src/contracts/context";
import { openDb } from "../../src/db/client";
import { getAgent } from "../../src/services/agents/agents";
import { startRunSearched } from "../../src/services/agents/run-search";
import { QUICK_PASSAGES } from "../../src/services/answer/stages/plan";
import { getKnowledgeBase } from "../../src/services/knowledge-bases";
import { turnPassage } from "../../src/services/retrieval/retriever";
import { searchKnowledgeBase } from "../../src/services/retrieval/search";
import { call, expectStatus } from "../helpers";
import { kbWithDocument } from "../chats/chat-helpers";
import { createAgent, runAgent } from "./agent-helpers";

/**
 * A run requested by a caller (REST, A2A) searches beside the writes of its chat and run (run-search.ts): the
 * request is authorized by then, and the turn uses the search when its plan would search the same.
 */
const QUESTION = "How many days do customers have to request a refund?";

async function setup(mode: "quick" | "deep") {
  const { org, kb, auth, documentId } = await kbWithDocument();
  const created = await createAgent({ cookie: org.owner.cookie }, kb, { name: "Refund desk", agent_mode: mode, model: "local-extractive" });
  const db = openDb(env);
  const agent = (await getAgent(db, created.id))!;
  const kbRow = (await getKnowledgeBase(db, kb.id))!;
  const caller = { type: "user", user: { id: org.owner.id }, sessionId: "s" } as unknown as Caller;
  const job = jobContext(env, { capabilities: CAPABILITIES, waitUntil: () => {} });
  const ctx: ServiceContext = { db: job.db, env: job.env, config: job.config, capabilities: job.capabilities, waitUntil: job.waitUntil, requestId: null, caller };
  const start = (content: string, extra: object = {}) =>
    startRunSearched(ctx, {
      agent,
      kb: kbRow,
      trigger: "api",
      content,
      actor: { userId: org.owner.id, apiKeyId: null },
      subject: `user:${org.owner.id}`,
      chat: null,
      owner: { userId: org.owner.id, apiKeyId: null, externalSubjectId: null },
      stream: false,
      ...extra,
    } as Parameters<typeof startRunSearched>[1]);
  return { org, kb, auth, documentId, created, db, start };
}

describe("an agent run's search beside its writes", () => {
  it("finds what the turn's own search would, for a quick agent's new conversation", async () => {
    const { kb, db, start } = await setup("quick");
    const { cmd, run } = await start(QUESTION);
    expect(run.status).toBe("running");
    const direct = (await searchKnowledgeBase(env, db, { knowledgeBaseId: kb.id, query: QUESTION, limit: QUICK_PASSAGES })).map(turnPassage);
    expect(direct.length).toBeGreaterThan(0);
    expect(await cmd.searchedAhead).toEqual({ query: QUESTION, limit: QUICK_PASSAGES, passages: direct });
  });

  it("is left to the turn for a short follow-up with history, and for a deep question split into parts", async () => {
    const quick = await setup("quick");
    const seeded = await quick.start("and gift cards?", { history: [{ role: "user", content: QUESTION }, { role: "assistant", content: "Within 30 days." }] });
    expect(await seeded.cmd.searchedAhead).toBeUndefined();
    const deep = await setup("deep");
    const split = await deep.start("When is the support desk open? How much does express shipping cost?");
    expect(await split.cmd.searchedAhead).toBeUndefined();
    const whole = await deep.start(QUESTION);
    expect((await whole.cmd.searchedAhead)?.passages.length).toBeGreaterThan(0);
  });

  it("answers through the API with the handbook's passage, and sees a document deleted just before the run", async () => {
    const { auth, documentId, created } = await setup("quick");
    const r = expectStatus(await runAgent(auth, created.id, { content: QUESTION }), 200);
    expect(r.run.status).toBe("completed");
    expect(r.assistant_message.content).toMatch(/30 days/);
    expect((await call(`/documents/${documentId}`, { ...auth, method: "DELETE" })).status).toBe(204);
    const after = expectStatus(await runAgent(auth, created.id, { content: QUESTION }), 200);
    expect(after.assistant_message.metadata?.sources ?? []).toEqual([]);
    expect(after.assistant_message.content).not.toMatch(/30 days/);
  });
});
