import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../types";
import { authorize, requireCaller } from "../../auth/authorize";
import { ApiError, notFound } from "../../lib/errors";
import { errorResponses, extraErrors, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { assertSubjectParam, authorizeChat, effectiveSubject } from "../../services/chats/access";
import { appendMessage, createChat, getChat, publicChat, truncateTitle } from "../../services/chats/chats";
import { runTurnJson, streamTurn } from "../../services/chats/session";
import { canReadShared, FORK_SEED_LIMIT, shareSafeMessages, shareSafeMetadata } from "../../services/chats/sharing";
import { assertCanSpend } from "../../services/billing/metering";
import { prepareTurn, resolveModel, assertKnowledgeBaseActive, assertExtrasResolvable } from "../../services/chats/turns";
import { storeChatImages } from "../../services/chats/images";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import { ChatIdParam, ChatSchema, CreateChatBody, SendMessageBody, TurnResponseSchema } from "./schemas";

const tags = ["Chats"];

const create = createRoute({
  method: "post",
  path: "/chats",
  tags,
  operationId: "createChat",
  summary: "Create a chat, optionally with its first message",
  description:
    "`id` is a client-generated UUID (409 if already used). With `message`, the first turn is answered and the " +
    "response carries it; without, an empty chat is created (no credits needed). `shared_source_chat_id` seeds the " +
    "new private chat with up to 120 share-safe messages of a chat you can read.",
  security: userOrKey,
  request: { body: jsonBody(CreateChatBody) },
  responses: {
    201: jsonContent(
      z.object({
        chat: ChatSchema,
        user_message: TurnResponseSchema.shape.user_message.optional(),
        assistant_message: TurnResponseSchema.shape.assistant_message.optional(),
        usage: TurnResponseSchema.shape.usage.optional(),
      }),
      "The chat (and the first turn)",
    ),
    ...extraErrors(402),
    ...errorResponses,
  },
});

const send = createRoute({
  method: "post",
  path: "/chats/{id}/messages",
  tags,
  operationId: "sendChatMessage",
  summary: "Send a message and get the complete answer",
  security: userOrKey,
  request: { params: ChatIdParam, body: jsonBody(SendMessageBody) },
  responses: {
    200: jsonContent(TurnResponseSchema, "The user message, the answer and the turn's usage"),
    ...extraErrors(402),
    ...errorResponses,
  },
});

const stream = createRoute({
  method: "post",
  path: "/chats/{id}/messages/stream",
  tags,
  operationId: "streamChatMessage",
  summary: "Send a message and stream the answer as Server-Sent Events",
  description:
    "Each event is `data: <json>` with a `type`: user_message, agent_thought, todo_update, sources, final_response " +
    "(partial with isComplete false, then one with isComplete true and the whole answer), tokens, done; error ends " +
    "the stream. Heartbeats are `event: ping`. A new stream on the same chat replaces the running one.",
  security: userOrKey,
  request: { params: ChatIdParam, body: jsonBody(SendMessageBody) },
  responses: {
    200: { description: "text/event-stream", content: { "text/event-stream": { schema: z.string() } } },
    ...extraErrors(402),
    ...errorResponses,
  },
});

export const chatTurnRoutes = createRouter()
  .openapi(create, async (c) => {
    const caller = requireCaller(c);
    const body = c.req.valid("json");
    assertSubjectParam(caller, body.external_subject_id);
    const db = c.get("db");
    const kb = await getKnowledgeBase(db, body.knowledge_base_id);
    await authorize(c, "query:rag", knowledgeBaseScope(kb), { what: "Knowledge base", addressedBy: "param" });
    if (kb!.tenantId !== body.tenant_id) {
      throw new ApiError("tenant_mismatch", "tenant_id does not match the knowledge base's tenant", {
        details: [{ path: "body.tenant_id", message: "Does not match the knowledge base's tenant" }],
      });
    }
    assertKnowledgeBaseActive(kb!);
    const model = resolveModel(c, body.model);
    assertExtrasResolvable(body);

    // Forking a shared chat: the source must be readable by this caller.
    let seed: Awaited<ReturnType<typeof shareSafeMessages>>["rows"] = [];
    if (body.shared_source_chat_id) {
      const source = await getChat(db, body.shared_source_chat_id.toLowerCase());
      if (!source || !(await canReadShared(c, source, caller))) throw notFound("Shared chat");
      seed = (await shareSafeMessages(db, source.id, FORK_SEED_LIMIT)).rows;
    }
    // A first message is model work: refuse before creating anything.
    if (body.message) await assertCanSpend(db, kb!.tenantId);

    const chat = await createChat(db, {
      id: body.id,
      kb: kb!,
      model: model.id,
      title: body.title ?? (body.message ? truncateTitle(body.message.replace(/\s+/g, " ").trim().slice(0, 80)) : null),
      ownerUserId: caller.type === "user" ? caller.user.id : null,
      apiKeyId: caller.type === "api_key" ? caller.key.id : null,
      externalSubjectId: effectiveSubject(caller, body.external_subject_id) ?? null,
      agentMode: body.agent_mode,
      sharedSourceChatId: body.shared_source_chat_id?.toLowerCase() ?? null,
      settings: {
        websearch_enable: body.websearch_enable,
        skill_ids: body.skill_ids,
        connector_slugs: body.connector_slugs,
        delegate_agent_ids: body.delegate_agent_ids,
      },
    });
    for (const m of seed) {
      await appendMessage(db, chat.id, { role: m.role, content: m.content, status: m.status, metadata: shareSafeMetadata(m.metadata) ?? {} });
    }
    const images = body.images.length ? await storeChatImages(c, chat, body.images) : undefined;

    if (!body.message) {
      const fresh = (await getChat(db, chat.id))!;
      return c.json({ chat: publicChat(fresh) }, 201);
    }
    const cmd = await prepareTurn(c, caller, chat, kb!, {
      content: body.message,
      model,
      mode: body.agent_mode,
      websearch: body.websearch_enable,
      operation: "chat",
      extras: body,
      images,
    });
    const outcome = await runTurnJson(c.env, cmd);
    const fresh = (await getChat(db, chat.id))!;
    return c.json(
      { chat: publicChat(fresh), user_message: outcome.user_message, assistant_message: outcome.assistant_message, usage: outcome.usage },
      201,
    );
  })
  .openapi(send, async (c) => {
    const outcome = await runTurnJson(c.env, await sendCommand(c, c.req.valid("json"), c.req.valid("param").id));
    return c.json({ user_message: outcome.user_message, assistant_message: outcome.assistant_message, usage: outcome.usage }, 200);
  })
  .openapi(stream, async (c) => {
    const cmd = await sendCommand(c, c.req.valid("json"), c.req.valid("param").id);
    // The Durable Object's SSE response is passed through as is, so a client
    // disconnect reaches the DO (request.signal) and aborts generation.
    return streamTurn(c.env, cmd) as unknown as ReturnType<typeof c.json>;
  });

/** Authorizes and validates a message for an existing chat (JSON send and stream alike). */
async function sendCommand(c: Context<AppEnv>, body: z.infer<typeof SendMessageBody>, chatId: string) {
  const caller = requireCaller(c);
  const { chat } = await authorizeChat(c, chatId, body.external_subject_id);
  const kb = await getKnowledgeBase(c.get("db"), chat.knowledgeBaseId);
  if (!kb) throw notFound("Knowledge base");
  return prepareTurn(c, caller, chat, kb, {
    content: body.content,
    model: resolveModel(c, body.model),
    mode: body.agent_mode,
    websearch: body.websearch_enable,
    operation: "chat",
    extras: body,
  });
}
