import { z } from "@hono/zod-openapi";
import { MCP_AUTH, MCP_STATUSES } from "../../db/schema";
import { Timestamp } from "../../lib/openapi";

export const OrgQuery = z.object({ org_id: z.string().min(1).max(128).openapi({ description: "The organization (required)" }) });

export const McpServerSchema = z
  .object({
    id: z.string(),
    organization_id: z.string(),
    name: z.string(),
    url: z.string(),
    status: z.enum(MCP_STATUSES).openapi({ description: "`pending` until discovery ran; `needs_auth` when the server asks for authorization" }),
    auth: z.enum(MCP_AUTH),
    tool_count: z.number().int(),
    manifest_refreshed_at: Timestamp.nullable(),
    last_error: z.string().nullable(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .openapi("McpServer");

export const CreateMcpServerBody = z.object({
  name: z.string().trim().min(1).max(255),
  url: z.string().trim().min(1).max(2048),
  credentials: z
    .string()
    .min(1)
    .max(8192)
    .optional()
    .openapi({ description: "Sent to the server as `Authorization: Bearer <credentials>`; stored encrypted, never returned" }),
});

export const McpToolsSchema = z
  .object({
    server_id: z.string(),
    server_name: z.string(),
    tools: z.array(z.object({ name: z.string(), description: z.string(), input_schema: z.record(z.string(), z.unknown()) })),
    manifest_refreshed_at: Timestamp.nullable(),
  })
  .openapi("McpToolManifest");

export const OAuthStartBody = z.object({ scope: z.string().trim().min(1).max(1000).optional() });

export const ChatMcpServersSchema = z
  .object({
    servers: z.array(
      z.object({ id: z.string(), name: z.string(), url: z.string(), status: z.enum(MCP_STATUSES), tool_count: z.number().int(), enabled: z.boolean() }),
    ),
  })
  .openapi("ChatMcpServers");
