import { createRoute, z } from "@hono/zod-openapi";
import { authorize, requireCaller } from "../../auth/authorize";
import { config } from "../../lib/config";
import { badRequest, notFound } from "../../lib/errors";
import { errorResponses, jsonBody, jsonContent, noContent, queryBoolean, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { assertSubjectParam, authorizeChat } from "../../services/chats/access";
import {
  deleteChat,
  deleteMessage,
  listChats,
  listMessages,
  publicChat,
  publicMessage,
  terminateChat,
  truncateTitle,
  updateChat,
} from "../../services/chats/chats";
import { enqueueGc } from "../../services/ingest/messages";
import { stopTurn } from "../../services/chats/session";
import { getKnowledgeBase, knowledgeBaseScope } from "../../services/knowledge-bases";
import { listModels } from "../../services/models/registry";
import { getTenant, tenantScope } from "../../services/tenants";
import { ChatIdParam, ChatSchema, MessageParams, MessageSchema, SubjectId, SubjectQuery, TodoSchema } from "./schemas";

const tags = ["Chats"];

const ModelSchema = z
  .object({
    id: z.string(),
    display_name: z.string(),
    provider: z.enum(["local", "openai"]),
    context_window: z.number().int(),
    available: z.boolean(),
    pricing: z.object({ input_per_1k: z.number(), output_per_1k: z.number() }).openapi({ description: "Credits per 1,000 tokens" }),
  })
  .openapi("Model");

const models = createRoute({
  method: "get",
  path: "/chats/models",
  tags,
  operationId: "listModels",
  summary: "Supported models, their availability and prices",
  security: userOrKey,
  responses: { 200: jsonContent(z.object({ models: z.array(ModelSchema) }), "Models"), ...errorResponses },
});

const list = createRoute({
  method: "get",
  path: "/chats",
  tags,
  operationId: "listChats",
  summary: "Chats of a tenant",
  description:
    "A signed-in user sees their own chats. An API key sees the chats created through API keys (filtered by " +
    "`external_subject_id` when given); a key restricted to one knowledge base must pass `knowledge_base_id`.",
  security: userOrKey,
  request: {
    query: z.object({
      tenant_id: z.string().min(1).max(128),
      knowledge_base_id: z.string().min(1).max(128).optional(),
      external_subject_id: SubjectId.optional(),
      is_query: queryBoolean.optional().openapi({ description: "true: query chats (fast-query); false: regular chats" }),
      limit: z.coerce.number().int().min(1).max(200).default(50),
      offset: z.coerce.number().int().min(0).default(0),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({ chats: z.array(ChatSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
      "Chats",
    ),
    ...errorResponses,
  },
});

const getMessages = createRoute({
  method: "get",
  path: "/chats/{id}/messages",
  tags,
  operationId: "listChatMessages",
  summary: "Messages of a chat (oldest first) with the chat's metadata",
  security: userOrKey,
  request: {
    params: ChatIdParam,
    query: SubjectQuery.extend({
      limit: z.coerce.number().int().min(1).max(200).default(50),
      offset: z.coerce.number().int().min(0).default(0),
    }),
  },
  responses: {
    200: jsonContent(
      z.object({ chat: ChatSchema, messages: z.array(MessageSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
      "Messages",
    ),
    ...errorResponses,
  },
});

const patch = createRoute({
  method: "patch",
  path: "/chats/{id}",
  tags,
  operationId: "updateChat",
  summary: "Rename a chat (titles longer than 255 characters are truncated)",
  security: userOrKey,
  request: { params: ChatIdParam, query: SubjectQuery, body: jsonBody(z.object({ title: z.string().max(10_000) })) },
  responses: { 200: jsonContent(ChatSchema, "The chat"), ...errorResponses },
});

const access = createRoute({
  method: "patch",
  path: "/chats/{id}/access",
  tags,
  operationId: "setChatAccess",
  summary: "Set who can read the chat's shared transcript",
  description: "`private`: the owner only; `org`: signed-in members of the organization; `public`: anyone with the link.",
  security: userOrKey,
  request: {
    params: ChatIdParam,
    query: SubjectQuery,
    body: jsonBody(z.object({ access_level: z.enum(["private", "org", "public"]) })),
  },
  responses: {
    200: jsonContent(
      z.object({ access_level: z.enum(["private", "org", "public"]), share_url: z.string().nullable() }),
      "The access level and share URL",
    ),
    ...errorResponses,
  },
});

const remove = createRoute({
  method: "delete",
  path: "/chats/{id}",
  tags,
  operationId: "deleteChat",
  summary: "Delete a chat and its conversation data",
  security: userOrKey,
  request: { params: ChatIdParam, query: SubjectQuery },
  responses: { 204: noContent, ...errorResponses },
});

const removeMessage = createRoute({
  method: "delete",
  path: "/chats/{id}/messages/{messageId}",
  tags,
  operationId: "deleteChatMessage",
  summary: "Delete one message of the chat",
  security: userOrKey,
  request: { params: MessageParams, query: SubjectQuery },
  responses: { 204: noContent, ...errorResponses },
});

const todo = createRoute({
  method: "get",
  path: "/chats/{id}/todo",
  tags,
  operationId: "getChatTodo",
  summary: "The chat's persistent todo list (deep mode), or null",
  security: userOrKey,
  request: { params: ChatIdParam, query: SubjectQuery },
  responses: { 200: jsonContent(TodoSchema, "The todo list"), ...errorResponses },
});

const stop = createRoute({
  method: "post",
  path: "/chats/{id}/stop",
  tags,
  operationId: "stopChat",
  summary: "Abort the chat's active stream; the partial answer is saved",
  security: userOrKey,
  request: { params: ChatIdParam, query: SubjectQuery },
  responses: { 200: jsonContent(z.object({ stopped: z.boolean() }), "Whether a stream was aborted"), ...errorResponses },
});

const terminate = createRoute({
  method: "post",
  path: "/chats/{id}/terminate",
  tags,
  operationId: "terminateChat",
  summary: "End the chat session; messages are kept for audit, later turns answer 409 chat_terminated",
  security: userOrKey,
  request: {
    params: ChatIdParam,
    query: SubjectQuery,
    body: {
      required: false,
      content: { "application/json": { schema: z.object({ termination_reason: z.string().max(500).optional() }) } },
    },
  },
  responses: { 200: jsonContent(ChatSchema, "The terminated chat"), ...errorResponses },
});

export const chatCrudRoutes = createRouter()
  .openapi(models, async (c) => {
    requireCaller(c);
    return c.json({ models: listModels(c.env).map(({ upstream_model: _u, ...m }) => m) }, 200);
  })
  .openapi(list, async (c) => {
    const caller = requireCaller(c);
    const q = c.req.valid("query");
    assertSubjectParam(caller, q.external_subject_id);
    const db = c.get("db");
    const tenant = await getTenant(db, q.tenant_id);
    await authorize(c, "query:rag", tenantScope(tenant), { what: "Tenant", addressedBy: "param" });
    if (q.knowledge_base_id) {
      const kb = await getKnowledgeBase(db, q.knowledge_base_id);
      if (kb && kb.tenantId !== tenant!.id) throw badRequest("knowledge_base_id belongs to another tenant");
      await authorize(c, "query:rag", knowledgeBaseScope(kb), { what: "Knowledge base", addressedBy: "param" });
    } else if (caller.type === "api_key" && caller.key.knowledgeBaseId) {
      throw badRequest("knowledge_base_id is required for an API key restricted to one knowledge base", [
        { path: "query.knowledge_base_id", message: "Required for this key" },
      ]);
    }
    const { rows, total } = await listChats(
      db,
      {
        tenantId: tenant!.id,
        knowledgeBaseId: q.knowledge_base_id,
        ownerUserId: caller.type === "user" ? caller.user.id : undefined,
        keyCreated: caller.type === "api_key",
        externalSubjectId: q.external_subject_id,
        isQuery: q.is_query,
      },
      q,
    );
    return c.json({ chats: rows.map(publicChat), total, limit: q.limit, offset: q.offset }, 200);
  })
  .openapi(getMessages, async (c) => {
    const q = c.req.valid("query");
    const { chat } = await authorizeChat(c, c.req.valid("param").id, q.external_subject_id);
    const { rows, total } = await listMessages(c.get("db"), chat.id, q);
    return c.json({ chat: publicChat(chat), messages: rows.map(publicMessage), total, limit: q.limit, offset: q.offset }, 200);
  })
  .openapi(patch, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    const updated = await updateChat(c.get("db"), chat.id, { title: truncateTitle(c.req.valid("json").title) });
    return c.json(publicChat(updated), 200);
  })
  .openapi(access, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    const level = c.req.valid("json").access_level;
    const updated = await updateChat(c.get("db"), chat.id, { accessLevel: level });
    const share_url = level === "private" ? null : `${config(c.env).publicBaseUrl}/share/${updated.id}`;
    return c.json({ access_level: updated.accessLevel, share_url }, 200);
  })
  .openapi(remove, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    await stopTurn(c.env, chat.id).catch(() => false);
    await deleteChat(c.get("db"), chat.id);
    // Its stored images went onto the garbage list with the rows: drain it soon.
    c.executionCtx.waitUntil(enqueueGc(c.env, 1));
    return c.body(null, 204);
  })
  .openapi(removeMessage, async (c) => {
    const { id, messageId } = c.req.valid("param");
    const { chat } = await authorizeChat(c, id, c.req.valid("query").external_subject_id);
    const deleted = await deleteMessage(c.get("db"), chat.id, messageId);
    if (!deleted) throw notFound("Message");
    return c.body(null, 204);
  })
  .openapi(todo, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    return c.json({ todo: chat.todo ?? null }, 200);
  })
  .openapi(stop, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    return c.json({ stopped: await stopTurn(c.env, chat.id) }, 200);
  })
  .openapi(terminate, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    const body = (c.req.valid("json") ?? {}) as { termination_reason?: string };
    await stopTurn(c.env, chat.id).catch(() => false);
    const updated = await terminateChat(c.get("db"), chat, body.termination_reason ?? null);
    return c.json(publicChat(updated), 200);
  });

