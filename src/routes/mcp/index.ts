import { createRouter } from "../../lib/router";
import { chatMcpServerRoutes } from "./chat-servers";
import { mcpServerRoutes } from "./servers";
import { kbMcpRoutes } from "./kb-endpoint";
import { mcpOAuthGrantRoutes } from "./oauth-grants";

/**
 * MCP: registrations and OAuth, per-chat enabled servers, the knowledge-base MCP endpoint and the
 * OAuth clients connected to it (its consent page lives outside /api/v1: ./oauth-consent.ts).
 */
export const mcpRoutes = createRouter()
  .route("/", mcpServerRoutes)
  .route("/", chatMcpServerRoutes)
  .route("/", kbMcpRoutes)
  .route("/", mcpOAuthGrantRoutes);
