import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { notFound } from "../../lib/errors";
import { jsonBody, jsonContent, noContent, pageBody, pageSchema, pagingQuery, queryBoolean } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { chatFor } from "../../services/chats/access";
import { deleteMessage, listMessages, publicChat, publicMessage, truncateTitle, updateChat } from "../../services/chats/chats";
import { endChat, listChatsFor, removeChat, setChatAccess } from "../../services/chats/manage";
import { stopTurn } from "../../services/chats/session";
import { listModels } from "../../services/models/registry";
import { ChatSchema, MessageSchema, SubjectId, SubjectQuery, TodoSchema } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["Chats"]);

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

export const chatCrudRoutes = createRouter();

const models = route("get", "/chats/models", "authenticated", {
  operationId: "listModels", summary: "Supported models, their availability and prices",
  responses: { 200: jsonContent(z.object({ models: z.array(ModelSchema) }), "Models") },
});
chatCrudRoutes.openapi(models, async (c) => c.json({ models: listModels(c.env).map(({ upstream_model: _u, ...m }) => m) }, 200));

const list = route("get", "/chats", "query:rag", {
  operationId: "listChats", summary: "Chats of a tenant",
  description:
    "A signed-in user sees their own chats. An API key sees the chats created through API keys (filtered by " +
    "`external_subject_id` when given); a key restricted to one knowledge base must pass `knowledge_base_id`.",
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
  responses: { 200: jsonContent(pageSchema("chats", ChatSchema), "Chats") },
});
chatCrudRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  return c.json(pageBody("chats", await listChatsFor(ctxOf(c), q), q, publicChat), 200);
});

const getMessages = route("get", "/chats/{id}/messages", "query:rag", {
  operationId: "listChatMessages", summary: "Messages of a chat (oldest first) with the chat's metadata",
  request: {
    query: SubjectQuery.extend(pagingQuery(200, 50).shape),
  },
  responses: {
    200: jsonContent(pageSchema("messages", MessageSchema).extend({ chat: ChatSchema }), "Messages"),
  },
});
chatCrudRoutes.openapi(getMessages, async (c) => {
  const q = c.req.valid("query");
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, q.external_subject_id);
  const page = await listMessages(c.get("db"), chat.id, q);
  return c.json({ chat: publicChat(chat), ...pageBody("messages", page, q, publicMessage) }, 200);
});

const patch = route("patch", "/chats/{id}", "query:rag", {
  operationId: "updateChat", summary: "Rename a chat (titles longer than 255 characters are truncated)",
  request: { query: SubjectQuery, body: jsonBody(z.object({ title: z.string().max(10_000) })) },
  responses: { 200: jsonContent(ChatSchema, "The chat") },
});
chatCrudRoutes.openapi(patch, async (c) => {
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  const updated = await updateChat(c.get("db"), chat.id, { title: truncateTitle(c.req.valid("json").title) });
  return c.json(publicChat(updated), 200);
});

const access = route("patch", "/chats/{id}/access", "query:rag", {
  operationId: "setChatAccess", summary: "Set who can read the chat's shared transcript",
  description: "`private`: the owner only; `org`: signed-in members of the organization; `public`: anyone with the link.",
  request: {
    query: SubjectQuery,
    body: jsonBody(z.object({ access_level: z.enum(["private", "org", "public"]) })),
  },
  responses: {
    200: jsonContent(
      z.object({ access_level: z.enum(["private", "org", "public"]), share_url: z.string().nullable() }),
      "The access level and share URL",
    ),
  },
});
chatCrudRoutes.openapi(access, async (c) => {
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  return c.json(await setChatAccess(ctxOf(c), chat, c.req.valid("json").access_level), 200);
});

const remove = route("delete", "/chats/{id}", "query:rag", {
  operationId: "deleteChat", summary: "Delete a chat and its conversation data", request: { query: SubjectQuery },
  responses: { 204: noContent },
});
chatCrudRoutes.openapi(remove, async (c) => {
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  await removeChat(ctxOf(c), chat);
  return c.body(null, 204);
});

const removeMessage = route("delete", "/chats/{id}/messages/{messageId}", "query:rag", {
  operationId: "deleteChatMessage", summary: "Delete one message of the chat", request: { query: SubjectQuery },
  responses: { 204: noContent },
});
chatCrudRoutes.openapi(removeMessage, async (c) => {
  const { id, messageId } = c.req.valid("param");
  const chat = await chatFor(ctxOf(c), id, c.req.valid("query").external_subject_id);
  if (!(await deleteMessage(c.get("db"), chat.id, messageId))) throw notFound("Message");
  return c.body(null, 204);
});

const todo = route("get", "/chats/{id}/todo", "query:rag", {
  operationId: "getChatTodo", summary: "The chat's persistent todo list (deep mode), or null",
  request: { query: SubjectQuery }, responses: { 200: jsonContent(TodoSchema, "The todo list") },
});
chatCrudRoutes.openapi(todo, async (c) => {
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  return c.json({ todo: chat.todo ?? null }, 200);
});

const stop = route("post", "/chats/{id}/stop", "query:rag", {
  operationId: "stopChat", summary: "Abort the chat's active stream; the partial answer is saved",
  request: { query: SubjectQuery },
  responses: { 200: jsonContent(z.object({ stopped: z.boolean() }), "Whether a stream was aborted") },
});
chatCrudRoutes.openapi(stop, async (c) => {
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  return c.json({ stopped: await stopTurn(c.env, chat.id) }, 200);
});

const terminate = route("post", "/chats/{id}/terminate", "query:rag", {
  operationId: "terminateChat",
  summary: "End the chat session; messages are kept for audit, later turns answer 409 chat_terminated",
  request: {
    query: SubjectQuery,
    body: {
      required: false,
      content: { "application/json": { schema: z.object({ termination_reason: z.string().max(500).optional() }) } },
    },
  },
  responses: { 200: jsonContent(ChatSchema, "The terminated chat") },
});
chatCrudRoutes.openapi(terminate, async (c) => {
  const chat = await chatFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  const body = (c.req.valid("json") ?? {}) as { termination_reason?: string };
  return c.json(publicChat(await endChat(ctxOf(c), chat, body.termination_reason ?? null)), 200);
});
