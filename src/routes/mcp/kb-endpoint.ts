import { z } from "@hono/zod-openapi";
import { ctxOf } from "../context";
import { forbidden } from "../../lib/errors";
import { jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { answerKbMcp } from "../../services/mcp/kb-server";
import { routesTagged } from "../define-route";

const route = routesTagged(["MCP servers"]);

/**
 * POST /api/v1/mcp: the knowledge bases an API key (or an OAuth token) reaches, as an MCP server
 * (Streamable HTTP, stateless, JSON responses; tools search, ask,
 * list_knowledge_bases). A new server and transport per request, no session;
 * GET (the optional server-to-client stream) and DELETE (session end) are 405.
 */

export const kbMcpRoutes = createRouter();

const mcp = route("post", "/mcp", "query:rag", {
  operationId: "knowledgeBaseMcpEndpoint",
  summary: "The caller's knowledge bases as an MCP server (Streamable HTTP, JSON-RPC; API keys or OAuth)",
  description:
    "Connect an MCP client to `{base_url}/mcp` with `Authorization: Bearer <API key>` (scope `query:rag`), or let it connect by " +
    "OAuth 2.1: a 401 names the protected-resource metadata (`/.well-known/oauth-protected-resource/api/v1/mcp`), the client " +
    "registers itself, a member picks the tenant's knowledge bases on the consent page (`/oauth/authorize`), and the token acts as " +
    "a key with `query:rag` + `documents:read` limited to them (list and revoke: `/mcp/oauth/grants`). Tools: `list_knowledge_bases`, " +
    "`search` (hybrid retrieval with numbered, citable passages) and `ask` (a cited answer, metered like fast-query). The key's " +
    "environment, tenant and knowledge-base restrictions apply. Requests must accept `application/json, text/event-stream`.",
  responses: {
    200: jsonContent(z.record(z.string(), z.unknown()), "A JSON-RPC response"),
  },
  security: [{ bearerAuth: [] }],
});
kbMcpRoutes.openapi(mcp, async (c) => {
  const caller = c.get("caller");
  if (caller.type !== "api_key") throw forbidden("The MCP endpoint is for API keys (Authorization: Bearer kbk_...) and OAuth access tokens");
  // The transport answers with a plain Response (JSON-RPC); the typed-response check does not apply.
  return (await answerKbMcp(ctxOf(c), caller, c.req.raw)) as never;
});

kbMcpRoutes.on(["GET", "DELETE"], "/mcp", (c) =>
  c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless (POST only)" }, id: null }, 405, {
    Allow: "POST",
  }),
);
