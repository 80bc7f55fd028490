import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { extraErrors, jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { IMPROVE_CATEGORIES } from "../../services/answer/assist";
import { fastQuery as runFastQuery, improveQuestion, rawQuery, suggestFollowUps } from "../../services/chats/queries";
import { MAX_CONTENT, SourceSchema, SubjectId, UsageSchema } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Queries"]);

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

const rawRoute = (path: string, operationId: string, summary: string) =>
  route("post", path, "query:rag", {
    operationId,
    summary,
    description: "Retrieval only, no answer generation: the best chunks grouped by document, best first.",
    request: { body: jsonBody(RawQueryBody) },
    responses: { 200: jsonContent(RawQueryResponse, "Grouped chunks") },
  });

export const chatQueryRoutes = createRouter();

const fastQuery = route("post", "/chats/fast-query", "query:rag", {
  operationId: "fastQuery", summary: "One retrieval pass and a generated answer",
  description: "The turn is kept in a query chat (`is_query: true`): the given `chat_id`, or a new one.",
  request: { body: jsonBody(FastQueryBody) },
  responses: {
    200: jsonContent(
      z.object({ answer: z.string(), sources: z.array(SourceSchema), usage: UsageSchema, chat_id: z.string() }),
      "The answer",
    ),
    ...extraErrors(402, 502),
  },
});
chatQueryRoutes.openapi(fastQuery, async (c) => c.json(await runFastQuery(ctxOf(c), c.req.valid("json")), 200));

const fastRaw = rawRoute("/chats/fast-raw-query", "fastRawQuery", "Grouped retrieval chunks, no answer generation");
chatQueryRoutes.openapi(fastRaw, async (c) => c.json(await rawQuery(ctxOf(c), c.req.valid("json")), 200));

const raw = rawRoute("/chats/raw-query", "rawQuery", "Alias of fast-raw-query (prefer fast-raw-query)");
chatQueryRoutes.openapi(raw, async (c) => c.json(await rawQuery(ctxOf(c), c.req.valid("json")), 200));

const followUps = route("post", "/chats/follow-up-questions", "query:rag", {
  operationId: "followUpQuestions", summary: "Three suggested follow-up questions for a chat",
  request: {
    body: jsonBody(
      z.object({ knowledge_base_id: z.string().min(1).max(128), chat_id: z.string().min(1).max(128), external_subject_id: SubjectId.optional() }),
    ),
  },
  responses: { 200: jsonContent(z.object({ questions: z.array(z.string()) }), "Questions") },
});
chatQueryRoutes.openapi(followUps, async (c) => c.json({ questions: await suggestFollowUps(ctxOf(c), c.req.valid("json")) }, 200));

const improve = route("post", "/chats/improve-prompt", "query:rag", {
  operationId: "improvePrompt", summary: "Rewrite a question into a better prompt for this knowledge base",
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
  },
});
chatQueryRoutes.openapi(improve, async (c) => c.json(await improveQuestion(ctxOf(c), c.req.valid("json")), 200));
