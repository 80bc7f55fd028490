import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { getCookie } from "hono/cookie";
import { requireUser } from "../../auth/authorize";
import { escapeHtml, htmlDocument, PAGE_SECURITY_HEADERS } from "../../lib/html";
import { extraErrors, jsonBody, jsonContent, noContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { completeMcpAuthorization, registerMcpServer, toolManifest } from "../../services/mcp/connect";
import { startAuthorization } from "../../services/mcp/oauth";
import { authorizeOrganization, deleteMcpServer, listMcpServers, mcpServerFor, publicMcpServer } from "../../services/mcp/servers";
import { CreateMcpServerBody, McpServerSchema, McpToolsSchema, OAuthStartBody, OrgQuery } from "./schemas";
import { routesTagged } from "../define-route";

const route = routesTagged(["MCP servers"]);

export const mcpServerRoutes = createRouter();

const list = route("get", "/mcp/servers", "mcp:read", {
  operationId: "listMcpServers", summary: "MCP servers registered by an organization (without credentials)",
  request: { query: OrgQuery },
  responses: { 200: jsonContent(z.object({ servers: z.array(McpServerSchema) }), "Registrations") },
});
mcpServerRoutes.openapi(list, async (c) => {
  const orgId = await authorizeOrganization(ctxOf(c), c.req.valid("query").org_id, "mcp:read");
  const servers = await listMcpServers(c.get("db"), orgId);
  return c.json({ servers: servers.map(publicMcpServer) }, 200);
});

const create = route("post", "/mcp/servers", "mcp:write", {
  operationId: "createMcpServer", summary: "Register an MCP server; tool discovery runs after the response",
  description:
    "Production registrations must use HTTPS and cannot target private, loopback or link-local addresses (400 `url_not_allowed`). " +
    "`credentials` are sent as `Authorization: Bearer`, stored encrypted and never returned. The status is `pending` until discovery " +
    "has run, then `ready`, `needs_auth` (authorize with POST /mcp/servers/{id}/oauth/start) or `error` with `last_error`.",
  request: { query: OrgQuery, body: jsonBody(CreateMcpServerBody) },
  responses: { 201: jsonContent(McpServerSchema, "The registration") },
});
mcpServerRoutes.openapi(create, async (c) => {
  const user = requireUser(ctxOf(c));
  const orgId = await authorizeOrganization(ctxOf(c), c.req.valid("query").org_id, "mcp:write");
  return c.json(publicMcpServer(await registerMcpServer(ctxOf(c), orgId, c.req.valid("json"), user.user.id)), 201);
});

const tools = route("get", "/mcp/servers/{id}/tools", "mcp:read", {
  operationId: "listMcpServerTools", summary: "The cached tool manifest of a registration",
  request: { query: OrgQuery }, responses: { 200: jsonContent(McpToolsSchema, "The manifest") },
});
mcpServerRoutes.openapi(tools, async (c) => {
  const row = await mcpServerFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").org_id, "mcp:read");
  return c.json(toolManifest(ctxOf(c), row), 200);
});

const oauthStart = route("post", "/mcp/servers/{id}/oauth/start", "mcp:write", {
  operationId: "startMcpServerOAuth",
  summary: "Begin the server's OAuth authorization; open authorization_url (on this service) in the signed-in user's browser",
  request: { query: OrgQuery, body: { ...jsonBody(OAuthStartBody), required: false } },
  responses: {
    200: jsonContent(z.object({ authorization_url: z.string() }), "Where to send the user"),
    ...extraErrors(422),
  },
});
mcpServerRoutes.openapi(oauthStart, async (c) => {
  const row = await mcpServerFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").org_id, "mcp:write");
  let scope: string | undefined;
  if (c.req.header("Content-Type")?.includes("json")) scope = (c.req.valid("json") as { scope?: string } | undefined)?.scope;
  const authorizationUrl = await startAuthorization(c.env, c.get("db"), row, requireUser(ctxOf(c)).user.id, scope);
  return c.json({ authorization_url: authorizationUrl }, 200);
});

const oauthCallback = route("get", "/mcp/servers/oauth/callback", "public", {
  operationId: "mcpServerOAuthCallback",
  summary: "Browser callback of the MCP authorization (public; the signed, single-use state authorizes it)",
  request: {
    query: z.object({
      code: z.string().max(4096).optional(),
      state: z.string().max(1024).optional(),
      error: z.string().max(200).optional(),
      error_description: z.string().max(1000).optional(),
    }),
  },
  responses: {
    200: { description: "Connected: a small HTML page", content: { "text/html": { schema: z.string() } } },
    400: { description: "Not connected: a small HTML page saying why", content: { "text/html": { schema: z.string() } } },
  },
  security: [],
});
mcpServerRoutes.openapi(oauthCallback, async (c) => {
  const { connected, message } = await completeMcpAuthorization(c.env, c.get("db"), c.req.valid("query"), (name) => getCookie(c, name));
  return c.html(page(connected, message), connected ? 200 : 400, PAGE_HEADERS);
});

const remove = route("delete", "/mcp/servers/{id}", "mcp:write", {
  operationId: "deleteMcpServer", summary: "Delete a registration; it disappears from every chat and agent",
  request: { query: OrgQuery }, responses: { 204: noContent },
});
mcpServerRoutes.openapi(remove, async (c) => {
  const row = await mcpServerFor(ctxOf(c), c.req.valid("param").id, c.req.valid("query").org_id, "mcp:write");
  await deleteMcpServer(c.get("db"), row.id);
  return c.body(null, 204);
});

function page(connected: boolean, message: string) {
  const title = connected ? "MCP server connected" : "MCP server not connected";
  return htmlDocument({
    title,
    noindex: true,
    body: `<main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p>You can close this window.</p></main>`,
  });
}

const PAGE_HEADERS = {
  ...PAGE_SECURITY_HEADERS,
  "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
  "Cache-Control": "no-store",
};

