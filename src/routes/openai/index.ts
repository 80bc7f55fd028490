import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import type { Context } from "hono";
import type { KeyCaller } from "../../contracts/caller";
import { forbidden } from "../../lib/errors";
import { extraErrors, jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { completeJson, completeStream, conversationOf } from "../../services/openai/completions";
import { completionBody, completionStream } from "../../services/openai/format";
import { listCompletionModels } from "../../services/openai/models";
import type { AppEnv } from "../../types";
import { routesTagged } from "../define-route";
import { ChatCompletionBody, ChatCompletionSchema, ModelListSchema } from "./schemas";

const route = routesTagged(["OpenAI-compatible"]);

/**
 * POST /openai/chat/completions and GET /openai/models: the knowledge bases and agents an API key
 * reaches, for OpenAI-compatible clients (the `openai` package, Open WebUI, LibreChat, Continue).
 * Point such a client at `{base_url}/api/v1/openai` with the key as its API key.
 */
export const openaiRoutes = createRouter();

/** API keys only (the `openai` client's `Authorization: Bearer`), like the MCP endpoint. */
function keyOf(c: Context<AppEnv>): KeyCaller {
  const caller = c.get("caller");
  if (caller.type !== "api_key") throw forbidden("The OpenAI-compatible endpoints are for API keys (Authorization: Bearer kbk_...)");
  return caller;
}

const completions = route("post", "/openai/chat/completions", "query:rag", {
  operationId: "openaiChatCompletions",
  summary: "OpenAI-compatible chat completions over a knowledge base or an agent (API keys)",
  description:
    "`model` is `kb:<knowledge_base_id>` (the default model), `kb:<knowledge_base_id>:<model id>` or `agent:<agent_id>` " +
    "(GET /openai/models lists them). The last user message is the question and earlier messages its history. The answer " +
    "cites its sources as [n], and `sources` lists them (on the message; on the last chunk when streaming). Each call is " +
    "one turn, metered like any chat turn, kept in a new query chat of the key (`chat_id`). With `stream: true` the " +
    "answer is OpenAI's SSE chunk stream, ending with `data: [DONE]`; `stream_options.include_usage` adds a usage chunk.",
  request: { body: jsonBody(ChatCompletionBody) },
  responses: {
    200: {
      description: "A chat completion, or (stream: true) an SSE stream of chat.completion.chunk objects",
      content: { "application/json": { schema: ChatCompletionSchema }, "text/event-stream": { schema: z.string() } },
    },
    ...extraErrors(402, 502),
  },
  security: [{ bearerAuth: [] }],
});
openaiRoutes.openapi(completions, async (c) => {
  const key = keyOf(c);
  const body = c.req.valid("json");
  const req = { model: body.model, ...conversationOf(body.messages) };
  const created = Math.floor(Date.now() / 1000);
  if (body.stream) {
    const { id, events } = await completeStream(ctxOf(c), key, req);
    // A streamed answer is its own SSE Response; the typed-response check does not apply.
    return completionStream({ id, created, model: body.model }, events.body!, body.stream_options?.include_usage === true) as never;
  }
  const answer = await completeJson(ctxOf(c), key, req);
  return c.json(completionBody({ id: answer.id, created, model: body.model }, answer), 200);
});

const models = route("get", "/openai/models", "query:rag", {
  operationId: "openaiListModels",
  summary: "The knowledge bases and agents this API key can ask, as OpenAI models",
  responses: { 200: jsonContent(ModelListSchema, "Models: kb:<id> for each knowledge base, agent:<id> for each agent") },
  security: [{ bearerAuth: [] }],
});
openaiRoutes.openapi(models, async (c) => c.json(await listCompletionModels(ctxOf(c), keyOf(c)), 200));
