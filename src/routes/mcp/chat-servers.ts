import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonBody, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { authorizeChat } from "../../services/chats/access";
import { MAX_ENABLED_PER_CHAT, replaceServersOfChat, serversOfChat } from "../../services/mcp/servers";
import { SubjectQuery } from "../chats/schemas";
import { ChatMcpServersSchema } from "./schemas";
import { routesTagged } from "../define-route";

/** GET/PATCH /chats/:id/mcp-servers: which of the organization's MCP servers a chat's turns may use. */

const route = routesTagged(["MCP servers"]);

export const chatMcpServerRoutes = createRouter();

const get = route("get", "/chats/{id}/mcp-servers", "query:rag", {
  operationId: "getChatMcpServers",
  summary: "The organization's MCP servers, annotated with whether this chat enables them",
  request: { query: SubjectQuery }, responses: { 200: jsonContent(ChatMcpServersSchema, "Servers") },
});
chatMcpServerRoutes.openapi(get, async (c) => {
  const { chat } = await authorizeChat(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  return c.json(await serversOfChat(c.get("db"), chat), 200);
});

const patch = route("patch", "/chats/{id}/mcp-servers", "query:rag", {
  operationId: "setChatMcpServers", summary: "Replace the chat's enabled MCP servers",
  description: `At most ${MAX_ENABLED_PER_CHAT}; every id must be a registration of the chat's organization (400 naming it otherwise).`,
  request: {
    query: SubjectQuery,
    body: jsonBody(z.object({ enabled_mcp_server_ids: z.array(z.string().min(1).max(128)).max(MAX_ENABLED_PER_CHAT) })),
  },
  responses: { 200: jsonContent(ChatMcpServersSchema, "Servers") },
});
chatMcpServerRoutes.openapi(patch, async (c) => {
  const { chat } = await authorizeChat(ctxOf(c), c.req.valid("param").id, c.req.valid("query").external_subject_id);
  return c.json(await replaceServersOfChat(c.get("db"), chat, c.req.valid("json").enabled_mcp_server_ids), 200);
});

