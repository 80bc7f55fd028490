import { createRouter } from "../../lib/router";
import { chatMcpServerRoutes } from "./chat-servers";
import { mcpServerRoutes } from "./servers";
import { kbMcpRoutes } from "./kb-endpoint";

/** MCP: registrations and OAuth, per-chat enabled servers, and the knowledge-base MCP endpoint. */
export const mcpRoutes = createRouter().route("/", mcpServerRoutes).route("/", chatMcpServerRoutes).route("/", kbMcpRoutes);
