import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { jsonContent, noContent, pageBody, pageSchema, pagingQuery, Timestamp } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { grantToRevoke, listGrantsFor, MCP_OAUTH_SCOPE, publicGrant } from "../../services/mcp-oauth/grants";
import { revokeGrants } from "../../services/mcp-oauth/lifecycle";
import { routesTagged } from "../define-route";
import { OrgQuery } from "./schemas";

const route = routesTagged(["MCP servers"]);

/**
 * The OAuth clients members connected to the knowledge-base MCP endpoint (README "Connecting Claude
 * or any MCP client by OAuth"): list and revoke. Signed-in users only; a member sees and revokes the
 * grants they approved, an owner all of the organization's.
 */
export const mcpOAuthGrantRoutes = createRouter();

const McpOAuthGrantSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    environment_id: z.string(),
    tenant_id: z.string(),
    knowledge_base_ids: z.array(z.string()).openapi({ description: "What the client may search and ask" }),
    user_id: z.string().openapi({ description: "The member who approved it; it stops working when they leave the organization" }),
    client_id: z.string(),
    client_name: z.string().openapi({ description: "As the client registered itself (not verified)" }),
    redirect_host: z.string().openapi({ description: "Where its tokens were sent" }),
    scopes: z.array(z.string()).openapi({ example: [MCP_OAUTH_SCOPE] }),
    created_at: Timestamp,
    expires_at: Timestamp.openapi({ description: "Lapses then unless the client refreshes (each refresh moves it 30 days out)" }),
  })
  .openapi("McpOAuthGrant");

const list = route("get", "/mcp/oauth/grants", "mcp_oauth:read", {
  operationId: "listMcpOAuthGrants",
  summary: "OAuth clients connected to the MCP endpoint: yours, or (owners) all of the organization's",
  request: { query: pagingQuery(200, 50).extend(OrgQuery.shape) },
  responses: { 200: jsonContent(pageSchema("grants", McpOAuthGrantSchema), "Grants, newest first") },
});
mcpOAuthGrantRoutes.openapi(list, async (c) => {
  const q = c.req.valid("query");
  return c.json(pageBody("grants", await listGrantsFor(ctxOf(c), q.org_id, q), q, publicGrant), 200);
});

const revoke = route("delete", "/mcp/oauth/grants/{id}", "mcp_oauth:revoke", {
  operationId: "revokeMcpOAuthGrant",
  summary: "Revoke an OAuth client's access: its tokens answer 401 at once and it cannot refresh",
  request: { query: OrgQuery },
  responses: { 204: noContent },
});
mcpOAuthGrantRoutes.openapi(revoke, async (c) => {
  const grant = await grantToRevoke(ctxOf(c), c.req.valid("param").id, c.req.valid("query").org_id);
  await revokeGrants(c.get("db"), c.env, [grant]);
  return c.body(null, 204);
});
