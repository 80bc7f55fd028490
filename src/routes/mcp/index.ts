import { createRoute, z } from "@hono/zod-openapi";
import { requireUser } from "../../auth/authorize";
import { routePermission } from "../../auth/route-permission";
import { escapeHtml, htmlDocument, PAGE_SECURITY_HEADERS } from "../../lib/html";
import { errorResponses, extraErrors, IdParam, jsonBody, jsonContent, noContent, userOnly } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { discoverTools } from "../../services/mcp/client";
import { parseMcpUrl } from "../../services/mcp/guard";
import { consumeState, finishAuthorization, safeMessage, startAuthorization } from "../../services/mcp/oauth";
import {
  authorizeOrganization,
  createMcpServer,
  deleteMcpServer,
  getMcpServer,
  listMcpServers,
  manifestIsStale,
  mcpServerFor,
  publicMcpServer,
} from "../../services/mcp/servers";
import { CreateMcpServerBody, McpServerSchema, McpToolsSchema, OAuthStartBody, OrgQuery } from "./schemas";

const tags = ["MCP servers"];

const list = createRoute({
  method: "get",
  path: "/mcp/servers",
  tags,
  operationId: "listMcpServers",
  ...routePermission("mcp:read"),
  summary: "MCP servers registered by an organization (without credentials)",
  security: userOnly,
  request: { query: OrgQuery },
  responses: { 200: jsonContent(z.object({ servers: z.array(McpServerSchema) }), "Registrations"), ...errorResponses },
});

const create = createRoute({
  method: "post",
  path: "/mcp/servers",
  tags,
  operationId: "createMcpServer",
  ...routePermission("mcp:write"),
  summary: "Register an MCP server; tool discovery runs after the response",
  description:
    "Production registrations must use HTTPS and cannot target private, loopback or link-local addresses (400 `url_not_allowed`). " +
    "`credentials` are sent as `Authorization: Bearer`, stored encrypted and never returned. The status is `pending` until discovery " +
    "has run, then `ready`, `needs_auth` (authorize with POST /mcp/servers/{id}/oauth/start) or `error` with `last_error`.",
  security: userOnly,
  request: { query: OrgQuery, body: jsonBody(CreateMcpServerBody) },
  responses: { 201: jsonContent(McpServerSchema, "The registration"), ...errorResponses },
});

const tools = createRoute({
  method: "get",
  path: "/mcp/servers/{id}/tools",
  tags,
  operationId: "listMcpServerTools",
  ...routePermission("mcp:read"),
  summary: "The cached tool manifest of a registration",
  security: userOnly,
  request: { params: IdParam, query: OrgQuery },
  responses: { 200: jsonContent(McpToolsSchema, "The manifest"), ...errorResponses },
});

const oauthStart = createRoute({
  method: "post",
  path: "/mcp/servers/{id}/oauth/start",
  tags,
  operationId: "startMcpServerOAuth",
  ...routePermission("mcp:write"),
  summary: "Begin the server's OAuth authorization; redirect the signed-in user to authorization_url",
  security: userOnly,
  request: { params: IdParam, query: OrgQuery, body: { ...jsonBody(OAuthStartBody), required: false } },
  responses: {
    200: jsonContent(z.object({ authorization_url: z.string() }), "Where to send the user"),
    ...extraErrors(422),
    ...errorResponses,
  },
});

const oauthCallback = createRoute({
  method: "get",
  path: "/mcp/servers/oauth/callback",
  tags,
  operationId: "mcpServerOAuthCallback",
  ...routePermission("public"),
  summary: "Browser callback of the MCP authorization (public; the signed, single-use state authorizes it)",
  security: [],
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
});

const remove = createRoute({
  method: "delete",
  path: "/mcp/servers/{id}",
  tags,
  operationId: "deleteMcpServer",
  ...routePermission("mcp:write"),
  summary: "Delete a registration; it disappears from every chat and agent",
  security: userOnly,
  request: { params: IdParam, query: OrgQuery },
  responses: { 204: noContent, ...errorResponses },
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

export const mcpServerRoutes = createRouter()
  .openapi(list, async (c) => {
    const orgId = await authorizeOrganization(c, c.req.valid("query").org_id, "mcp:read");
    const servers = await listMcpServers(c.get("db"), orgId);
    return c.json({ servers: servers.map(publicMcpServer) }, 200);
  })
  .openapi(create, async (c) => {
    const user = requireUser(c);
    const orgId = await authorizeOrganization(c, c.req.valid("query").org_id, "mcp:write");
    const body = c.req.valid("json");
    const url = await parseMcpUrl(c.env, body.url);
    const db = c.get("db");
    const row = await createMcpServer(db, c.env, { organizationId: orgId, name: body.name, url: url.toString(), credentials: body.credentials, createdBy: user.user.id });
    c.executionCtx.waitUntil(discoverTools(c.env, db, row.id));
    return c.json(publicMcpServer(row), 201);
  })
  .openapi(tools, async (c) => {
    const row = await mcpServerFor(c, c.req.valid("param").id, c.req.valid("query").org_id, "mcp:read");
    if (row.status === "ready" && manifestIsStale(row)) c.executionCtx.waitUntil(discoverTools(c.env, c.get("db"), row.id));
    return c.json({ server_id: row.id, server_name: row.name, tools: row.manifest, manifest_refreshed_at: row.manifestRefreshedAt }, 200);
  })
  .openapi(oauthStart, async (c) => {
    const row = await mcpServerFor(c, c.req.valid("param").id, c.req.valid("query").org_id, "mcp:write");
    let scope: string | undefined;
    if (c.req.header("Content-Type")?.includes("json")) scope = (c.req.valid("json") as { scope?: string } | undefined)?.scope;
    const authorizationUrl = await startAuthorization(c.env, c.get("db"), row, scope);
    return c.json({ authorization_url: authorizationUrl }, 200);
  })
  .openapi(oauthCallback, async (c) => {
    const q = c.req.valid("query");
    const db = c.get("db");
    if (q.error) return c.html(page(false, `The authorization server answered: ${q.error_description ?? q.error}`), 400, PAGE_HEADERS);
    if (!q.code || !q.state) return c.html(page(false, "The callback is missing its code or state."), 400, PAGE_HEADERS);
    const consumed = await consumeState(c.env, db, q.state);
    if ("error" in consumed) return c.html(page(false, consumed.error), 400, PAGE_HEADERS);
    let name: string;
    try {
      name = (await finishAuthorization(c.env, db, consumed.serverId, q.code)).name;
    } catch (e) {
      return c.html(page(false, `The authorization code could not be exchanged: ${safeMessage(e)}`), 400, PAGE_HEADERS);
    }
    // Discovery with the new token now, so the page can tell the truth.
    await discoverTools(c.env, db, consumed.serverId);
    const after = await getMcpServer(db, consumed.serverId);
    const tools = after?.status === "ready" ? `its ${after.toolCount} tool(s) are available to the organization's chats` : `but its tools could not be listed yet (${after?.lastError ?? "unknown error"})`;
    return c.html(page(true, `${name} is connected; ${tools}.`), 200, PAGE_HEADERS);
  })
  .openapi(remove, async (c) => {
    const row = await mcpServerFor(c, c.req.valid("param").id, c.req.valid("query").org_id, "mcp:write");
    await deleteMcpServer(c.get("db"), row.id);
    return c.body(null, 204);
  });
