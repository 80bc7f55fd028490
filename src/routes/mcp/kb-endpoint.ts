import { createRoute, z } from "@hono/zod-openapi";
import { requireCaller } from "../../auth/authorize";
import { routePermission } from "../../auth/route-permission";
import { forbidden } from "../../lib/errors";
import { errorResponses, jsonContent } from "../../lib/openapi";
import { createRouter } from "../../lib/router";
import { buildKbMcpServer } from "../../services/mcp/kb-server";

/**
 * POST /api/v1/mcp: the knowledge bases an API key reaches, as an MCP server
 * (Streamable HTTP, stateless, JSON responses; tools search, ask,
 * list_knowledge_bases). A new server and transport per request, no session;
 * GET (the optional server-to-client stream) and DELETE (session end) are 405.
 */

const mcp = createRoute({
  method: "post",
  path: "/mcp",
  tags: ["MCP servers"],
  operationId: "knowledgeBaseMcpEndpoint",
  ...routePermission("query:rag"),
  summary: "The caller's knowledge bases as an MCP server (Streamable HTTP, JSON-RPC; API keys only)",
  description:
    "Connect an MCP client to `{base_url}/mcp` with `Authorization: Bearer <API key>` (scope `query:rag`). Tools: `list_knowledge_bases`, " +
    "`search` (hybrid retrieval with numbered, citable passages) and `ask` (a cited answer, metered like fast-query). The key's " +
    "environment, tenant and knowledge-base restrictions apply. Requests must accept `application/json, text/event-stream`.",
  security: [{ bearerAuth: [] }],
  responses: {
    200: jsonContent(z.record(z.string(), z.unknown()), "A JSON-RPC response"),
    ...errorResponses,
  },
});

export const kbMcpRoutes = createRouter()
  .openapi(mcp, async (c) => {
    const caller = requireCaller(c);
    if (caller.type !== "api_key") throw forbidden("The MCP endpoint is for API keys (Authorization: Bearer kbk_...)");
    const { WebStandardStreamableHTTPServerTransport } = await import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js");
    const server = await buildKbMcpServer(c, caller);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      // The transport answers with a plain Response (JSON-RPC); the typed-response check does not apply.
      return (await transport.handleRequest(c.req.raw)) as never;
    } finally {
      c.executionCtx.waitUntil(server.close().catch(() => {}));
    }
  })
  .on(["GET", "DELETE"], "/mcp", (c) =>
    c.json({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this MCP endpoint is stateless (POST only)" }, id: null }, 405, {
      Allow: "POST",
    }),
  );
