import { badRequest } from "../../lib/errors";
import type { ServiceContext } from "../../contracts/context";
import type { KnowledgeBase } from "../../db/schema";
import { followUpQuestions, improvePrompt, type ImproveCategory } from "../answer/assist";
import { createRetriever } from "../retrieval/retriever";
import { actorOf, assertCanSpend } from "../billing/metering";
import { knowledgeBaseFor } from "../knowledge-bases";
import { assertSubjectParam, authorizeChat } from "./access";
import { createChat } from "./chats";
import { titleFrom } from "./create";
import { answeredOrThrow, runTurnJson } from "./session";
import { rememberPlacement, searchAhead, searchedAhead } from "./search-ahead";
import { assertExtrasResolvable, assertKnowledgeBaseActive, prepareTurn, resolveModel } from "./turns";

/** The knowledge base a query names, authorized for query:rag and active. */
async function queryableKnowledgeBase(ctx: ServiceContext, id: string): Promise<KnowledgeBase> {
  const kb = await knowledgeBaseFor(ctx, id, "query:rag", { addressedBy: "param" });
  assertKnowledgeBaseActive(kb);
  return kb;
}

export interface FastQueryInput {
  knowledge_base_id: string;
  content: string;
  model: string;
  chat_id?: string;
  chunk_count: number;
  external_subject_id?: string;
  websearch_enable: boolean;
  connector_slugs: string[];
}

/** POST /chats/fast-query: one turn, kept in a query chat (the given one, or a new one). */
export async function fastQuery(ctx: ServiceContext, body: FastQueryInput) {
  const caller = ctx.caller;
  assertSubjectParam(caller, body.external_subject_id);
  const db = ctx.db;
  const kb = await queryableKnowledgeBase(ctx, body.knowledge_base_id);
  const model = resolveModel(ctx, body.model);
  assertExtrasResolvable({ connector_slugs: body.connector_slugs, delegate_agent_ids: [] }, ctx.capabilities.tools);
  let chat;
  let spend: Promise<void> | undefined;
  if (body.chat_id) {
    chat = (await authorizeChat(ctx, body.chat_id, body.external_subject_id)).chat;
    if (chat.knowledgeBaseId !== kb.id) throw badRequest("chat_id belongs to another knowledge base", [{ path: "body.chat_id", message: "Another knowledge base" }]);
  } else {
    // Refused before the query chat exists; the turn reuses this check.
    spend = assertCanSpend(db, kb.tenantId);
    await spend;
    chat = await createChat(db, {
      id: crypto.randomUUID(),
      kb,
      model: model.id,
      title: titleFrom(body.content),
      ownerUserId: caller.type === "user" ? caller.user.id : null,
      apiKeyId: caller.type === "api_key" ? caller.key.id : null,
      externalSubjectId: body.external_subject_id ?? null,
      agentMode: "quick",
      isQuery: true,
      settings: { websearch_enable: body.websearch_enable },
    });
  }
  const cmd = await prepareTurn(ctx, caller, chat, kb, {
    content: body.content,
    model,
    mode: "quick",
    websearch: body.websearch_enable,
    operation: "fast_query",
    chunkCount: body.chunk_count,
    extras: { connector_slugs: body.connector_slugs, delegate_agent_ids: [], skill_ids: [], attached_artifact_ids: [] },
    spend,
  });
  const outcome = answeredOrThrow(await runTurnJson(ctx.env, cmd));
  return { answer: outcome.assistant_message.content, sources: outcome.sources, usage: outcome.usage, chat_id: chat.id };
}

export interface RawQueryInput {
  knowledge_base_id: string;
  content?: string;
  query?: string;
  chunk_count: number;
  external_subject_id?: string;
}

interface RawChunk {
  chunk_id: string | null;
  text: string;
  score: number;
  page: number | null;
}

/** POST /chats/fast-raw-query (and raw-query): retrieval only, the best chunks grouped by document, best first. */
export async function rawQuery(ctx: ServiceContext, body: RawQueryInput) {
  assertSubjectParam(ctx.caller, body.external_subject_id);
  const query = (body.content ?? body.query)!;
  // Started alongside the knowledge base's authorization when this caller searched it before (search-ahead.ts).
  const ahead = searchAhead(ctx, { knowledgeBaseId: body.knowledge_base_id }, query, body.chunk_count);
  const kb = await queryableKnowledgeBase(ctx, body.knowledge_base_id);
  rememberPlacement(ctx.caller, { knowledgeBaseId: kb.id }, kb);
  const passages = (await searchedAhead(ctx, ahead, kb)) ?? (await createRetriever(ctx.db, ctx.env, kb, actorOf(ctx.caller))(query, body.chunk_count));
  const groups = new Map<string, { document_id: string | null; filename: string | null; best: number; chunks: RawChunk[] }>();
  for (const p of passages) {
    const key = p.document_id ?? p.url ?? "";
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { document_id: p.document_id, filename: p.filename, best: p.score, chunks: [] }));
    g.best = Math.max(g.best, p.score);
    g.chunks.push({ chunk_id: p.chunk_id, text: p.text, score: Math.round(p.score * 10_000) / 10_000, page: p.page ?? null });
  }
  const results = [...groups.values()].sort((a, b) => b.best - a.best).map(({ best: _b, ...g }) => g);
  return { query, results };
}

/** POST /chats/follow-up-questions: three suggestions for a chat of that knowledge base. */
export async function suggestFollowUps(
  ctx: ServiceContext,
  body: { knowledge_base_id: string; chat_id: string; external_subject_id?: string },
) {
  const kb = await queryableKnowledgeBase(ctx, body.knowledge_base_id);
  const { chat } = await authorizeChat(ctx, body.chat_id, body.external_subject_id);
  if (chat.knowledgeBaseId !== kb.id) {
    throw badRequest("The chat does not belong to that knowledge base", [{ path: "body.chat_id", message: "Another knowledge base" }]);
  }
  await assertCanSpend(ctx.db, chat.tenantId);
  const model = resolveModel(ctx, chat.model, "chat.model");
  return followUpQuestions(ctx.db, ctx.env, { chat, kb, model, actor: actorOf(ctx.caller) });
}

/** POST /chats/improve-prompt: a question rewritten into a better prompt for this knowledge base. */
export async function improveQuestion(
  ctx: ServiceContext,
  body: { knowledge_base_id: string; query: string; category: ImproveCategory; model?: string },
) {
  const kb = await queryableKnowledgeBase(ctx, body.knowledge_base_id);
  await assertCanSpend(ctx.db, kb.tenantId);
  const model = body.model ? resolveModel(ctx, body.model) : undefined;
  return improvePrompt(ctx.db, ctx.env, { kb, model, query: body.query, category: body.category, actor: actorOf(ctx.caller) });
}
