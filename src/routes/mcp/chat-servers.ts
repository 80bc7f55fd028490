import { createRoute, z } from "@hono/zod-openapi";
import { routePermission } from "../../auth/route-permission";
import { errorResponses, jsonBody, jsonContent, userOrKey } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { authorizeChat } from "../../services/chats/access";
import {
  assertServersOfOrganization,
  chatServerView,
  enabledServersOfChat,
  listMcpServers,
  MAX_ENABLED_PER_CHAT,
  setEnabledServersOfChat,
} from "../../services/mcp/servers";
import { ChatIdParam, SubjectQuery } from "../chats/schemas";
import { ChatMcpServersSchema } from "./schemas";

/** GET/PATCH /chats/:id/mcp-servers: which of the organization's MCP servers a chat's turns may use. */

const tags = ["MCP servers"];

const get = createRoute({
  method: "get",
  path: "/chats/{id}/mcp-servers",
  tags,
  operationId: "getChatMcpServers",
  ...routePermission("query:rag"),
  summary: "The organization's MCP servers, annotated with whether this chat enables them",
  security: userOrKey,
  request: { params: ChatIdParam, query: SubjectQuery },
  responses: { 200: jsonContent(ChatMcpServersSchema, "Servers"), ...errorResponses },
});

const patch = createRoute({
  method: "patch",
  path: "/chats/{id}/mcp-servers",
  tags,
  operationId: "setChatMcpServers",
  ...routePermission("query:rag"),
  summary: "Replace the chat's enabled MCP servers",
  description: `At most ${MAX_ENABLED_PER_CHAT}; every id must be a registration of the chat's organization (400 naming it otherwise).`,
  security: userOrKey,
  request: {
    params: ChatIdParam,
    query: SubjectQuery,
    body: jsonBody(z.object({ enabled_mcp_server_ids: z.array(z.string().min(1).max(128)).max(MAX_ENABLED_PER_CHAT) })),
  },
  responses: { 200: jsonContent(ChatMcpServersSchema, "Servers"), ...errorResponses },
});

export const chatMcpServerRoutes = createRouter()
  .openapi(get, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    const db = c.get("db");
    const [all, enabled] = await Promise.all([listMcpServers(db, chat.organizationId), enabledServersOfChat(db, chat)]);
    return c.json({ servers: chatServerView(all, new Set(enabled.map((s) => s.id))) }, 200);
  })
  .openapi(patch, async (c) => {
    const { chat } = await authorizeChat(c, c.req.valid("param").id, c.req.valid("query").external_subject_id);
    const ids = c.req.valid("json").enabled_mcp_server_ids;
    const db = c.get("db");
    await assertServersOfOrganization(db, chat.organizationId, ids, "body.enabled_mcp_server_ids");
    await setEnabledServersOfChat(db, chat, ids);
    const all = await listMcpServers(db, chat.organizationId);
    return c.json({ servers: chatServerView(all, new Set(ids)) }, 200);
  });
