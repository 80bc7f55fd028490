import { createRoute, z } from "@hono/zod-openapi";
import { authorize, requireCaller } from "../../auth/authorize";
import { badRequest } from "../../lib/errors";
import { errorResponses, extraErrors, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { createRetriever } from "../../services/answer/retriever";
import { followUpQuestions, improvePrompt, IMPROVE_CATEGORIES } from "../../services/answer/assist";
import { assertSubjectParam, authorizeChat } from "../../services/chats/access";
import { createChat, truncateTitle } from "../../services/chats/chats";
import { runTurnJson } from "../../services/chats/session";
import { assertKnowledgeBaseActive, assertExtrasResolvable, prepareTurn, resolveModel } from "../../services/chats/turns";
import { actorOf, assertCanSpend } from "../../services/billing/metering";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import { MAX_CONTENT, SourceSchema, SubjectId, UsageSchema } from "./schemas";

const tags = ["Queries"];

const FastQueryBody = z.object({
  knowledge_base_id: z.string().min(1).max(128),
  content: z.string().min(1).max(MAX_CONTENT),
  model: z.string().min(1).max(200),
  chat_id: z.string().min(1).max(128).optional(),
  chunk_count: z.number().int().min(1).max(50).default(6),
  external_subject_id: SubjectId.optional(),
  websearch_enable: z.boolean().default(false),
  connector_slugs: z.array(z.string().min(1).max(128)).max(100).default([]),
});

const RawQueryBody = z
  .object({
    knowledge_base_id: z.string().min(1).max(128),
    content: z.string().min(1).max(MAX_CONTENT).optional(),
    query: z.string().min(1).max(MAX_CONTENT).optional().openapi({ description: "Alias of content" }),
    chunk_count: z.number().int().min(1).max(50).default(10),
    external_subject_id: SubjectId.optional(),
    model: z.string().max(200).optional().openapi({ description: "Accepted for symmetry with fast-query; unused" }),
    chat_id: z.string().max(128).optional(),
    websearch_enable: z.boolean().optional(),
    connector_slugs: z.array(z.string().max(128)).max(100).optional(),
  })
  .refine((b) => b.content || b.query, { message: "content (or query) is required", path: ["content"] });

const RawQueryResponse = z
  .object({
    query: z.string(),
    results: z.array(
      z.object({
        document_id: z.string().nullable(),
        filename: z.string().nullable(),
        chunks: z.array(z.object({ chunk_id: z.string().nullable(), text: z.string(), score: z.number(), page: z.number().int().nullable() })),
      }),
    ),
  })
  .openapi("RawQueryResult");

const fastQuery = createRoute({
  method: "post",
  path: "/chats/fast-query",
  tags,
  operationId: "fastQuery",
  summary: "One retrieval pass and a generated answer",
  description: "The turn is kept in a query chat (`is_query: true`): the given `chat_id`, or a new one.",
  security: userOrKey,
  request: { body: jsonBody(FastQueryBody) },
  responses: {
    200: jsonContent(
      z.object({ answer: z.string(), sources: z.array(SourceSchema), usage: UsageSchema, chat_id: z.string() }),
      "The answer",
    ),
    ...extraErrors(402),
    ...errorResponses,
  },
});

const rawRoute = (path: string, operationId: string, summary: string) =>
  createRoute({
    method: "post",
    path,
    tags,
    operationId,
    summary,
    description: "Retrieval only, no answer generation: the best chunks grouped by document, best first.",
    security: userOrKey,
    request: { body: jsonBody(RawQueryBody) },
    responses: { 200: jsonContent(RawQueryResponse, "Grouped chunks"), ...errorResponses },
  });

const fastRaw = rawRoute("/chats/fast-raw-query", "fastRawQuery", "Grouped retrieval chunks, no answer generation");
const raw = rawRoute("/chats/raw-query", "rawQuery", "Alias of fast-raw-query (prefer fast-raw-query)");

const followUps = createRoute({
  method: "post",
  path: "/chats/follow-up-questions",
  tags,
  operationId: "followUpQuestions",
  summary: "Three suggested follow-up questions for a chat",
  security: userOrKey,
  request: {
    body: jsonBody(
      z.object({ knowledge_base_id: z.string().min(1).max(128), chat_id: z.string().min(1).max(128), external_subject_id: SubjectId.optional() }),
    ),
  },
  responses: { 200: jsonContent(z.object({ questions: z.array(z.string()) }), "Questions"), ...errorResponses },
});

const improve = createRoute({
  method: "post",
  path: "/chats/improve-prompt",
  tags,
  operationId: "improvePrompt",
  summary: "Rewrite a question into a better prompt for this knowledge base",
  security: userOrKey,
  request: {
    body: jsonBody(
      z.object({
        knowledge_base_id: z.string().min(1).max(128),
        query: z.string().min(1).max(MAX_CONTENT),
        category: z.enum(IMPROVE_CATEGORIES).default("general"),
        model: z.string().min(1).max(200).optional().openapi({ description: "Default: the first available provider model, else local-extractive" }),
      }),
    ),
  },
  responses: {
    200: jsonContent(
      z.object({ improved_prompt: z.string(), analysis: z.string(), techniques_applied: z.array(z.string()), usage: UsageSchema }),
      "The improved prompt",
    ),
    ...extraErrors(402),
    ...errorResponses,
  },
});

type Ctx = Parameters<Parameters<ReturnType<typeof createRouter>["openapi"]>[1]>[0];

async function loadKb(c: Ctx, id: string) {
  const kb = await getKnowledgeBase(c.get("db"), id);
  await authorize(c, "query:rag", knowledgeBaseScope(kb), { what: "Knowledge base", addressedBy: "param" });
  assertKnowledgeBaseActive(kb!);
  return kb!;
}

async function rawQuery(c: Ctx, body: z.infer<typeof RawQueryBody>) {
  assertSubjectParam(requireCaller(c), body.external_subject_id);
  const kb = await loadKb(c, body.knowledge_base_id);
  const query = (body.content ?? body.query)!;
  const passages = await createRetriever(c.get("db"), c.env, kb, actorOf(requireCaller(c)))(query, body.chunk_count);
  const groups = new Map<string, { document_id: string | null; filename: string | null; best: number; chunks: any[] }>();
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

export const chatQueryRoutes = createRouter()
  .openapi(fastQuery, async (c) => {
    const caller = requireCaller(c);
    const body = c.req.valid("json");
    assertSubjectParam(caller, body.external_subject_id);
    const db = c.get("db");
    const kb = await loadKb(c, body.knowledge_base_id);
    const model = resolveModel(c, body.model);
    assertExtrasResolvable({ connector_slugs: body.connector_slugs, delegate_agent_ids: [] });
    let chat;
    if (body.chat_id) {
      chat = (await authorizeChat(c, body.chat_id, body.external_subject_id)).chat;
      if (chat.knowledgeBaseId !== kb.id) throw badRequest("chat_id belongs to another knowledge base", [{ path: "body.chat_id", message: "Another knowledge base" }]);
    } else {
      await assertCanSpend(db, kb.tenantId);
      chat = await createChat(db, {
        id: crypto.randomUUID(),
        kb,
        model: model.id,
        title: truncateTitle(body.content.replace(/\s+/g, " ").trim().slice(0, 80)),
        ownerUserId: caller.type === "user" ? caller.user.id : null,
        apiKeyId: caller.type === "api_key" ? caller.key.id : null,
        externalSubjectId: body.external_subject_id ?? null,
        agentMode: "quick",
        isQuery: true,
        settings: { websearch_enable: body.websearch_enable },
      });
    }
    const cmd = await prepareTurn(c, caller, chat, kb, {
      content: body.content,
      model,
      mode: "quick",
      websearch: body.websearch_enable,
      operation: "fast_query",
      chunkCount: body.chunk_count,
      extras: { connector_slugs: body.connector_slugs, delegate_agent_ids: [], skill_ids: [], attached_artifact_ids: [] },
    });
    const outcome = await runTurnJson(c.env, cmd);
    return c.json(
      { answer: outcome.assistant_message.content, sources: outcome.sources, usage: outcome.usage, chat_id: chat.id },
      200,
    );
  })
  .openapi(fastRaw, async (c) => c.json(await rawQuery(c, c.req.valid("json")), 200))
  .openapi(raw, async (c) => c.json(await rawQuery(c, c.req.valid("json")), 200))
  .openapi(followUps, async (c) => {
    const body = c.req.valid("json");
    const kb = await loadKb(c, body.knowledge_base_id);
    const { chat } = await authorizeChat(c, body.chat_id, body.external_subject_id);
    if (chat.knowledgeBaseId !== kb.id) {
      throw badRequest("The chat does not belong to that knowledge base", [{ path: "body.chat_id", message: "Another knowledge base" }]);
    }
    await assertCanSpend(c.get("db"), chat.tenantId);
    const model = resolveModel(c, chat.model, "chat.model");
    const questions = await followUpQuestions(c.get("db"), c.env, { chat, kb, model, actor: actorOf(requireCaller(c)) });
    return c.json({ questions }, 200);
  })
  .openapi(improve, async (c) => {
    const body = c.req.valid("json");
    const kb = await loadKb(c, body.knowledge_base_id);
    await assertCanSpend(c.get("db"), kb.tenantId);
    const model = body.model ? resolveModel(c, body.model) : undefined;
    const result = await improvePrompt(c.get("db"), c.env, {
      kb,
      model,
      query: body.query,
      category: body.category,
      actor: actorOf(requireCaller(c)),
    });
    return c.json(result, 200);
  });

